/**
 * Rows of the transcript database as they come back from SQLite: checked column by column, never
 * cast, so a database written by another version (or damaged) yields no row rather than a wrong one.
 */
import type { Database } from "bun:sqlite";
import { ftsText } from "./fts.ts";

/** Stored text of one message (longer is clipped: a recall needs the gist, not a 100 KB paste). */
export const TEXT_MAX = 20_000;
/** Tool input summaries kept per message. */
export const INPUTS_MAX = 2_000;
/** Excerpt of the tool results of one message. */
export const RESULTS_MAX = 2_000;

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object";
}

const isNumber = (x: unknown): x is number => typeof x === "number";

/** A `files` row as the change check needs it. */
export interface KnownFile {
  id: number;
  path: string;
  dev: number;
  ino: number;
  size: number;
  mtime: number;
  /** When the file was found gone from disk (ms), null while it is there. */
  gone_at?: number | null;
}

/** A `files` row as a read of the file needs it (selected inside its transaction). */
export interface FileRow extends KnownFile {
  consumed: number;
  project: string | null;
  state: string;
}

export function isKnownFile(v: unknown): v is KnownFile {
  return (
    isRecord(v) &&
    isNumber(v.id) &&
    typeof v.path === "string" &&
    isNumber(v.dev) &&
    isNumber(v.ino) &&
    isNumber(v.size) &&
    isNumber(v.mtime) &&
    (v.gone_at === undefined || v.gone_at === null || isNumber(v.gone_at))
  );
}

export function isFileRow(v: unknown): v is FileRow {
  return isKnownFile(v) && isRecord(v) && isNumber(v.consumed) && typeof v.state === "string" && (v.project === null || typeof v.project === "string");
}

/** A `dirs` row: a folder's mtime when last listed, and whether all its files were read then (1). */
export function isDirRow(v: unknown): v is { path: string; mtime: number; settled: number } {
  return isRecord(v) && typeof v.path === "string" && isNumber(v.mtime) && isNumber(v.settled);
}

/** The `messages` columns every reader of a message needs, in this order. */
export const MESSAGE_COLS = "session, turn_uuid, prompt_id, uuid, ts, role, text, tools, paths, inputs, results";

export interface MessageColumns {
  session: string;
  turnUuid: string;
  promptId: string | null;
  uuid: string;
  ts: number;
  role: "user" | "assistant";
  text: string;
  /** Tool names, stored space-separated. */
  tools: string[];
  /** File paths the message touched, stored one per line. */
  paths: string[];
  inputs: string;
  results: string;
}

/** The MESSAGE_COLS of a row (selected unprefixed or as `m.*`), or undefined when the ones a hit needs are missing. */
export function messageColumns(r: unknown): MessageColumns | undefined {
  if (!isRecord(r) || typeof r.text !== "string" || typeof r.turn_uuid !== "string") return undefined;
  const str = (x: unknown) => (typeof x === "string" ? x : "");
  return {
    session: str(r.session),
    turnUuid: r.turn_uuid,
    promptId: typeof r.prompt_id === "string" ? r.prompt_id : null,
    uuid: str(r.uuid),
    ts: isNumber(r.ts) ? r.ts : 0,
    role: r.role === "user" ? "user" : "assistant",
    text: r.text,
    tools: str(r.tools).split(" ").filter(Boolean),
    paths: str(r.paths).split("\n").filter(Boolean),
    inputs: str(r.inputs),
    results: str(r.results),
  };
}

/** A message row as it is written. */
export interface NewMessage {
  session: string;
  turnUuid: string;
  promptId: string | null;
  uuid: string;
  msgKey: string;
  ts: number;
  role: "user" | "assistant";
  text: string;
  tools: string;
  paths: string;
  inputs: string;
  results: string;
}

/** Kinds of the session table's rows (seed 004's content table). */
export type SessionKind = "plan" | "summary" | "todos" | "first_prompt";

/** A session table row as it is written. */
export interface NewSessionRow {
  kind: string;
  key: string;
  turnUuid: string;
  ts: number;
  title: string;
  text: string;
  ref: string;
}

/** The columns of a `files` row the ingest compares with what is on disk (KnownFile). */
export const KNOWN_COLS = "id, path, dev, ino, size, mtime, gone_at";

/** A value of the index's `meta` table, as stored (checked by the caller). */
export function metaValue(db: Database, key: string): unknown {
  const r = db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value?: unknown } | null;
  return r?.value;
}

