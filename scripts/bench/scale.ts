/**
 * Everything measured at one corpus size, in the order a user meets it: build the index,
 * re-index with nothing changed, search with no warm process, then start the watch process and
 * search, prompt, start, stop and end sessions through it. Every command is a fresh process of
 * the compiled binary, with HOME and the memory in a temp folder.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { HOOK_EVENTS } from "../../src/hooks/events.ts";
import { dailyFile } from "../../src/memory/journal.ts";
import { generateCorpus, writeCorpus, type SentencePool } from "./corpus.ts";
import { cpuProfile, type CpuProfile } from "./cpuprof.ts";
import { buildFtsDb } from "./fts.ts";
import { exitedZero, percentile, runOnce, series, shellTimed, summarize, type Measurement, type Sample } from "./proc.ts";
import { WatchProcess } from "./watch.ts";
import { loadAverage } from "./machine.ts";
import { bytesNote, bytesWritten, kib, listing, onDiskRatio, writeRows } from "./writes.ts";

export interface BenchEnv {
  bin: string;
  /** The bun that runs the baselines and helper scripts. */
  bun: string;
  ollamaHost: string;
  /** The embedding model the Ollama double serves, when not memsearch's default (`--glove`). */
  embeddingModel?: string;
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
  /** What the watch holds at the end of the warm runs (not its peak): private pages and mapped files' pages. */
  watchResidentMiB?: { rss: number; anon: number; file: number };
  /** In-process step timings from profile.ts (cold open, search, build). */
  profile?: Record<string, Record<string, number>>;
  /** Bun's CPU profile of one cold and one warm `memsearch search`. */
  cpu: { cold?: CpuProfile; warm?: CpuProfile };
  errors: string[];
  /** Load averages (1/5/15 min) when this size began and ended. */
  loadStart?: string;
  loadEnd?: string;
  /** The index on disk after the writes, against a freshly merged copy of it. */
  onDisk?: string;
}

/** Each hook's budget, as the product sets it (the hook gives up past it). */
export const HOOK_BUDGET_MS: Record<string, number> = Object.fromEntries(Object.entries(HOOK_EVENTS).map(([event, e]) => [event, e.budgetMs]));

const STOP_TRANSCRIPT = "spotter/short.jsonl";
const WATCH_DEBOUNCE_MS = 1_500;
const WATCH_EXIT_LIMIT_MS = 180_000;
/** Longer than the watch process waits after a change before a deferred save or a merge (10 s). */
const WATCH_QUIET_WRITE_MS = 12_000;
/** A turn must be searchable within this (the drainer waits up to 10 s for a lagging transcript). */
const TURN_LIMIT_MS = 60_000;

/** How many runs: fewer where one run costs seconds (cold loads of a large index). */
function plan(chunks: number) {
  const big = chunks > 20_000;
  return {
    coldQueries: chunks <= 1_000 ? 20 : big ? 3 : 10,
    /** Cold runs with the index and the binary dropped from the page cache first. */
    evicted: big ? 3 : 5,
    /** remember and forget runs (no watch process), and the turns of the one import. */
    writes: big ? 3 : 5,
    importTurns: 1_000,
    warmQueries: 20,
    noop: big ? 3 : 5,
    hooks: 5,
    /** Half follow the turn until its note is searchable, half send a prompt right after the Stop. */
    stops: big ? 6 : 10,
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
    ...(env.embeddingModel ? { MEMSEARCH_EMBEDDING_MODEL: env.embeddingModel } : {}),
    MEMSEARCH_HOOKS_RECALL: "inject",
    MEMSEARCH_SUMMARIZER_PROVIDER: "extract",
    // The benchmark starts and stops the watch process itself.
    MEMSEARCH_NO_WATCH: "1",
    NO_COLOR: "1",
  };
}

/** One turn as Claude Code (2.1.196+) reports it to the hooks, and the transcript that holds it. */
interface StopTurn {
  path: string;
  sessionId: string;
  promptId: string;
  prompt: string;
  lastAssistantMessage: string;
  /** A word found nowhere else in the memory: the new note is searchable once a search finds it. */
  word: string;
}

