/**
 * The transcript index: one SQLite file per user (`~/.memsearch/transcripts.sqlite`) holding a
 * row per user or assistant message of every Claude Code transcript, with an FTS5 index over it.
 * It is a cache of the transcripts on disk, plus an archive of the ones Claude Code deleted (its
 * `cleanupPeriodDays`): for those the index holds the only copy. So a file of another schema
 * version, a `recall --reindex` and a damaged file are all rebuilt the same way (`rebuildIndex`):
 * the old file is moved aside, a new one created, the archived rows copied over when the old file
 * can still be read, and the old file removed, with one notice from whoever healed it.
 *
 * Why SQLite and not the notes' Orama index: Orama holds its whole index in memory and a new
 * process would have to load 300k documents per call; FTS5 answers from disk pages.
 *
 * Layout:
 *  - `files`: one row per transcript file and where its incremental reader stopped.
 *  - `dirs`: the folders last listed below the projects folder and their mtime then (a folder whose
 *    mtime did not change holds no new file), `meta`: the time of the last full scan (see ingest.ts).
 *  - `messages`: one row per message (metadata and the stored, redacted text).
 *  - `msg_fts`: contentless FTS5 over messages (content, paths, tools, detail = tool inputs and
 *    result excerpts), rowid = messages.id.
 *  - `session_content`: the session-level record (seed 004's second table): each plan (ExitPlanMode,
 *    a plan file written), compaction summary, the final todo list and the first prompt of a
 *    session, redacted; `session_fts` over it (title, content), rowid = session_content.id.
 *  - `files.gone_at`: when the transcript disappeared from disk (NULL while it is there); its rows
 *    stay, marked archived, until the age setting (`conversations.archive_days`) prunes them.
 *    Contentless (`contentless_delete=1`) because the text is already in `messages`: storing it
 *    twice would double the file, and the indexed form differs anyway (CJK spaced out, see fts.ts).
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DEFAULT_AGENT } from "../core/anchor.ts";
import { MemsearchError, StorageError } from "../core/errors.ts";
import { errCode } from "../core/fsutil.ts";
import { withFileLock } from "../core/lock.ts";
import { userFiles } from "../core/project.ts";
import { ftsText } from "./fts.ts";

/**
 * Bump when the schema or what goes into a row changes: an older file is rebuilt from the
 * transcripts, its archive carried over.
 * 3: rows without control characters, and with webhooks and the other kinds of issue 20 redacted.
 * 4: the session table (plans, compaction summaries, todos, first prompts) and the archive of
 *    transcripts Claude Code deleted.
 * 5: other agents' transcripts beside Claude Code's (Codex rollouts, Gemini CLI chats, OpenCode
 *    sessions), each file row naming its agent.
 */
export const SCHEMA_VERSION = 5;
/** FTS5 tokenizer (see docs in the report / README): unicode61 splits code identifiers into words. */
export const DEFAULT_TOKENIZER = "unicode61 remove_diacritics 2";
/** bm25 column weights: content, file paths, tool names, tool detail (inputs and result excerpts). */
export const BM25_WEIGHTS = [10, 2, 1, 1] as const;
/** bm25 column weights of the session table: title, content (seed 004). */
export const SESSION_BM25_WEIGHTS = [2, 10] as const;

export function transcriptDbPath(env = process.env): string {
  return userFiles(env).conversations;
}

export interface OpenOptions {
  /** Tokenizer of a new index (measurements only; the shipped one is DEFAULT_TOKENIZER). */
  tokenizer?: string;
  /** Drop everything but the archive first (`recall --reindex`). */
  reset?: boolean;
  busyTimeoutMs?: number;
  /** A file of another version is not rebuilt here: OtherVersion is thrown (openTranscriptIndex rebuilds under a lock). */
  rebuildElsewhere?: boolean;
}

export function openTranscriptDb(path = transcriptDbPath(), opts: OpenOptions = {}): Database {
  mkdirSync(dirname(path), { recursive: true });
  checkTranscriptPath(path);
  if (opts.reset) return rebuildIndex(path, opts).db;
  let db: Database;
  try {
    db = new Database(path, { create: true, strict: true });
  } catch (e) {
    throw asDamage(e);
  }
  try {
    configure(db, opts);
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (version !== SCHEMA_VERSION && version !== 0) {
      // Another version's file: rebuilt from the transcripts, its archive carried over.
      db.close();
      if (opts.rebuildElsewhere) throw new OtherVersion();
      return rebuildIndex(path, opts).db;
    }
    // Only a new file takes the write lock to create the schema: a recall must not queue behind a writer.
    if (version !== SCHEMA_VERSION) createSchema(db, opts.tokenizer ?? DEFAULT_TOKENIZER);
    checkTranscriptSchema(db);
  } catch (e) {
    try {
      db.close();
    } catch {}
    throw asDamage(e);
  }
  return db;
}

