/**
 * `recall`: notes, raw transcripts and the session table (plans, compaction summaries, final todo
 * lists, first prompts) searched together, one result per session turn.
 *
 * The three rankings are merged by reciprocal-rank fusion (score = Σ 1/(60 + rank) over the lists a
 * turn appears in). The notes' scores are a calibrated [0, 1] fusion of BM25 and cosine; the
 * transcripts' are raw FTS5 bm25 values whose scale depends on the corpus and the query. Putting
 * those on one scale would need a calibration we cannot make per query; ranks need none, and a
 * turn found by both its note and its own messages rises above one found by either alone.
 *
 * A note anchored to turn T (`<!-- session:S turn:T … -->`, T a turn uuid or a prompt id) and the
 * messages of turn T (rows carry both ids) are one result. Never prints.
 */
import type { Database } from "bun:sqlite";
import type { Context } from "../core/context.ts";
import { MemsearchError } from "../core/errors.ts";
import { localMinute } from "../core/text.ts";
import { noteTime } from "../core/since.ts";
import { agentOf, type Anchor } from "../core/anchor.ts";
import { chunkAnchor } from "../index/expand.ts";
import type { SearchResponse } from "../index/search.ts";
import type { StoredChunk } from "../index/types.ts";
import { TranscriptIndexBlocked, transcriptDbPath, withTranscriptIndex, type TranscriptHeal } from "../conversations/db.ts";
import { updateTranscriptIndex, type UpdateOptions, type UpdateProgress, type UpdateReport } from "../conversations/ingest.ts";
import { searchSessions, searchTranscripts, snippetOf, type SessionHit, type TranscriptHit } from "../conversations/search.ts";
import type { SessionKind } from "../conversations/rows.ts";
import { queryTokens } from "../conversations/fts.ts";
import { searchIndex, type Heal, type LoadedIndexes } from "../watch/gateway.ts";

export type RecallSource = "notes" | "transcripts" | "all";
export const RECALL_SOURCES: readonly RecallSource[] = ["notes", "transcripts", "all"];
export const DEFAULT_RECALL_LIMIT = 8;
export const MAX_RECALL_LIMIT = 100;
/** Reciprocal-rank fusion constant (the usual 60: a rank-1 hit is not worth many rank-5 ones). */
const RRF_K = 60;

export interface RecallRequest {
  query: string;
  limit: number;
  /** ms since epoch. */
  sinceMs?: number;
  /** The current project's identity (its root); transcripts of other projects are left out unless allProjects. */
  project: string;
  allProjects?: boolean;
  source?: RecallSource;
  /** Only turns with this agent (a note's anchor names it; see agentOf). */
  agent?: string;
}

/** A notes' search other than the project's own (the hub searches several projects' indexes at once). */
export type NotesSearch = (query: string, topK: number) => Promise<SearchResponse | "nothing indexed">;

export interface RecallDeps {
  /** Whose notes: the project's index, through the gateway (its watch process, else the index file). */
  ctx?: Context;
  /** Instead of `ctx`'s index. Without either, the notes are not searched. */
  searchNotes?: NotesSearch;
  /** `ctx`'s index already loaded (or built in memory) by the caller. */
  cache?: LoadedIndexes;
  /** An open transcript index; default: opened (and closed) here. */
  db?: Database;
  dbPath?: string;
  /** Bring the transcript index up to date first (default true; a hook on a tight budget may skip it). */
  update?: boolean;
  /** Rebuild the transcript index from scratch. */
  reindex?: boolean;
  env?: NodeJS.ProcessEnv;
  onProgress?: (p: UpdateProgress) => void;
  /** Archived conversations older than this many days are pruned by the update (0: keep all). */
  archiveDays?: number;
  /** Every agent's transcripts for the update (their adapters give them: agents/registry.ts transcriptSources); none: the index is searched as it is. */
  sources?: UpdateOptions["sources"];
}

export interface RecallNote {
  chunkHash: string;
  source: string;
  heading: string;
  startLine: number;
  endLine: number;
  snippet: string;
  score: number;
  anchor?: Anchor;
  /** Claude Code's curated memory (its memory folder, a CLAUDE.md), not a memsearch note. */
  curated?: boolean;
}

