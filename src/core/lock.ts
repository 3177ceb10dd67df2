/**
 * Cross-process locks: a file created with O_EXCL holding `pid time token starttime boot`. Hooks
 * of several sessions, the watch process and the CLI all write one project's memory and index.
 *
 * The holder is known by its PID and its start time (Linux: /proc/<pid>/stat field 22; macOS:
 * ps lstart, spaces as "_"): after a crash the PID may soon belong to an unrelated process, and
 * a lock naming a live PID with another start time is broken at once instead of being waited on
 * until it ages out. The boot word (processes.ts bootWord: this machine's boot id) says the lock
 * was made on this machine since it booted; the lock files live in the project, so one can come
 * with a repository, and a lock without this boot's word is memsearch's only if its PID is a live
 * memsearch process that started before the lock's time (an older memsearch wrote `pid time
 * token [starttime]`). A lock from the future, or naming a process that is not memsearch (init, a
 * shell), is nobody's: broken at once, as a lock without even a time is after a moment's grace.
 */
import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { StorageError } from "./errors.ts";
import { errCode, readTextQuiet, storageError } from "./fsutil.ts";
import { bootWord, isAlive, isMemsearchProcess, mayBeSameProcess, processStartTime, sameBoot } from "./processes.ts";
import { INDEX_LOCK, makeDataDir } from "./project.ts";

export interface LockOptions {
  /** Give up after this long (default 5 s). */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned even if its pid looks alive (default 30 s). */
  staleMs?: number;
}

const EMPTY_LOCK_GRACE_MS = 2_000;
/** A lock's time may be this far ahead of ours (clocks read a moment apart); further is from the future. */
const FUTURE_SLACK_MS = 5_000;
/** A holder is said to be possibly hung, and the user told they may end it, only past this. */
const HUNG_AFTER_MS = 60_000;

/** The lock stayed held by someone else for the whole timeout. */
export class LockTimeoutError extends StorageError {}

/**
 * Runs `fn` while holding `lockPath`, a file created with O_EXCL that holds `pid time token
 * starttime`. Waiters poll with short jittered sleeps; a lock whose pid is dead or now names
 * another process (its start time differs), or that is older than `staleMs`, is broken. Works
 * across processes on one machine, which is what hooks need.
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
  const start = ownStartTime();
  // Without a start time there is no fourth word: the boot word would be read as one.
  const token = `${process.pid} ${Date.now()} ${Math.random().toString(36).slice(2, 10) || "0"} ${start ?? "-"} ${bootWord()}\n`;
  const deadline = Date.now() + timeoutMs;
  const judge = new HolderCheck();
  // The holders met while waiting: many in turn is a busy lock, not a hung holder.
  const holders = new Set<string>();
  for (let attempt = 0; ; attempt++) {
    if (tryCreateLock(lockPath, token)) return token;
    if (breakIfStale(lockPath, staleMs, judge, holders)) continue;
    if (Date.now() >= deadline) {
      const now = readTextQuiet(lockPath);
      throw new LockTimeoutError(`timed out after ${timeoutMs} ms waiting for ${lockPath} (${holders.size > 1 ? `busy: ${holders.size} writers held it in turn meanwhile; try again` : holderOf(now)})`);
    }
    // Jitter keeps a crowd of waiters from retrying in lockstep.
    await Bun.sleep(Math.min(5 + attempt * 5, 50) + Math.random() * 10);
  }
}

/**
 * Who holds a lock, for the timeout message. A live holder may legitimately hold for minutes
 * (an embedding run, a summariser); one that is hung is for the user to end, so say since when.
 */
function holderOf(content: string | undefined): string {
  const [pid, time] = content?.trim().split(/\s+/) ?? [];
  const since = Number(time);
  if (!pid) return "its holder is unknown";
  if (!Number.isFinite(since) || since <= 0) return `held by pid ${pid}`;
  const held = Math.max(0, Date.now() - since);
  // Only a memsearch that has held it a long while may be hung; a short hold is work being done.
  const hung = held >= HUNG_AFTER_MS && isMemsearchProcess(Number(pid)) ? "; if that process is hung, end it" : "; it is at work, try again";
  return `held by pid ${pid} for ${Math.round(held / 1000)} s${hung}`;
}

/**
 * The lock appears with its content in one step: written to a private file, then hard-linked into
 * place (link fails if the lock exists). A holder killed between creating and writing an O_EXCL
 * file would leave an empty lock that nobody could judge. Where links are not supported, O_EXCL.
 */
