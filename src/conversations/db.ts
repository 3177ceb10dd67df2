/**
 * The transcript index: one SQLite file per user (`~/.memsearch/transcripts.sqlite`) holding a
 * row per user or assistant message of every Claude Code transcript, with an FTS5 index over it.
 * It is a cache of the transcripts: a file of another schema version is dropped and rebuilt.
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
 *    Contentless (`contentless_delete=1`) because the text is already in `messages`: storing it
 *    twice would double the file, and the indexed form differs anyway (CJK spaced out, see fts.ts).
 */
import { Database } from "bun:sqlite";
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { userDir } from "../core/project.ts";

export const DB_FILE = "transcripts.sqlite";
/**
 * Bump when the schema or what goes into a row changes: an older file is rebuilt from the transcripts.
 * 3: rows without control characters, and with webhooks and the other kinds of issue 20 redacted.
 */
export const SCHEMA_VERSION = 3;
/** FTS5 tokenizer (see docs in the report / README): unicode61 splits code identifiers into words. */
export const DEFAULT_TOKENIZER = "unicode61 remove_diacritics 2";
/** bm25 column weights: content, file paths, tool names, tool detail (inputs and result excerpts). */
export const BM25_WEIGHTS = [10, 2, 1, 1] as const;

export function transcriptDbPath(env = process.env): string {
  return join(userDir(env), DB_FILE);
}

export interface OpenOptions {
  /** Tokenizer of a new index (measurements only; the shipped one is DEFAULT_TOKENIZER). */
  tokenizer?: string;
  /** Drop everything first (`recall --reindex`). */
  reset?: boolean;
  busyTimeoutMs?: number;
}

export function openTranscriptDb(path = transcriptDbPath(), opts: OpenOptions = {}): Database {
  mkdirSync(dirname(path), { recursive: true });
  if (opts.reset) for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  let db = new Database(path, { create: true, strict: true });
  try {
    configure(db, opts);
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (version !== SCHEMA_VERSION && version !== 0) {
      // Another version's cache: start over (nothing in it is the user's only copy).
      db.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
      db = new Database(path, { create: true, strict: true });
      configure(db, opts);
    }
    // Only a new file takes the write lock to create the schema: a recall must not queue behind a writer.
    if (version !== SCHEMA_VERSION) createSchema(db, opts.tokenizer ?? DEFAULT_TOKENIZER);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
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
      state TEXT NOT NULL
    )`);
    // The hot files of an update: those whose mtime was recent when last seen.
    db.run("CREATE INDEX IF NOT EXISTS files_mtime ON files(mtime)");
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
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.run("COMMIT");
  } catch (e) {
    db.run("ROLLBACK");
    throw e;
  }
}
