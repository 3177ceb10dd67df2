import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { basename } from "node:path";
import { uptime } from "node:os";
import { errCode } from "./errors.ts";

/**
 * Processes: whether one is alive, its parent, name and start time (without spawning anything
 * on Linux), and which one is the Claude Code that runs a hook. A PID with its start time names
 * a process for good; a PID alone may be reused after a crash.
 */

export interface ProcessId {
  pid: number;
  startTime?: string;
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return errCode(e) === "EPERM";
  }
  // An exited process nobody has reaped yet still answers kill(0) on Linux.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}


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

/** Linux's clock ticks per second in /proc (USER_HZ: 100 on every architecture Bun runs on). */
const CLK_TCK = 100;

let bootMs: number | null | undefined;
/** When this machine booted (ms since epoch, to the second), from /proc/stat. */
function bootTime(): number | undefined {
  if (bootMs === undefined) {
    try {
      const m = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
      bootMs = m ? Number(m[1]) * 1000 : null;
    } catch {
      bootMs = null;
    }
  }
  return bootMs ?? undefined;
}

/**
 * When a process started, in ms since the epoch (to a second or so), or undefined when it is gone
 * or the OS does not tell. For records that name a process by PID alone: a process that started
 * after the record was written is not the one it names.
 */
export function processStartedAt(pid: number): number | undefined {
  const t = processStartTime(pid);
  if (t === undefined) return undefined;
  if (hasProc()) {
    const boot = bootTime();
    const ticks = Number(t);
    return boot === undefined || !Number.isFinite(ticks) ? undefined : boot + (ticks * 1000) / CLK_TCK;
  }
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Clock slack when comparing a start time with a record's time: boot time is whole seconds. */
export const START_SLACK_MS = 2_000;

/**
 * Whether a live `pid` may still be the process a record names: the same start time when the
 * record holds one; otherwise, one that had started by `writtenAt` (ms), the record's own time.
 */
export function mayBeSameProcess(pid: number, startTime: string | undefined, writtenAt?: number): boolean {
  if (startTime !== undefined) {
    const now = processStartTime(pid);
    // Alive but unreadable (hidepid, no ps): nothing disproves it.
    return now === undefined || now.trim().replace(/\s+/g, "_") === startTime.trim().replace(/\s+/g, "_");
  }
  if (writtenAt === undefined) return true;
  const started = processStartedAt(pid);
  return started === undefined || started <= writtenAt + START_SLACK_MS;
}

/**
 * This boot of this machine, as one word: Linux's boot id (`b:<uuid>`), elsewhere the boot time in
 * seconds (`t:<s>`, from the uptime, so two processes may differ by a second). A record naming a
 * process (a lock) carries it: a record from another machine or an earlier boot names no process
 * of this one, whatever its PID, and a repository cannot know it in advance.
 */
export function bootWord(): string {
  if (ownBoot === undefined) {
    try {
      const id = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().replace(/-/g, "");
      ownBoot = /^[0-9a-f]{16,64}$/.test(id) ? `b:${id}` : undefined;
    } catch {}
    ownBoot ??= `t:${Math.round(Date.now() / 1000 - uptime())}`;
  }
  return ownBoot;
}
let ownBoot: string | undefined;

/** Boot times computed from the uptime at different moments agree within this many seconds. */
const BOOT_SLACK_S = 5;

/** Whether a record's boot word names this boot (see bootWord). */
export function sameBoot(word: string): boolean {
  const own = bootWord();
  if (word === own) return true;
  if (!word.startsWith("t:") || !own.startsWith("t:")) return false;
  const a = Number(word.slice(2));
  return Number.isFinite(a) && Math.abs(a - Number(own.slice(2))) <= BOOT_SLACK_S;
}

/**
 * Whether a live process is a memsearch: the same executable as this one, or a command line naming
 * memsearch. False when it cannot be told (gone, or another user's process, which holds no lock of
 * this user's memory). For records that carry no boot word (an older memsearch's, or planted).
 */
export function isMemsearchProcess(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  if (hasProc()) {
    try {
      if (readlinkSync(`/proc/${pid}/exe`) === readlinkSync("/proc/self/exe")) return true;
    } catch {}
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, 3);
      return args.some((a) => /memsearch/i.test(basename(a)) || /[\\/]memsearch[\\/]/i.test(a));
    } catch {
      return false;
    }
  }
  if (process.platform === "win32") return false;
  try {
    const r = Bun.spawnSync(["ps", "-o", "command=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore", env: { ...process.env, LC_ALL: "C" } });
    return r.exitCode === 0 && /memsearch/i.test(r.stdout.toString().trim().split(/\s+/).slice(0, 3).join(" "));
  } catch {
    return false;
  }
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
