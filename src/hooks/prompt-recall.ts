/**
 * The prompt hook's share of the conversation index (issue 10): past conversations of the project
 * when no note is relevant enough (`hooks.recall = "inject"`), and a model's synthesis of notes and
 * conversations (`"synthesize"`).
 *
 * The transcript side is kept cheap for the 4.5 s budget: the SQLite file is opened read-only, one
 * prepared FTS5 query runs, nothing is ingested (the watch process keeps the index current; a
 * recall call does too), and a missing or foreign-version file simply gives nothing.
 *
 * Everything injected starts with the `[memsearch]` marker and holds no blank line, so the whole
 * text is one paragraph the transcript index and the note writer recognise and leave out
 * (`stripInjected`): a recalled conversation never comes back as a new one.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { clip, localMinute, oneLine } from "../core/text.ts";
import type { RecallResult } from "../recall/recall.ts";
import { drill, transcriptCommand } from "../recall/drill.ts";
import { checkTranscriptPath, checkTranscriptSchema, damageReason, fileIdentity, healTranscriptIndex, isDamage, SCHEMA_VERSION, transcriptDbPath, transcriptHealLine } from "../conversations/db.ts";
import { queryTokens } from "../conversations/fts.ts";
import { searchTranscripts, type TranscriptHit } from "../conversations/search.ts";
import { sanitize } from "../core/redact.ts";
import { fitLines, neutralise, quote, QUOTED_DATA } from "../core/frame.ts";

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
    const cur = byTurn.get(hit.turnUuid);
    if (!cur) byTurn.set(hit.turnUuid, { hit, coverage });
    else if (coverage > cur.coverage) cur.coverage = coverage;
  }
  return [...byTurn.values()].slice(0, max);
}




/** One conversation turn as an injected line: date, who, how to open it, and what was said, quoted. */
export function turnLine({ hit }: TurnHit, chars: number): string {
  const when = hit.ts ? localMinute(hit.ts) : "date unknown";
  const files = hit.paths.length ? ` (files: ${neutralise(hit.paths.slice(0, 4).map((p) => basename(p)).join(", "))})` : "";
  const said = clip(oneLine(sanitize(hit.snippet)), chars);
  return `- ${when}, ${hit.role}${files} · ${transcriptCommand(hit.path, hit.turnUuid)} · ${quote(said)}`;
}

/** The header of injected conversation turns (inject mode when no note passed the gate). */
export const TURNS_HEADER = `[memsearch] Earlier conversations of this project that may be relevant (no note matched; ${QUOTED_DATA}; the command on a line opens its turn):`;

/** The model's synthesis with its sources, as one paragraph under the marker, within `budget` characters. */
export function formatSynthesis(answer: string, provider: string, results: RecallResult[], budget: number): string {
  const header = `[memsearch] From earlier sessions of this project (${provider}'s summary of ${results.length} search result${results.length === 1 ? "" : "s"}, notes and conversation turns; ${QUOTED_DATA}; check a point with its source):`;
  // The model read notes that may hold planted text: its answer is framed like them.
  const body = answer
    .split("\n")
    .map((l) => neutralise(l.trimEnd()))
    .filter((l) => l.trim().length > 0);
  const sources = results.map((r, i) => {
    const d = drill(r);
    return `[result ${i + 1}] ${r.date ?? "date unknown"}: ${[d.expand, d.transcript].filter(Boolean).join(" | ")}`;
  });
  const tail = fitLines("Sources:", sources, Math.floor(budget / 2)).text;
  const room = budget - header.length - tail.length - 2;
  const middle = clip(body.join("\n"), Math.max(100, room));
  return clip(`${header}\n${middle}\n${tail}`, budget);
}
