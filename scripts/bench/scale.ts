/**
 * Everything measured at one corpus size, in the order a user meets it: build the index,
 * re-index with nothing changed, search with no warm process, then start the watch process and
 * search, prompt, start, stop and end sessions through it. Every command is a fresh process of
 * the compiled binary, with HOME and the memory in a temp folder.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_EVENTS } from "../../src/hooks/events.ts";
import { generateCorpus, writeCorpus, type SentencePool } from "./corpus.ts";
import { cpuProfile, type CpuProfile } from "./cpuprof.ts";
import { buildFtsDb } from "./fts.ts";
import { exitedZero, runOnce, series, summarize, type Measurement, type Sample } from "./proc.ts";
import { WatchProcess } from "./watch.ts";

export interface BenchEnv {
  bin: string;
  /** The bun that runs the baselines and helper scripts. */
  bun: string;
  ollamaHost: string;
  pool: SentencePool;
  queries: string[];
  prompts: string[];
  /** Temp folder for projects, homes and fixtures. */
  work: string;
  keep: boolean;
  log: (line: string) => void;
}

export interface ScaleResult {
  chunks: number;
  files: number;
  indexBytes: number;
  buildChunksPerSec: number;
  rows: Measurement[];
  watchReadyMs?: number;
  /** Watch peak RSS once the index is loaded, and at the end (after re-indexing new turns). */
  watchLoadedRssMiB?: number;
  watchRssMiB?: number;
  /** In-process step timings from profile.ts (cold open, search, build). */
  profile?: Record<string, Record<string, number>>;
  /** Bun's CPU profile of one cold and one warm `memsearch search`. */
  cpu: { cold?: CpuProfile; warm?: CpuProfile };
  errors: string[];
}

/** Each hook's budget, as the product sets it (the hook gives up past it). */
export const HOOK_BUDGET_MS: Record<string, number> = Object.fromEntries(Object.entries(HOOK_EVENTS).map(([event, e]) => [event, e.budgetMs]));

const STOP_TRANSCRIPT = "spotter/short.jsonl";
const WATCH_DEBOUNCE_MS = 1_500;
const WATCH_EXIT_LIMIT_MS = 180_000;

/** How many runs: fewer where one run costs seconds (cold loads of a large index). */
function plan(chunks: number) {
  const big = chunks > 20_000;
  return {
    coldQueries: chunks <= 1_000 ? 20 : big ? 3 : 10,
    warmQueries: 20,
    noop: big ? 3 : 5,
    hooks: 5,
    /** Half time the re-index, half a prompt right after the turn. */
    stops: big ? 4 : 6,
    profileBuild: !big,
  };
}

/** A git project with the corpus in `.memsearch/memory` and its own HOME. */
function setupProject(env: BenchEnv, chunks: number): { root: string; home: string; sections: string[]; files: number } {
  const root = mkdtempSync(join(env.work, `proj-${chunks}-`));
  mkdirSync(join(root, ".git"));
  const home = join(root, "home");
  mkdirSync(home);
  const files = generateCorpus({ chunks, pool: env.pool });
  writeCorpus(join(root, ".memsearch", "memory"), files);
  return { root, home, sections: files.flatMap((f) => f.sections), files: files.length };
}

/** The environment of every command: nothing of the caller's memsearch/Ollama settings leaks in. */
function commandEnv(env: BenchEnv, home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(MEMSEARCH_|OLLAMA_|CLAUDE_)/.test(k)) out[k] = v;
  }
  return {
    ...out,
    HOME: home,
    MEMSEARCH_HOME: join(home, ".memsearch"),
    OLLAMA_HOST: env.ollamaHost,
    MEMSEARCH_HOOKS_RECALL: "inject",
    MEMSEARCH_SUMMARIZER_PROVIDER: "extract",
    // The benchmark starts and stops the watch process itself.
    MEMSEARCH_NO_WATCH: "1",
    NO_COLOR: "1",
  };
}

/**
 * Copies of a real transcript whose UUIDs are all rewritten per copy, so each Stop run sees a
 * new last turn (a turn already in memory is skipped, which would time the wrong path).
 */