export function setMeta(db: Database, key: string, value: string | number): void {
  db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
}

/**
 * The statements every reader of transcripts writes its rows with, prepared once per write: a
 * message and its full-text row, a session table row (one per key: a later one replaces it).
 */
export function rowWriter(db: Database) {
  const insert = db.query(
    "INSERT INTO messages (file_id, project, session, turn_uuid, prompt_id, uuid, msg_key, ts, role, text, tools, paths, inputs, results) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
  );
  const update = db.query("UPDATE messages SET text = ?, tools = ?, paths = ?, inputs = ?, results = ? WHERE id = ?");
  const ftsDelete = db.query("DELETE FROM msg_fts WHERE rowid = ?");
  const ftsInsert = db.query("INSERT INTO msg_fts (rowid, content, paths, tools, detail) VALUES (?, ?, ?, ?, ?)");
  const index = (id: number, m: Pick<NewMessage, "text" | "paths" | "tools" | "inputs" | "results">) => ftsInsert.run(id, ftsText(m.text), ftsText(m.paths), m.tools, ftsText(`${m.inputs}\n${m.results}`));
  let session: { put: ReturnType<Database["query"]>; del: ReturnType<Database["query"]>; add: ReturnType<Database["query"]> } | undefined;
  return {
    /** A new message; returns its row id. */
    add(fileId: number, project: string, m: NewMessage): number {
      const r = insert.get(fileId, project, m.session, m.turnUuid, m.promptId, m.uuid, m.msgKey, m.ts, m.role, m.text, m.tools, m.paths, m.inputs, m.results) as { id: number };
      index(r.id, m);
      return r.id;
    },
    /** A message of an earlier read that grew. */
    update(id: number, m: Pick<NewMessage, "text" | "paths" | "tools" | "inputs" | "results">): void {
      update.run(m.text, m.tools, m.paths, m.inputs, m.results, id);
      ftsDelete.run(id);
      index(id, m);
    },
    session(fileId: number, project: string, sessionId: string, c: NewSessionRow): void {
      session ??= {
        put: db.query(
          `INSERT INTO session_content (file_id, project, session, kind, key, turn_uuid, ts, title, text, ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(file_id, key) DO UPDATE SET project = excluded.project, session = excluded.session, turn_uuid = excluded.turn_uuid, ts = excluded.ts, title = excluded.title, text = excluded.text, ref = excluded.ref
           RETURNING id`,
        ),
        del: db.query("DELETE FROM session_fts WHERE rowid = ?"),
        add: db.query("INSERT INTO session_fts (rowid, title, content) VALUES (?, ?, ?)"),
      };
      const r = session.put.get(fileId, project, sessionId, c.kind, c.key, c.turnUuid, c.ts, c.title, c.text, c.ref) as { id: number };
      session.del.run(r.id);
      session.add.run(r.id, ftsText(c.title), ftsText(c.text));
    },
  };
}

/** `fn` in one write transaction. */
export function inWrite<T>(db: Database, fn: () => T): T {
  db.run("BEGIN IMMEDIATE");
  try {
    const r = fn();
    db.run("COMMIT");
    return r;
  } catch (e) {
    rollback(db);
    throw e;
  }
}

/** A damaged file may have ended the transaction already: the first error is the one to report. */
export function rollback(db: Database): void {
  try {
    db.run("ROLLBACK");
  } catch {}
}

/** Mark transcripts gone from disk or from their listing as archived at `now`, in one write transaction; returns how many were not already. */
export function archiveFiles(db: Database, files: readonly KnownFile[], now: number): number {
  if (!files.length) return 0;
  return inWrite(db, () => {
    const mark = db.query("UPDATE files SET gone_at = ? WHERE id = ? AND gone_at IS NULL");
    let n = 0;
    for (const f of files) n += mark.run(now, f.id).changes;
    return n;
  });
}

/** Every row a transcript gave: its messages, its session table rows, and their full-text rows. */
export function deleteFileRows(db: Database, fileId: number): void {
  db.query("DELETE FROM msg_fts WHERE rowid IN (SELECT id FROM messages WHERE file_id = ?)").run(fileId);
  db.query("DELETE FROM messages WHERE file_id = ?").run(fileId);
  db.query("DELETE FROM session_fts WHERE rowid IN (SELECT id FROM session_content WHERE file_id = ?)").run(fileId);
  db.query("DELETE FROM session_content WHERE file_id = ?").run(fileId);
}
