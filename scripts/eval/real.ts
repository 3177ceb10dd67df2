/**
 * The development benchmark of real coding work: public Claude Code sessions of real projects,
 * replayed in time order (a manifest of them: scripts/eval/real-set.ts). For each project, session
 * by session, as a user who installed memsearch on day one lives it:
 *
 *   1. a new session starts: SessionStart's context is built from the memory as it stands;
 *   2. its first typed prompt is asked: what the prompt hook would inject (recallForPrompt, the
 *      hook's own code, with the index held in this process as the watch process holds it), and
 *      the rankings of every searcher;
 *   3. then the session happens: its transcript is imported (`memsearch import`'s code, the
 *      extract summariser: no model), the notes indexed, the conversation index updated.
 *
 * A past session is *relevant* to a new one when both edited a file (Edit, Write, MultiEdit,
 * NotebookEdit); *strictly* relevant when the file they share was edited by few earlier sessions
 * (STRICT_EDITORS), so that a file every session touches does not make everything relevant. A
 * prompt with a relevant past session is a *positive*.
 *
 * The foreign-memory control: every prompt is also asked of every other project's whole memory;
 * nothing there is relevant, so anything injected is noise.
 *
 * Nothing here reads the user's own settings or memory: each project gets a HOME of its own.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { anchorsIn } from "../../src/core/anchor.ts";
import { loadContext, type Context } from "../../src/core/context.ts";
import { chunkMarkdown } from "../../src/index/chunker.ts";
import { embedderFor } from "../../src/index/embedder.ts";
import { openOrRebuild } from "../../src/index/heal.ts";
import { indexPaths } from "../../src/index/indexer.ts";
import { searchChunks, type SearchResponse } from "../../src/index/search.ts";
import type { Store } from "../../src/index/store.ts";
import { openTranscriptDb } from "../../src/conversations/db.ts";
import { updateTranscriptIndex } from "../../src/conversations/ingest.ts";
import { searchTranscripts } from "../../src/conversations/search.ts";
import { planImport, runImport } from "../../src/memory/import.ts";
import { summarizerOptions, summarizeTurn } from "../../src/memory/summarizer.ts";
import { recallForPrompt } from "../../src/recall/for-prompt.ts";
import { gate } from "../../src/recall/gate.ts";
import { recall } from "../../src/recall/recall.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { namedTranscripts, transcriptSources } from "../../src/agents/registry.ts";
import { isTrivialPrompt } from "../../src/transcript/turn-kind.ts";
import { ftsMatch } from "../bench/fts.ts";
import { floorsTable, median, passedAt, round4, share, SWEPT_TOP_K } from "./controls.ts";
import { sessionStartGiven } from "./real-session-start.ts";
import type { RealProject, RealSet } from "./real-set.ts";
import type { ConfigKey, ConfigValue } from "../../src/core/config.ts";

/** Config flags as `loadContext` takes them. */
type Flags = Partial<Record<ConfigKey, ConfigValue>>;

/** A shared file edited by at most this many earlier sessions makes a session strictly relevant. */
export const STRICT_EDITORS = 3;
/** The rankings are judged at this depth (sessions, not chunks). */
export const RANK_DEPTH = 5;

export interface RealSearcher {
  name: string;
  label: string;
  /** An Ollama-compatible host serving `model`, or keyword only. */
  ollamaHost?: string;
  model?: string;
}

/** One first prompt, asked of its own project's memory. */
export interface Asked {
  project: string;
  session: string;
  prompt: string;
  words: number;
  relevant: string[];
  strict: string[];
  /** Sessions of what the hook injected (empty: nothing), and its characters. */
  injected: string[];
  chars: number;
  /** Sessions SessionStart's context holds, and its characters. */
  sessionStart: string[];
  sessionStartChars: number;
  /** Sessions of what passed the hook's gate but was held back as already given (by SessionStart). */
  repeated: string[];
  /** Every note the hook's gate judged, in the search's order: what a perfect gate could choose from, and what another floor would pass. */
  judged: Judged[];
  /** Each ranking's sessions, best first. */
  rankings: Record<string, string[]>;
}

/** A note the prompt hook's gate judged: its session and its relevance (gate.ts). */
export interface Judged {
  session?: string;
  relevance: number;
}

