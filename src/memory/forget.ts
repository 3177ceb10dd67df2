/**
 * Forgetting a turn: its note's section leaves the markdown (the truth), and its turn id goes on
 * the forgotten list (forgotten.ts), which the journal, the drainer and `import` consult, so no
 * later write brings it back (a rebuild reads the markdown, where it is gone).
 *
 * A note is named by what cannot move: its turn (with its session, for a turn id made of a line
 * number), or the hash of its section's text as it was shown (`sectionId`). A line number would
 * name whatever stands there now: after another forget, a `git pull` or a hand edit, a different
 * note (issue 31).
 */
import { join } from "node:path";
import { isLineId, MANUAL_SESSION, namesTurn, type Anchor } from "../core/anchor.ts";
import { ConflictError, NotFoundError, UsageError } from "../core/errors.ts";
import { readTextQuiet } from "../core/fsutil.ts";
import { dataFiles } from "../core/project.ts";
import { sanitize } from "../core/redact.ts";
import { clip, stripControls } from "../core/text.ts";
import { appendTurnNote, dailyFiles, isDailyFile, notesIn, removeNotes, sectionId, sectionText, type JournalNote } from "./journal.ts";
import { changeList, readForgotten, type Tombstone } from "./forgotten.ts";

export { undoForget, readForgotten, type Tombstone } from "./forgotten.ts";

/** Every note whose anchor names `turn` (of `session`, for a line id; undefined: any session's), in every daily file. */
export function notesOfTurn(memoryDir: string, turn: string, session?: string): JournalNote[] {
  return dailyFiles(memoryDir).flatMap((name) => notesIn(readTextQuiet(join(memoryDir, name)) ?? "", name).filter((n) => n.anchor !== undefined && namesTurn(n.anchor, turn, session)));
}

/**
 * The note of the daily file `name` whose section text has the id `id` (sectionId), the one
 * nearest `line` when the same text stands twice; undefined when no section has it any more.
 */
export function noteById(content: string, name: string, id: string, line?: number): JournalNote | undefined {
  const same = notesIn(content, name).filter((n) => sectionId(sectionText(content, n)) === id);
  return line === undefined ? same[0] : same.sort((a, b) => Math.abs(a.line - line) - Math.abs(b.line - line))[0];
}

/**
 * The note of the daily file `name` holding a chunk of the index (its `content` at `line`), and
 * that note's id; undefined when no section holds that text any more (the file changed since it
 * was indexed).
 */
export function noteHolding(memoryDir: string, name: string, line: number, content: string): { note: JournalNote; id: string } | undefined {
  if (!isDailyFile(name)) return undefined;
  const text = readTextQuiet(join(memoryDir, name)) ?? "";
  const piece = content.trim();
  const holding = notesIn(text, name)
    .map((note) => ({ note, section: sectionText(text, note) }))
    .filter((x) => stripControls(x.section).includes(piece))
    .sort((a, b) => Math.abs(a.note.line - line) - Math.abs(b.note.line - line))[0];
  return holding && { note: holding.note, id: sectionId(holding.section) };
}

/**
 * What to forget: a turn by its id (and session, for a line id), or a note of a daily file by its
 * section's id as it was shown (`line`: where it was, to choose between two identical sections).
 */
export type ForgetTarget = { turn: string; session?: string } | { file: string; id: string; line?: number };

export interface ForgetResult {
  /** The turn put on the list; undefined for a section without an anchor (a hand-written one: removed only). */
  turn?: string;
  /**
   * What `forget --undo` can do about it: `import` may write the turn again (a turn of a
   * transcript), the note's text is kept and can be put back (`memsearch remember`'s), or nothing
   * (a section without an anchor has no id to undo by).
   */
  undo: "import" | "restore" | "none";
  /** The sections removed (or, with dryRun, that would be). */
  notes: JournalNote[];
  /** The turn was on the list already. */
  already: boolean;
  dryRun: boolean;
}

export interface ForgetOptions {
  dryRun?: boolean;
  now?: Date;
  /** The prompt id of the turn an anchor names, from its transcript (agents/registry.ts anchorPromptId): listed beside the turn id, since a turn may be named by either (a note written from the hooks' record is anchored by its prompt id). */
  promptIdOf?: (anchor: Anchor) => Promise<string | undefined>;
}

/**
 * Forget a turn: its id on the list first (so a drainer running meanwhile cannot write it back),
 * then its sections out of every daily file. The caller re-indexes. A note named by its section
 * id that no longer stands in its file throws ConflictError, and nothing changes.
 */
