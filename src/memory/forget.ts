/**
 * Forgetting a turn: its note's section leaves the markdown (the truth), and its turn id goes on
 * the forgotten list (forgotten.ts), which the journal, the drainer and `import` consult, so no
 * later write brings it back (a rebuild reads the markdown, where it is gone).
 */
import { join } from "node:path";
import { NotFoundError, UsageError } from "../core/errors.ts";
import { readTextQuiet } from "../core/fsutil.ts";
import { dataFiles } from "../core/project.ts";
import { sanitize } from "../core/redact.ts";
import { clip } from "../core/text.ts";
import { appendTurnNote, dailyFiles, isDailyFile, notesIn, removeNotes, type JournalNote } from "./journal.ts";
import { changeList, readForgotten, type Tombstone } from "./forgotten.ts";
import { isProjectTranscript } from "../transcript/claude-files.ts";
import { listTurns } from "../transcript/reader.ts";
import { MANUAL_SESSION, type Anchor } from "../core/anchor.ts";

export { undoForget, readForgotten, type Tombstone } from "./forgotten.ts";

/** Every note whose anchor names `turn`, in every daily file. */
export function notesOfTurn(memoryDir: string, turn: string): JournalNote[] {
  return dailyFiles(memoryDir).flatMap((name) => notesIn(readTextQuiet(join(memoryDir, name)) ?? "", name).filter((n) => n.anchor?.turn === turn));
}

/** The note whose section holds `line` of the daily file `name`. */
export function noteAtLine(memoryDir: string, name: string, line: number): JournalNote | undefined {
  if (!isDailyFile(name)) return undefined;
  return notesIn(readTextQuiet(join(memoryDir, name)) ?? "", name).find((n) => n.line <= line && line <= n.endLine);
}

/** What to forget: a turn by its id, or the note whose section holds a line of a daily file (a chunk, a hub entry). */
export type ForgetTarget = { turn: string } | { file: string; line: number };

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

/**
 * Forget a turn: its id on the list first (so a drainer running meanwhile cannot write it back),
 * then its sections out of every daily file. The caller re-indexes.
 */
export async function forgetTurn(dataDir: string, target: ForgetTarget, opts: { dryRun?: boolean; now?: Date; root?: string; env?: NodeJS.ProcessEnv } = {}): Promise<ForgetResult> {
  const { memoryDir } = dataFiles(dataDir);
  const dryRun = opts.dryRun === true;
  let turn: string | undefined;
  let notes: JournalNote[];
  if ("turn" in target) {
    turn = target.turn.trim();
    if (!turn) throw new UsageError("give the turn id or chunk hash to forget");
    notes = notesOfTurn(memoryDir, turn);
  } else {
    const note = noteAtLine(memoryDir, target.file, target.line);
    if (!note) throw new NotFoundError(`no note at ${target.file}:${target.line}`);
    turn = note.anchor?.turn;
    notes = turn ? notesOfTurn(memoryDir, turn) : [note];
  }
  const listed = readForgotten(dataDir);
  const already = listed.has(turn);
  if (!notes.length && !already) throw new NotFoundError(`no note holds turn ${turn}: nothing to forget (memsearch forget --list shows forgotten turns)`);
  const manual = notes[0]?.anchor?.session === MANUAL_SESSION || (!notes.length && listed.entries.find((e) => e.turn === turn)?.session === MANUAL_SESSION);
  const undo: ForgetResult["undo"] = !turn ? "none" : manual ? "restore" : "import";
  if (dryRun) return { turn, notes, already, dryRun, undo };
  if (turn && !already) {
    const first = notes[0];
    const promptId = first?.anchor && opts.root ? await promptIdOf(first.anchor, opts.root, opts.env) : undefined;
    const entry: Tombstone = {
      turn: clip(turn, 300),
      ...(first?.anchor?.session ? { session: clip(first.anchor.session, 300) } : {}),
      ...(promptId && promptId !== turn ? { promptId: clip(promptId, 300) } : {}),
      at: (opts.now ?? new Date()).toISOString(),
      ...(first ? { file: first.file, heading: clip(sanitize(first.heading), 300) } : {}),
      ...(first?.bullets[0] ? { summary: clip(sanitize(first.bullets[0]), 300) } : {}),
      ...(first?.anchor?.session === MANUAL_SESSION ? { bullets: first.bullets.slice(0, 200).map((b) => clip(sanitize(b), 20_000)) } : {}),
    };
    await changeList(dataDir, (entries) => ({ entries: entries.some((e) => e.turn === entry.turn) ? entries : [...entries, entry], result: undefined }));
  }
  const removed: JournalNote[] = [];
  for (const name of [...new Set(notes.map((n) => n.file))]) {
    const lines = new Set(notes.filter((n) => n.file === name).map((n) => n.line));
    // Matched again under the lock: the file may have changed since it was read above.
    removed.push(...(await removeNotes(memoryDir, name, (n) => (turn ? n.anchor?.turn === turn : lines.has(n.line)))));
  }
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
 * The prompt id of the anchor's turn, read from its transcript when that is this project's own
 * (an anchor may come with a clone, and is followed nowhere else); undefined when it cannot be known.
 */
async function promptIdOf(anchor: Anchor, root: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (!anchor.transcript || anchor.transcript === "-" || !isProjectTranscript(anchor.transcript, root, { env })) return undefined;
  try {
    // By its exact uuid: a near match would put another turn's prompt id on the list.
    return (await listTurns(anchor.transcript)).turns.find((t) => t.uuid === anchor.turn)?.promptId;
  } catch {
    return undefined;
  }
}
