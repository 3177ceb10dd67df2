/**
 * Turns the measurements into tables (markdown, also printed on stdout) and checks them
 * against the targets of issue 5. A target that was not measured in this run says so; it is
 * never counted as a pass.
 */
import type { BenchRow } from "../bench-transcript.ts";
import type { Machine } from "./machine.ts";
import type { Measurement } from "./proc.ts";
import { HOOK_BUDGET_MS, type ScaleResult } from "./scale.ts";
import type { RedactRow } from "./redact.ts";
import type { TranscriptIndexResult } from "./transcripts-result.ts";

export interface GlobalResult {
  binBytes: number;
  bunFloor: Measurement;
  version: Measurement;
  /** The same timed from outside, and through npm's launcher. */
  extra?: Measurement[];
}

export interface Report {
  machine: Machine;
  date: string;
  command: string;
  rssMethod: string;
  elapsedS: number;
  loadAfter: string;
  global: GlobalResult;
  scales: ScaleResult[];
  /** Listing a transcript's turns against `wc -l` on the same file (issue 3). */
  transcript?: BenchRow[];
  /** The conversation index at 300k messages (issue 10; `--transcripts`). */
  transcriptIndex?: TranscriptIndexResult;
  /** Where the vectors came from, when not the hashed test double (`--glove`). */
  vectors?: string;
  /** Redaction in process, against one native scan of the same texts (issue 20). */
  redact?: RedactRow[];
}

const MB_500_IN_MIB = 500e6 / 2 ** 20;

