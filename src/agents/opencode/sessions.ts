/**
 * OpenCode's sessions as transcripts. OpenCode keeps every session of the machine in one database,
 * so a session is named `<database>#<session id>` wherever memsearch names a transcript by its path
 * (`memsearch transcript`, `import`, the conversation index, a recall's drill-down command). Only
 * the database OpenCode itself uses (`OPENCODE_DB`, else its data folder's `opencode.db`) is
 * claimed: a name a cloned note's anchor carries can point nowhere else.
 */
import { lstatSync } from "node:fs";
import { join, resolve } from "node:path";
import * as v from "valibot";
import { NotFoundError } from "../../core/errors.ts";
import { lexists } from "../../core/fsutil.ts";
import { realOr } from "../../core/project.ts";
import { sanitize } from "../../core/redact.ts";
import { ForeignTranscriptError, projectOfCwd, sameProject } from "../../transcript/files.ts";
import type { TranscriptStamp, Turn } from "../../transcript/types.ts";
import { agentTurns } from "../turn.ts";
import { ident, openOpencodeDb, sessionKey, SessionId, splitSessionKey, type OpencodeDb } from "./session-key.ts";
import { opencodeDataDir } from "./install.ts";

/** The database OpenCode uses (the rule its plugin follows too: plugin.ts). */
export function opencodeDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.OPENCODE_DB && env.OPENCODE_DB.startsWith("/") ? env.OPENCODE_DB : join(opencodeDataDir(env), "opencode.db");
}

/** The database and session a name holds, when it names one of OpenCode's sessions; undefined otherwise. */
export function parseSessionKey(path: string, env: NodeJS.ProcessEnv = process.env): { db: string; sessionId: string } | undefined {
  const k = splitSessionKey(path);
  if (k.sessionId === undefined) return undefined;
  const db = resolve(k.db);
  const sessionId = k.sessionId;
  const own = opencodeDbPath(env);
  if (db !== resolve(own) && db !== realOr(own)) return undefined;
  return { db, sessionId };
}


const SessionRow = v.object({ id: SessionId, directory: v.string(), parent_id: v.nullable(v.string()) });

/** A session's row by its id; its folder and parent only when of a sane length (a crafted row may hold 200 MB there). */
const sessionById = (o: OpencodeDb) => `SELECT id, ${bounded("directory", "directory")}, ${bounded("parent_id", "parent_id")} FROM session INDEXED BY ${ident(o.idx.sessionById)} WHERE id = ?`;
const bounded = (col: string, as: string) => `CASE WHEN octet_length(${col}) <= 4096 THEN ${col} END AS ${as}`;

/** The most sessions listed: the listing's cost is bounded by its shape (every lookup through an index) and by this. */
const MAX_SESSIONS = 100_000;

/** The session's row, checked; throws when the database or the session is not there. */
function sessionRow(db: string, sessionId: string, path: string): v.InferOutput<typeof SessionRow> {
  let handle;
  try {
    handle = openOpencodeDb(db);
  } catch (e) {
    throw new NotFoundError(`OpenCode's database cannot be read: ${path} (${(e as Error)?.message ?? e})`);
  }
  try {
    const r = v.safeParse(SessionRow, handle.db.query(sessionById(handle)).get(sessionId));
    if (!r.success) throw new NotFoundError(`no OpenCode session ${sessionId} in ${db}`);
    return r.output;
  } finally {
    handle.close();
  }
}

/** Throws unless `path` names a session of OpenCode's database started in this project (any project with `anyProject`). */
export function checkProjectSession(path: string, root: string, o: { env?: NodeJS.ProcessEnv; anyProject?: boolean } = {}): void {
  const k = parseSessionKey(path, o.env);
  if (!k) throw new ForeignTranscriptError(`refused: ${path} is not an OpenCode session (<database>#<session id> of ${opencodeDbPath(o.env)})`);
  const row = sessionRow(k.db, k.sessionId, path);
  if (o.anyProject) return;
  if (!sameProject(projectOfCwd(row.directory), root)) throw new ForeignTranscriptError(`refused: ${path} is another project's session (this project: ${root})`, true);
}