/**
 * The conversation index cannot be used as it is (not an SQLite file, pages damaged, tables of
 * another shape, an empty folder in its place). It is a cache of the transcripts: healed by
 * removing it and building it again, never the user's to fix.
 */
export class TranscriptIndexDamaged extends MemsearchError {
  readonly reason: string;
  constructor(reason: string) {
    super(`the conversation index is unreadable (${reason})`);
    this.reason = reason;
  }
}

/**
 * Something that is not ours to remove stands where the conversation index belongs (a folder
 * with files in it, a FIFO, a device): conversations cannot be searched until the user moves it.
 */
export class TranscriptIndexBlocked extends StorageError {}

/** A conversation index that was damaged and has been replaced by an empty one, to be filled from the transcripts. */
export interface TranscriptHeal {
  path: string;
  reason: string;
  /** The damaged file's archive (conversations whose transcripts are gone) could not be read back. */
  archiveLost?: boolean;
  /** Archived transcripts read back from the damaged file into the new one. */
  archiveKept?: number;
}

/** The one line a healed conversation index is worth (status line, CLI, watch log). */
export function transcriptHealLine(h: TranscriptHeal, rebuilt = true): string {
  const done = rebuilt ? "removed it and rebuilt it from the transcripts" : "removed it; the watch process or the next recall rebuilds it from the transcripts";
  const lost = h.archiveLost
    ? "; its archive of deleted transcripts could not be read back and is lost"
    : h.archiveKept
      ? `; its archive of ${h.archiveKept} deleted transcript${h.archiveKept === 1 ? "" : "s"} was read back and kept`
      : "";
  return `memsearch: the conversation index ${h.path} was damaged (${h.reason}); ${done}${lost}`;
}

/** An SQLite error that means the file itself is bad (not busy, not full, not a permission). */
export function isDamage(e: unknown): boolean {
  if (e instanceof TranscriptIndexDamaged) return true;
  return /^SQLITE_(CORRUPT|NOTADB)/.test(errCode(e) ?? "");
}

export function damageReason(e: unknown): string {
  if (e instanceof TranscriptIndexDamaged) return e.reason;
  const code = errCode(e) ?? "";
  if (code.startsWith("SQLITE_NOTADB")) return "not an SQLite database";
  return (e as Error)?.message ?? String(e);
}

function asDamage(e: unknown): unknown {
  return isDamage(e) && !(e instanceof TranscriptIndexDamaged) ? new TranscriptIndexDamaged(damageReason(e)) : e;
}

/**
 * A regular file (or nothing yet) is fine. A folder is not removed recursively, ever: an empty one
 * (nothing of anybody's in it) counts as damage and is replaced; one holding files, or anything
 * else that is not a file, blocks the index with a line that says what to move.
 */