export interface RecallTranscript {
  path: string;
  session: string;
  turnUuid: string;
  promptId?: string;
  /** Messages of this turn among the hits. */
  matches: number;
  role: "user" | "assistant";
  snippet: string;
  score: number;
  tools: string[];
  paths: string[];
  /** Its transcript was deleted by Claude Code at this time (ms): the messages come from the archive. */
  archivedAt?: number;
}

/** A hit of the session table. */
export interface RecallSessionContent {
  kind: SessionKind;
  title: string;
  session: string;
  /** The transcript it came from, and its turn when known. */
  path: string;
  turnUuid: string;
  /** A plan's file, else empty. */
  planFile: string;
  snippet: string;
  score: number;
  archivedAt?: number;
}

export interface RecallResult {
  /** RRF score. */
  score: number;
  /** `YYYY-MM-DD HH:MM` (local time) when known. */
  date?: string;
  /** ms since epoch when known. */
  time?: number;
  session?: string;
  turn?: string;
  /** The agent the turn was with: the note's anchor says, or the transcript's row. */
  agent: string;
  /** Which tables it was found in: the notes' index (`curated`: Claude Code's curated memory), the messages table, the session table. */
  from: ("note" | "curated" | "transcript" | "session")[];
  note?: RecallNote;
  transcript?: RecallTranscript;
  sessionContent?: RecallSessionContent;
  /** The transcript of a note's turn when the turn itself was not among the hits (from its anchor). */
  anchorTranscript?: { path: string; turn: string };
}

export interface RecallResponse {
  results: RecallResult[];
  /** `heal`: what opening the project's index had to repair first, for the caller to say. */
  notes: { searched: boolean; mode?: SearchResponse["mode"]; warning?: string; nothingIndexed?: boolean; hits: number; heal?: Heal };
  transcripts: {
    searched: boolean;
    update?: UpdateReport;
    hits: number;
    /** Hits in the session table. */
    sessionHits?: number;
    messages?: number;
    /** The index was damaged and rebuilt by this call (one notice). */
    healed?: TranscriptHeal;
    /** Conversations could not be searched: something not ours stands where the index belongs (one line naming it). */
    unavailable?: string;
  };
}

export async function recall(req: RecallRequest, deps: RecallDeps = {}): Promise<RecallResponse> {
  const source = req.source ?? "all";
  const limit = Math.max(1, Math.floor(req.limit));
  // Each list is asked for more than `limit`: several hits collapse into one turn.
  const pool = Math.min(500, limit * 5);
  const res: RecallResponse = { results: [], notes: { searched: false, hits: 0 }, transcripts: { searched: false, hits: 0 } };
  const tokens = queryTokens(req.query);

  let notes: RecallNote[] = [];
  const searchNotes = deps.searchNotes ?? (deps.ctx ? projectNotes(deps.ctx, res, deps.cache) : undefined);
  if (source !== "transcripts" && searchNotes) {
    res.notes.searched = true;
    const r = await searchNotes(req.query, Math.min(1000, pool));
    if (r === "nothing indexed") res.notes.nothingIndexed = true;
    else {
      res.notes.mode = r.mode;
      if (r.warning) res.notes.warning = r.warning;
      // Curated files have no date: a time window leaves them out.
      notes = r.results
        .map((x) => noteOf(x.chunk, x.score, tokens, x.kind === "curated"))
        .filter((n) => (req.sinceMs === undefined || (!n.curated && noteTimeOf(n) >= req.sinceMs)) && (req.agent === undefined || agentOf(n.anchor) === req.agent));
      res.notes.hits = notes.length;
    }
  }

  let hits: TranscriptHit[] = [];
  let sessions: SessionHit[] = [];
  if (source !== "notes") {
    res.transcripts.searched = true;
    const run = async (db: Database) => {
      if (deps.update !== false && deps.sources) res.transcripts.update = await updateTranscriptIndex(db, { sources: deps.sources, onProgress: deps.onProgress, archiveDays: deps.archiveDays });
      const q = { query: req.query, project: req.allProjects ? undefined : req.project, sinceMs: req.sinceMs, agent: req.agent, limit: pool };
      return { hits: searchTranscripts(db, q), sessions: searchSessions(db, q) };
    };
    if (deps.db) ({ hits, sessions } = await run(deps.db));
    else {
      try {
        const r = await withTranscriptIndex(deps.dbPath ?? transcriptDbPath(deps.env), { reset: deps.reindex }, run);
        ({ hits, sessions } = r.value);
        if (r.healed) res.transcripts.healed = r.healed;
      } catch (e) {
        // Notes can still answer; asked for conversations only, the line is the answer.
        if (!(e instanceof TranscriptIndexBlocked) || source === "transcripts") throw e;
        res.transcripts.searched = false;
        res.transcripts.unavailable = e.message;
      }
    }
    res.transcripts.hits = hits.length;
    res.transcripts.sessionHits = sessions.length;
  }

  res.results = mergeRankings(notes, hits, sessions).slice(0, limit);
  return res;
}

