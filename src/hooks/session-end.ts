import { loadContext } from "../core/context.ts";
import { stopWatch } from "../watch/gateway.ts";
import { unregisterSession } from "../watch/sessions.ts";
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
  const r = await stopWatch(project.dataDir);
  if (r.stopped === "asked") debugLog("session-end", `asked watch pid ${r.pid} to stop`);
  else if (r.stopped === "killed") debugLog("session-end", `killed unresponsive watch pid ${r.pid}`);
  return {};
}
