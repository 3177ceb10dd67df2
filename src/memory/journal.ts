/**
 * The daily memory files, `.memsearch/memory/YYYY-MM-DD.md`: the source of truth every index is
 * rebuilt from. Appending a turn note is the commit point of the Stop hook, so it is serialised
 * across processes (several sessions of one project stop at once), idempotent (Claude Code may
 * retry a hook) and all-or-nothing (a full disk leaves the file as it was).
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, lstatSync, readdirSync, rmSync, writeSync } from "node:fs";
import { makeDataDir } from "../core/project.ts";
import { dirname, join } from "node:path";
import { anchorsIn, DEFAULT_AGENT, noteAgent, formatAnchor, namesTurn, parseAnchor, type Anchor } from "../core/anchor.ts";
import { oneLine, sha256Hex, stripControls } from "../core/text.ts";
import { InputError } from "../core/errors.ts";
import { isDay } from "../core/since.ts";
import { atomicWrite, errCode, openOwnFile, readOwnText, readTextQuiet, storageError } from "../core/fsutil.ts";
import { withFileLock } from "../core/lock.ts";
import { sanitize } from "../core/redact.ts";
import { originKey, recordSeen, type Provenance } from "./seen.ts";
import { isForgotten } from "./forgotten.ts";

// ---------------------------------------------------------------------------------------------
// Appending a turn note

export interface TurnNote {
  memoryDir: string;
  sessionId: string;
  turnUuid: string;
  transcriptPath: string;
  bullets: string[];
  /** Who sent the prompt, when not a person at the composer (`loop_wakeup`, `sdk`…): written in the heading. */
  source?: string;
  /** The agent the turn was with (its adapter's name); absent: Claude Code. Written in the anchor and the heading. */
  agent?: string;
  now?: Date;
  /**
   * How long to wait for the day's lock (default 10 s). A command the user waits on gives more: a
   * crowd of writers on a loaded machine passes the lock slowly, each holder healthy.
   */
  lockTimeoutMs?: number;
}

