import { loadContext } from "../core/context.ts";
import { askWarm, isAlive, readWatchInfo } from "../core/warm.ts";
import { debugLog, unregisterSession, type HookInput, type HookOutput } from "./runtime.ts";

/**
 * SessionEnd (1.5 s budget shared by every plugin): forget this session and stop the watch
 * process when no other live session of the project uses it.
 */
export async function sessionEnd(input: HookInput): Promise<HookOutput> {
  const { project } = loadContext({}, input.cwd || process.cwd());
  const others = unregisterSession(project.dataDir, input.session_id || "unknown");
  if (others > 0) {
    debugLog("session-end", `${others} other session(s) still use the watch process`);
    return {};
  }
  const info = readWatchInfo(project.dataDir);
  if (!info) return {};
  await askWarm(project.dataDir, { op: "stop" }, 300);
  const deadline = Date.now() + 600;
  while (isAlive(info.pid) && Date.now() < deadline) await Bun.sleep(25);
  if (isAlive(info.pid)) {
    try {
      process.kill(info.pid, "SIGKILL");
    } catch {}
  }
  debugLog("session-end", `stopped watch pid ${info.pid}`);
  return {};
}
