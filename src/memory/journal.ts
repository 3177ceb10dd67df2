/**
 * The daily memory files, `.memsearch/memory/YYYY-MM-DD.md`: the source of truth every index is
 * rebuilt from. Appending a turn note is the commit point of the Stop hook, so it is serialised
 * across processes (several sessions of one project stop at once), idempotent (Claude Code may
 * retry a hook) and all-or-nothing (a full disk leaves the file as it was).
 */
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { anchorsIn, formatAnchor, parseAnchor } from "../core/anchor.ts";
import { clip, oneLine } from "../core/text.ts";
import { InputError } from "../core/errors.ts";
import { errCode, readTextQuiet, storageError } from "../core/fsutil.ts";
import { withFileLock } from "../core/lock.ts";
import { sanitize } from "./redact.ts";

// ---------------------------------------------------------------------------------------------
// Appending a turn note

export interface TurnNote {
  memoryDir: string;
  sessionId: string;
  turnUuid: string;
  transcriptPath: string;
  bullets: string[];
  now?: Date;
}

export interface AppendResult {
  file: string;
  wroteSessionHeading: boolean;
  /** False when this turn's anchor was already in the file (a retried hook): nothing written. */
  appended: boolean;
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
  return join(memoryDir, `.${localDay(now)}.md.lock`);
}

const NO_BULLETS = "- (no summary; see the transcript anchor)";

/** One `- ` line per bullet, sanitised again (bullets may come from a model that echoed a key). */
export function normaliseBullets(bullets: string[]): string[] {
  const out: string[] = [];
  for (const raw of bullets) {
    let text = oneLine(sanitize(String(raw)));
    text = text.replace(/^(?:[-*•+]\s*)+/, "").trim();
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
export async function appendTurnNote(opts: TurnNote): Promise<AppendResult> {
  if (!opts.sessionId.trim() || !opts.turnUuid.trim()) throw new InputError("a turn note needs a session id and a turn uuid");
  const now = opts.now ?? new Date();
  try {
    mkdirSync(opts.memoryDir, { recursive: true });
  } catch (e) {
    throw storageError(opts.memoryDir, e);
  }
  const file = dailyFile(opts.memoryDir, now);
  return withFileLock(dailyLockFile(opts.memoryDir, now), () => appendLocked(file, opts, now), { timeoutMs: 10_000 });
}

function appendLocked(file: string, opts: TurnNote, now: Date): AppendResult {
  const before = readIfExists(file);
  const anchors = anchorsIn(before ?? "");
  if (anchors.some((a) => a.turn === opts.turnUuid)) return { file, wroteSessionHeading: false, appended: false };
  const needHeading = !anchors.some((a) => a.session === opts.sessionId);
  appendAll(file, buildBlock(before, opts, now, needHeading));
  return { file, wroteSessionHeading: needHeading, appended: true };
}

function buildBlock(before: string | undefined, opts: TurnNote, now: Date, needHeading: boolean): string {
  const hm = localTime(now);
  // Exactly one blank line before the new heading, whatever a hand edit left at the end.
  let block = !before ? `# ${localDay(now)}\n\n` : before.endsWith("\n\n") ? "" : before.endsWith("\n") ? "\n" : "\n\n";
  if (needHeading) block += `## Session ${hm}\n\n`;
  block += `### ${hm}\n`;
  block += `${formatAnchor({ session: opts.sessionId, turn: opts.turnUuid, transcript: opts.transcriptPath })}\n`;
  block += normaliseBullets(opts.bullets).join("\n");
  return `${block}\n\n`;
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
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
  const existed = existsSync(path);
  let fd: number | undefined;
  let size = 0;
  try {
    fd = openSync(path, "a", 0o644);
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

const DAILY = /^\d{4}-\d{2}-\d{2}\.md$/;

/** Daily files, newest first. */
export function dailyFiles(memoryDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(memoryDir);
  } catch {
    return [];
  }
  return names.filter((n) => DAILY.test(n)).sort().reverse();
}

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

/** The last `linesPerFile` outline lines of the `files` newest daily files, newest file first. */
export function recentMemory(memoryDir: string, opts: { files?: number; linesPerFile?: number } = {}): RecentMemory[] {
  const files = opts.files ?? 2;
  const perFile = opts.linesPerFile ?? 30;
  const out: RecentMemory[] = [];
  for (const name of dailyFiles(memoryDir).slice(0, files)) {
    const content = readTextQuiet(join(memoryDir, name));
    if (content === undefined) continue;
    const lines = outline(content);
    out.push({ file: name, lines: perFile > 0 ? lines.slice(-perFile) : [] });
  }
  return out;
}

interface SessionSeen {
  start: string;
  firstBullet?: string;
}

/** The session whose turn was written last in a file: its start time and first bullet. */
function lastSessionIn(content: string): SessionSeen | undefined {
  const seen = new Map<string, SessionSeen>();
  let last: SessionSeen | undefined;
  let sessionTime: string | undefined;
  let turnTime: string | undefined;
  let current: SessionSeen | undefined;
  for (const line of content.split("\n")) {
    const session = /^##\s+Session\s+(\d{1,2}:\d{2})/.exec(line);
    const turn = /^###\s+(\d{1,2}:\d{2})/.exec(line);
    if (session || turn) {
      if (session) sessionTime = session[1];
      if (turn) turnTime = turn[1];
      current = undefined;
      continue;
    }
    const a = line.includes("<!--") ? parseAnchor(line) : undefined;
    if (a) {
      // A session's heading is written just before its first turn, so the latest one is its own.
      current = seen.get(a.session) ?? { start: sessionTime ?? turnTime ?? "" };
      seen.set(a.session, current);
      sessionTime = undefined;
      last = current;
      continue;
    }
    const b = /^\s*[-*]\s+(.*\S)/.exec(line);
    if (b && current && current.firstBullet === undefined) current.firstBullet = b[1];
  }
  return last;
}

/**
 * One line about the most recently active session, e.g.
 * `Last session 2026-11-21 14:02: User asked to …`. Looks back through up to a week of files.
 */
export function lastSessionLine(memoryDir: string): string | undefined {
  for (const name of dailyFiles(memoryDir).slice(0, 7)) {
    const content = readTextQuiet(join(memoryDir, name));
    const s = content === undefined ? undefined : lastSessionIn(content);
    if (!s) continue;
    const when = [name.slice(0, 10), s.start].filter(Boolean).join(" ");
    return s.firstBullet ? `Last session ${when}: ${clip(s.firstBullet, 200)}` : `Last session ${when}`;
  }
  return undefined;
}