const fmtMs = (x: number) => (!Number.isFinite(x) ? "–" : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const fmtMiB = (x?: number) => (x === undefined ? "–" : x.toFixed(0));
const thousands = (n: number) => n.toLocaleString("en-US");
const sizeName = (n: number) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

function ratio(m: Measurement, r: Report, scale?: ScaleResult): string {
  if (m.ratioTo === "bun") return `${(m.p50 / r.global.bunFloor.p50).toFixed(1)}× bun -e 0`;
  if (m.ratioTo === "bun-size") {
    const floor = find(scale, "baseline: `bun -e 0`, each run");
    return floor ? `${(m.p50 / floor.p50).toFixed(1)}× bun -e 0 (this size)` : "";
  }
  if (m.ratioTo === "fts") {
    const fts = find(scale, "baseline: FTS5");
    return fts ? `${(m.p50 / fts.p50).toFixed(1)}× FTS5` : "";
  }
  return "";
}

function find(scale: ScaleResult | undefined, prefix: string): Measurement | undefined {
  return scale?.rows.find((m) => m.label.startsWith(prefix));
}

function rowCells(m: Measurement, r: Report, scale?: ScaleResult): string[] {
  const note = [m.note, m.failures ? `**${m.failures} run(s) FAILED: ${m.firstFailure}**` : ""].filter(Boolean).join("; ");
  return [m.label, String(m.n), fmtMs(m.p50), m.n > 1 ? fmtMs(m.p95) : "", fmtMiB(m.rssMiB), ratio(m, r, scale), note];
}

const HEAD = ["Measurement", "n", "p50 ms", "p95 ms", "peak RSS MiB", "ratio (p50)", "notes"];

export function globalTable(r: Report): string {
  const g = r.global;
  return table(HEAD, [
    ["binary size", "", "", "", "", "", `${(g.binBytes / 1048576).toFixed(1)} MiB`],
    rowCells(g.bunFloor, r),
    rowCells({ ...g.version, ratioTo: "bun" }, r),
    ...(g.extra ?? []).map((m) => rowCells(m, r)),
  ]);
}

export function scaleSummary(s: ScaleResult): string {
  const parts = [
    ...(s.loadStart ? [`load average ${s.loadStart} at the start of this size, ${s.loadEnd ?? "–"} at its end`] : []),
    `${thousands(s.chunks)} chunks in ${thousands(s.files)} daily files`,
    `index ${(s.indexBytes / 1048576).toFixed(1)} MiB (${(s.indexBytes / s.chunks / 1024).toFixed(1)} KiB/chunk)`,
    `full build ${Math.round(s.buildChunksPerSec)} chunks/s`,
  ];
  if (s.watchReadyMs !== undefined) {
    parts.push(`watch ready in ${(s.watchReadyMs / 1000).toFixed(2)} s; watch peak RSS ${fmtMiB(s.watchLoadedRssMiB)} MiB once loaded, ${fmtMiB(s.watchRssMiB)} MiB after re-indexing new turns`);
    const r = s.watchResidentMiB;
    if (r) parts.push(`resident at the end ${fmtMiB(r.rss)} MiB: ${fmtMiB(r.anon)} MiB its own, ${fmtMiB(r.file)} MiB of mapped files (the binary's pages, one copy for every memsearch process)`);
  }
  if (s.onDisk) parts.push(`index on disk after the writes below: ${s.onDisk}`);
  return parts.join(" · ");
}

export function scaleTable(s: ScaleResult, r: Report): string {
  return table(HEAD, s.rows.map((m) => rowCells(m, r, s)));
}

/** The profile's steps as one table: a column per corpus size. */
export function profileTable(scales: ScaleResult[]): string {
  const withProfile = scales.filter((s) => s.profile);
  if (!withProfile.length) return "";
  const keys: [string, string][] = [];
  for (const s of withProfile) for (const [section, steps] of Object.entries(s.profile!)) for (const k of Object.keys(steps)) if (!keys.some(([a, b]) => a === section && b === k)) keys.push([section, k]);
  const rows = keys.map(([section, k]) => [`${section}: ${k}`, ...withProfile.map((s) => String(s.profile![section]?.[k] ?? "–"))]);
  return table(["step (ms unless named)", ...withProfile.map((s) => sizeName(s.chunks))], rows);
}

// ---------------------------------------------------------------------------------------------
// Targets

type Verdict = "pass" | "FAIL" | "not measured";
interface TargetRow {
  target: string;
  measured: string;
  verdict: Verdict;
}

const verdict = (ok: boolean): Verdict => (ok ? "pass" : "FAIL");

function atSize(r: Report, chunks: number): ScaleResult | undefined {
  return r.scales.find((s) => s.chunks === chunks);
}

function p50Target(r: Report, chunks: number, prefix: string, limit: number, what: string): TargetRow {
  const m = find(atSize(r, chunks), prefix);
  const target = `${what} p50 ≤ ${limit} ms at ${sizeName(chunks)}`;
  if (!m) return { target, measured: "", verdict: "not measured" };
  return { target, measured: `${fmtMs(m.p50)} ms (p95 ${fmtMs(m.p95)})`, verdict: verdict(m.p50 <= limit && m.failures === 0) };
}

/** Every measured process at one size, its peak RSS, and the largest. */
function peakRss(s: ScaleResult): { mib: number; who: string } {
  let best = { mib: s.watchRssMiB ?? 0, who: "watch process" };
  for (const m of s.rows) if (!m.label.startsWith("baseline") && (m.rssMiB ?? 0) > best.mib) best = { mib: m.rssMiB!, who: m.label };
  return best;
}

function rssTarget(r: Report): TargetRow {
  const s = atSize(r, 20_000);
  const target = "peak RSS of any process ≤ 500 MB (476.8 MiB) at 20k";
  if (!s) return { target, measured: "", verdict: "not measured" };
  const peak = peakRss(s);
  const over = s.rows.filter((m) => (m.rssMiB ?? 0) > MB_500_IN_MIB && !m.label.startsWith("baseline")).length + ((s.watchRssMiB ?? 0) > MB_500_IN_MIB ? 1 : 0);
  return { target, measured: `${fmtMiB(peak.mib)} MiB (${peak.who}); ${over} process kinds over`, verdict: verdict(peak.mib <= MB_500_IN_MIB) };
}

function bm25Target(r: Report): TargetRow {
  const s = atSize(r, 20_000);
  const ours = find(s, "search cold, BM25");
  const fts = find(s, "baseline: FTS5");
  const target = "BM25-only search (new process) within 3× of FTS5 at 20k";
  if (!ours || !fts) return { target, measured: "", verdict: "not measured" };
  const x = ours.p50 / fts.p50;
  return { target, measured: `${x.toFixed(1)}× (${fmtMs(ours.p50)} vs ${fmtMs(fts.p50)} ms)`, verdict: verdict(x <= 3) };
}

/**
 * 1k files is 30k chunks, more than --quick builds. Below that, the cost per extra file is taken
 * from the two largest runs (process start-up is paid once, so scaling the total would overstate
 * it), and the row says it is an extrapolation.
 */
function noopTarget(r: Report): TargetRow {
  const target = "no-op re-index of 1k files ≤ 300 ms";
  const bySize = [...r.scales].sort((a, b) => b.files - a.files);
  const [big, small] = bySize.map((s) => ({ files: s.files, m: find(s, "index: no-op") }));
  if (!big?.m) return { target, measured: "", verdict: "not measured" };
  if (big.files >= 1000) return { target, measured: `${fmtMs(big.m.p50)} ms at ${thousands(big.files)} files`, verdict: verdict(big.m.p50 <= 300) };
  const measured = `${fmtMs(big.m.p50)} ms at ${big.files} files`;
  if (!small?.m || small.files === big.files) return { target, measured: `${measured}; 1k files not reached`, verdict: "not measured" };
  const perFile = Math.max(0, (big.m.p50 - small.m.p50) / (big.files - small.files));
  const est = big.m.p50 + perFile * (1000 - big.files);
  return { target, measured: `${measured}; ≈ ${fmtMs(est)} ms at 1k files (extrapolated, ${perFile.toFixed(3)} ms/file)`, verdict: verdict(est <= 300) };
}

function versionTarget(r: Report): TargetRow {
  const x = r.global.version.p50 / r.global.bunFloor.p50;
  return { target: "`--version` within 3× of `bun -e 0`", measured: `${x.toFixed(1)}× (${fmtMs(r.global.version.p50)} vs ${fmtMs(r.global.bunFloor.p50)} ms)`, verdict: verdict(x <= 3) };
}

function hundredKTarget(r: Report): TargetRow {
  const s = atSize(r, 100_000);
  const target = "100k: every command works and every hook stays inside its budget (p95)";
  if (!s) return { target, measured: "100k not run (--quick)", verdict: "not measured" };
  const over = s.rows.filter((m) => {
    const event = /^hook ([a-z-]+)/.exec(m.label)?.[1];
    return event && m.p95 > HOOK_BUDGET_MS[event]!;
  });
  const problems = [...s.errors, ...over.map((m) => `${m.label} p95 ${fmtMs(m.p95)} ms > ${HOOK_BUDGET_MS[/^hook ([a-z-]+)/.exec(m.label)![1]!]} ms`)];
  return { target, measured: problems.length ? problems.join("; ") : "all commands succeeded; all hooks inside budget", verdict: verdict(problems.length === 0) };
}

export function targets(r: Report): TargetRow[] {
  const warm1k = find(atSize(r, 1_000), "search warm");
  const warm20k = p50Target(r, 20_000, "search warm", 80, "warm `memsearch search` (hybrid, new CLI process)");
  const socket20k = find(atSize(r, 20_000), "watch: search over its socket");
  if (socket20k) warm20k.measured += `; the watch's share ${fmtMs(socket20k.p50)} ms`;
  const at5k = p50Target(r, 5_000, "search warm", 40, "warm `memsearch search` (hybrid, new CLI process)");
  if (at5k.verdict === "not measured" && warm1k) at5k.measured = `5k not in this run (1k: ${fmtMs(warm1k.p50)} ms)`;
  const cold = p50Target(r, 20_000, "search cold, hybrid", 1000, "cold `memsearch search` (no warm process)");
  cold.target = "cold `memsearch search` (no warm process) ≤ 1 s at 20k (p50)";
  return [
    warm20k,
    at5k,
    p50Target(r, 20_000, "hook user-prompt-submit, inject (warm)", 100, "`user-prompt-submit`, inject mode, watch warm:"),
    cold,
    rssTarget(r),
    bm25Target(r),
    noopTarget(r),
    versionTarget(r),
    hundredKTarget(r),
  ];
}

export function targetsTable(r: Report): string {
  return table(["target (issue 5)", "measured", "verdict"], targets(r).map((t) => [t.target, t.measured, t.verdict === "FAIL" ? "**FAIL**" : t.verdict]));
}

// ---------------------------------------------------------------------------------------------
// Where the time goes: sentences computed from this run's numbers, never fixed text

export function observations(r: Report): string[] {
  const out: string[] = [];
  const start = r.global.version.p50;
  for (const s of r.scales) {
    const name = sizeName(s.chunks);
    const open = s.profile?.["Store.open"];
    const cold = find(s, "search cold, hybrid");
    if (cold && open) {
      const search = s.profile?.["searchChunks (whole query)"]?.["searchChunks hybrid"];
      out.push(`${name}: a cold search takes ${fmtMs(cold.p50)} ms and peaks at ${fmtMiB(cold.rssMiB)} MiB; in-process, Store.open takes ${fmtMs(open["Store.open (whole)"]!)} ms (reading the ${(s.indexBytes / 1048576).toFixed(0)} MiB file alone ${fmtMs(open["read index file"]!)} ms) and the search ${fmtMs(search ?? NaN)} ms.`);
    }
    const top = s.cpu.cold?.top.slice(0, 3);
    if (top?.length) out.push(`${name}: hottest functions of a cold search (self time): ${top.map((f) => `\`${f.fn}\` ${f.selfPct}%`).join(", ")}.`);
    const warm = find(s, "search warm");
    const socket = find(s, "watch: search over its socket");
    if (warm && socket) {
      out.push(`${name}: a warm search takes ${fmtMs(warm.p50)} ms: the warm process answers in ${fmtMs(socket.p50)} ms, the CLI process costs the other ${fmtMs(warm.p50 - socket.p50)} ms (\`--version\` alone: ${fmtMs(start)} ms).`);
    }
    const turn = find(s, "turn searchable");
    const stop = find(s, "hook stop");
    const reindex = find(s, "watch: re-index after one new turn");
    if (turn && stop && reindex) {
      out.push(`${name}: a turn's note is searchable ${fmtMs(turn.p50)} ms after the Stop hook starts (p95 ${fmtMs(turn.p95)}); the hook itself returns in ${fmtMs(stop.p50)} ms, the warm re-index takes ${fmtMs(reindex.p50)} ms of the rest.`);
    }
    if (reindex) out.push(`${name}: the watch's peak RSS goes from ${fmtMiB(s.watchLoadedRssMiB)} MiB once loaded to ${fmtMiB(s.watchRssMiB)} MiB after re-indexing the new turns.`);
  }
  return out;
}

