/**
 * Queries over the transcript index. One prepared statement, no model, no index to load: a new
 * process answers in milliseconds, so the prompt hook can call `searchTranscripts` too.
 */
import type { Database } from "bun:sqlite";
import { oneLine } from "../core/text.ts";
import { DEFAULT_AGENT } from "../core/anchor.ts";
import { BM25_WEIGHTS, SESSION_BM25_WEIGHTS } from "./db.ts";
import type { SessionKind } from "./rows.ts";
import { ftsText, matchExpression, queryTokens } from "./fts.ts";
import { isRecord, MESSAGE_COLS, messageColumns } from "./rows.ts";

export interface TranscriptQuery {
  query: string;
  /** Project identity (git top level); undefined = every project. */
  project?: string;
  /** Only messages at or after this time (ms since epoch). */
  sinceMs?: number;
  /** Only this agent's transcripts (`claude`, `codex`…); undefined = every agent's. */
  agent?: string;
  limit: number;
}

export interface TranscriptHit {
  rowid: number;
  project: string;
  session: string;
  /** uuid of the user entry that opened the turn (`memsearch transcript PATH --turn …`). */
  turnUuid: string;
  promptId?: string;
  uuid: string;
  /** ms since epoch. */
  ts: number;
  role: "user" | "assistant";
  path: string;
  tools: string[];
  paths: string[];
  /** Short excerpt around the first query term found. */
  snippet: string;
  /** −bm25 with the column weights: higher is better, only comparable within one query. */
  score: number;
  /** The query's tokens (stop words left out) this message holds, in its text, paths, tools or detail. */
  terms?: string[];
  /** When Claude Code deleted its transcript (ms): the message is kept in the archive. */
  archivedAt?: number;
  /** The agent whose transcript holds it. */
  agent: string;
}

/** The filters every query of the index takes, on the row's alias `a` and its file `f`. */
function filters(q: TranscriptQuery, a: string, match: string): { where: string[]; args: (string | number)[] } {
  const where = [`${a === "m" ? "msg_fts" : "session_fts"} MATCH ?`];
  const args: (string | number)[] = [match];
  if (q.project !== undefined) {
    where.push(`${a}.project = ?`);
    args.push(q.project);
  }
  if (q.sinceMs !== undefined) {
    where.push(`${a}.ts >= ?`);
    args.push(q.sinceMs);
  }
  if (q.agent !== undefined) {
    where.push("f.agent = ?");
    args.push(q.agent);
  }
  args.push(Math.max(1, Math.floor(q.limit)));
  return { where, args };
}

/** A row written before the agent column (every transcript was the default agent's). */
const agentOf = (r: Record<string, unknown>) => (typeof r.agent === "string" ? r.agent : DEFAULT_AGENT);

const SNIPPET = 240;

export function searchTranscripts(db: Database, q: TranscriptQuery): TranscriptHit[] {
  const match = matchExpression(q.query);
  if (!match) return [];
  const { where, args } = filters(q, "m", match);
  const sql = `SELECT m.id AS rowid, m.project, ${MESSAGE_COLS.split(", ").map((c) => `m.${c}`).join(", ")}, f.path,
      f.gone_at, f.agent, bm25(msg_fts, ${BM25_WEIGHTS.join(", ")}) AS rank
    FROM msg_fts JOIN messages m ON m.id = msg_fts.rowid JOIN files f ON f.id = m.file_id
    WHERE ${where.join(" AND ")} ORDER BY rank LIMIT ?`;
  const tokens = queryTokens(q.query);
  const out: TranscriptHit[] = [];
  for (const r of db.query(sql).all(...args)) {
    const m = messageColumns(r);
    if (!m || !isRecord(r) || typeof r.path !== "string") continue;
    const body = m.text || [m.inputs, m.results].filter(Boolean).join("\n");
    const words = wordsOf([m.text, ...m.paths, ...m.tools, m.inputs, m.results].filter(Boolean).join("\n"));
    out.push({
      rowid: Number(r.rowid),
      project: String(r.project),
      session: m.session,
      turnUuid: m.turnUuid,
      ...(m.promptId ? { promptId: m.promptId } : {}),
      uuid: m.uuid,
      ts: m.ts,
      role: m.role,
      path: r.path,
      tools: m.tools,
      paths: m.paths,
      snippet: snippetOf(body, tokens),
      score: -Number(r.rank),
      terms: tokens.filter((t) => words.has(t)),
      ...(typeof r.gone_at === "number" ? { archivedAt: r.gone_at } : {}),
      agent: agentOf(r),
    });
  }
  return out;
}

/** A row of the session table matching a query. */
export interface SessionHit {
  id: number;
  project: string;
  session: string;
  kind: SessionKind;
  title: string;
  /** The turn it came from (the plan's, the todo list's last), empty when none. */
  turnUuid: string;
  ts: number;
  /** The transcript it came from. */
  path: string;
  /** A plan's file (Claude Code's plans folder), else empty. */
  planFile: string;
  snippet: string;
  /** −bm25 (title 2, content 10): higher is better, only comparable within one query. */
  score: number;
  archivedAt?: number;
  agent: string;
}

