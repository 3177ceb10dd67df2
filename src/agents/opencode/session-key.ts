/**
 * How memsearch names an OpenCode session as a transcript (`<database>#<session id>`), and how the
 * database is opened. Apart from the reader of messages and parts (db.ts): every hook loads this
 * (hook.ts parses the name), and a hook loads no more than it needs.
 */
import { Database } from "bun:sqlite";
import { lstatSync } from "node:fs";
import * as v from "valibot";

/** An OpenCode session id as memsearch names one (`ses_…`). */
export const SessionId = v.pipe(v.string(), v.regex(/^[\w-]{1,200}$/));

/** How a session is named as a transcript (sessions.ts): the name a note's anchor carries too. */
export function sessionKey(db: string, sessionId: string): string {
  return `${db}#${sessionId}`;
}

/** The database a transcript name is in, and its session when it names one (a bare database path, as older plugins sent: none). */
export function splitSessionKey(name: string): { db: string; sessionId?: string } {
  const at = name.lastIndexOf("#");
  const sessionId = name.slice(at + 1);
  return at >= 0 && v.is(SessionId, sessionId) ? { db: name.slice(0, at), sessionId } : { db: name };
}

/** The indexes every read of OpenCode's database goes through (`INDEXED BY`), by their names in this database. */
export interface OpencodeIndexes {
  /** session.id (its primary key). */
  sessionById: string;
  /** message.id (its primary key). */
  messageById: string;
  /** message.session_id first (OpenCode's `message_session_time_created_id_idx`). */
  messageBySession: string;
  /** part.message_id first (`part_message_id_id_idx`). */
  partByMessage: string;
  /** part.session_id first (`part_session_idx`). */
  partBySession: string;
}

export interface OpencodeDb {
  db: Database;
  idx: OpencodeIndexes;
  close(): void;
}

/** An SQL identifier from the database itself, quoted. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The largest `data` of a message or part read (bytes, counted by SQLite without reading the value): a pasted image is no turn's words. */
export const MAX_ROW_BYTES = 4 * 1024 * 1024;

const COLUMNS: Record<string, string[]> = {
  session: ["id", "directory", "parent_id", "time_created", "time_updated"],
  message: ["id", "session_id", "time_created", "time_updated", "data"],
  part: ["id", "message_id", "session_id", "time_updated", "data"],
};

/**
 * OpenCode's tables as its migrations make them, or a one-line reason why not: plain tables (not
 * a view, not a virtual table, no computed column) holding the columns memsearch reads, each with
 * the index its reads go through. A database crafted otherwise would turn each read into a scan
 * of every row for every session, or run code of its own for as long as it likes.
 */
export function opencodeSchemaProblem(db: Database): string | OpencodeIndexes {
  const found: Partial<OpencodeIndexes> = {};
  for (const [table, cols] of Object.entries(COLUMNS)) {
    const row = db.query<{ type: string; sql: string | null }, [string]>("SELECT type, sql FROM sqlite_schema WHERE name = ? COLLATE NOCASE").get(table);
    if (!row) return `it has no ${table} table`;
    if (row.type !== "table" || /^\s*CREATE\s+VIRTUAL\b/i.test(row.sql ?? "")) return `its ${table} is a ${row.type === "table" ? "virtual table" : row.type}, not a table`;
    const info = db.query<{ name: string; hidden: number }, []>(`PRAGMA table_xinfo(${ident(table)})`).all();
    if (info.some((c) => c.hidden === 2 || c.hidden === 3)) return `its ${table} table computes a column`;
    const missing = cols.filter((c) => !info.some((x) => x.name === c));
    if (missing.length) return `its ${table} table has no ${missing.join(", ")} column`;
    // Each index by its first column: a partial index or one on an expression serves no read here.
    const first = new Map<string, { name: string; unique: boolean }>();
    for (const ix of db.query<{ name: string; unique: number; partial: number }, []>(`PRAGMA index_list(${ident(table)})`).all()) {
      if (ix.partial) continue;
      const c = db.query<{ name: string | null; seqno: number }, []>(`PRAGMA index_info(${ident(ix.name)})`).all().find((x) => x.seqno === 0);
      if (c?.name && (!first.has(c.name) || (ix.unique && !first.get(c.name)!.unique))) first.set(c.name, { name: ix.name, unique: ix.unique === 1 });
    }
    const need = (col: string, unique = false): string | undefined => {
      const ix = first.get(col);
      return ix && (!unique || ix.unique) ? ix.name : undefined;
    };
    if (table === "session") found.sessionById = need("id", true);
    if (table === "message") [found.messageById, found.messageBySession] = [need("id", true), need("session_id")];
    if (table === "part") [found.partByMessage, found.partBySession] = [need("message_id"), need("session_id")];
  }
  const labels: Record<keyof OpencodeIndexes, string> = { sessionById: "session(id)", messageById: "message(id)", messageBySession: "message(session_id)", partByMessage: "part(message_id)", partBySession: "part(session_id)" };
  const absent = (Object.keys(labels) as (keyof OpencodeIndexes)[]).filter((k) => !found[k]);
  if (absent.length) return `it has no index on ${absent.map((k) => labels[k]).join(", ")}`;
  return found as OpencodeIndexes;
}

/**
 * Opens OpenCode's database read-only, and only when it is a plain file (a link could point
 * anywhere) of OpenCode's schema (opencodeSchemaProblem); throws with one line otherwise.
 */
export function openOpencodeDb(path: string): OpencodeDb {
  if (!lstatSync(path).isFile()) throw new Error(`${path} is not a plain file`);
  const db = new Database(path, { readonly: true });
  try {
    const idx = opencodeSchemaProblem(db);
    if (typeof idx === "string") throw new Error(`${path} is not OpenCode's database as memsearch reads it (${idx}); its sessions are not read`);
    return { db, idx, close: () => db.close() };
  } catch (e) {
    db.close();
    throw e;
  }
}
