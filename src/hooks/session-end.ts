import { loadContext } from "../core/context.ts";
import { askWarm, readWatchInfo } from "../core/warm.ts";
import { unregisterSession } from "../core/sessions.ts";
import { debugLog, hookCwd, type HookInput, type HookOutput } from "./runtime.ts";

/**
 * SessionEnd (1.5 s budget shared by every plugin): forget this session and stop the watch
 * process when no other live session of the project uses it.
 */
export async function sessionEnd(input: HookInput): Promise<HookOutput> {
  const { project } = loadContext({}, hookCwd(input));
  const sessionId = typeof input.session_id === "string" && input.session_id ? input.session_id : "unknown";
  // Counts live sessions by Claude Code PID and start time; files of dead ones are removed.
  const others = unregisterSession(project.dataDir, sessionId);
  if (others > 0) {
    debugLog("session-end", `${others} other session(s) still use the watch process`);
    return {};
  }
  const info = readWatchInfo(project.dataDir);
  if (!info) return {};
  // An acknowledged stop saves the index and exits on its own (a large index takes longer than
  // our budget); only a process that does not answer is killed.
  const ack = await askWarm(project.dataDir, { op: "stop" }, 400);
  if (ack?.ok) {
    debugLog("session-end", `asked watch pid ${info.pid} to stop`);
    return {};
  }
  try {
    process.kill(info.pid, "SIGKILL");
  } catch {}
  debugLog("session-end", `killed unresponsive watch pid ${info.pid}`);
  return {};
}