/** The project's own notes, through the gateway; what opening its index repaired goes in `res.notes.heal`. */
function projectNotes(ctx: Context, res: RecallResponse, cache?: LoadedIndexes): NotesSearch {
  return async (query, topK) => {
    const found = await searchIndex(ctx, { query, topK }, cache ? { cache, useWatch: false } : {});
    if (found.kind === "nothing-indexed") return "nothing indexed";
    // Only the prompt hook's reader gives up on a slow watch process; this one loads the index itself.
    if (found.kind === "unanswered") throw new MemsearchError(found.why);
    if (Object.keys(found.heal).length) res.notes.heal = found.heal;
    return found.response;
  };
}

/** A result as the rankings are fused: its place in each ranking that has it. */
interface Group {
  result: RecallResult;
  noteRank?: number;
  hitRank?: number;
  sessionRank?: number;
}

/** The results so far, and each by the ids of its turn (its uuid, its prompt id). */
interface Fusion {
  byId: Map<string, Group>;
  groups: Group[];
}

/** The rankings fused, one result per turn, best first. */
export function mergeRankings(notes: RecallNote[], hits: TranscriptHit[], sessions: SessionHit[] = []): RecallResult[] {
  const f: Fusion = { byId: new Map(), groups: [] };
  hits.forEach((h, i) => addHit(f, h, i + 1));
  notes.forEach((n, i) => addNote(f, n, i + 1));
  sessions.forEach((c, i) => addSessionHit(f, c, i + 1));
  for (const g of f.groups) {
    g.result.score = (g.noteRank ? 1 / (RRF_K + g.noteRank) : 0) + (g.hitRank ? 1 / (RRF_K + g.hitRank) : 0) + (g.sessionRank ? 1 / (RRF_K + g.sessionRank) : 0);
    if (g.result.time) g.result.date = localMinute(g.result.time);
  }
  // On a tie the curated record comes first: it is what the user or Claude chose to keep.
  const curated = (r: RecallResult) => (r.from[0] === "curated" ? 1 : 0);
  return f.groups.map((g) => g.result).sort((a, b) => b.score - a.score || curated(b) - curated(a) || (b.time ?? 0) - (a.time ?? 0));
}

/** A message of the conversations: the result of its turn, which it makes on the first message found of it. */
function addHit(f: Fusion, h: TranscriptHit, rank: number): void {
  let g = f.byId.get(h.turnUuid) ?? (h.promptId ? f.byId.get(h.promptId) : undefined);
  if (!g) {
    g = { hitRank: rank, result: { score: 0, time: h.ts || undefined, session: h.session, turn: h.turnUuid, agent: h.agent, from: ["transcript"], transcript: transcriptOf(h) } };
    f.groups.push(g);
  }
  const t = g.result.transcript!;
  t.matches++;
  for (const x of h.tools) if (!t.tools.includes(x)) t.tools.push(x);
  for (const x of h.paths) if (!t.paths.includes(x)) t.paths.push(x);
  if (h.ts && (!g.result.time || h.ts < g.result.time)) g.result.time = h.ts;
  f.byId.set(h.turnUuid, g);
  if (h.promptId) f.byId.set(h.promptId, g);
}