export function checkTranscriptPath(path: string): void {
  let st;
  try {
    st = statSync(path);
  } catch {
    return; // missing: created
  }
  if (st.isFile()) return;
  if (st.isDirectory()) {
    if (isEmptyDir(path)) throw new TranscriptIndexDamaged("an empty folder in its place");
    throw new TranscriptIndexBlocked(`${path} is a folder, not the conversation index; move it elsewhere and memsearch rebuilds the index there (it never deletes a folder)`);
  }
  throw new TranscriptIndexBlocked(`${path} is not a regular file; move it elsewhere and memsearch rebuilds the conversation index there`);
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Unreadable counts as not empty: what cannot be seen is not removed. */
function isEmptyDir(path: string): boolean {
  try {
    return readdirSync(path).length === 0;
  } catch {
    return false;
  }
}

function removeDbFiles(path: string): void {
  for (const suffix of ["-wal", "-shm", ""]) {
    try {
      rmSync(path + suffix, { force: true });
    } catch (e) {
      // A folder: only an empty one goes (rmdir refuses anything else).
      if (errCode(e) === "ERR_FS_EISDIR" || errCode(e) === "EISDIR") {
        try {
          rmdirSync(path + suffix);
        } catch {
          throw new TranscriptIndexBlocked(`${path + suffix} is a folder, not the conversation index; move it elsewhere and memsearch rebuilds the index there (it never deletes a folder)`);
        }
      } else throw new StorageError(`cannot remove the damaged conversation index ${path + suffix}: ${errCode(e) ?? e}`);
    }
  }
}

/**
 * A new, empty index at `path`, holding the archive (rows of deleted transcripts) of the file that
 * was there when that file can still be read: the old file is moved aside, the archived rows
 * copied into the new one (their FTS entries rebuilt), and the old file removed. Used for a file of
 * another version, `recall --reindex` and a damaged file. `archiveLost`: the old file could not be
 * read back (a damaged one), so what only it held is gone.
 */
export function rebuildIndex(path: string, opts: OpenOptions = {}): { db: Database; carried: number; archiveLost: boolean } {
  const aside = `${path}.rebuild-${process.pid}`;
  // Rebuilds run under the index's lock: an old file moved aside by another is one a crash left.
  const prefix = `${basename(path)}.rebuild-`;
  for (const name of safeList(dirname(path))) if (name.startsWith(prefix)) removeDbFiles(join(dirname(path), name.replace(/-(wal|shm)$/, "")));
  removeDbFiles(aside);
  let haveOld = false;
  if (fileIdentity(path) !== undefined && statSync(path).isFile()) {
    // Its WAL folded in first, so the file moved aside holds everything committed.
    try {
      const old = new Database(path, { strict: true });
      try {
        old.run("PRAGMA busy_timeout = 2000");
        old.run("PRAGMA wal_checkpoint(TRUNCATE)");
      } finally {
        old.close();
      }
    } catch {}
    try {
      renameSync(path, aside);
      haveOld = true;
    } catch {}
  }
  removeDbFiles(path);
  const db = new Database(path, { create: true, strict: true });
  let carried = 0;
  let archiveLost = false;
  try {
    configure(db, opts);
    createSchema(db, opts.tokenizer ?? DEFAULT_TOKENIZER);
    if (haveOld) {
      try {
        carried = copyArchive(db, aside);
      } catch {
        archiveLost = true;
      }
    }
  } catch (e) {
    db.close();
    throw e;
  } finally {
    if (haveOld) removeDbFiles(aside);
  }
  return { db, carried, archiveLost };
}

const FILE_COLS = "id, path, dev, ino, size, mtime, consumed, project, session, state, gone_at";
const MSG_COLS = "id, file_id, project, session, turn_uuid, prompt_id, uuid, msg_key, ts, role, text, tools, paths, inputs, results";
const CONTENT_COLS = "id, file_id, project, session, kind, key, turn_uuid, ts, title, text, ref";

/**
 * Copy the archived files, their messages and session content from the index file at `from` into
 * `db` (new and empty, so row ids are kept), and index them. A file of a version without an
 * archive (no `gone_at`) has nothing to copy. Returns the transcripts copied; throws when `from`
 * holds archived transcripts that cannot be read back (nothing is then copied).
 */
function copyArchive(db: Database, from: string): number {
  try {
    db.query("ATTACH DATABASE ? AS old").run(from);
  } catch {
    return 0; // not an SQLite file at all: whether it held an archive cannot be told
  }
  try {
    const has = (sql: string) => {
      try {
        db.prepare(`${sql} LIMIT 0`).finalize();
        return true;
      } catch {
        return false;
      }
    };
    if (!has(`SELECT ${FILE_COLS} FROM old.files`) || !has(`SELECT ${MSG_COLS} FROM old.messages`)) return 0;
    const withContent = has(`SELECT ${CONTENT_COLS} FROM old.session_content`);
    // Before version 5 every transcript was Claude Code's: the column's default says so.
    const fileCols = has("SELECT agent FROM old.files") ? `${FILE_COLS}, agent` : FILE_COLS;
    // Unreadable even this far: whether it held an archive cannot be told, so no loss is claimed.
    let archived = 0;
    try {
      archived = Number((db.query("SELECT count(*) AS n FROM old.files WHERE gone_at IS NOT NULL").get() as { n?: unknown } | null)?.n) || 0;
    } catch {
      return 0;
    }
    // Transcripts deleted since the last update noticed (Claude Code's clean-up, then `recall
    // --reindex` before any update): archived now, or the rebuild, which reads only what is on
    // disk, would lose them.
    const newlyGone = goneSinceLastUpdate(db);
    if (archived + newlyGone.length === 0) return 0;
    db.run("BEGIN IMMEDIATE");
    try {
      db.run("CREATE TEMP TABLE IF NOT EXISTS newly_gone (id INTEGER PRIMARY KEY)");
      db.run("DELETE FROM temp.newly_gone");
      const mark = db.query("INSERT OR IGNORE INTO temp.newly_gone (id) VALUES (?)");
      for (const id of newlyGone) mark.run(id);
      const n = db.run(`INSERT INTO files (${fileCols}) SELECT ${fileCols} FROM old.files WHERE gone_at IS NOT NULL OR id IN (SELECT id FROM temp.newly_gone)`).changes;
      db.query("UPDATE files SET gone_at = ? WHERE gone_at IS NULL").run(Date.now());
      db.run("DROP TABLE temp.newly_gone");
      if (n > 0) {
        db.run(`INSERT INTO messages (${MSG_COLS}) SELECT ${MSG_COLS} FROM old.messages WHERE file_id IN (SELECT id FROM files)`);
        if (withContent) db.run(`INSERT INTO session_content (${CONTENT_COLS}) SELECT ${CONTENT_COLS} FROM old.session_content WHERE file_id IN (SELECT id FROM files)`);
        const fts = db.query("INSERT INTO msg_fts (rowid, content, paths, tools, detail) VALUES (?, ?, ?, ?, ?)");
        for (const r of db.query("SELECT id, text, paths, tools, inputs, results FROM messages").iterate() as Iterable<Record<string, unknown>>) {
          fts.run(Number(r.id), ftsText(String(r.text ?? "")), ftsText(String(r.paths ?? "")), String(r.tools ?? ""), ftsText(`${r.inputs ?? ""}\n${r.results ?? ""}`));
        }
        const sfts = db.query("INSERT INTO session_fts (rowid, title, content) VALUES (?, ?, ?)");
        for (const r of db.query("SELECT id, title, text FROM session_content").iterate() as Iterable<Record<string, unknown>>) {
          sfts.run(Number(r.id), ftsText(String(r.title ?? "")), ftsText(String(r.text ?? "")));
        }
      }
      db.run("COMMIT");
      return n;
    } catch (e) {
      try {
        db.run("ROLLBACK");
      } catch {}
      throw e;
    }
  } finally {
    db.run("DETACH DATABASE old");
  }
}

/**
 * The rows of the old index (attached as `old`) not yet archived whose transcript is no longer on
 * disk. A transcript that is an entry of a file (an OpenCode session, `<opencode.db>#<session>`)
 * is gone only with its file (a session deleted inside it is the next update's to notice, from
 * its agent's own listing).
 */
function goneSinceLastUpdate(db: Database): number[] {
  const out: number[] = [];
  const rows = db.query("SELECT id, path FROM old.files WHERE gone_at IS NULL").all() as Record<string, unknown>[];
  for (const r of rows) {
    if (typeof r.id !== "number" || typeof r.path !== "string" || !r.path) continue;
    if (!existsSync(r.path) && !entryOfFile(r.path)) out.push(r.id);
  }
  return out;
}

/** `<file>#<name>` whose file is a regular file on disk. */
function entryOfFile(path: string): boolean {
  const hash = path.lastIndexOf("#");
  if (hash <= 0) return false;
  try {
    return statSync(path.slice(0, hash)).isFile();
  } catch {
    return false;
  }
}

/** Which file is at `path` now: a healer removes only the file that was seen damaged, not one another process has just rebuilt. */
export function fileIdentity(path: string): string | undefined {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}:${st.birthtimeMs}:${st.isDirectory() ? "d" : "f"}`;
  } catch {
    return undefined;
  }
}

export interface OpenedTranscriptIndex {
  db: Database;
  /** The file was damaged and has been replaced by an empty index (this process did it: say so once). */
  healed?: TranscriptHeal;
}

export interface HealOptions extends OpenOptions {
  /** How long to wait for another process's heal (default 10 s; a hook gives less). */
  lockTimeoutMs?: number;
}

/**
 * The conversation index, opened; a damaged one is removed and created afresh (empty: the next
 * update fills it from the transcripts). Throws TranscriptIndexBlocked when something not ours
 * stands in its place, typed storage errors otherwise.
 */
export async function openTranscriptIndex(path = transcriptDbPath(), opts: HealOptions = {}): Promise<OpenedTranscriptIndex> {
  const seen = fileIdentity(path);
  try {
    if (opts.reset) return await rebuildLocked(path, opts, true);
    try {
      return { db: openTranscriptDb(path, { ...opts, rebuildElsewhere: true }) };
    } catch (e) {
      if (!(e instanceof OtherVersion)) throw e;
      return await rebuildLocked(path, opts, false);
    }
  } catch (e) {
    if (!isDamage(e)) throw e;
    return healTranscriptIndex(path, damageReason(e), seen, opts);
  }
}

/** The index file is of another schema version: to be rebuilt (its archive carried over) under the lock. */
class OtherVersion extends Error {}

/**
 * A rebuild (another version's file, or `reset`) under the heal's lock, so two processes meeting
 * the same old file (the watch process and a recall, right after an upgrade) do not move each
 * other's new file aside: whoever comes second finds the new version and opens it.
 */
function rebuildLocked(path: string, opts: HealOptions, force: boolean): Promise<OpenedTranscriptIndex> {
  mkdirSync(dirname(path), { recursive: true });
  return withFileLock(
    `${path}.lock`,
    () => {
      if (!force) {
        try {
          return { db: openTranscriptDb(path, { ...opts, reset: false, rebuildElsewhere: true }) };
        } catch (e) {
          if (!(e instanceof OtherVersion)) throw e;
        }
      }
      return { db: rebuildIndex(path, { ...opts, reset: false }).db };
    },
    { timeoutMs: opts.lockTimeoutMs ?? 10_000 },
  );
}

/**
 * Replace the damaged file `seen` at `path` with an empty index, under a lock so two processes
 * healing at once do not remove each other's fresh file: whoever comes second finds another file
 * there, opens it and says nothing.
 */
export async function healTranscriptIndex(path: string, reason: string, seen: string | undefined, opts: HealOptions = {}): Promise<OpenedTranscriptIndex> {
  mkdirSync(dirname(path), { recursive: true });
  const open = { ...opts, reset: false };
  return withFileLock(
    `${path}.lock`,
    () => {
      if (fileIdentity(path) !== seen) {
        try {
          return { db: openTranscriptDb(path, open) };
        } catch (e) {
          if (!isDamage(e)) throw e;
          reason = damageReason(e);
        }
      }
      const r = rebuildIndex(path, open);
      return { db: r.db, healed: { path, reason, ...(r.archiveLost ? { archiveLost: true } : {}), ...(r.carried ? { archiveKept: r.carried } : {}) } };
    },
    { timeoutMs: opts.lockTimeoutMs ?? 10_000 },
  );
}

/**
 * Run `fn` on the conversation index, healing it when it is damaged: at the open, or in the
 * middle of `fn` (a damaged page is only met when a query reads it), after which `fn` runs once
 * more on the new, empty index.
 */
export async function withTranscriptIndex<T>(path: string, opts: HealOptions, fn: (db: Database) => T | Promise<T>): Promise<{ value: T; healed?: TranscriptHeal }> {
  const first = await openTranscriptIndex(path, opts);
  const seen = fileIdentity(path);
  let failure: unknown;
  try {
    return { value: await fn(first.db), healed: first.healed };
  } catch (e) {
    if (!isDamage(e)) throw e;
    failure = e;
  } finally {
    first.db.close();
  }
  const again = await healTranscriptIndex(path, damageReason(failure), seen, opts);
  try {
    return { value: await fn(again.db), healed: again.healed ?? first.healed };
  } finally {
    again.db.close();
  }
}

/**
 * The tables hold the columns this version reads and writes (a file of the right version number
 * but another shape would fail every update with a bare "no such column").
 */
export function checkTranscriptSchema(db: Database): void {
  const shapes = [
    "SELECT id, path, dev, ino, size, mtime, consumed, project, session, state, gone_at, agent FROM files",
    "SELECT path, mtime, settled FROM dirs",
    "SELECT key, value FROM meta",
    "SELECT id, file_id, project, session, turn_uuid, prompt_id, uuid, msg_key, ts, role, text, tools, paths, inputs, results FROM messages",
    "SELECT rowid, content, paths, tools, detail FROM msg_fts",
    "SELECT id, file_id, project, session, kind, key, turn_uuid, ts, title, text, ref FROM session_content",
    "SELECT rowid, title, content FROM session_fts",
  ];
  for (const sql of shapes) {
    try {
      db.prepare(`${sql} LIMIT 0`).finalize();
    } catch (e) {
      // Only a missing table or column is another shape: busy, locked or unreadable is not damage.
      if (errCode(e) !== "SQLITE_ERROR") throw e;
      throw new TranscriptIndexDamaged(`tables of another shape: ${(e as Error)?.message ?? e}`);
    }
  }
}

function configure(db: Database, opts: OpenOptions): void {
  // Several processes (recall, each project's watch) share the file: readers never wait for a
  // writer in WAL mode, writers queue behind each other for at most the busy timeout.
  db.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 10_000))}`);
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  db.run("PRAGMA foreign_keys = OFF");
}