/** A word of letters only (one token for any tokenizer), different for each run. */
function uniqueWord(i: number): string {
  let s = "";
  for (let n = i; ; n = Math.floor(n / 26) - 1) {
    s = String.fromCharCode(97 + (n % 26)) + s;
    if (n < 26) break;
  }
  return `zqvbenchmark${s}`;
}

/**
 * Copies of a real transcript's turn whose UUIDs are all rewritten per copy, so each Stop run is a
 * new turn (a turn already in memory is skipped, which would time the wrong path). As Claude Code
 * 2.1.196+ writes it: the prompt id on the user entry, and the turn complete (its final message in
 * the file), so the drainer finds the turn at once and never waits for a lagging transcript. The
 * turn is short.jsonl's prompt, thinking, two tool calls and their results, then a final reply that
 * holds the run's unique word (the interrupt and the later /model lines are left out).
 */
function stopTurns(env: BenchEnv, fixtures: string, n: number, dir = join(env.work, "transcripts"), offset = 0): StopTurn[] {
  const text = readFileSync(join(fixtures, STOP_TRANSCRIPT), "utf8");
  mkdirSync(dir, { recursive: true });
  return Array.from({ length: n }, (_, i) => {
    const tag = (0x1000 + offset + i).toString(16);
    const lines = text
      .replace(/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{4}/g, `$1${tag}`)
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, any>);
    const promptAt = lines.findIndex((o) => o.type === "user" && typeof o.message?.content === "string");
    const interrupt = lines.findIndex((o) => o.type === "user" && JSON.stringify(o.message?.content ?? "").includes("[Request interrupted"));
    if (promptAt < 0 || interrupt < promptAt) throw new Error(`${STOP_TRANSCRIPT} no longer has the expected turn`);
    const user = lines[promptAt]!;
    const promptId = randomUUID();
    user.promptId = promptId;
    const kept = lines.slice(0, interrupt);
    const last = kept[kept.length - 1]!;
    const word = uniqueWord(i);
    const reply = `Both tool calls were rejected, so \`mix phx.server\` was never run here (checkpoint ${word}); run it in your terminal and paste the first error.`;
    const template = kept.find((o) => o.type === "assistant" && o.message?.content?.[0]?.type === "text")!;
    kept.push({
      ...template,
      parentUuid: last.uuid,
      message: { ...template.message, id: `msg_bench${tag}`, content: [{ type: "text", text: reply }], stop_reason: "end_turn" },
      uuid: randomUUID(),
      timestamp: new Date(Date.parse(last.timestamp) + 2_000).toISOString(),
    });
    const path = join(dir, `stop-${i}.jsonl`);
    writeFileSync(path, kept.map((o) => JSON.stringify(o)).join("\n") + "\n");
    return { path, sessionId: String(user.sessionId), promptId, prompt: String(user.message.content), lastAssistantMessage: reply, word };
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
  const loadStart = loadAverage();
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
  add(await series("stats", 3, (_i, rss) => run(["stats"], rss)), "reads the whole index file to check its CRC-32s");

  await coldRuns(ctx, sections);
  const result: ScaleResult = { chunks, files, indexBytes, buildChunksPerSec, rows, errors, cpu: {}, loadStart };
  result.cpu.cold = await cpuProfile([env.bin, "search", env.queries[0]!, "-j"], { cwd: root, env: cmdEnv });
  await warmPhase(ctx, result, fixtures);
  result.profile = await profile(env, root, cmdEnv, p.profileBuild);
  // What a change costs with no watch process: last, so the rows above measure the corpus as built.
  const indexDir = join(root, ".memsearch", "index");
  const importDir = join(env.work, `import-${chunks}`);
  // Sessions of days ago (a session written to in the last minutes may be mid-turn: import leaves its last turn to the Stop hook).
  const dayAgo = new Date(Date.now() - 86_400_000);
  for (const t of stopTurns(env, fixtures, p.importTurns, importDir, 0x2000)) utimesSync(t.path, dayAgo, dayAgo);
  for (const row of await writeRows(run, indexDir, p.writes, importDir, p.importTurns)) add(row);
  rmSync(importDir, { recursive: true, force: true });
  result.onDisk = onDiskRatio(indexDir, env.work, env.embeddingModel ?? "nomic-embed-text");
  result.loadEnd = loadAverage();
  if (!env.keep) rmSync(root, { recursive: true, force: true });
  return result;
}

/** No watch process: every search loads the index; the baselines run on the same queries. */
async function coldRuns({ env, p, root, run, hook, add, cmdEnv }: Ctx, sections: string[]): Promise<void> {
  const q = env.queries.slice(0, p.coldQueries);
  const query = (i: number) => q[i % q.length]!;
  // Each cold search next to a `bun -e 0` of the same moment: the ratio is to this size's own floor.
  const rssRun = await run(["search", query(q.length), "-j"], true);
  const coldSamples: Sample[] = [];
  const floorSamples: Sample[] = [];
  for (let i = 0; i < q.length; i++) {
    coldSamples.push(await run(["search", query(i), "-j"], false));
    floorSamples.push(await runOnce([env.bun, "-e", "0"], { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: root } }));
  }
  const cold = summarize("search cold, hybrid", coldSamples, searchCheck("hybrid"), rssRun);
  add(summarize("baseline: `bun -e 0`, each run next to one of the row below", floorSamples), "the floor of this size's cold rows, same moments");
  add(cold, `${meanHits(cold.samples)}; page cache warm (the run measuring RSS read the files first)`, "bun-size");
  // The same searches timed from outside, by a shell: the bench's own timer must agree with it.
  const shell = await series("search cold, hybrid, timed by a shell (bash $EPOCHREALTIME)", Math.min(q.length, 10), async (i) => shellTimed([env.bin, "search", query(i), "-j"], root, cmdEnv), exitedZero, true);
  add(shell, "a bash process that times the command itself: spawn to exit as a user's shell sees it", "bun-size");
  // As a user meets a cold search after a while: the index and the binary no longer in the page cache.
  const evicted = await series("search cold, hybrid, index and binary dropped from the page cache", p.evicted, async (i) => {
    dropFromCache([env.bin, ...indexFiles(root)]);
    return run(["search", query(i), "-j"], false);
  }, searchCheck("hybrid"), true);
  add(evicted, "each run after `dd iflag=nocache` (POSIX_FADV_DONTNEED) of the binary and the index files: read from disk again", "bun-size");
  const bm25 = await series("search cold, BM25 only", q.length, (i, rss) => run(["search", query(i), "-j"], rss, { MEMSEARCH_EMBEDDING_PROVIDER: "none" }), searchCheck("bm25"));
  add(bm25, `${meanHits(bm25.samples)}; provider none`, "fts");

  const ftsDb = join(root, "fts5.sqlite");
  const t = performance.now();
  buildFtsDb(ftsDb, sections.map((content) => ({ heading: /^#+\s+(.*)$/m.exec(content)?.[1] ?? "", content })));
  const built = `same chunks; table built in ${((performance.now() - t) / 1000).toFixed(1)} s, ${(statSync(ftsDb).size / 1048576).toFixed(1)} MiB`;
  const fts = await series("baseline: FTS5 query, new bun process", q.length, (i, rss) => runOnce([env.bun, join(import.meta.dir, "fts.ts"), ftsDb, query(i)], { cwd: root, env: { PATH: process.env.PATH ?? "" }, rss }));
  add(fts, built);

  const prompt = (i: number) => env.prompts[i % env.prompts.length]!;
  const ups = await series("hook user-prompt-submit, no watch", p.hooks, (i, rss) => hook("user-prompt-submit", { session_id: "b", prompt_id: randomUUID(), prompt: prompt(i) }, rss), hookCheck);
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
    result.watchResidentMiB = watch.residentMiB();
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

async function warmRuns({ env, p, root, run, hook, add }: Ctx, watch: WatchProcess, fixtures: string): Promise<void> {
  const q = env.queries.slice(0, p.warmQueries);
  const warm = await series("search warm, hybrid (via watch)", q.length, (i, rss) => run(["search", q[i % q.length]!, "-j"], rss), searchCheck("hybrid"));
  add(warm, meanHits(warm.samples), "bun");
  // The same queries straight over the socket: the warm process's own share of a warm search.
  const direct: Sample[] = [];
  for (const query of q) {
    const t = performance.now();
    const r = await watch.ask({ op: "search", query, topK: 5 });
    direct.push({ ms: performance.now() - t, code: r?.ok ? 0 : 1, stdout: "", stderr: !r ? "no answer" : r.ok ? "" : r.error });
  }
  add(summarize("watch: search over its socket (no CLI process)", direct), "the warm process's share of the row above");
  const prompt = (i: number) => env.prompts[i % env.prompts.length]!;
  const ups = await series("hook user-prompt-submit, inject (warm)", env.prompts.length, (i, rss) => hook("user-prompt-submit", { session_id: "b", prompt_id: randomUUID(), prompt: prompt(i) }, rss), hookCheck);
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

  // A turn as Claude Code runs it: UserPromptSubmit with the prompt id (it records the prompt),
  // then Stop, which only queues the turn and starts the detached drainer; the drainer writes the
  // note and asks the watch to re-index. Even runs follow the turn until a warm search finds the
  // note; odd runs send the next prompt as soon as Stop returns (it meets the drainer and the
  // re-index). Every run then waits for the drainer to be gone and lets the debounced file event
  // pass, so runs never pile up.
  const dataDir = join(root, ".memsearch");
  const turns = stopTurns(env, fixtures, p.stops + 1);
  const endToEnd: Sample[] = [];
  const toMarkdown: number[] = [];
  const reindex: Sample[] = [];
  const promptAfter: Sample[] = [];
  let metReindex = 0;
  const indexDir = join(dataDir, "index");
  const turnBytes: number[] = [];
  const turnsStart = listing(indexDir);
  const stop = await series("hook stop (queues the turn)", p.stops, async (i, rss) => {
    const turnBefore = listing(indexDir);
    const t = turns[i]!;
    const base = { session_id: t.sessionId, transcript_path: t.path };
    const before = await hook("user-prompt-submit", { ...base, prompt_id: t.promptId, prompt: t.prompt }, false);
    const bad = hookCheck(before);
    if (bad) throw new Error(`the UserPromptSubmit before a Stop failed: ${bad}`);
    const ping = await watch.ask({ op: "ping" });
    const chunksBefore = ping?.ok ? ping.chunks : NaN;
    const start = performance.now();
    const s = await hook("stop", { ...base, prompt_id: t.promptId, last_assistant_message: t.lastAssistantMessage, stop_hook_active: false }, rss);
    const sent = performance.now() - start;
    // Followed from here on in every run (a file read every 2 ms, then pings), also while the prompt hook runs.
    const following = followTurn(watch, join(dataDir, "memory"), t.word, chunksBefore, start);
    if (!rss && i % 2 === 1) promptAfter.push(await hook("user-prompt-submit", { ...base, prompt_id: randomUUID(), prompt: prompt(i) }, false));
    const landed = await following;
    // What the prompt hook met: the note landed (the re-index starts right after) before it ended.
    if (!rss && i % 2 === 1 && landed.error === undefined) {
      const ended = sent + promptAfter[promptAfter.length - 1]!.ms;
      if (landed.markdownMs < ended) metReindex++;
    }
    if (!rss && i % 2 === 0) {
      endToEnd.push({ ms: landed.foundMs, code: landed.error ? 1 : 0, stdout: "", stderr: landed.error ?? "" });
      if (landed.error === undefined) {
        toMarkdown.push(landed.markdownMs);
        reindex.push({ ms: landed.indexedMs - landed.markdownMs, code: 0, stdout: "", stderr: "" });
      }
    }
    await drained(env.bin, root, dataDir);
    await Bun.sleep(WATCH_DEBOUNCE_MS + 300);
    const answer = await watch.ask({ op: "index", wait: true });
    if (!answer?.ok) throw new Error(`the watch process did not re-index (${answer ? String(answer.error) : "no answer"})`);
    if (!rss) turnBytes.push(bytesWritten(indexDir, turnBefore));
    return s;
  }, hookCheck);
  // What the watch process writes later, once quiet (a deferred save, or a merge): spread over the turns.
  const afterTurns = listing(indexDir);
  await Bun.sleep(WATCH_QUIET_WRITE_MS);
  const deferred = bytesWritten(indexDir, afterTurns);
  const all = bytesWritten(indexDir, turnsStart);
  add(
    { ...summarize("watch: index bytes written per added turn", turnBytes.map((b) => ({ ms: NaN, code: 0, stdout: "", stderr: "" }))), p50: NaN, p95: NaN },
    `${bytesNote(turnBytes)} as each turn is indexed; ${kib(deferred)} more once quiet (${WATCH_QUIET_WRITE_MS / 1000} s later: a deferred save or a merge), ${kib(deferred / Math.max(1, p.stops + 1))} per turn; ${kib(all)} in all for ${p.stops + 1} turns`,
  );
  add(stop, "queues the turn in `.memsearch/pending/` and starts the drainer; a new turn each run");
  const md = percentile(toMarkdown, 50);
  add(
    summarize("turn searchable: from Stop until a warm search finds its note", endToEnd),
    `extract summary, no model; the note is in the markdown after ${Number.isFinite(md) ? md.toFixed(0) : "–"} ms (p50: hook, drainer start, transcript, append), the rest is the warm re-index and one search`,
  );
  add(summarize("watch: re-index after one new turn", reindex), "from the note in the markdown until the warm index holds it (the drainer's request included)");
  add(summarize("hook user-prompt-submit, right after a Stop", promptAfter, hookCheck), `${injected(promptAfter)}; sent as the Stop hook exits, while the drainer writes the note; in ${metReindex}/${promptAfter.length} runs the note landed and the watch began re-indexing before it ended`);
}

interface Landed {
  /** From the Stop hook's spawn: the note in the markdown, the warm index holding it, a warm search finding it. */
  markdownMs: number;
  indexedMs: number;
  foundMs: number;
  error?: string;
}

/**
 * Follow one turn from the Stop hook's spawn (`start`): poll the day's markdown for the note's
 * word (a file read), then the watch's chunk count (a ping, microseconds of its time), then search
 * for the word until a search finds it; that search's answer ends the measurement. A chunk count
 * that does not move (the note merged into a chunk) falls back to searching after a while.
 */
async function followTurn(watch: WatchProcess, memoryDir: string, word: string, chunksBefore: number, start: number): Promise<Landed> {
  const out: Landed = { markdownMs: NaN, indexedMs: NaN, foundMs: NaN };
  const deadline = start + TURN_LIMIT_MS;
  while (performance.now() < deadline) {
    if (!Number.isFinite(out.markdownMs)) {
      if (noteWritten(memoryDir, word)) out.markdownMs = performance.now() - start;
      else {
        await Bun.sleep(2);
        continue;
      }
    }
    if (!Number.isFinite(out.indexedMs)) {
      const r = await watch.ask({ op: "ping" }, 5_000);
      if (r?.ok && r.chunks > chunksBefore) out.indexedMs = performance.now() - start;
      else if (performance.now() - start - out.markdownMs < 3_000) {
        await Bun.sleep(3);
        continue;
      }
    }
    const r = await watch.ask({ op: "search", query: word, topK: 5 }, 10_000);
    if (r?.ok && JSON.stringify(r.results).includes(word)) {
      out.foundMs = performance.now() - start;
      if (!Number.isFinite(out.indexedMs)) out.indexedMs = out.foundMs;
      return out;
    }
    await Bun.sleep(3);
  }
  out.foundMs = performance.now() - start;
  out.error = Number.isFinite(out.markdownMs) ? `no warm search found the note within ${TURN_LIMIT_MS / 1000} s` : `no note in the markdown within ${TURN_LIMIT_MS / 1000} s`;
  return out;
}

/** The note is in today's daily file (or tomorrow's, for a run across midnight). */
function noteWritten(memoryDir: string, word: string): boolean {
  const now = Date.now();
  for (const day of [now, now + 86_400_000]) {
    try {
      if (readFileSync(dailyFile(memoryDir, new Date(day)), "utf8").includes(word)) return true;
    } catch {}
  }
  return false;
}

/**
 * The drainer is done: no queued turn (`pending/*.json`), no `.drain.lock`, and no `memsearch hook
 * drain` process left in the project (it asks the watch to re-index after letting go of the lock).
 */
async function drained(bin: string, root: string, dataDir: string): Promise<void> {
  const pending = join(dataDir, "pending");
  const deadline = performance.now() + TURN_LIMIT_MS;
  for (;;) {
    let names: string[] = [];
    try {
      names = readdirSync(pending);
    } catch {}
    const busy = names.some((n) => n.endsWith(".json")) || existsSync(join(pending, ".drain.lock")) || drainerAlive(bin, root);
    if (!busy) return;
    if (performance.now() > deadline) throw new Error(`the drainer did not finish within ${TURN_LIMIT_MS / 1000} s (${names.join(", ")})`);
    await Bun.sleep(10);
  }
}

/** A live `<bin> hook drain` whose working folder is the project. */
function drainerAlive(bin: string, root: string): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv[0] === bin && argv[1] === "hook" && argv[2] === "drain" && readlinkSync(`/proc/${pid}/cwd`) === root) return true;
    } catch {}
  }
  return false;
}

/** profile.ts in a child process, so its heap does not inflate the benchmark's own. */
async function profile(env: BenchEnv, root: string, cmdEnv: Record<string, string>, withBuild: boolean): Promise<Record<string, Record<string, number>> | undefined> {
  // profile.ts embeds with the hashed double's own function and model name: its steps mean nothing against another model.
  if (env.embeddingModel) {
    env.log(`  profile skipped: it times the hashed double's vectors, not ${env.embeddingModel}'s`);
    return undefined;
  }
  // Run in the project, outside the repository: the kernels' assembler is preloaded by name.
  const args = [env.bun, "--preload", join(import.meta.dir, "..", "wat-preload.ts"), join(import.meta.dir, "profile.ts"), "--project", root, "--query", env.queries[0]!];
  if (withBuild) args.push("--build");
  const s = await runOnce(args, { cwd: root, env: cmdEnv });
  if (s.code !== 0) {
    env.log(`  profile failed: ${s.stderr.trim().split("\n").slice(-3).join(" ")}`);
    return undefined;
  }
  const out = parseJson(s.stdout.trim()) as Record<string, Record<string, number>>;
  // The first vector scan of a new process, with the WebAssembly kernel and with the JS loop,
  // alternated over a few processes (medians): what the float kernel saves a cold search.
  const scans: Record<"kernel" | "js", number[]> = { kernel: [], js: [] };
  for (let i = 0; i < 5; i++) {
    for (const kind of ["kernel", "js"] as const) {
      const r = await runOnce([...args.slice(0, 8), "--scan", ...(kind === "js" ? ["--no-kernel"] : [])], { cwd: root, env: cmdEnv });
      const ms = (parseJson(r.stdout.trim()) as Record<string, number> | undefined)?.["vector search (1st)"];
      if (r.code === 0 && typeof ms === "number") scans[kind].push(ms);
    }
  }
  if (scans.kernel.length && scans.js.length) {
    const median = (xs: number[]) => Math.round(percentile(xs, 50) * 10) / 10;
    out["first vector scan of a new process (median of 5)"] = { "WebAssembly kernel": median(scans.kernel), "JS loop (--no-kernel)": median(scans.js) };
  }
  return out;
}

/** The index folder's files (base, manifest, segments). */
function indexFiles(root: string): string[] {
  const dir = join(root, ".memsearch", "index");
  try {
    return readdirSync(dir).filter((n) => !n.endsWith(".lock")).map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** Drop these files' pages from the page cache (GNU dd's iflag=nocache: posix_fadvise DONTNEED; no root needed, nothing else touched). */
function dropFromCache(files: string[]): void {
  for (const f of files) Bun.spawnSync(["dd", `if=${f}`, "iflag=nocache", "count=0", "status=none"]);
}
