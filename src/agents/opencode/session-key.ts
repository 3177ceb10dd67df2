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

/** Opens OpenCode's database read-only; throws when it is not a plain file (a link could point anywhere). */
export function openOpencodeDb(path: string): Database {
  if (!lstatSync(path).isFile()) throw new Error(`${path} is not a plain file`);
  return new Database(path, { readonly: true });
}
