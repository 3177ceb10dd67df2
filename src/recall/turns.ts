/**
 * Recall's conversation leg on a prompt's budget (issue 10): the project's past turns that match a
 * prompt, kept cheap for the hook's 4.5 s: the SQLite file is opened read-only, one prepared FTS5
 * query runs, nothing is ingested (the watch process keeps the index current; a recall call does
 * too), and a missing or foreign-version file simply gives nothing.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { checkTranscriptPath, checkTranscriptSchema, damageReason, fileIdentity, healTranscriptIndex, isDamage, SCHEMA_VERSION, transcriptDbPath, transcriptHealLine } from "../conversations/db.ts";
import { queryTokens } from "../conversations/fts.ts";
import { searchTranscripts, type TranscriptHit } from "../conversations/search.ts";
import { turnKey } from "../core/anchor.ts";

/** Messages asked of FTS5 per prompt: a few turns' worth, since several hits collapse into one turn. */
const HIT_POOL = 30;

export interface TurnHit {
  /** The best-ranked message of the turn. */
  hit: TranscriptHit;
  /** Share of the prompt's words (stop words left out) the best message holds, 0 to 1. */
  coverage: number;
}

/**
 * The transcript index opened read-only, `damaged` when it cannot be used as it is (see
 * TranscriptIndexDamaged), or undefined (no file, another schema version, busy, something not
 * ours in its place: `recall` says that one).
 */
export function openTranscriptsReadOnly(path = transcriptDbPath()): Database | { damaged: string } | undefined {
  if (!existsSync(path)) return undefined;
  let db: Database | undefined;
  try {
    checkTranscriptPath(path);
    db = new Database(path, { readonly: true, strict: true });
    // A writer holds its lock for one file's batch at most; a reader in WAL mode never waits for it.
    db.run("PRAGMA busy_timeout = 500");
    const v = db.query("PRAGMA user_version").get() as { user_version?: number } | null;
    if (v?.user_version !== SCHEMA_VERSION) {
      db.close();
      return undefined;
    }
    checkTranscriptSchema(db);
    return db;
  } catch (e) {
    try {
      db?.close();
    } catch {}
    return isDamage(e) ? { damaged: damageReason(e) } : undefined;
  }
}

export interface ConversationTurns {
  turns: TurnHit[];
  /** The index was damaged and this hook replaced it by an empty one (the watch process or the next `recall` fills it): the line saying so. */
  healed?: string;
}

/**
 * The project's conversation turns relevant to the prompt. A damaged index gives none this time
 * and is replaced at once (removing it is quick; filling it is the watch process's work), so the
 * next prompts find conversations again and the user hears of it once.
 */
export async function conversationTurns(query: string, project: string, max: number, path = transcriptDbPath()): Promise<ConversationTurns> {
  const seen = fileIdentity(path);
  const db = openTranscriptsReadOnly(path);
  if (!db) return { turns: [] };
  let damaged: string;
  if (db instanceof Database) {
    try {
      return { turns: relevantTurns(db, query, project, max) };
    } catch (e) {
      if (!isDamage(e)) throw e;
      damaged = damageReason(e);
    } finally {
      db.close();
    }
  } else damaged = db.damaged;
  const healed = await healTranscriptIndex(path, damaged, seen, { lockTimeoutMs: 500, busyTimeoutMs: 500 });
  healed.db.close();
  return { turns: [], ...(healed.healed ? { healed: transcriptHealLine(healed.healed, false) } : {}) };
}

/**
 * Turns of this project's conversations that match the prompt: one per turn, best first, with the
 * share of the prompt's words their best message holds (the gate reads it against the notes'
 * floor, `hooks.inject_min_score`: FTS5's bm25 has no scale of its own).
 */
export function relevantTurns(db: Database, query: string, project: string, max: number): TurnHit[] {
  const tokens = queryTokens(query);
  if (!tokens.length) return [];
  const hits = searchTranscripts(db, { query, project, limit: HIT_POOL });
  const byTurn = new Map<string, TurnHit>();
  for (const hit of hits) {
    const coverage = (hit.terms?.length ?? 0) / tokens.length;
    const key = turnKey(hit.session, hit.turnUuid);
    const cur = byTurn.get(key);
    if (!cur) byTurn.set(key, { hit, coverage });
    else if (coverage > cur.coverage) cur.coverage = coverage;
  }
  return [...byTurn.values()].slice(0, max);
}