/** A session's turns, redacted, in the shape the transcript views print. */
export async function readSession(path: string, env: NodeJS.ProcessEnv = process.env): Promise<{ sessionId: string; cwd?: string; turns: Turn[] }> {
  const k = parseSessionKey(path, env);
  if (!k) throw new ForeignTranscriptError(`refused: ${path} is not an OpenCode session`);
  // The reader of messages and parts, loaded only here and by the drainer: every hook loads this file.
  const { readOpencodeSession } = await import("./db.ts");
  const db = openOpencodeDb(k.db);
  try {
    const row = v.safeParse(SessionRow, db.db.query(sessionById(db)).get(k.sessionId));
    const turns = readOpencodeSession(db, k.sessionId, sanitize);
    return { sessionId: k.sessionId, ...(row.success ? { cwd: row.output.directory } : {}), turns: agentTurns(turns.map((t, i) => ({ ...t, line: i + 1 })), { promptIds: true }) };
  } finally {
    db.close();
  }
}

const StampRow = v.object({ id: SessionId, directory: v.string(), parent_id: v.nullable(v.string()), parts: v.number(), updated: v.nullable(v.number()) });

/**
 * The main sessions of the database (sub-agent sessions, `parent_id` set, are left out as Claude
 * Code's sidechains are from notes), with what changes when they do; `root` keeps only this
 * project's. Empty when OpenCode has no database here; throws when it has one that cannot be read
 * (a link, another schema, a damaged file), so that nothing is taken for gone.
 */
export function listSessions(env: NodeJS.ProcessEnv = process.env, root?: string): TranscriptStamp[] {
  const path = opencodeDbPath(env);
  // Absent: no OpenCode here. Anything else there (a link too) is opened, and refused, below.
  if (!lexists(path)) return [];
  const db = openOpencodeDb(path);
  try {
    // Every lookup per session through OpenCode's own indexes (INDEXED BY: an error, never a scan of
    // every part for every session); Bun's SQLite has no progress handler to stop a query by time.
    const { idx } = db;
    const rows = db.db
      .query(
        `SELECT s.id, ${bounded("s.directory", "directory")}, ${bounded("s.parent_id", "parent_id")},
           (SELECT count(*) FROM part AS p INDEXED BY ${ident(idx.partBySession)} WHERE p.session_id = s.id) AS parts,
           max(s.time_updated, coalesce((SELECT max(time_updated) FROM message AS m INDEXED BY ${ident(idx.messageBySession)} WHERE m.session_id = s.id), 0), coalesce((SELECT max(time_updated) FROM part AS p INDEXED BY ${ident(idx.partBySession)} WHERE p.session_id = s.id), 0)) AS updated
         FROM session s ORDER BY s.time_created, s.id LIMIT ${MAX_SESSIONS}`,
      )
      .all();
    const out: TranscriptStamp[] = [];
    const cache = new Map<string, string>();
    for (const r of rows) {
      const s = v.safeParse(StampRow, r);
      if (!s.success || s.output.parent_id) continue;
      if (root !== undefined && !sameProject(projectOfCwd(s.output.directory, cache), root)) continue;
      // size: the parts in the session (grows with every word and tool call); mtime: the latest update of it, its messages and parts.
      out.push({ path: sessionKey(path, s.output.id), size: s.output.parts, mtime: s.output.updated ?? 0 });
    }
    return out;
  } finally {
    db.close();
  }
}

/** What changes whenever OpenCode writes: its database's and write-ahead log's size and time (a link counts as a change, and is refused by the listing). */
export function databaseVersion(env: NodeJS.ProcessEnv = process.env): string {
  const path = opencodeDbPath(env);
  return [path, `${path}-wal`]
    .map((p) => {
      try {
        const st = lstatSync(p);
        return st.isFile() ? `${st.size}:${st.mtimeMs}:${st.ino}` : "other";
      } catch {
        return "-";
      }
    })
    .join("/");
}

/** This project's sessions (for `import`); none when the database cannot be read. */
export function projectSessions(root: string, env: NodeJS.ProcessEnv = process.env): TranscriptStamp[] {
  try {
    return listSessions(env, root);
  } catch {
    return [];
  }
}
