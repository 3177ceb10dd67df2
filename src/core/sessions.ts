import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readTextQuiet } from "./fsutil.ts";
import { isAlive } from "./warm.ts";

/**
 * The Claude Code sessions of a project, so the watch process lives exactly as long as one of
 * them does: SessionStart registers, SessionEnd unregisters, and a hook-started watch process
 * checks now and then whether any registered session is still alive (Claude Code killed or its
 * terminal closed never runs SessionEnd).
 *
 * A session is `.memsearch/sessions/<safe session id>` holding {pid, startTime, at}: the Claude
 * Code process and its start time, so a PID reused after a crash is not taken for the session.
 */

export interface SessionRecord {
  pid: number;
  /** Start time of `pid` as the OS tells it (Linux: /proc stat field 22; macOS: ps lstart); absent where unknown. */
  startTime?: string;
  /** When the record was last written. */
  at: string;
}

export interface ProcessId {
  pid: number;
  startTime?: string;
}

export function sessionsDir(dataDir: string): string {
  return join(dataDir, "sessions");
}

const safeId = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_").slice(0, 100) || "unknown";

function sessionFile(dataDir: string, sessionId: string): string {
  return join(sessionsDir(dataDir), safeId(sessionId));
}

// ---------------------------------------------------------------------------------------------
// Processes: parent, name and start time, without spawning anything on Linux.

interface ProcInfo {
  ppid: number;
  comm: string;
  startTime?: string;
}

const hasProc = () => existsSync("/proc/self/stat");

/** Linux: /proc/<pid>/stat is `pid (comm) state ppid ... starttime(22) ...`; comm may hold spaces and parens. */
function procInfoLinux(pid: number): ProcInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const rest = stat.slice(close + 2).split(" "); // rest[0] is field 3 (state)
  const ppid = Number(rest[1]);
  const start = rest[19];
  if (!Number.isInteger(ppid) || !start) return undefined;
  return { ppid, comm: stat.slice(open + 1, close), startTime: start };
}

/** macOS and other Unixes without /proc: one `ps` call per process. */
function procInfoPs(pid: number): ProcInfo | undefined {
  try {
    const r = Bun.spawnSync(["ps", "-o", "ppid=,lstart=,comm=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore", env: { ...process.env, LC_ALL: "C" } });
    if (r.exitCode !== 0) return undefined;
    // `  123 Mon Nov 23 09:00:00 2026 /bin/zsh`: lstart is always five words, comm may hold spaces.
    const words = r.stdout.toString().trim().split(/\s+/);
    if (words.length < 7) return undefined;
    const ppid = Number(words[0]);
    if (!Number.isInteger(ppid)) return undefined;
    return { ppid, startTime: words.slice(1, 6).join(" "), comm: words.slice(6).join(" ") };
  } catch {
    return undefined;
  }
}

function procInfo(pid: number): ProcInfo | undefined {
  if (process.platform === "win32" || !Number.isInteger(pid) || pid <= 0) return undefined;
  return hasProc() ? procInfoLinux(pid) : procInfoPs(pid);
}

/** The start time of a process, or undefined when it is gone or the OS does not tell. */
export function processStartTime(pid: number): string | undefined {
  return procInfo(pid)?.startTime;
}

/** Shells and exec wrappers a hook command may run under; they are not Claude Code. */
const WRAPPERS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "ash", "yash", "fish", "tcsh", "csh", "busybox", "env", "nohup", "nice", "setsid", "stdbuf", "timeout", "cmd.exe", "powershell", "pwsh"]);

export function isWrapper(comm: string): boolean {
  const base = comm.replace(/^-/, "").split(/[\\/]/).pop()!.toLowerCase().replace(/\.exe$/, "");
  return WRAPPERS.has(base) || WRAPPERS.has(base + ".exe");
}

/**
 * The Claude Code process that runs this hook: the first ancestor that is not a shell. Hooks
 * may run under `sh -c` (one or more shells that exit with the hook), so `process.ppid` alone
 * would name a process that is gone a moment later. Windows: the parent, as is.
 */
export function claudeProcess(): ProcessId {
  const parent = process.ppid;
  if (process.platform === "win32") return { pid: parent };
  let pid = parent;
  let info = procInfo(pid);
  if (!info) return { pid: parent };
  for (let depth = 0; depth < 16 && isWrapper(info.comm); depth++) {
    const up = procInfo(info.ppid);
    // Only shells up to init: the topmost shell is the best guess there is.
    if (info.ppid <= 1 || !up) break;
    pid = info.ppid;
    info = up;
  }
  return { pid, startTime: info.startTime };
}

/** The Claude Code PID that ran this hook (see claudeProcess). */
export function claudePid(): number {
  return claudeProcess().pid;
}

// ---------------------------------------------------------------------------------------------
// Session files.

/** Write through a dot-named temp file: readers skip dot names and never see a half file. */
function writeRecord(path: string, rec: SessionRecord): void {
  const dir = join(path, "..");
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${Math.random().toString(36).slice(2, 10)}-${process.pid}.tmp`);
  try {
    writeFileSync(tmp, JSON.stringify(rec));
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

function readRecord(path: string): SessionRecord | undefined {
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    if (v && typeof v === "object" && Number.isInteger(v.pid) && v.pid > 0) return v as SessionRecord;
  } catch {}
  return undefined;
}

/** SessionStart: record (or refresh) this session as run by the Claude Code process above us. */
export function registerSession(dataDir: string, sessionId: string, who: ProcessId = claudeProcess()): SessionRecord {
  const rec: SessionRecord = { pid: who.pid, ...(who.startTime ? { startTime: who.startTime } : {}), at: new Date().toISOString() };
  writeRecord(sessionFile(dataDir, sessionId), rec);
  return rec;
}

/**
 * Any hook of a session may call this (cheap: one read and one small write): re-registers a
 * session whose file is missing or predates start times, else only refreshes its `at`.
 */
export function touchSession(dataDir: string, sessionId: string): void {
  const path = sessionFile(dataDir, sessionId);
  const rec = readRecord(path);
  if (!rec || (!rec.startTime && process.platform !== "win32")) {
    registerSession(dataDir, sessionId);
    return;
  }
  writeRecord(path, { ...rec, at: new Date().toISOString() });
}

/** Alive = the PID runs and, where the record has one, with the same start time (PIDs get reused). */
export function isSessionAlive(rec: Pick<SessionRecord, "pid" | "startTime">): boolean {
  if (!isAlive(rec.pid)) return false;
  if (!rec.startTime) return true;
  const now = processStartTime(rec.pid);
  // Alive but unreadable (e.g. /proc mounted hidepid): nothing disproves it.
  return now === undefined || now === rec.startTime;
}

/** How many registered sessions are alive; the files of dead ones are removed. */
export function liveSessions(dataDir: string): number {
  const dir = sessionsDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let live = 0;
  for (const n of names) {
    if (n.startsWith(".")) continue; // a record being written
    const path = join(dir, n);
    const raw = readTextQuiet(path);
    if (raw === undefined) continue; // removed meanwhile
    const rec = readRecord(path);
    if (rec && isSessionAlive(rec)) {
      live++;
      continue;
    }
    // Remove only what we judged: a session re-registering under the same id meanwhile stays.
    if (readTextQuiet(path) === raw) rmSync(path, { force: true });
  }
  return live;
}

/** SessionEnd: remove this session; return how many other sessions of the project are still alive. */
export function unregisterSession(dataDir: string, sessionId: string): number {
  rmSync(sessionFile(dataDir, sessionId), { force: true });
  return liveSessions(dataDir);
}
