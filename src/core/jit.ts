/**
 * How eagerly JavaScriptCore compiles. A hot path (a hook event, a plain search, `--version`) runs
 * for milliseconds, and the JIT would spend them compiling its start-up code on threads of its
 * own, beside the watch process that is answering it (two cores on the benchmark machine; figures in
 * docs/BENCHMARKS.md): such a run starts reluctant (cli.ts), and whatever long work it may still
 * do, with hot loops, asks for the normal policy first (loading the index: watch/gateway.ts).
 */

/** How many times more reluctant than normal a hot path's JIT is. */
const HOT_PATH_POLICY = 100;

export function hotPathJit(): void {
  Bun.unsafe.setJITPolicy(HOT_PATH_POLICY);
}

/** Before long work with hot loops in a process that may have started as a hot path. */
export function normalJit(): void {
  Bun.unsafe.setJITPolicy(1);
}