/** Top self-time functions of one cold and one warm search, per size. */
export function cpuTables(scales: ScaleResult[]): string[] {
  const out: string[] = [];
  for (const s of scales) {
    for (const [kind, prof] of Object.entries(s.cpu)) {
      if (!prof) continue;
      out.push(
        `${sizeName(s.chunks)}, ${kind} \`memsearch search\` (${fmtMs(prof.wallMs)} ms wall under the profiler, ${fmtMs(prof.sampledMs)} ms sampled):`,
        "",
        table(["self %", "self ms", "function", "where"], prof.top.map((f) => [String(f.selfPct), fmtMs(f.selfMs), `\`${f.fn}\``, `\`${f.where}\``])),
        "",
      );
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The conversation index (issue 10)

function txRow(t: TranscriptIndexResult, prefix: string): Measurement | undefined {
  return t.rows.find((m) => m.label.startsWith(prefix));
}

export function transcriptIndexSummary(t: TranscriptIndexResult): string {
  return [
    `${thousands(t.messages)} messages in ${thousands(t.files)} transcripts (${t.copies} copies of the real fixtures, ${(t.jsonlBytes / 2 ** 30).toFixed(2)} GiB of JSONL)`,
    `index ${(t.dbBytes / 1048576).toFixed(0)} MiB`,
    `full build ${Math.round(t.buildMessagesPerSec).toLocaleString("en-US")} messages/s`,
  ].join(" · ");
}

export function transcriptIndexTable(t: TranscriptIndexResult): string {
  const shell = txRow(t, "baseline: the same FTS5 query");
  return table(
    HEAD,
    t.rows.map((m) => {
      const note = [m.note, m.failures ? `**${m.failures} run(s) FAILED: ${m.firstFailure}**` : ""].filter(Boolean).join("; ");
      const ratio = shell && /^`(memsearch )?recall/.test(m.label) ? `${(m.p50 / shell.p50).toFixed(1)}× sqlite3` : "";
      return [m.label, String(m.n), fmtMs(m.p50), m.n > 1 ? fmtMs(m.p95) : "", fmtMiB(m.rssMiB), ratio, note];
    }),
  );
}

export function transcriptTargets(r: Report): TargetRow[] {
  const t = r.transcriptIndex;
  const names = {
    recall: "`memsearch recall --raw` (new process) within 2× of the same FTS5 query in the `sqlite3` shell, 300k messages (p50 and p95)",
    update: "incremental update after one new turn < 50 ms",
    build: "first `recall` with no index: finishes and says how long the build took; messages/s",
  };
  if (!t) return Object.values(names).map((target) => ({ target, measured: "not run (`--transcripts`)", verdict: "not measured" as Verdict }));
  const out: TargetRow[] = [];
  const ours = txRow(t, "`memsearch recall --raw QUERY`");
  const shell = txRow(t, "baseline: the same FTS5 query");
  if (ours && shell) {
    const x50 = ours.p50 / shell.p50;
    const x95 = ours.p95 / shell.p95;
    out.push({ target: names.recall, measured: `p50 ${x50.toFixed(1)}× (${fmtMs(ours.p50)} vs ${fmtMs(shell.p50)} ms), p95 ${x95.toFixed(1)}× (${fmtMs(ours.p95)} vs ${fmtMs(shell.p95)} ms) at ${thousands(t.messages)} messages`, verdict: verdict(x50 <= 2 && x95 <= 2 && ours.failures === 0) });
  } else out.push({ target: names.recall, measured: t.problems.join("; ") || "not measured", verdict: "not measured" });
  const up = txRow(t, "incremental update");
  out.push(up ? { target: names.update, measured: `${fmtMs(up.p50)} ms (p95 ${fmtMs(up.p95)})`, verdict: verdict(up.p95 < 50 && up.failures === 0) } : { target: names.update, measured: "", verdict: "not measured" });
  const first = txRow(t, "first `recall --raw`");
  out.push(
    first
      ? { target: names.build, measured: `${(first.p50 / 1000).toFixed(1)} s in all; ${Math.round(t.buildMessagesPerSec).toLocaleString("en-US")} messages/s`, verdict: verdict(first.failures === 0 && Number.isFinite(t.buildMessagesPerSec)) }
      : { target: names.build, measured: "", verdict: "not measured" },
  );
  return out;
}

/** The section on its own (`bun scripts/bench/transcripts.ts`). */
export function transcriptIndexMarkdown(t: TranscriptIndexResult): string {
  return ["### Conversation index (issue 10)", "", transcriptIndexSummary(t), "", transcriptIndexTable(t), "", ...(t.problems.length ? [`Problems: ${t.problems.join("; ")}`, ""] : [])].join("\n");
}

// ---------------------------------------------------------------------------------------------
// The whole document

export function tablesMarkdown(r: Report): string {
  const out = ["### Start-up and binary", "", globalTable(r), ""];
  for (const s of r.scales) {
    out.push(`### ${thousands(s.chunks)} chunks × 768-d`, "", scaleSummary(s), "", scaleTable(s, r), "");
    if (s.errors.length) out.push(`Problems: ${s.errors.join("; ")}`, "");
  }
  const prof = profileTable(r.scales);
  if (prof) out.push("### In-process steps (`scripts/bench/profile.ts`, one process, page cache warm)", "", prof, "");
  const cpu = cpuTables(r.scales);
  if (cpu.length) out.push("### CPU profiles (`BUN_OPTIONS=--cpu-prof-md`, top self time; minified names are the bundle's)", "", ...cpu);
  const obs = observations(r);
  if (obs.length) out.push("### Where the time goes", "", ...obs.map((o) => `- ${o}`), "");
  if (r.transcript?.length) {
    out.push(
      "### Transcript reader (`memsearch transcript`, median of 5 new processes)",
      "",
      table(["case", "memsearch ms", "`wc -l` ms", "ratio"], r.transcript.map((t) => [t.name, fmtMs(t.ms), fmtMs(t.baselineMs), `${t.ratio.toFixed(1)}×`])),
      "",
    );
  }
  if (r.transcriptIndex) out.push(transcriptIndexMarkdown(r.transcriptIndex), "");
  if (r.redact?.length) {
    out.push(
      "### Redaction (`sanitize`, in process, best of 15 rounds; `scripts/bench/redact.ts`)",
      "",
      table(["texts", "count", "KiB", "sanitize ms", "one `indexOf` scan ms"], r.redact.map((x) => [x.name, thousands(x.texts), x.kib.toFixed(0), fmtMs(x.ms), x.baselineMs.toFixed(2)])),
      "",
    );
  }
  out.push("### Targets", "", targetsTable(r), "");
  out.push("### Targets of issue 10 (conversation index)", "", table(["target (issue 10)", "measured", "verdict"], transcriptTargets(r).map((t) => [t.target, t.measured, t.verdict === "FAIL" ? "**FAIL**" : t.verdict])), "");
  return out.join("\n");
}

export function markdown(r: Report): string {
  const m = r.machine;
  return [
    "# Benchmarks",
    "",
    `Generated by \`scripts/bench.ts\` on ${r.date} (${(r.elapsedS / 60).toFixed(1)} min). Do not edit by hand: re-run it.`,
    "",
    "## Reproduce",
    "",
    "```sh",
    r.command,
    "```",
    "",
    "`--quick` runs 1k and 20k chunks; the default adds 100k. `--bin PATH` measures an existing binary instead of building one; `--sizes 1000,5000` picks sizes; `--keep` keeps the temp projects; `--transcripts` adds the conversation index (issue 10: the real transcripts copied to 300k messages, `--messages N` to change; several minutes and about 5 GiB of temp files).",
    "",
    "## Machine",
    "",
    `- CPU: ${m.cpu}, ${m.cores} cores; RAM ${m.ramGiB} GiB`,
    `- OS: ${m.os}`,
    `- Bun ${m.bun} (compiled binary and baselines)`,
    `- Load average (1/5/15 min) at start: ${m.load}; at end: ${r.loadAfter}. Other work on the machine slows every row alike.`,
    `- Peak RSS: ${r.rssMethod}; the watch process: its VmHWM just before it stops.`,
    "",
    "## Method",
    "",
    "- Corpus: daily files (`# date`, `## Session`, `### HH:MM`, anchor comment, 2–5 bullets) of 30 turns each; each turn is one chunk. Bullets are real sentences, commands and paths from the fixture transcripts (`test/fixtures/transcripts`), combined by a seeded PRNG so no two chunks are alike (`scripts/bench/corpus.ts`, checked by `test/unit/bench-corpus.test.ts`).",
    r.vectors ?? "- Vectors: 768-d from the Ollama test double (`test/helpers/ollama-double.ts`, its own process). It answers in about a millisecond, so every time here leaves out the model: a real `nomic-embed-text` adds its query-embedding time to each hybrid search and its document-embedding time to index builds.",
    "- Every row is a new process of the compiled binary (`memsearch …` or `memsearch hook …` with the hook JSON on stdin), timed from spawn to exit, except the `watch:` rows and `turn searchable`; queries are 3–5-word phrases from the corpus vocabulary, prompts are real user sentences, each with a new `prompt_id` (the prompt hook records the prompt on disk under it). Cold rows run with no watch process; warm rows with `memsearch watch` running for the project. p95 is nearest-rank (with 5 runs, the slowest).",
    "- Turns: each Stop run is a new turn of a real transcript (`spotter/short.jsonl`'s first turn, its UUIDs rewritten per run, a prompt id on its user entry and a final reply holding a word found nowhere else in the memory), with the hook input Claude Code sends: first UserPromptSubmit (`session_id`, `prompt_id`, `prompt`, `transcript_path`), then Stop (the same ids, `last_assistant_message`). `hook stop` times the hook alone: it queues the turn in `.memsearch/pending/` and starts the detached drainer (`memsearch hook drain`), which writes the note (`summarizer.provider=extract`, no model; the transcript already holds the whole turn, so the drainer never waits for it) and asks the watch to re-index. `turn searchable` runs from the Stop hook's spawn until a search sent to the warm process finds the note's word (the bench polls the day's markdown every 2 ms, then the watch's chunk count, then searches); `watch: re-index after one new turn` is its part from the note landing in the markdown until the warm index holds it. Every other run sends the next prompt as soon as Stop exits instead (`right after a Stop`). Before the next run the bench waits until `.memsearch/pending/` holds no turn and no `.drain.lock` and no drainer process is left, then lets the watch's debounced file event pass.",
    "- Conversation index (`--transcripts`, `scripts/bench/transcripts.ts`): the real transcripts of `test/fixtures/transcripts` copied into a temp `~/.claude/projects/` until the index holds the wanted number of messages, each copy with its own session ids and uuids and its `cwd` rewritten to the temp project (which has no notes). The first `memsearch recall --raw` builds the index (timed under GNU time; the build's own time and messages/s are the line it prints on stderr). Then each query runs as `memsearch recall --raw` (a new process; it first checks the transcripts for changes, a stat of each hot one and of each project folder, and searches the notes) and, as the baseline, as the same SQL `searchTranscripts` runs (same MATCH expression, bm25 weights, project filter and `LIMIT 40`) in the `sqlite3` shell, a new process too (installed with `apt-get install -y sqlite3` when missing and running as root). The copies' files and folders get mtimes days to weeks in the past (a real history of ended sessions), except the one transcript the update rows append to (the session in progress). The incremental update appends one turn (two messages) to that transcript and times `updateTranscriptIndex` in-process, as the watch process runs it; the full-scan row times the update every file is stat'ed and every folder listed by (every 10 minutes, on the first build and `--reindex`), nothing having changed. The hook row sends real user prompts of the corpus to `memsearch hook user-prompt-submit` in that project: with no notes, each prompt takes the conversation path (read-only FTS5 query, no ingest, no model).",
    "- Baselines, same run, same chunks: `bun -e 0` (the floor any CLI call pays: the pinned bun of `node_modules/.bin/bun`, the runtime compiled into the binary, started in a folder with no `bunfig.toml`) and a new `bun` process that opens an SQLite FTS5 table of the same chunks and runs an any-term `MATCH` ordered by `bm25()`, `LIMIT 5` (`scripts/bench/fts.ts`). At each size the cold hybrid search alternates with a `bun -e 0` run, and its ratio is to those runs (`this size`): a ratio to a floor measured minutes earlier, under another load, meant little on a shared machine.",
    "- Timers (issue 34): every row is spawn to exit of a new process (`Bun.spawn`, output read to its end), the way a user's shell starts it; the rows `timed by a shell` run the same command inside `bash`, which times it with `$EPOCHREALTIME`: the two agree within the noise of the run. Cold rows are timed with the page cache warm (the run measuring peak RSS reads the files first: a user's search soon after a turn meets that); the rows `dropped from the page cache` drop the binary's and the index's pages first (`dd iflag=nocache count=0`, posix_fadvise DONTNEED on those files only), as a user meets a cold search after a while of other work. `through npm's launcher` is `memsearch` as the npm package installs it: a Node script that starts the binary (a layout of the package around this binary, in a temp folder).",
    "- Writes (issue 34): `remember`, `forget` (of those notes) and `import` of 1,000 turns (copies of the Stop runs' turn, their sessions a day old) run with no watch process, after every other row of the size; `index bytes written` counts the files of `.memsearch/index/` new or changed across each command (whole files: the whole index when it is rewritten, a segment and the manifest when one is appended). The watch's bytes per turn are counted the same way around each Stop run, plus what it writes in the 12 s after the last one (a deferred save or a merge). `index on disk` compares the index folder after the writes with a copy merged into one base in the bench's own process.",
    "- Each series first makes one extra, untimed run under GNU time for the peak RSS (GNU time adds 7–10 ms to a spawn here, as much as `bun -e 0` takes); that run also warms the page cache. One-off runs (the full build, the last SessionEnd) are timed under it.",
    "- Helper views: `watch: search over its socket` sends the same queries straight to the warm process (its share of a warm search); the CPU profiles are Bun's sampling profiler (`BUN_OPTIONS=--cpu-prof-md`) on one cold and one warm search (time spent waiting on the warm process is charged to whatever native frame was sampled last, e.g. `(anonymous)`, `parse` or `setImmediate`: read the warm profile for the CLI's own work only); the in-process steps come from `scripts/bench/profile.ts`.",
    "",
    "## Results",
    "",
    tablesMarkdown(r),
  ].join("\n");
}
