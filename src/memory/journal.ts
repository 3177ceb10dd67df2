/**
 * The daily memory files, `.memsearch/memory/YYYY-MM-DD.md`: the source of truth every index is
 * rebuilt from. Appending a turn note is the commit point of the Stop hook, so it is serialised
 * across processes (several sessions of one project stop at once), idempotent (Claude Code may
 * retry a hook) and all-or-nothing (a full disk leaves the file as it was).
 */
// The default export, not named imports: tests replace fs.writeSync to simulate a full disk.
import fs from "node:fs";
import { join } from "node:path";
import { InputError, StorageError } from "../core/errors.ts";
import { sanitize } from "./redact.ts";

// ---------------------------------------------------------------------------------------------
// Cross-process lock

export interface LockOptions {
  /** Give up after this long (default 5 s). */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned even if its pid looks alive (default 30 s). */
  staleMs?: number;
}

/** The lock stayed held by someone else for the whole timeout. */
export class LockTimeoutError extends StorageError {}

/**
 * Runs `fn` while holding `lockPath`, a file created with O_EXCL that holds `pid time`.
 * Waiters poll with short jittered sleeps; a lock whose pid is dead, or that is older than
 * `staleMs`, is broken. Works across processes on one machine, which is what hooks need.
 */
export async function withFileLock<T>(lockPath: string, fn: () => T | Promise<T>, opts: LockOptions = {}): Promise<T> {
  const token = await acquireLock(lockPath, opts.timeoutMs ?? 5_000, opts.staleMs ?? 30_000);
  try {
    return await fn();
  } finally {
    releaseLock(lockPath, token);
  }
}

async function acquireLock(lockPath: string, timeoutMs: number, staleMs: number): Promise<string> {
  // The random part tells two holders apart inside one process (same pid).
  const token = `${process.pid} ${Date.now()} ${Math.random().toString(36).slice(2, 10)}\n`;
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    if (tryCreateLock(lockPath, token)) return token;
    if (breakIfStale(lockPath, staleMs)) continue;
    if (Date.now() >= deadline) {
      const holder = readLock(lockPath)?.trim().split(/\s+/)[0] ?? "?";
      throw new LockTimeoutError(`timed out after ${timeoutMs} ms waiting for ${lockPath} (held by pid ${holder})`);
    }
    // Jitter keeps a crowd of waiters from retrying in lockstep.
    await Bun.sleep(Math.min(5 + attempt * 5, 50) + Math.random() * 10);
  }
}

function tryCreateLock(lockPath: string, token: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, "wx", 0o644);
  } catch (e) {
    if (errCode(e) === "EEXIST") return false;
    throw storageError(lockPath, e);
  }
  try {
    fs.writeSync(fd, token);
  } catch (e) {
    // An empty lock would look alive to everyone until it ages out: remove it.
    fs.closeSync(fd);
    fs.rmSync(lockPath, { force: true });
    throw storageError(lockPath, e);
  }
  fs.closeSync(fd);
  return true;
}

function readLock(lockPath: string): string | undefined {
  try {
    return fs.readFileSync(lockPath, "utf8");
  } catch {
    return undefined;
  }
}

function isStale(content: string, mtimeMs: number, staleMs: number): boolean {
  const [pidText, timeText] = content.trim().split(/\s+/);
  const time = Number(timeText);
  const age = Date.now() - (Number.isFinite(time) && time > 0 ? time : mtimeMs);
  if (age > staleMs) return true;
  const pid = Number(pidText);
  // An empty lock is being written right now; only age can make it stale.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  return !pidAlive(pid);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errCode(e) === "EPERM"; // exists, owned by someone else
  }
}