function createSchema(db: Database, tokenizer: string): void {
  db.run("BEGIN IMMEDIATE");
  try {
    db.run(`CREATE TABLE IF NOT EXISTS files (
      id INTEGER PRIMARY KEY,
      path TEXT NOT NULL UNIQUE,
      dev INTEGER NOT NULL,
      ino INTEGER NOT NULL,
      size INTEGER NOT NULL,
      mtime REAL NOT NULL,
      consumed INTEGER NOT NULL,
      project TEXT,
      session TEXT,
      state TEXT NOT NULL,
      gone_at INTEGER,
      agent TEXT NOT NULL DEFAULT '${DEFAULT_AGENT}'
    )`);
    // The hot files of an update: those whose mtime was recent when last seen.
    db.run("CREATE INDEX IF NOT EXISTS files_mtime ON files(mtime)");
    // The archive (pruning, stats) without a scan of every file.
    db.run("CREATE INDEX IF NOT EXISTS files_gone ON files(gone_at) WHERE gone_at IS NOT NULL");
    db.run(`CREATE TABLE IF NOT EXISTS dirs (
      path TEXT PRIMARY KEY,
      mtime REAL NOT NULL,
      settled INTEGER NOT NULL
    ) WITHOUT ROWID`);
    db.run("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID");
    db.run(`CREATE TABLE IF NOT EXISTS messages (
      id INTEGER PRIMARY KEY,
      file_id INTEGER NOT NULL,
      project TEXT NOT NULL,
      session TEXT NOT NULL,
      turn_uuid TEXT NOT NULL,
      prompt_id TEXT,
      uuid TEXT NOT NULL,
      msg_key TEXT NOT NULL,
      ts INTEGER NOT NULL,
      role TEXT NOT NULL,
      text TEXT NOT NULL,
      tools TEXT NOT NULL,
      paths TEXT NOT NULL,
      inputs TEXT NOT NULL,
      results TEXT NOT NULL
    )`);
    db.run("CREATE INDEX IF NOT EXISTS messages_file ON messages(file_id)");
    db.run("CREATE INDEX IF NOT EXISTS messages_project_ts ON messages(project, ts)");
    db.run("CREATE INDEX IF NOT EXISTS messages_turn ON messages(session, turn_uuid)");
    db.run(
      `CREATE VIRTUAL TABLE IF NOT EXISTS msg_fts USING fts5(content, paths, tools, detail, content='', contentless_delete=1, tokenize='${tokenizer.replace(/'/g, "''")}')`,
    );
    db.run(`CREATE TABLE IF NOT EXISTS session_content (
      id INTEGER PRIMARY KEY,
      file_id INTEGER NOT NULL,
      project TEXT NOT NULL,
      session TEXT NOT NULL,
      kind TEXT NOT NULL,
      key TEXT NOT NULL,
      turn_uuid TEXT NOT NULL,
      ts INTEGER NOT NULL,
      title TEXT NOT NULL,
      text TEXT NOT NULL,
      ref TEXT NOT NULL,
      UNIQUE(file_id, key)
    )`);
    db.run(
      `CREATE VIRTUAL TABLE IF NOT EXISTS session_fts USING fts5(title, content, content='', contentless_delete=1, tokenize='${tokenizer.replace(/'/g, "''")}')`,
    );
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.run("COMMIT");
  } catch (e) {
    // A damaged file may have ended the transaction already: the first error is the one to report.
    try {
      db.run("ROLLBACK");
    } catch {}
    throw e;
  }
}
