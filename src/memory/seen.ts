/**
 * The sessions this machine wrote notes for: what tells our own notes from notes that came with a
 * cloned repository (committed by someone else, or planted). Kept in the user's folder
 * (`~/.memsearch/sessions-seen.txt`), never in the project's: a repository cannot bring its own
 * list. One id a line, added by the journal when a session's first note of a day is written.
 *
 * A note written before this record existed is still ours when its anchor names a transcript of
 * the same session under Claude Code's projects folder on this machine (until Claude Code deletes
 * that transcript, 30 days by default).
 */
import { mkdirSync } from "node:fs";
import { basename, dirname, isAbsolute, relative } from "node:path";
import type { Anchor } from "../core/anchor.ts";
import { atomicWrite, isRegularFile, readTextQuiet } from "../core/fsutil.ts";
import { userFiles } from "../core/project.ts";
import { claudeProjectsDir } from "../core/claude-home.ts";
import { withFileLock } from "../core/lock.ts";

/** Past this size the file is rewritten with its newest half (ids are unique sessions: a year of heavy use is far below). */
const MAX_BYTES = 1024 * 1024;

export function seenSessionsFile(env = process.env): string {
  return userFiles(env).sessionsSeen;
}

/** What identifies a note's origin: its session, or its own turn for a `memsearch remember` note (all share the session "manual"). */
export function originKey(a: Pick<Anchor, "session" | "turn">): string {
  return a.session === "manual" ? `manual:${a.turn}` : a.session;
}

/**
 * Record that this machine wrote a note for `key` (see originKey): once per key, under a lock
 * (drainers of several projects may record at once), the file replaced whole so a reader never
 * sees half a line. Failures are the caller's to ignore.
 */
export async function recordSeen(key: string, env = process.env): Promise<void> {
  const id = key.replace(/[\r\n]/g, " ");
  const file = seenSessionsFile(env);
  mkdirSync(dirname(file), { recursive: true });
  await withFileLock(`${file}.lock`, () => {
    const ids = (readTextQuiet(file) ?? "").split("\n").filter(Boolean);
    if (ids.includes(id)) return;
    ids.push(id);
    let text = ids.join("\n") + "\n";
    if (text.length > MAX_BYTES) text = ids.slice(Math.floor(ids.length / 2)).join("\n") + "\n";
    atomicWrite(file, text);
  });
}

/** The keys on record (empty when there is no record). */
export function readSeen(env = process.env): Set<string> {
  return new Set((readTextQuiet(seenSessionsFile(env)) ?? "").split("\n").filter(Boolean));
}

/**
 * Whether a note with this anchor was written on this machine. No anchor (a hand-written or
 * planted section) is not ours.
 */
export type Provenance = (anchor: Anchor | undefined) => boolean;

export function provenance(env = process.env): Provenance {
  let seen: Set<string> | undefined;
  const projects = claudeProjectsDir(env);
  const proven = new Map<string, boolean>();
  return (a) => {
    if (!a) return false;
    seen ??= readSeen(env);
    if (seen.has(originKey(a))) return true;
    if (a.session === "manual") return false;
    let p = proven.get(a.session);
    if (p === undefined) {
      p = transcriptHere(a, projects);
      proven.set(a.session, p);
    }
    return p;
  };
}

/** The anchor names this session's own transcript in Claude Code's projects folder, and it is there. */
function transcriptHere(a: Anchor, projects: string): boolean {
  const t = a.transcript;
  if (!isAbsolute(t) || basename(t) !== `${a.session}.jsonl`) return false;
  const rel = relative(projects, t);
  if (!rel || rel.startsWith("..") || isAbsolute(rel)) return false;
  return isRegularFile(t);
}
