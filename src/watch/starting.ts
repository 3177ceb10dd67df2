/**
 * `watch.starting`: the marker a hook holds while it starts the project's watch process, so hooks
 * of sessions starting together leave the start to the first. It matters only for the moment
 * between the spawn and the watch process writing `watch.pid` (which every start checks first),
 * so it never blocks for long:
 *  - created empty with O_EXCL by the starter ("spawning now", believed for SPAWN_GRACE_MS);
 *  - then `pid time starttime` of the spawned watch process (believed while that process, by PID
 *    and start time, is alive, for START_MS at most);
 *  - removed by the watch process once it serves, and by the starter when the spawn fails.
 * Anything else (a bare PID from an older memsearch or a reused PID, a file committed to the
 * repository, a start that hung) is stale and taken over at once.
 */
import { closeSync, openSync, rmSync } from "node:fs";
import { atomicWrite, errCode, mtimeOf, readTextQuiet } from "../core/fsutil.ts";
import { isAlive, mayBeSameProcess, processStartTime } from "../core/processes.ts";

/** How long an empty marker (a starter between its claim and its spawn) is believed. */
const SPAWN_GRACE_MS = 10_000;
/** How long a watch process may take to serve before its marker no longer holds the start. */
const START_MS = 60_000;

export type StartClaim = { claimed: true } | { claimed: false; pid?: number };

/** O_EXCL marker: claimed by us, or held by a starter or a starting watch process (whose pid it names). */
export function claimStart(file: string): StartClaim {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(file, "wx"));
      return { claimed: true };
    } catch (e) {
      if (errCode(e) !== "EEXIST") throw e;
    }
    const held = holder(file);
    if (held) return { claimed: false, ...(held.pid ? { pid: held.pid } : {}) };
    rmSync(file, { force: true });
  }
  return { claimed: false };
}

/** Who holds a marker, or undefined when it is stale (see the top of this file). */
function holder(file: string): { pid?: number } | undefined {
  const text = readTextQuiet(file);
  if (text === undefined) return undefined;
  const age = Date.now() - mtimeOf(file);
  if (text.trim() === "") return age < SPAWN_GRACE_MS ? {} : undefined;
  const [pidText, timeText, start] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  const time = Number(timeText);
  if (!start || !Number.isInteger(pid) || pid <= 0 || !Number.isFinite(time)) return undefined;
  if (Date.now() - time > START_MS || age > START_MS) return undefined;
  return isAlive(pid) && mayBeSameProcess(pid, start) ? { pid } : undefined;
}

/** The starter's second step: the marker names the spawned watch process by PID and start time. */
export function markStarting(file: string, pid: number): void {
  const start = processStartTime(pid);
  // Gone already (it failed at once): nothing to wait for.
  if (start === undefined) {
    rmSync(file, { force: true });
    return;
  }
  atomicWrite(file, `${pid} ${Date.now()} ${start.trim().replace(/\s+/g, "_")}\n`);
}

/** The start is over: the watch process serves (it removes its own marker), or the spawn failed (the starter removes it). */
export function releaseStart(file: string, pid?: number): void {
  if (pid !== undefined) {
    const [pidText] = (readTextQuiet(file) ?? "").trim().split(/\s+/);
    if (Number(pidText) !== pid) return;
  }
  rmSync(file, { force: true });
}