function transcriptOf(h: TranscriptHit): RecallTranscript {
  return {
    path: h.path,
    session: h.session,
    turnUuid: h.turnUuid,
    ...(h.promptId ? { promptId: h.promptId } : {}),
    matches: 0,
    role: h.role,
    snippet: h.snippet,
    score: h.score,
    tools: h.tools,
    paths: h.paths,
    ...(h.archivedAt !== undefined ? { archivedAt: h.archivedAt } : {}),
  };
}

/** A note: it joins the result of its turn when the conversations found the turn too, else is a result of its own. */
function addNote(f: Fusion, n: RecallNote, rank: number): void {
  const turn = n.curated ? undefined : n.anchor?.turn;
  const g = turn && turn !== "-" ? f.byId.get(turn) : undefined;
  if (g) {
    if (g.noteRank === undefined) {
      g.noteRank = rank;
      g.result.note = n;
      g.result.from = ["note", "transcript"];
    }
    return;
  }
  const ng: Group = {
    noteRank: rank,
    result: {
      score: 0,
      time: noteTimeOf(n, false),
      ...(n.anchor ? { session: n.anchor.session, turn: n.anchor.turn } : {}),
      agent: agentOf(n.anchor),
      from: [n.curated ? "curated" : "note"],
      note: n,
      ...(n.anchor && n.anchor.transcript && n.anchor.transcript !== "-" ? { anchorTranscript: { path: n.anchor.transcript, turn: n.anchor.turn } } : {}),
    },
  };
  f.groups.push(ng);
  if (turn && turn !== "-") f.byId.set(turn, ng);
}

/**
 * A session-table hit joins the result of its turn (a plan and the messages that made it are one
 * result); one with no turn, or whose turn was not found, is a result of its own.
 */
function addSessionHit(f: Fusion, c: SessionHit, rank: number): void {
  const content: RecallSessionContent = {
    kind: c.kind,
    title: c.title,
    session: c.session,
    path: c.path,
    turnUuid: c.turnUuid,
    planFile: c.planFile,
    snippet: c.snippet,
    score: c.score,
    ...(c.archivedAt !== undefined ? { archivedAt: c.archivedAt } : {}),
  };
  const g = c.turnUuid ? f.byId.get(c.turnUuid) : undefined;
  if (g && g.sessionRank === undefined) {
    g.sessionRank = rank;
    g.result.sessionContent = content;
    g.result.from.push("session");
    return;
  }
  if (g) return; // a second row of a turn already counted (a plan and the todo list of one turn)
  const sg: Group = {
    sessionRank: rank,
    result: { score: 0, time: c.ts || undefined, session: c.session, ...(c.turnUuid ? { turn: c.turnUuid } : {}), agent: c.agent, from: ["session"], sessionContent: content },
  };
  f.groups.push(sg);
  if (c.turnUuid) f.byId.set(c.turnUuid, sg);
}

/** A note search result as a recall result's note: its anchor (from its section when split) and a snippet around the query. */
export function noteOf(chunk: StoredChunk, score: number, tokens: string[], curated = false): RecallNote {
  // A curated file's anchor-like comment is not memsearch's: it names no turn of ours.
  const anchor = curated ? undefined : chunkAnchor(chunk);
  const body = chunk.content
    .split("\n")
    .filter((l) => !l.includes("<!--") && !/^#{1,6}\s/.test(l))
    .join("\n");
  return {
    chunkHash: chunk.chunkHash,
    source: chunk.source,
    heading: chunk.heading,
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    snippet: snippetOf(body, tokens, 400),
    score,
    ...(anchor ? { anchor } : {}),
    ...(curated ? { curated: true } : {}),
  };
}

/** When a note was written (core/since.ts noteTime); a curated file has no date: never inside a time window, dated 0 when dating. */
function noteTimeOf(n: RecallNote, endOfDay = true): number {
  return noteTime(n.source, n.heading, endOfDay) ?? (endOfDay ? Number.POSITIVE_INFINITY : 0);
}