export async function forgetTurn(dataDir: string, target: ForgetTarget, opts: ForgetOptions = {}): Promise<ForgetResult> {
  const { memoryDir } = dataFiles(dataDir);
  const dryRun = opts.dryRun === true;
  let turn: string | undefined;
  let session: string | undefined;
  let notes: JournalNote[];
  let shown: JournalNote | undefined;
  if ("turn" in target) {
    turn = target.turn.trim();
    session = target.session;
    if (!turn) throw new UsageError("give the turn id or chunk hash to forget");
    notes = notesOfTurn(memoryDir, turn, session);
    if (isLineId(turn) && session === undefined) {
      const sessions = [...new Set(notes.map((n) => n.anchor!.session))];
      if (sessions.length > 1) throw new UsageError(`turn ${turn} names notes of ${sessions.length} sessions (an id made of a line number is unique in its session only): forget one by its chunk hash, as memsearch search prints it`);
      session = sessions[0];
    }
  } else {
    if (!isDailyFile(target.file)) throw new NotFoundError(`not a daily memory file: ${target.file}`);
    shown = noteById(readTextQuiet(join(memoryDir, target.file)) ?? "", target.file, target.id, target.line);
    if (!shown) throw new ConflictError(`the note is no longer in ${target.file} as it was shown (it was changed, moved or removed since): nothing was forgotten; look at it again`);
    turn = shown.anchor?.turn;
    session = shown.anchor?.session;
    notes = turn ? notesOfTurn(memoryDir, turn, session) : [shown];
  }
  const listed = readForgotten(dataDir);
  const already = listed.has(turn, session);
  if (!notes.length && !already) throw new NotFoundError(`no note holds turn ${turn}: nothing to forget (memsearch forget --list shows forgotten turns)`);
  const manual = notes[0]?.anchor?.session === MANUAL_SESSION || (!notes.length && listed.entries.find((e) => e.turn === turn)?.session === MANUAL_SESSION);
  const undo: ForgetResult["undo"] = !turn ? "none" : manual ? "restore" : "import";
  if (dryRun) return { turn, notes, already, dryRun, undo };
  if (turn && !already) {
    const first = notes[0];
    const promptId = await promptIdOf(first?.anchor, opts.promptIdOf);
    const entry: Tombstone = {
      turn: clip(turn, 300),
      ...(first?.anchor?.session ? { session: clip(first.anchor.session, 300) } : {}),
      ...(promptId && promptId !== turn ? { promptId: clip(promptId, 300) } : {}),
      at: (opts.now ?? new Date()).toISOString(),
      ...(first ? { file: first.file, heading: clip(sanitize(first.heading), 300) } : {}),
      ...(first?.bullets[0] ? { summary: clip(sanitize(first.bullets[0]), 300) } : {}),
      ...(first?.anchor?.session === MANUAL_SESSION ? { bullets: first.bullets.slice(0, 200).map((b) => clip(sanitize(b), 20_000)) } : {}),
    };
    await changeList(dataDir, (entries) => ({ entries: entries.some((e) => e.turn === entry.turn && e.session === entry.session) ? entries : [...entries, entry], result: undefined }));
  }
  const removed: JournalNote[] = [];
  for (const name of [...new Set(notes.map((n) => n.file))]) {
    // Matched again under the lock, by what cannot move: the file may have changed since it was read above.
    const pick = (all: JournalNote[], content: string): JournalNote[] => {
      if (turn) return all.filter((n) => n.anchor !== undefined && namesTurn(n.anchor, turn, session));
      if ("turn" in target) return [];
      const one = noteById(content, name, target.id, target.line);
      return one ? [one] : [];
    };
    removed.push(...(await removeNotes(memoryDir, name, pick)));
  }
  if (shown && !turn && !removed.length) throw new ConflictError(`the note left ${shown.file} while it was being forgotten (another forget, or an edit): nothing was forgotten; look at it again`);
  return { turn, notes: removed, already, dryRun, undo };
}

/**
 * `forget --undo` of a note of your own: its bullets back in its daily file, under its own time
 * and turn id (appended: memory files are only ever appended to). The entry is already off the list.
 */
export async function restoreHandNote(dataDir: string, entry: Tombstone): Promise<string> {
  const { memoryDir } = dataFiles(dataDir);
  const day = entry.file && isDailyFile(entry.file) ? entry.file.slice(0, 10) : undefined;
  const time = /^(\d{1,2}):(\d{2})/.exec(entry.heading ?? "");
  const [y, m, d] = (day ?? "").split("-").map(Number);
  const at = day ? new Date(y!, m! - 1, d!, time ? Number(time[1]) : 0, time ? Number(time[2]) : 0) : new Date(entry.at);
  const res = await appendTurnNote({ memoryDir, sessionId: MANUAL_SESSION, turnUuid: entry.turn, transcriptPath: "-", bullets: entry.bullets ?? [], now: at });
  return res.file;
}

/**
 * The prompt id of the anchor's turn, read from its transcript by its agent's adapter when that is
 * this project's own (an anchor may come with a clone, and is followed nowhere else); undefined
 * when it cannot be known.
 */
async function promptIdOf(anchor: Anchor | undefined, read: ForgetOptions["promptIdOf"]): Promise<string | undefined> {
  if (!anchor?.transcript || anchor.transcript === "-" || !read) return undefined;
  try {
    return await read(anchor);
  } catch {
    return undefined;
  }
}