function tryCreateLock(lockPath: string, token: string): boolean {
  const tmp = `${lockPath}.new-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    writeToken(tmp, "wx", token);
    try {
      linkSync(tmp, lockPath);
      return true;
    } catch (e) {
      if (errCode(e) === "EEXIST") return false;
      if (!["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"].includes(errCode(e) ?? "")) throw storageError(lockPath, e);
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  try {
    writeToken(lockPath, "wx", token);
    return true;
  } catch (e) {
    if (errCode(e) === "EEXIST") return false;
    throw e;
  }
}

function writeToken(path: string, flags: "w" | "wx", token: string): void {
  let fd: number;
  try {
    fd = openSync(path, flags, 0o644);
  } catch (e) {
    if (errCode(e) === "EEXIST") throw e;
    throw storageError(path, e);
  }
  try {
    writeSync(fd, token);
  } catch (e) {
    closeSync(fd);
    // An empty lock would make everyone wait out its grace: remove it.
    rmSync(path, { force: true });
    throw storageError(path, e);
  }
  closeSync(fd);
}

/** A start time as the lock file holds it: one word. */
const startWord = (t: string) => t.trim().replace(/\s+/g, "_");

let ownStart: string | null | undefined;
/** This process's start time (asked once: on macOS it costs a `ps`). */
function ownStartTime(): string | undefined {
  if (ownStart === undefined) {
    const t = processStartTime(process.pid);
    ownStart = t ? startWord(t) : null;
  }
  return ownStart ?? undefined;
}

/**
 * Whether a live PID is still the process that wrote the lock. A waiter polls every few ms;
 * the answer for one lock content is kept for a second (on macOS each look costs a `ps`).
 */
class HolderCheck {
  private content?: string;
  private at = 0;
  private same: boolean | undefined;
  private memsearch: boolean | undefined;
  isHolder(content: string, pid: number, recorded: string | undefined, writtenAt: number): boolean {
    this.fresh(content);
    // The older `pid time token` format has no start time: a process that started after the
    // lock was taken is not its holder (the PID was reused).
    this.same ??= mayBeSameProcess(pid, recorded, writtenAt);
    return this.same;
  }
  isMemsearch(content: string, pid: number): boolean {
    this.fresh(content);
    this.memsearch ??= isMemsearchProcess(pid);
    return this.memsearch;
  }
  private fresh(content: string): void {
    if (content === this.content && Date.now() - this.at <= 1_000) return;
    this.content = content;
    this.at = Date.now();
    this.same = undefined;
    this.memsearch = undefined;
  }
}

function isStale(content: string, mtimeMs: number, staleMs: number, judge: HolderCheck): boolean {
  const [pidText, timeText, , startText, bootText] = content.trim().split(/\s+/);
  const time = Number(timeText);
  // Every memsearch wrote at least `pid time`: a lock without its time (a bare PID, an older
  // memsearch killed between creating and writing it, a hand-made or committed file) has no
  // holder to wait for, only a moment's grace.
  if (!Number.isFinite(time) || time <= 0) return Date.now() - mtimeMs > EMPTY_LOCK_GRACE_MS;
  // No holder took it in the future: a planted time would otherwise never age out.
  if (time > Date.now() + FUTURE_SLACK_MS) return true;
  if (Date.now() - time > staleMs) return true;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return Date.now() - mtimeMs > EMPTY_LOCK_GRACE_MS;
  if (!isAlive(pid)) return true;
  // Made on another machine or before this boot: no process of this one holds it.
  if (bootText !== undefined && !sameBoot(bootText)) return true;
  // The PID is alive, but a crashed holder's PID may have been reused by an unrelated process.
  const start = startText && startText !== "-" ? startText : undefined;
  if (!judge.isHolder(content, pid, start, time)) return true;
  // Without this boot's word (an older memsearch's lock, or one that came with the repository):
  // held only by a live memsearch process.
  return bootText === undefined && !judge.isMemsearch(content, pid);
}

/** A lock's content and age, or undefined once it is gone. */
function readLock(lockPath: string): { content: string; mtimeMs: number } | undefined {
  try {
    return { content: readFileSync(lockPath, "utf8"), mtimeMs: statSync(lockPath).mtimeMs };
  } catch {
    return undefined;
  }
}

/** True while a live holder (by PID and start time) has `lockPath`, under the same rules waiters apply. */
export function isLockHeld(lockPath: string, staleMs: number): boolean {
  const lock = readLock(lockPath);
  return lock !== undefined && !isStale(lock.content, lock.mtimeMs, staleMs, new HolderCheck());
}

/** Removes an abandoned lock; true when the lock file is gone (broken by us or released). */
function breakIfStale(lockPath: string, staleMs: number, judge: HolderCheck, holders?: Set<string>): boolean {
  const lock = readLock(lockPath);
  if (!lock) return true; // released between our attempt and now
  const { content } = lock;
  if (!isStale(content, lock.mtimeMs, staleMs, judge)) {
    holders?.add(content);
    return false;
  }
  // Rename first: only one breaker can move a given file, and what was moved can be checked.
  const aside = `${lockPath}.stale-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return true;
  }
  // Another breaker may have replaced the stale lock with a live one between our read and the
  // rename; if we moved that one, put it back (link fails if a newer lock already exists).
  if (readTextQuiet(aside) !== content) {
    try {
      linkSync(aside, lockPath);
    } catch {}
  }
  rmSync(aside, { force: true });
  return true;
}

function releaseLock(lockPath: string, token: string): void {
  // Only remove our own lock: if we overran staleMs someone may hold a new one.
  if (readTextQuiet(lockPath) === token) rmSync(lockPath, { force: true });
}

/**
 * Every writer of one project's index (CLI index, Stop hooks, the watch process) holds this
 * lock for its load → change → save cycle, so concurrent writers never drop each other's work.
 * A long embedding run may hold it for minutes; a dead holder's lock is broken at once.
 */
export function withIndexLock<T>(indexDir: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  try {
    // The index folder is `<dataDir>/index` (project.ts): the data folder may be made here first.
    makeDataDir(dirname(indexDir), indexDir);
  } catch (e) {
    throw new StorageError(`cannot create the index folder ${indexDir}: ${errCode(e) ?? e}`);
  }
  return withFileLock(join(indexDir, INDEX_LOCK), fn, { timeoutMs, staleMs: 30 * 60_000 });
}