function stopTranscripts(env: BenchEnv, fixtures: string, n: number): string[] {
  const text = readFileSync(join(fixtures, STOP_TRANSCRIPT), "utf8");
  const dir = join(env.work, "transcripts");
  mkdirSync(dir, { recursive: true });
  return Array.from({ length: n }, (_, i) => {
    const path = join(dir, `stop-${i}.jsonl`);
    const tag = (0x1000 + i).toString(16);
    writeFileSync(path, text.replace(/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{4}/g, `$1${tag}`));
    return path;
  });
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** `search -j` printed a JSON array, and in the expected mode (hybrid must not quietly fall back to BM25). */
function searchCheck(mode: "hybrid" | "bm25") {
  return (s: Sample): string | undefined => {
    const bad = exitedZero(s);
    if (bad) return bad;
    const hits = parseJson(s.stdout);
    if (!Array.isArray(hits)) return "output is not a JSON array";
    if (hits.length && hits[0].mode !== mode) return `mode ${hits[0].mode}, expected ${mode}`;
    return undefined;
  };
}

function hookCheck(s: Sample): string | undefined {
  const bad = exitedZero(s);
  if (bad) return bad;
  const out = parseJson(s.stdout.trim());
  return out && typeof out === "object" ? undefined : "hook did not print a JSON object";
}

function injected(samples: Sample[]): string {
  let memories = 0;
  let hints = 0;
  for (const s of samples) {
    const ctx = (parseJson(s.stdout.trim()) as { hookSpecificOutput?: { additionalContext?: string } })?.hookSpecificOutput?.additionalContext ?? "";
    if (ctx.includes("Memories from earlier")) memories++;
    else if (ctx.includes("Memory available")) hints++;
  }
  return `${memories}/${samples.length} injected memories, ${hints} hints`;
}

function meanHits(samples: Sample[]): string {
  const counts = samples.map((s) => (parseJson(s.stdout) as unknown[] | undefined)?.length ?? 0);
  return `${(counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length)).toFixed(1)} hits/query`;
}

/** Runs the compiled binary in the project; `rss` as in series(). */
type Run = (args: string[], rss: boolean, extra?: Record<string, string>, stdin?: string) => Promise<Sample>;
type Hook = (event: string, input: Record<string, unknown>, rss: boolean) => Promise<Sample>;
type Add = (m: Measurement, note?: string, ratioTo?: Measurement["ratioTo"]) => void;

interface Ctx {
  env: BenchEnv;
  p: ReturnType<typeof plan>;
  root: string;
  cmdEnv: Record<string, string>;
  run: Run;
  hook: Hook;
  add: Add;
}

export async function runScale(env: BenchEnv, chunks: number, fixtures: string): Promise<ScaleResult> {
  const p = plan(chunks);
  const { root, home, sections, files } = setupProject(env, chunks);
  const cmdEnv = commandEnv(env, home);
  const run: Run = (args, rss, extra = {}, stdin) => runOnce([env.bin, ...args], { cwd: root, env: { ...cmdEnv, ...extra }, stdin, rss });
  const hook: Hook = (event, input, rss) => run(["hook", event], rss, {}, JSON.stringify({ cwd: root, hook_event_name: event, ...input }));
  const rows: Measurement[] = [];
  const errors: string[] = [];
  const add: Add = (m, note, ratioTo) => {
    const { samples: _samples, ...row } = m as Measurement & { samples?: Sample[] };
    rows.push({ ...row, note: note ?? m.note, ratioTo });
    if (m.failures) errors.push(`${m.label}: ${m.failures} run(s) failed (${m.firstFailure})`);
    env.log(`  ${m.label}: p50 ${m.p50.toFixed(0)} ms, p95 ${m.p95.toFixed(0)} ms${m.rssMiB ? `, ${m.rssMiB.toFixed(0)} MiB` : ""}${m.failures ? `, ${m.failures} FAILED` : ""}`);
  };
  const ctx: Ctx = { env, p, root, cmdEnv, run, hook, add };

  // --- Index: built once (a one-off, so timed under GNU time too), then re-run with nothing to do.
  const build = await series("index: full build", 1, (_i, rss) => run(["index"], rss), exitedZero, true);
  const buildChunksPerSec = chunks / (build.p50 / 1000);
  add(build, `${Math.round(buildChunksPerSec)} chunks/s (vectors from the Ollama double)`);
  add(await series("index: no-op re-index", p.noop, (_i, rss) => run(["index"], rss)), `${files} files unchanged`);
  const indexBytes = statSync(join(root, ".memsearch", "index", "index.bin"), { throwIfNoEntry: false })?.size ?? 0;
  add(await series("stats", 3, (_i, rss) => run(["stats"], rss)));

  await coldRuns(ctx, sections);
  const result: ScaleResult = { chunks, files, indexBytes, buildChunksPerSec, rows, errors, cpu: {} };
  result.cpu.cold = await cpuProfile([env.bin, "search", env.queries[0]!, "-j"], { cwd: root, env: cmdEnv });
  await warmPhase(ctx, result, fixtures);
  result.profile = await profile(env, root, cmdEnv, p.profileBuild);
  if (!env.keep) rmSync(root, { recursive: true, force: true });
  return result;
}

/** No watch process: every search loads the index; the baselines run on the same queries. */
async function coldRuns({ env, p, root, run, hook, add }: Ctx, sections: string[]): Promise<void> {
  const q = env.queries.slice(0, p.coldQueries);
  const query = (i: number) => q[i % q.length]!;
  const cold = await series("search cold, hybrid", q.length, (i, rss) => run(["search", query(i), "-j"], rss), searchCheck("hybrid"));
  add(cold, meanHits(cold.samples), "bun");
  const bm25 = await series("search cold, BM25 only", q.length, (i, rss) => run(["search", query(i), "-j"], rss, { MEMSEARCH_EMBEDDING_PROVIDER: "none" }), searchCheck("bm25"));
  add(bm25, `${meanHits(bm25.samples)}; provider none`, "fts");

  const ftsDb = join(root, "fts5.sqlite");
  const t = performance.now();
  buildFtsDb(ftsDb, sections.map((content) => ({ heading: /^#+\s+(.*)$/m.exec(content)?.[1] ?? "", content })));
  const built = `same chunks; table built in ${((performance.now() - t) / 1000).toFixed(1)} s, ${(statSync(ftsDb).size / 1048576).toFixed(1)} MiB`;
  const fts = await series("baseline: FTS5 query, new bun process", q.length, (i, rss) => runOnce([env.bun, join(import.meta.dir, "fts.ts"), ftsDb, query(i)], { cwd: root, env: { PATH: process.env.PATH ?? "" }, rss }));
  add(fts, built);

  const prompt = (i: number) => env.prompts[i % env.prompts.length]!;
  const ups = await series("hook user-prompt-submit, no watch", p.hooks, (i, rss) => hook("user-prompt-submit", { session_id: "b", prompt: prompt(i) }, rss), hookCheck);
  add(ups, injected(ups.samples));
}

/** Start the watch process, measure everything that goes through it, then let SessionEnd stop it. */
async function warmPhase(ctx: Ctx, result: ScaleResult, fixtures: string): Promise<void> {
  const { env, root, cmdEnv, hook, add } = ctx;
  const watch = new WatchProcess(env.bin, root, { ...cmdEnv, MEMSEARCH_NO_WATCH: "" });
  try {
    await watch.start(20 * 60_000);
    result.watchReadyMs = watch.readyMs;
    result.watchLoadedRssMiB = watch.peakRssMiB();
    env.log(`  watch ready in ${watch.readyMs.toFixed(0)} ms`);
    // A session that outlives the measured ones, registered by a hook whose parent (we, not GNU
    // time) stays alive, so the measured SessionEnd runs do not stop the watch process.
    await runOnce([env.bin, "hook", "session-start"], { cwd: root, env: cmdEnv, stdin: JSON.stringify({ cwd: root, session_id: "keeper" }) });
    result.cpu.warm = await cpuProfile([env.bin, "search", env.queries[0]!, "-j"], { cwd: root, env: cmdEnv });
    await warmRuns(ctx, watch, fixtures);
    result.watchRssMiB = watch.peakRssMiB();
    // The last session leaves: SessionEnd stops the watch process (its budget includes that wait).
    add(await series("hook session-end, last session (stops watch)", 1, (_i, rss) => hook("session-end", { session_id: "keeper" }, rss), hookCheck, true));
    // The watch acknowledges at once and then saves what it deferred; time until it is gone.
    const t = performance.now();
    const left = await watch.waitExit(WATCH_EXIT_LIMIT_MS);
    const exit = { ms: performance.now() - t, code: left ? 0 : 1, stdout: "", stderr: left ? "" : `still running after ${WATCH_EXIT_LIMIT_MS / 1000} s` };
    add(summarize("watch: gone after that SessionEnd", [exit]), "from the hook's exit until the process is gone");
  } catch (e) {
    result.errors.push(`warm phase: ${(e as Error).message}${watch.exitNote()}`);
  } finally {
    watch.kill();
  }
}

async function warmRuns({ env, p, run, hook, add }: Ctx, watch: WatchProcess, fixtures: string): Promise<void> {
  const q = env.queries.slice(0, p.warmQueries);
  const warm = await series("search warm, hybrid (via watch)", q.length, (i, rss) => run(["search", q[i % q.length]!, "-j"], rss), searchCheck("hybrid"));
  add(warm, meanHits(warm.samples), "bun");
  // The same queries straight over the socket: the warm process's own share of a warm search.
  const direct: Sample[] = [];
  for (const query of q) {
    const t = performance.now();
    const r = await watch.ask({ op: "search", query, topK: 5 });
    direct.push({ ms: performance.now() - t, code: r?.ok ? 0 : 1, stdout: "", stderr: r ? String(r.error ?? "") : "no answer" });
  }
  add(summarize("watch: search over its socket (no CLI process)", direct), "the warm process's share of the row above");
  const prompt = (i: number) => env.prompts[i % env.prompts.length]!;
  const ups = await series("hook user-prompt-submit, inject (warm)", env.prompts.length, (i, rss) => hook("user-prompt-submit", { session_id: "b", prompt: prompt(i) }, rss), hookCheck);
  add(ups, injected(ups.samples), "bun");

  // SessionStart and SessionEnd alternate, as sessions come and go; the first pair measures RSS.
  const starts: Sample[] = [];
  const ends: Sample[] = [];
  for (let i = 0; i <= p.hooks; i++) {
    starts.push(await hook("session-start", { session_id: "b", source: "startup" }, i === 0));
    ends.push(await hook("session-end", { session_id: "b", reason: "exit" }, i === 0));
  }
  add(summarize("hook session-start", starts.slice(1), hookCheck, starts[0]));
  add(summarize("hook session-end (other session open)", ends.slice(1), hookCheck, ends[0]));

  // Stop: a new turn each run. The watch then re-indexes it, which lands on the warm process:
  // even runs time that re-index, odd runs time a prompt sent right after the turn ended (it
  // waits for the re-index). Then the debounced file event is let pass before the next run.
  const transcripts = stopTranscripts(env, fixtures, p.stops + 1);
  const reindex: Sample[] = [];
  const promptAfter: Sample[] = [];
  const stop = await series("hook stop (extract summary, warm re-index)", p.stops, async (i, rss) => {
    const s = await hook("stop", { session_id: `stop-${i}`, transcript_path: transcripts[i], stop_hook_active: false }, rss);
    if (!rss && i % 2 === 1) promptAfter.push(await hook("user-prompt-submit", { session_id: `stop-${i}`, prompt: prompt(i) }, false));
    const t = performance.now();
    const answer = await watch.ask({ op: "index", wait: true });
    if (!answer?.ok) throw new Error(`the watch process did not re-index the new turn (${answer ? String(answer.error) : "no answer"})`);
    if (!rss && i % 2 === 0) reindex.push({ ms: performance.now() - t, code: 0, stdout: "", stderr: "" });
    await Bun.sleep(WATCH_DEBOUNCE_MS + 300);
    await watch.ask({ op: "index", wait: true });
    return s;
  }, hookCheck);
  add(stop, "a new turn each run");
  add(summarize("watch: re-index after one new turn", reindex), "work in the warm process after each turn");
  add(summarize("hook user-prompt-submit, right after a Stop", promptAfter, hookCheck), `${injected(promptAfter)}; sent while the watch re-indexes that turn`);
}

/** profile.ts in a child process, so its heap does not inflate the benchmark's own. */
async function profile(env: BenchEnv, root: string, cmdEnv: Record<string, string>, withBuild: boolean): Promise<Record<string, Record<string, number>> | undefined> {
  const args = [env.bun, join(import.meta.dir, "profile.ts"), "--project", root, "--query", env.queries[0]!];
  if (withBuild) args.push("--build");
  const s = await runOnce(args, { cwd: root, env: cmdEnv });
  if (s.code !== 0) {
    env.log(`  profile failed: ${s.stderr.trim().split("\n").slice(-3).join(" ")}`);
    return undefined;
  }
  return parseJson(s.stdout.trim()) as Record<string, Record<string, number>>;
}
