/**
 * The list of forgotten turns, `.memsearch/forgotten.json` (`memsearch forget`): the journal, the
 * drainer and `import` consult it so that no later write brings a forgotten turn back.
 *
 * The list lives in the project and may come with a clone: it is read against its schema, and a
 * damaged one is refused rather than rewritten (what it held would be lost).
 */
import * as v from "valibot";
import { InputError, NotFoundError, StorageError } from "../core/errors.ts";
import { MANUAL_SESSION, namesTurn } from "../core/anchor.ts";
import { atomicWrite, fileStamp } from "../core/fsutil.ts";
import { readJson } from "../core/json-file.ts";
import { withFileLock } from "../core/lock.ts";
import { dataFiles } from "../core/project.ts";

const Text = (max: number) => v.pipe(v.string(), v.maxLength(max));

export const TombstoneSchema = v.object({
  /** The anchor's turn id (a transcript turn uuid, or the prompt id of a note the hooks wrote). */
  turn: Text(300),
  session: v.optional(Text(300)),
  /**
   * The prompt id Claude Code gave the turn, when the note's transcript named it: a Stop queued
   * again once that transcript is gone comes back under the prompt id, and is left out too.
   */
  promptId: v.optional(Text(300)),
  /** When it was forgotten (ISO). */
  at: Text(40),
  /** The daily file the note was in, its heading and first bullet: what `--list` shows. */
  file: v.optional(Text(40)),
  heading: v.optional(Text(300)),
  summary: v.optional(Text(300)),
  /**
   * A note written by hand (`memsearch remember`): no transcript can write it again, so its
   * bullets (redacted, as the markdown held them) are kept for `forget --undo` to put back.
   */
  bullets: v.optional(v.pipe(v.array(Text(20_000)), v.maxLength(200))),
});

export const ForgottenFileSchema = v.object({
  v: v.literal(1),
  turns: v.pipe(v.array(TombstoneSchema), v.maxLength(1_000_000)),
});

export type Tombstone = v.InferOutput<typeof TombstoneSchema>;

/** The forgotten turns; `problem` when the file is there but cannot be used (then nothing is known to be forgotten). */
export interface Forgotten {
  entries: Tombstone[];
  problem?: string;
  /** Whether the turn is forgotten: a line id (`line-N`) only in its own session (`session` undefined: in any). */
  has(turn: string | undefined, session?: string): boolean;
}

export function readForgotten(dataDir: string): Forgotten {
  const file = dataFiles(dataDir).forgotten;
  const r = readJson(file, ForgottenFileSchema);
  const entries = "value" in r ? r.value.turns : [];
  // Each id with the sessions it was forgotten in (undefined: an entry that names none, any session's).
  const ids = new Map<string, (string | undefined)[]>();
  for (const e of entries) {
    for (const id of e.promptId ? [e.turn, e.promptId] : [e.turn]) {
      const list = ids.get(id);
      if (list) list.push(e.session);
      else ids.set(id, [e.session]);
    }
  }
  const problem = "problem" in r ? `${file} ${r.problem.startsWith("cannot") ? r.problem : `is damaged (${r.problem})`}` : undefined;
  const has = (turn: string | undefined, session?: string) => turn !== undefined && (ids.get(turn)?.some((s) => namesTurn({ turn, session: s }, turn, session)) ?? false);
  return { entries, problem, has };
}

/** The list as last read, by file stamp: an import appends thousands of notes, each one asks. */
let lastRead: { path: string; stamp: string; list: Forgotten } | undefined;

/** Whether the turn (of `session`) is on the list, for writers that hold only the memory folder (`<dataDir>/memory`). */
export function isForgotten(dataDir: string, turn: string, session?: string): boolean {
  const path = dataFiles(dataDir).forgotten;
  const stamp = fileStamp(path);
  if (!stamp) return false;
  if (lastRead?.path !== path || lastRead.stamp !== stamp) lastRead = { path, stamp, list: readForgotten(dataDir) };
  return lastRead.list.has(turn, session);
}

/** Change the list under its lock; a damaged list is refused, never overwritten. */
export async function changeList<T>(dataDir: string, fn: (entries: Tombstone[]) => { entries: Tombstone[]; result: T }): Promise<T> {
  const files = dataFiles(dataDir);
  return withFileLock(
    files.forgottenLock,
    () => {
      const now = readForgotten(dataDir);
      if (now.problem) throw new StorageError(`${now.problem}: fix or remove it, then forget again`);
      const { entries, result } = fn(now.entries);
      atomicWrite(files.forgotten, JSON.stringify({ v: 1, turns: entries }, null, 1) + "\n");
      return result;
    },
    { timeoutMs: 10_000 },
  );
}

/**
 * Take a turn off the list: `memsearch import` may write it again. Returns the entries removed
 * (a line id forgotten in several sessions: each of them). A hand-written note's entry comes off
 * only when it kept the note's bullets, which the caller puts back (its session is `manual`:
 * nothing else could); one forgotten before they were kept is refused, and stays on the list.
 */
export async function undoForget(dataDir: string, turn: string): Promise<Tombstone[]> {
  const id = turn.trim();
  return changeList(dataDir, (entries) => {
    const found = entries.filter((e) => e.turn === id);
    if (!found.length) throw new NotFoundError(`turn ${id} is not forgotten (memsearch forget --list shows the forgotten turns)`);
    if (found.some((e) => e.session === MANUAL_SESSION && !e.bullets?.length)) {
      throw new InputError(`${id} was a note of your own (memsearch remember) and its text was not kept when it was forgotten, so it cannot be put back; write it again with memsearch remember`);
    }
    return { entries: entries.filter((e) => e.turn !== id), result: found };
  });
}