const SESSION_KINDS: readonly string[] = ["plan", "summary", "todos", "first_prompt"];

/** Seed 004's second table: plans, compaction summaries, final todo lists and first prompts, best first. */
export function searchSessions(db: Database, q: TranscriptQuery): SessionHit[] {
  const match = matchExpression(q.query);
  if (!match) return [];
  const { where, args } = filters(q, "c", match);
  const sql = `SELECT c.id, c.project, c.session, c.kind, c.title, c.turn_uuid, c.ts, c.text, c.ref, f.path, f.gone_at, f.agent,
      bm25(session_fts, ${SESSION_BM25_WEIGHTS.join(", ")}) AS rank
    FROM session_fts JOIN session_content c ON c.id = session_fts.rowid JOIN files f ON f.id = c.file_id
    WHERE ${where.join(" AND ")} ORDER BY rank LIMIT ?`;
  const tokens = queryTokens(q.query);
  const out: SessionHit[] = [];
  for (const r of db.query(sql).all(...args)) {
    if (!isRecord(r) || typeof r.text !== "string" || typeof r.path !== "string" || typeof r.kind !== "string" || !SESSION_KINDS.includes(r.kind)) continue;
    out.push({
      id: Number(r.id),
      project: String(r.project),
      session: String(r.session),
      kind: r.kind as SessionKind,
      title: String(r.title ?? ""),
      turnUuid: typeof r.turn_uuid === "string" ? r.turn_uuid : "",
      ts: Number(r.ts) || 0,
      path: r.path,
      planFile: typeof r.ref === "string" ? r.ref : "",
      snippet: snippetOf(r.text, tokens),
      score: -Number(r.rank),
      ...(typeof r.gone_at === "number" ? { archivedAt: r.gone_at } : {}),
      agent: agentOf(r),
    });
  }
  return out;
}

/** The tokens of a text as the index cut them (lower case; CJK characters one by one). */
function wordsOf(text: string): Set<string> {
  return new Set(ftsText(text).toLowerCase().split(/[^\p{L}\p{N}]+/u));
}

/**
 * About SNIPPET chars of `text` where it holds the most of the query's tokens (the earliest such
 * place; the start when it holds none). Around the first token alone, a plan whose title holds a
 * query word ("… plan") showed its start and never the passage that matched.
 */
export function snippetOf(text: string, tokens: string[], max = SNIPPET): string {
  const flat = oneLine(text);
  if (flat.length <= max) return flat;
  const lower = flat.toLowerCase();
  const lead = Math.floor(max / 3);
  // Most texts: the window around the first token holds every token the text holds.
  const firsts = tokens.map((t) => (t ? lower.indexOf(t) : -1));
  const present = firsts.filter((i) => i >= 0);
  if (present.length === 0) return cut(flat, 0, max);
  const first = Math.max(0, Math.min(...present) - lead);
  const heldFrom = (t: string, from: number) => {
    const i = lower.indexOf(t, from);
    return i >= 0 && i + t.length <= from + max;
  };
  if (tokens.every((t, k) => firsts[k]! < 0 || heldFrom(t, first))) return cut(flat, first, max);
  const hits: { at: number; end: number; token: number }[] = [];
  tokens.forEach((t, token) => {
    if (!t) return;
    for (let i = lower.indexOf(t), n = 0; i >= 0 && n < HITS_PER_TOKEN; i = lower.indexOf(t, i + t.length), n++) hits.push({ at: i, end: i + t.length, token });
  });
  hits.sort((a, b) => a.at - b.at);
  // A window opens at each hit and reaches max − lead past it (the lead before it is context):
  // two pointers over the hits, the distinct tokens inside counted as they come and go.
  const inside = new Map<number, number>();
  let start = 0;
  let best = 0;
  for (let i = 0, j = 0; i < hits.length; i++) {
    const reach = hits[i]!.at + max - lead;
    for (; j < hits.length && hits[j]!.end <= reach; j++) inside.set(hits[j]!.token, (inside.get(hits[j]!.token) ?? 0) + 1);
    if (inside.size > best) {
      best = inside.size;
      start = Math.max(0, hits[i]!.at - lead);
    }
    const left = hits[i]!.token;
    const n = (inside.get(left) ?? 0) - 1;
    if (n > 0) inside.set(left, n);
    else inside.delete(left);
  }
  return cut(flat, start, max);
}

function cut(flat: string, start: number, max: number): string {
  return `${start > 0 ? "…" : ""}${flat.slice(start, start + max)}${start + max < flat.length ? "…" : ""}`;
}

/** Occurrences of one token looked at: a word repeated all over a long text says no more past these. */
const HITS_PER_TOKEN = 50;
