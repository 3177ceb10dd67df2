import { spawn } from "node:child_process";
import type { Context } from "../core/context.ts";
import { oneLine } from "../core/errors.ts";
import { isLockHeld } from "../core/lock.ts";
import { DRAIN_LOCK_STALE_MS, drainLockFile, hasPending } from "../memory/pending.ts";
import { debugLog, selfCommand } from "./runtime.ts";

// Kept apart from drain.ts: the hooks that start a drainer must not load the summariser.

/** True while a live drainer holds the project's queue (it looks at the queue again before leaving). */
function drainerRunning(dataDir: string): boolean {
  return isLockHeld(drainLockFile(dataDir), DRAIN_LOCK_STALE_MS);
}

/**
 * Start a drainer for the project when turns are queued and none is at work. Detached (its own
 * session), no stdio shared with the hook: Claude Code neither waits for it nor ends it.
 */
export function kickDrainer(ctx: Context): boolean {
  const { dataDir, root } = ctx.project;
  if (!hasPending(dataDir) || drainerRunning(dataDir)) return false;
  const [cmd, ...args] = selfCommand();
  const child = spawn(cmd!, [...args, "hook", "drain"], {
    cwd: root,
    detached: true,
    stdio: "ignore",
    env: { ...process.env, MEMSEARCH_DIR: dataDir },
  });
  child.on("error", (e) => debugLog("drain", "could not start the drainer", oneLine(e)));
  child.unref();
  debugLog("drain", `started drainer pid ${child.pid}`);
  return true;
}
