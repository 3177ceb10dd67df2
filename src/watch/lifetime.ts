import { rmSync } from "node:fs";
import { oneLine } from "../core/errors.ts";
import { withFileLock } from "../core/lock.ts";
import { liveSessions } from "./sessions.ts";
import { dataFiles } from "../core/project.ts";
import { readWatchInfo, writeWatchInfo } from "./client.ts";

/**
 * How long a watch process started by a hook lives: as long as one Claude Code session of its
 * project is alive. SessionEnd stops it when the last session ends normally; this covers the
 * sessions that never run SessionEnd (Claude Code killed, terminal closed). A watch started by
 * hand (`memsearch watch` in a terminal) follows no sessions and runs until stopped.
 */

/** Check the registered sessions this often (MEMSEARCH_WATCH_LIVENESS_MS overrides, for tests). */
export const LIVENESS_MS = 30_000;

export function livenessMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.MEMSEARCH_WATCH_LIVENESS_MS);
  return env.MEMSEARCH_WATCH_LIVENESS_MS && Number.isFinite(v) && v >= 50 ? Math.floor(v) : LIVENESS_MS;
}

/** startWatch (the SessionStart hook) sets MEMSEARCH_WATCH_OWNER=hooks. */
export function followsSessions(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.MEMSEARCH_WATCH_OWNER === "hooks";
}

export interface Leaver {
  /** Stop answering and remove the socket (synchronously). */
  stopListening(): void;
}

export interface FollowOptions {
  dataDir: string;
  daemon: Leaver;
  /**
   * Called once, after the PID file and the socket are gone: save, close and exit. `ownSocket`
   * false: another watch process has taken the project over, so closing the server (which
   * unlinks the socket path) would remove that one's socket; save and exit without closing.
   */
  leave: (why: string, ownSocket: boolean) => void;
  log?: (line: string) => void;
  periodMs?: number;
  /** No leaving before this long after start, so a session just starting is not missed (default two periods). */
  graceMs?: number;
}

/**
 * Every period, count the live sessions (removing the files of dead ones). After two checks in
 * a row found none, and at least the grace period after start, give up the project and leave.
 */
export function followSessions(opts: FollowOptions): { stop(): void } {
  const period = opts.periodMs ?? livenessMs();
  const grace = opts.graceMs ?? 2 * period;
  const started = Date.now();
  let misses = 0;
  let busy = false;
  let done = false;
  const stop = () => {
    done = true;
    clearInterval(timer);
  };
  const tick = async () => {
    if (busy || done) return;
    busy = true;
    try {
      if (liveSessions(opts.dataDir) > 0) {
        misses = 0;
        return;
      }
      misses++;
      if (misses < 2 || Date.now() - started < grace) return;
      const verdict = await giveUpProject(opts.dataDir, opts.daemon);
      if (verdict === "stay") misses = 0;
      else {
        stop();
        opts.leave("no live Claude Code session uses this project any more", verdict === "leave");
      }
    } catch (e) {
      opts.log?.(`checking sessions: ${oneLine(e)}`);
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), period);
  timer.unref?.();
  return { stop };
}

/**
 * Under the watch lock (the one a starting watch claims the project under): re-check, remove
 * our PID file, re-check once more, then close the socket. A SessionStart registers its session
 * before it looks for a running watch, so either we see its session and stay (restoring the PID
 * file), or it sees no PID file and starts a fresh watch, which waits for this lock.
 */
async function giveUpProject(dataDir: string, daemon: Leaver): Promise<"stay" | "leave" | "taken-over"> {
  return withFileLock(dataFiles(dataDir).watchLock, () => {
    if (liveSessions(dataDir) > 0) return "stay";
    const info = readWatchInfo(dataDir);
    if (info && info.pid !== process.pid) return "taken-over";
    if (info) rmSync(dataFiles(dataDir).watchPid, { force: true });
    if (liveSessions(dataDir) > 0) {
      if (info) writeWatchInfo(dataDir, info);
      return "stay";
    }
    daemon.stopListening();
    return "leave";
  });
}