export interface AppendResult {
  file: string;
  wroteSessionHeading: boolean;
  /** False when this turn's anchor was already in the file (a retried hook), or the turn was forgotten: nothing written. */
  appended: boolean;
  /** The user forgot this turn (`memsearch forget`): it is never written again. */
  forgotten?: boolean;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** Local calendar day, `YYYY-MM-DD`: the user's day, not UTC's. */
export function localDay(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function localTime(d: Date): string {
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function dailyFile(memoryDir: string, now = new Date()): string {
  return join(memoryDir, `${localDay(now)}.md`);
}

/** Dot-prefixed and not `.md`, so scanners and watchers that index markdown ignore it. */
export function dailyLockFile(memoryDir: string, now = new Date()): string {
  return lockOfDaily(memoryDir, `${localDay(now)}.md`);
}

/** The lock of the daily file `name` (`YYYY-MM-DD.md`): the one appendTurnNote holds. */
function lockOfDaily(memoryDir: string, name: string): string {
  return join(memoryDir, `.${name}.lock`);
}

const NO_BULLETS = "- (no summary; see the transcript anchor)";

/** One `- ` line per bullet, sanitised again (bullets may come from a model that echoed a key). */
export function normaliseBullets(bullets: string[]): string[] {
  const out: string[] = [];
  for (const raw of bullets) {
    let text = oneLine(sanitize(String(raw)));
    // A marker is one only with a space after it: "-5 degrees" keeps its minus.
    text = text.replace(/^(?:[-*•+](?:\s+|$))+/, "").trim();
    if (!text) continue;
    // A bullet must never pass for an anchor (or hide the rest of the file in a comment).
    text = text.replace(/<!--/g, "&lt;!--");
    out.push(`- ${text}`);
  }
  return out.length > 0 ? out : [NO_BULLETS];
}

/**
 * Appends one turn note to `memoryDir/YYYY-MM-DD.md` under a cross-process lock:
 * `## Session HH:MM` the first time a session writes to that day, then `### HH:MM`, the anchor
 * and the bullets. A turn whose anchor is already there is not written again.
 */
export async function appendTurnNote(given: TurnNote): Promise<AppendResult> {
  // As the anchor will read back (it cannot carry a lone surrogate), so a retried turn is recognised.
  const opts = { ...given, sessionId: given.sessionId.toWellFormed(), turnUuid: given.turnUuid.toWellFormed(), transcriptPath: given.transcriptPath.toWellFormed() };
  if (!opts.sessionId.trim() || !opts.turnUuid.trim()) throw new InputError("a turn note needs a session id and a turn uuid");
  const now = opts.now ?? new Date();
  try {
    // The memory folder is `<dataDir>/memory` (core/project.ts).
    makeDataDir(dirname(opts.memoryDir), opts.memoryDir);
  } catch (e) {
    throw storageError(opts.memoryDir, e);
  }
  const file = dailyFile(opts.memoryDir, now);
  const res = await withFileLock(dailyLockFile(opts.memoryDir, now), () => appendLocked(file, opts, now), { timeoutMs: opts.lockTimeoutMs ?? 10_000 });
  if (res.appended && (res.wroteSessionHeading || opts.sessionId === "manual")) {
    // The note is written whatever happens here; a session missing from the record only reads as from the repository.
    try {
      await recordSeen(originKey({ session: opts.sessionId, turn: opts.turnUuid }));
    } catch {}
  }
  return res;
}

function appendLocked(file: string, opts: TurnNote, now: Date): AppendResult {
  // The memory folder is `<dataDir>/memory` (core/project.ts); the list is beside it.
  if (isForgotten(dirname(opts.memoryDir), opts.turnUuid, opts.sessionId)) return { file, wroteSessionHeading: false, appended: false, forgotten: true };
  const before = readIfExists(file);
  const anchors = anchorsIn(before ?? "");
  // A line id is another session's turn when another session wrote it: only the same (session, turn) is this note.
  if (anchors.some((a) => namesTurn(a, opts.turnUuid, opts.sessionId))) return { file, wroteSessionHeading: false, appended: false };
  const needHeading = !anchors.some((a) => a.session === opts.sessionId);
  appendAll(file, buildBlock(before, opts, now, needHeading));
  return { file, wroteSessionHeading: needHeading, appended: true };
}

function buildBlock(before: string | undefined, opts: TurnNote, now: Date, needHeading: boolean): string {
  const hm = localTime(now);
  // Exactly one blank line before the new heading, whatever a hand edit left at the end.
  let block = !before ? `# ${localDay(now)}\n\n` : before.endsWith("\n\n") ? "" : before.endsWith("\n") ? "\n" : "\n\n";
  if (needHeading) block += `## Session ${hm}\n\n`;
  const agent = opts.agent && opts.agent !== DEFAULT_AGENT ? opts.agent : undefined;
  block += `### ${hm}${agent ? ` (agent: ${agent})` : ""}${sourceLabel(opts.source)}\n`;
  block += `${formatAnchor({ session: opts.sessionId, turn: opts.turnUuid, transcript: opts.transcriptPath, agent })}\n`;
  block += normaliseBullets(opts.bullets).join("\n");
  return `${block}\n\n`;
}

/** ` (source: loop_wakeup)` for a prompt a person did not type at the composer; "" for one they did. */
function sourceLabel(source: string | undefined): string {
  if (source === undefined || source === "user") return "";
  // The source comes from hook input: only a plain word reaches the heading.
  return ` (source: ${/^[a-z_]{1,40}$/.test(source) ? source : "other"})`;
}

function readIfExists(file: string): string | undefined {
  try {
    return readOwnText(file);
  } catch (e) {
    if (errCode(e) === "ENOENT") return undefined;
    throw storageError(file, e);
  }
}

/**
 * Appends `data` with one write (looping only on a short write). On any failure the file is cut
 * back to its previous size, or removed if this call created it, and a StorageError is thrown.
 */
export function appendAll(path: string, data: string): void {
  const buf = Buffer.from(data);
  // lstat, not exists: a dangling link is there too, and is not ours to remove.
  let existed = true;
  try {
    lstatSync(path);
  } catch {
    existed = false;
  }
  let fd: number | undefined;
  let size = 0;
  try {
    // Never through a link: a daily file linked elsewhere would take the note there.
    fd = openOwnFile(path, "append");
    size = fstatSync(fd).size;
    let off = 0;
    while (off < buf.byteLength) off += writeSync(fd, buf, off, buf.byteLength - off);
    // The append is the commit point of a turn note: make it survive a crash.
    fsyncSync(fd);
  } catch (e) {
    if (fd !== undefined) {
      try {
        ftruncateSync(fd, size);
      } catch {}
    }
    if (!existed) rmSync(path, { force: true });
    throw storageError(path, e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading recent memory (SessionStart)

/** A daily memory file's name: `YYYY-MM-DD.md` of a real day. */
export function isDailyFile(name: string): boolean {
  return name.endsWith(".md") && isDay(name.slice(0, -3));
}

/** Daily files, newest first. */
export function dailyFiles(memoryDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(memoryDir);
  } catch {
    return [];
  }
  return names.filter(isDailyFile).sort().reverse();
}

/** A daily file's name and text. */
export interface DailyText {
  name: string;
  content: string;
}

/**
 * The `count` newest daily files, read once (SessionStart derives several things from the same
 * files). Without control characters: a committed file may hold any bytes, and these texts reach
 * Claude's context and the user's terminal.
 */
export function readDailyTexts(memoryDir: string, count = Infinity): DailyText[] {
  const out: DailyText[] = [];
  for (const name of dailyFiles(memoryDir).slice(0, count)) {
    const content = readTextQuiet(join(memoryDir, name));
    if (content !== undefined) out.push({ name, content: stripControls(content) });
  }
  return out;
}

/** A memory folder (read here) or its daily files already read, newest first: the first `count`. */
type DailySource = string | DailyText[];
const textsOf = (src: DailySource, count = Infinity): DailyText[] => (typeof src === "string" ? readDailyTexts(src, count) : src.slice(0, count));

export interface RecentMemory {
  /** File name, e.g. `2026-11-21.md`. */
  file: string;
  lines: string[];
}

const HEADING = /^(#{2,4})\s+\S/;
const BULLET = /^\s*[-*]\s+\S/;

/**
 * Headings (`##`–`####`) and bullet lines of a daily file, dropping headings with nothing under
 * them (an interrupted Stop hook must not fill the context with empty sections).
 */
export function outline(content: string): string[] {
  const kept: { level: number; text: string }[] = [];
  for (const line of content.split("\n")) {
    const h = HEADING.exec(line);
    if (h) kept.push({ level: h[1]!.length, text: line.trimEnd() });
    else if (BULLET.test(line)) kept.push({ level: 99, text: line.trimEnd() });
  }
  // Walking backwards, a heading survives only if something deeper follows it.
  const out: string[] = [];
  let nextLevel = 0;
  for (let i = kept.length - 1; i >= 0; i--) {
    const k = kept[i]!;
    if (k.level === 99 || nextLevel > k.level) {
      out.push(k.text);
      nextLevel = k.level;
    }
  }
  return out.reverse();
}

/**
 * The last `linesPerFile` outline lines of the `files` newest daily files, newest file first.
 * With `agent`, only the notes of turns with that agent (their headings and bullets).
 */
export function recentMemory(src: DailySource, opts: { files?: number; linesPerFile?: number; agent?: string } = {}): RecentMemory[] {
  const perFile = opts.linesPerFile ?? 30;
  return textsOf(src, opts.files ?? 2).map(({ name, content }) => {
    const lines = opts.agent === undefined ? outline(content) : notesIn(content, name).filter((n) => noteAgent(n.anchor) === opts.agent).flatMap((n) => [`### ${n.heading}`, ...n.bullets.map((b) => `- ${b}`)]);
    return { file: name, lines: perFile > 0 ? lines.slice(-perFile) : [] };
  });
}

// ---------------------------------------------------------------------------------------------
// Notes one by one (projects, the Memory Hub, the last-session line)

/** One turn note: a `### HH:MM` section of a daily file. */
export interface JournalNote {
  /** Daily file name, e.g. `2026-11-21.md`. */
  file: string;
  /** `YYYY-MM-DD`, from the file name. */
  day: string;
  /** `HH:MM` from the heading; "" when the heading holds no time. */
  time: string;
  /** 1-based lines of the section, heading included. */
  line: number;
  endLine: number;
  heading: string;
  anchor?: Anchor;
  /** The bullets' text, without their `- `. */
  bullets: string[];
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const NOTE_HEADING = /^###\s+(.*\S)\s*$/;
const SECTION_END = /^#{1,3}\s/;

/**
 * The `###` sections of a daily file, in file order. A line scan (fences respected), not the
 * markdown lexer: SessionStart reads a week of files with it.
 */
export function notesIn(content: string, file: string): JournalNote[] {
  const day = file.slice(0, 10);
  const lines = content.replace(/\r\n?/g, "\n").split("\n");
  const out: JournalNote[] = [];
  let cur: JournalNote | undefined;
  let fence: string | undefined;
  const close = (end: number) => {
    if (!cur) return;
    let e = end;
    while (e > cur.line && !lines[e - 1]!.trim()) e--;
    cur.endLine = e;
    out.push(cur);
    cur = undefined;
  };
  lines.forEach((text, i) => {
    const f = FENCE.exec(text);
    if (f) {
      if (fence === undefined) fence = f[1]![0]!;
      else if (f[1]![0] === fence) fence = undefined;
    }
    if (fence !== undefined && !f) return;
    const h = NOTE_HEADING.exec(text);
    if (h || SECTION_END.test(text)) close(i);
    if (h) {
      cur = { file, day, time: /^\d{1,2}:\d{2}\b/.exec(h[1]!)?.[0] ?? "", line: i + 1, endLine: i + 1, heading: h[1]!, bullets: [] };
      return;
    }
    if (!cur) return;
    if (!cur.anchor && text.includes("<!--")) {
      const a = parseAnchor(text);
      if (a) cur.anchor = a;
      return;
    }
    const b = /^\s*[-*]\s+(.*\S)/.exec(text);
    if (b) cur.bullets.push(b[1]!);
  });
  close(lines.length);
  return out;
}

/**
 * What names a note whatever moves around it: a hash of its section's text as a reader is shown it
 * (without control characters, as `expand` reads it). A note edited, removed or replaced by another
 * at the same place no longer has it.
 */
export function sectionId(section: string): string {
  return sha256Hex(stripControls(section.replace(/\r\n?/g, "\n"))).slice(0, 16);
}

/** A note's section text in its file's `content`: its heading to its last non-blank line. */
export function sectionText(content: string, n: Pick<JournalNote, "line" | "endLine">): string {
  return content.replace(/\r\n?/g, "\n").split("\n").slice(n.line - 1, n.endLine).join("\n");
}

/** Every note of a memory folder, newest first (by day, then by position in the file). */
export function journalNotes(src: DailySource, opts: { files?: number } = {}): JournalNote[] {
  return textsOf(src, opts.files).flatMap(({ name, content }) => notesIn(content, name).reverse());
}

/** `YYYY-MM-DD HH:MM` of a note, or its day alone when its heading holds no time. */
export function noteStamp(n: Pick<JournalNote, "day" | "time">): string {
  return n.time ? `${n.day} ${n.time}` : n.day;
}

/** A note's local time, from its day and heading (midnight when the heading has no time). */
export function noteDate(n: Pick<JournalNote, "day" | "time">): Date | undefined {
  const [y, m, d] = n.day.split("-").map(Number);
  const [hh, mm] = n.time ? n.time.split(":").map(Number) : [0, 0];
  const date = new Date(y!, m! - 1, d!, hh, mm);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

interface PreviousSession {
  session: string;
  /** Its latest note: when it was last active. */
  last: JournalNote;
  /** Its earliest note found: what it began with. */
  first: JournalNote;
}

/**
 * The most recently active Claude Code session of the project other than `exclude` (the one
 * starting now, when it resumes), from the notes of the last `files` daily files. Notes written
 * by `memsearch remember` are not a session; with `ours`, neither are sessions this machine never saw.
 */
export function previousSession(src: DailySource, opts: { exclude?: string; files?: number; ours?: Provenance } = {}): PreviousSession | undefined {
  const notes = journalNotes(src, { files: opts.files ?? 7 });
  const skip = (n: JournalNote) => !n.anchor || n.anchor.session === "manual" || n.anchor.session === opts.exclude || (opts.ours !== undefined && !opts.ours(n.anchor));
  const last = notes.find((n) => !skip(n));
  if (!last) return undefined;
  const session = last.anchor!.session;
  let first = last;
  for (const n of notes) if (n.anchor?.session === session) first = n;
  return { session, last, first };
}

// ---------------------------------------------------------------------------------------------
// Removing notes (forget)

/**
 * Removes the `###` sections of the daily file `name` that `pick` chooses, under the lock appends
 * hold, and returns them (as they were). A `## Session` heading left with nothing under it goes
 * too. The file is replaced whole (atomicWrite), so a failed write leaves it as it was. With
 * `dryRun`, nothing is written.
 */
export async function removeNotes(memoryDir: string, name: string, pick: (notes: JournalNote[], content: string) => JournalNote[], opts: { dryRun?: boolean } = {}): Promise<JournalNote[]> {
  if (!isDailyFile(name)) throw new InputError(`not a daily memory file: ${name}`);
  const file = join(memoryDir, name);
  return withFileLock(
    lockOfDaily(memoryDir, name),
    () => {
      const before = readIfExists(file);
      if (before === undefined) return [];
      const gone = pick(notesIn(before, name), before);
      if (!gone.length || opts.dryRun) return gone;
      const lines = before.replace(/\r\n?/g, "\n").split("\n");
      const drop = new Set<number>();
      for (const n of gone) {
        let end = n.endLine;
        // The blank lines after a section belong to it.
        while (end < lines.length && !lines[end]!.trim()) end++;
        for (let i = n.line - 1; i < end; i++) drop.add(i);
      }
      let kept = lines.filter((_l, i) => !drop.has(i));
      kept = withoutEmptySessions(kept);
      atomicWrite(file, kept.join("\n"));
      return gone;
    },
    { timeoutMs: 10_000 },
  );
}

/** Lines without the `## Session …` headings that no longer hold anything before the next heading of their level or above. */
function withoutEmptySessions(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (/^##\s+Session\b/.test(lines[i]!)) {
      let j = i + 1;
      while (j < lines.length && !lines[j]!.trim()) j++;
      if (j >= lines.length || /^#{1,2}\s/.test(lines[j]!)) {
        i = j - 1;
        continue;
      }
    }
    out.push(lines[i]!);
  }
  return out;
}