/** Removes an abandoned lock; true when the lock file is gone (broken by us or released). */
function breakIfStale(lockPath: string, staleMs: number): boolean {
  let content: string;
  let mtimeMs: number;
  try {
    content = fs.readFileSync(lockPath, "utf8");
    mtimeMs = fs.statSync(lockPath).mtimeMs;
  } catch {
    return true; // released between our attempt and now
  }
  if (!isStale(content, mtimeMs, staleMs)) return false;
  // Rename first: only one breaker can move a given file, and what was moved can be checked.
  const aside = `${lockPath}.stale-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    fs.renameSync(lockPath, aside);
  } catch {
    return true;
  }
  // Another breaker may have replaced the stale lock with a live one between our read and the
  // rename; if we moved that one, put it back (link fails if a newer lock already exists).
  if (readLock(aside) !== content) {
    try {
      fs.linkSync(aside, lockPath);
    } catch {}
  }
  fs.rmSync(aside, { force: true });
  return true;
}

function releaseLock(lockPath: string, token: string): void {
  // Only remove our own lock: if we overran staleMs someone may hold a new one.
  if (readLock(lockPath) === token) fs.rmSync(lockPath, { force: true });
}

// ---------------------------------------------------------------------------------------------
// Anchors

const ANCHOR = /<!--\s*session:(\S+)\s+turn:(\S+)\s+transcript:(\S+)\s*-->/;

export interface Anchor {
  session: string;
  turn: string;
  transcript: string;
}

// Readers split the anchor on whitespace, so a path with spaces must not contain any; `>` could
// close the HTML comment early. `%` is encoded so decoding is exact.
function encodeField(value: string): string {
  return value.replace(/[%>\s]/g, (ch) => encodeURIComponent(ch));
}

function decodeField(value: string): string {
  // Tolerant: an anchor written by another tool may hold a raw `%` that is not an escape.
  return value.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** The anchor comment on a line, with its fields decoded; undefined when there is none. */
export function parseAnchor(line: string): Anchor | undefined {
  const m = ANCHOR.exec(line);
  if (!m) return undefined;
  return { session: decodeField(m[1]!), turn: decodeField(m[2]!), transcript: decodeField(m[3]!) };
}

export function formatAnchor(a: Anchor): string {
  return `<!-- session:${encodeField(a.session)} turn:${encodeField(a.turn)} transcript:${encodeField(a.transcript || "-")} -->`;
}

function anchorsIn(content: string): Anchor[] {
  const out: Anchor[] = [];
  for (const line of content.split("\n")) {
    if (!line.includes("<!--")) continue;
    const a = parseAnchor(line);
    if (a) out.push(a);
  }
  return out;
}

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
    let text = sanitize(String(raw)).replace(/\s+/g, " ").trim();
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
    fs.mkdirSync(opts.memoryDir, { recursive: true });
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
    return fs.readFileSync(file, "utf8");
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
  const existed = fs.existsSync(path);
  let fd: number | undefined;
  let size = 0;
  try {
    fd = fs.openSync(path, "a", 0o644);
    size = fs.fstatSync(fd).size;
    let off = 0;
    while (off < buf.byteLength) off += fs.writeSync(fd, buf, off, buf.byteLength - off);
    // The append is the commit point of a turn note: make it survive a crash.
    fs.fsyncSync(fd);
  } catch (e) {
    if (fd !== undefined) {
      try {
        fs.ftruncateSync(fd, size);
      } catch {}
    }
    if (!existed) fs.rmSync(path, { force: true });
    throw storageError(path, e);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading recent memory (SessionStart)

const DAILY = /^\d{4}-\d{2}-\d{2}\.md$/;

/** Daily files, newest first. */
export function dailyFiles(memoryDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(memoryDir);
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
    const content = readQuiet(join(memoryDir, name));
    if (content === undefined) continue;
    const lines = outline(content);
    out.push({ file: name, lines: perFile > 0 ? lines.slice(-perFile) : [] });
  }
  return out;
}

function readQuiet(path: string): string | undefined {
  try {
    return fs.readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
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

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * One line about the most recently active session, e.g.
 * `Last session 2026-11-21 14:02: User asked to …`. Looks back through up to a week of files.
 */
export function lastSessionLine(memoryDir: string): string | undefined {
  for (const name of dailyFiles(memoryDir).slice(0, 7)) {
    const content = readQuiet(join(memoryDir, name));
    const s = content === undefined ? undefined : lastSessionIn(content);
    if (!s) continue;
    const when = [name.slice(0, 10), s.start].filter(Boolean).join(" ");
    return s.firstBullet ? `Last session ${when}: ${clip(s.firstBullet, 200)}` : `Last session ${when}`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException)?.code;
}

function storageError(path: string, e: unknown): StorageError {
  if (e instanceof StorageError) return e;
  const code = errCode(e);
  const why =
    code === "ENOSPC" || code === "EDQUOT"
      ? "disk full"
      : code === "EACCES" || code === "EPERM" || code === "EROFS"
        ? "permission denied"
        : String((e as Error)?.message ?? e).replace(/\s*\n\s*/g, " ");
  return new StorageError(`cannot write ${path}: ${why}; the file is unchanged`);
}