/** One prompt asked of another project's memory. */
export interface AskedForeign {
  project: string;
  memory: string;
  session: string;
  injected: number;
  chars: number;
  judged: Judged[];
}

export interface RealRun {
  searcher: string;
  label: string;
  asked: Asked[];
  foreign: AskedForeign[];
}

interface Opened {
  project: RealProject;
  /** The project's own HOME (Claude Code's folder, ~/.memsearch). */
  home: string;
  ctx: Context;
  store: Store;
  db: Database;
  fts: Database;
  /** Sessions already in memory, oldest first, with their last activity. */
  past: { id: string; end: number }[];
}

const words = (s: string) => (s.match(/[\p{L}\p{N}_]+/gu) ?? []).length;

/**
 * Each project's sessions in order, each first prompt asked before its session is imported, then
 * every prompt asked of every other project's final memory.
 */
export async function runReal(set: RealSet, s: RealSearcher, work: string, log: (l: string) => void): Promise<RealRun> {
  const started = performance.now();
  const asked: Asked[] = [];
  const opened: Opened[] = [];
  try {
    for (const project of set.projects) {
      const o = await openProject(project, s, join(work, `${s.name}-${project.slug}`));
      opened.push(o);
      for (const session of project.sessions) {
        if (o.past.length && session.typed && !isTrivialPrompt(session.firstPrompt)) asked.push(await ask(o, session.id, session.firstPrompt, Date.parse(session.start), labels(project, session.id)));
        await ingest(o, session.id);
      }
    }
    const foreign: AskedForeign[] = [];
    for (const memory of opened) {
      // Asked an hour after the other project's last session: its notes as recent as they get,
      // so that recency cannot hide a prompt in it.
      const fresh = Math.max(...memory.past.map((p) => p.end)) + 3_600_000;
      for (const a of asked) {
        if (a.project === memory.project.slug) continue;
        const r = await hookDecision(memory, a.prompt, `${a.session}-foreign`, fresh);
        foreign.push({ project: a.project, memory: memory.project.slug, session: a.session, injected: r.sessions.length, chars: r.chars, judged: r.judged });
      }
    }
    log(`  ${s.label}: ${asked.length} prompts, ${foreign.length} foreign asks in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return { searcher: s.name, label: s.label, asked, foreign };
  } finally {
    for (const o of opened) {
      o.db.close();
      o.fts.close();
    }
  }
}

/** The relevant earlier sessions of a session: loose (any shared edited file) and strict (a shared file few earlier sessions edited). */
export function labels(project: RealProject, sessionId: string): { relevant: string[]; strict: string[] } {
  const i = project.sessions.findIndex((x) => x.id === sessionId);
  const mine = new Set(project.sessions[i]!.editedFiles);
  const earlier = project.sessions.slice(0, i);
  const editors = new Map<string, number>();
  for (const e of earlier) for (const f of new Set(e.editedFiles)) editors.set(f, (editors.get(f) ?? 0) + 1);
  const relevant: string[] = [];
  const strict: string[] = [];
  for (const e of earlier) {
    const shared = e.editedFiles.filter((f) => mine.has(f));
    if (!shared.length) continue;
    relevant.push(e.id);
    if (shared.some((f) => (editors.get(f) ?? 0) <= STRICT_EDITORS)) strict.push(e.id);
  }
  return { relevant, strict };
}

async function openProject(project: RealProject, s: RealSearcher, dir: string): Promise<Opened> {
  // The project inside the home, as a user's is: a path next to it (a `proj-backup` a session
  // touched) is then written `~/…`, not with this run's temp folder, whose random name would make
  // each run embed other texts.
  const home = join(dir, "home");
  const root = join(home, "proj");
  mkdirSync(join(root, ".git"), { recursive: true });
  for (const sub of project.subdirs) mkdirSync(join(root, sub), { recursive: true });
  mkdirSync(join(home, ".claude", "projects", projectSlug(root)), { recursive: true });
  const env = { HOME: home, PATH: process.env.PATH ?? "", MEMSEARCH_NO_WATCH: "1", TZ: "UTC" };
  const flags: Flags = s.ollamaHost ? { "embedding.provider": "ollama", "embedding.host": s.ollamaHost, ...(s.model ? { "embedding.model": s.model } : {}) } : { "embedding.provider": "none" };
  // Functions that read the environment themselves (provenance, the projects folder) see this project's.
  process.env.HOME = home;
  const ctx = loadContext({ ...flags, "summarizer.provider": "extract" }, root, env);
  mkdirSync(ctx.project.memoryDir, { recursive: true });
  const db = openTranscriptDb(join(dir, "transcripts.sqlite"));
  const fts = new Database(":memory:");
  fts.run("CREATE VIRTUAL TABLE chunks USING fts5(session UNINDEXED, content, tokenize = 'porter unicode61')");
  const { store } = await openOrRebuild(ctx);
  return { project, home, ctx, store, db, fts, past: [] };
}

/** The session happens: its transcript lands in Claude Code's folder, is imported, indexed, and read into the conversation index. */
async function ingest(o: Opened, sessionId: string): Promise<void> {
  const session = o.project.sessions.find((x) => x.id === sessionId)!;
  process.env.HOME = o.home;
  const { ctx } = o;
  const projectsDir = join(o.home, ".claude", "projects");
  const dest = join(projectsDir, projectSlug(ctx.project.root), `${session.id}.jsonl`);
  writeFileSync(dest, o.project.transcript(session.id, ctx.project.root));
  const plan = await planImport({ root: ctx.project.root, memoryDir: ctx.project.memoryDir, dataDir: ctx.project.dataDir, sources: await namedTranscripts([dest]), activeMs: 0 });
  await runImport(plan, { memoryDir: ctx.project.memoryDir, summarize: (t) => summarizeTurn(t, summarizerOptions(ctx.config, { provider: "extract", paths: { root: ctx.project.root, home: o.home } })) });
  const report = await indexPaths({ paths: [ctx.project.memoryDir], indexDir: ctx.project.indexDir, config: ctx.config, embedder: embedderFor(ctx.config, "index") });
  if (report.embedderWarning) throw new Error(`embedding failed: ${report.embedderWarning}`);
  o.store = (await openOrRebuild(ctx)).store;
  await updateTranscriptIndex(o.db, { sources: transcriptSources({ HOME: o.home }), full: true });
  // The FTS5 baseline over the same notes: this session's chunks.
  const insert = o.fts.prepare("INSERT INTO chunks (session, content) VALUES (?, ?)");
  for (const name of plan.days) {
    const path = join(ctx.project.memoryDir, `${name}.md`);
    const text = await Bun.file(path).text();
    for (const c of chunkMarkdown(text, path)) {
      const a = anchorsIn(c.content)[0];
      if (a?.session === session.id) insert.run(a.session, c.content);
    }
  }
  o.past.push({ id: session.id, end: Date.parse(session.end ?? session.start) });
}

function sessionsOf(ids: (string | undefined)[], depth = 10): string[] {
  const out: string[] = [];
  for (const id of ids) if (id && !out.includes(id)) out.push(id);
  return out.slice(0, depth);
}

async function ask(o: Opened, session: string, prompt: string, now: number, label: { relevant: string[]; strict: string[] }): Promise<Asked> {
  process.env.HOME = o.home;
  const { ctx, store } = o;
  const embedder = embedderFor(ctx.config, "query");
  // SessionStart first: its context is on record before the prompt, as in a session.
  const start = sessionStartGiven(ctx, session);
  const hook = await hookDecision(o, prompt, session, now);
  const notes = await searchChunks({ query: prompt, topK: 50, store, config: ctx.config, embedder, now });
  const fused = await recall(
    { query: prompt, limit: 30, project: ctx.project.root },
    { searchNotes: async (q, topK) => searchChunks({ query: q, topK, store, config: ctx.config, embedder, now }), db: o.db, update: false },
  );
  const match = ftsMatch(prompt);
  const fts = match ? (o.fts.query("SELECT session FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT 100").all(match) as { session: string }[]) : [];
  const conv = searchTranscripts(o.db, { query: prompt, project: ctx.project.root, limit: 200 });
  const newest = [...o.past].sort((a, b) => b.end - a.end).map((p) => p.id);
  return {
    project: o.project.slug,
    session,
    prompt,
    words: words(prompt),
    ...label,
    injected: hook.sessions,
    chars: hook.chars,
    sessionStart: start.sessions,
    sessionStartChars: start.chars,
    repeated: hook.repeated,
    judged: hook.judged,
    rankings: {
      search: sessionsOf(notes.results.map((r) => anchorsIn(r.chunk.content)[0]?.session)),
      recall: sessionsOf(fused.results.map((r) => r.session)),
      "fts5-notes": sessionsOf(fts.map((r) => r.session)),
      "fts5-conversations": sessionsOf(conv.map((h) => h.session)),
      newest: newest.slice(0, 10),
    },
  };
}

/** What the prompt hook injects for this prompt from this memory: the sessions it came from, its characters, and the notes its gate judged. */
async function hookDecision(o: Opened, prompt: string, session: string, now: number): Promise<{ sessions: string[]; repeated: string[]; chars: number; judged: Judged[] }> {
  process.env.HOME = o.home;
  const { ctx, store } = o;
  const embedder = embedderFor(ctx.config, "query");
  let judged: SearchResponse | undefined;
  const r = await recallForPrompt(
    { prompt, session },
    {
      ctx,
      notes: async (q) => (judged = await searchChunks({ ...q, store, config: ctx.config, embedder, now })),
      transcriptDb: join(ctx.project.root, "..", "transcripts.sqlite"),
    },
  );
  const relevance = judged ? gate(judged, ctx.config).candidates.map((c) => c.relevance) : [];
  const notes = (judged?.results ?? []).map((x, i) => ({ session: anchorsIn(x.chunk.content)[0]?.session, relevance: round4(relevance[i]!) }));
  return { sessions: sessionsOf(r.given.map((g) => g.session), 100), repeated: sessionsOf(r.repeated.map((g) => g.session), 100), chars: r.context?.length ?? 0, judged: notes };
}

// ---------------------------------------------------------------------------------------------
// Scores

export interface RealTotals {
  prompts: number;
  positives: number;
  useful: number;
  silent: number;
  noise: number;
  /** Prompts with no relevant earlier session that got an injection. */
  negativesInjected: number;
  negatives: number;
  foreign: number;
  foreignInjected: number;
  medianChars: number;
  /** Positives for which SessionStart's context or the hook's injection holds a relevant session. */
  covered: number;
  /** Positives for which SessionStart's context alone does. */
  sessionStartCovered: number;
  /** Median characters of SessionStart's context. */
  sessionStartChars: number;
  /** Positives whose relevant memory passed the hook's gate but was held back as already in SessionStart's context. */
  heldBack: number;
  /**
   * Positives for which a note the gate judged is of a relevant session: the most a perfect gate
   * could make useful, with the search as it ranks (a gate only chooses among these).
   */
  reachable: number;
  /** Each ranking's R@5 and nDCG@5, on the loose and the strict label. */
  rankings: Record<string, { r5: number; ndcg5: number; r5Strict: number; ndcg5Strict: number; strictPositives: number }>;
}

function ndcgAt(ranked: string[], relevant: Set<string>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(relevant.size, k); i++) ideal += 1 / Math.log2(i + 2);
  return ideal ? dcg / ideal : 0;
}

export function realTotals(run: RealRun): RealTotals {
  const pos = run.asked.filter((a) => a.relevant.length);
  const neg = run.asked.filter((a) => !a.relevant.length);
  const hit = (a: Asked, ids: string[]) => ids.some((id) => a.relevant.includes(id));
  const rankings: RealTotals["rankings"] = {};
  const strictPos = run.asked.filter((a) => a.strict.length);
  for (const name of Object.keys(run.asked[0]?.rankings ?? {})) {
    const mean = (xs: Asked[], f: (a: Asked) => number) => (xs.length ? xs.reduce((s, a) => s + f(a), 0) / xs.length : 0);
    rankings[name] = {
      r5: mean(pos, (a) => (a.rankings[name]!.slice(0, RANK_DEPTH).some((id) => a.relevant.includes(id)) ? 1 : 0)),
      ndcg5: mean(pos, (a) => ndcgAt(a.rankings[name]!, new Set(a.relevant), RANK_DEPTH)),
      r5Strict: mean(strictPos, (a) => (a.rankings[name]!.slice(0, RANK_DEPTH).some((id) => a.strict.includes(id)) ? 1 : 0)),
      ndcg5Strict: mean(strictPos, (a) => ndcgAt(a.rankings[name]!, new Set(a.strict), RANK_DEPTH)),
      strictPositives: strictPos.length,
    };
  }
  return {
    prompts: run.asked.length,
    positives: pos.length,
    useful: pos.filter((a) => hit(a, a.injected)).length,
    silent: pos.filter((a) => !a.injected.length && !hit(a, a.repeated)).length,
    noise: pos.filter((a) => a.injected.length && !hit(a, a.injected)).length,
    negatives: neg.length,
    negativesInjected: neg.filter((a) => a.injected.length).length,
    foreign: run.foreign.length,
    foreignInjected: run.foreign.filter((f) => f.injected).length,
    medianChars: median(run.asked.filter((a) => a.chars).map((a) => a.chars)),
    covered: pos.filter((a) => hit(a, [...a.injected, ...a.sessionStart])).length,
    sessionStartCovered: pos.filter((a) => hit(a, a.sessionStart)).length,
    sessionStartChars: median(run.asked.map((a) => a.sessionStartChars)),
    heldBack: pos.filter((a) => !hit(a, a.injected) && hit(a, a.repeated)).length,
    reachable: pos.filter((a) => hit(a, sessionsOf(a.judged.map((j) => j.session), 100))).length,
    rankings,
  };
}

const pct = (n: number, of: number) => (of ? `${n} / ${of} (${((100 * n) / of).toFixed(1)}%)` : "0 / 0");

/** Useful, noise on positives and the foreign control if the gate's floor were `floor` (the hook's other rules left out). */
export function atFloor(run: RealRun, floor: number): { useful: number; noise: number; foreign: number; positives: number; foreignAsked: number } {
  const pos = run.asked.filter((a) => a.relevant.length);
  const picked = (a: Asked) => passedAt(a.judged, floor, SWEPT_TOP_K);
  return {
    useful: pos.filter((a) => picked(a).some((j) => j.session !== undefined && a.relevant.includes(j.session))).length,
    noise: pos.filter((a) => picked(a).length && !picked(a).some((j) => j.session !== undefined && a.relevant.includes(j.session))).length,
    foreign: run.foreign.filter((f) => passedAt(f.judged, floor, SWEPT_TOP_K).length).length,
    positives: pos.length,
    foreignAsked: run.foreign.length,
  };
}

function floorCell(run: RealRun, floor: number): string {
  const t = atFloor(run, floor);
  return `${share(t.useful, t.positives)} / ${share(t.noise, t.positives)} / ${share(t.foreign, t.foreignAsked)}`;
}

export function realTables(runs: RealRun[]): string {
  const totals = runs.map((r) => ({ r, t: realTotals(r) }));
  const hook = [
    "| searcher | useful (positives) | a perfect gate's most: the gate's candidates hold a relevant session | held back, SessionStart has it | silent (positives) | noise on positives | injected, no relevant session | foreign control | median characters | SessionStart holds one (median characters) | SessionStart + hook |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...totals.map(({ r, t }) => `| ${r.label} | ${pct(t.useful, t.positives)} | ${pct(t.reachable, t.positives)} | ${pct(t.heldBack, t.positives)} | ${pct(t.silent, t.positives)} | ${pct(t.noise, t.positives)} | ${pct(t.negativesInjected, t.negatives)} | ${pct(t.foreignInjected, t.foreign)} | ${t.medianChars} | ${pct(t.sessionStartCovered, t.positives)} (${t.sessionStartChars}) | ${pct(t.covered, t.positives)} |`),
  ];
  const rank = ["| searcher | ranking | R@5 | nDCG@5 | R@5 strict | nDCG@5 strict |", "| --- | --- | ---: | ---: | ---: | ---: |"];
  for (const { r, t } of totals) for (const [name, m] of Object.entries(t.rankings)) rank.push(`| ${r.label} | ${name} | ${m.r5.toFixed(3)} | ${m.ndcg5.toFixed(3)} | ${m.r5Strict.toFixed(3)} | ${m.ndcg5Strict.toFixed(3)} |`);
  const sweep = floorsTable(runs, floorCell);
  return `${hook.join("\n")}\n\nThe gate at other floors (\`hooks.inject_min_score\`), useful / noise on positives / foreign control:\n\n${sweep}\n\nRankings (sessions; positives ${totals[0]?.t.positives ?? 0}, strict positives ${Object.values(totals[0]?.t.rankings ?? {})[0]?.strictPositives ?? 0}):\n\n${rank.join("\n")}`;
}

