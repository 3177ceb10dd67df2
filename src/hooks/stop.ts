import { loadContext } from "../core/context.ts";
import { oneLine } from "../core/errors.ts";
import { enqueueTurn, LATEST_PROMPT, readPromptRecord } from "../memory/pending.ts";
import { kickDrainer } from "./drainer.ts";
import { debugLog, hookCwd, recordProblem, type HookInput, type HookOutput } from "./runtime.ts";

/**
 * Stop: put the turn on disk (the write-ahead queue, milliseconds) and hand it to a drainer that
 * outlives Claude Code, which waits for the transcript, summarises and appends the note. Nothing
 * slow happens here: Claude Code kills hooks at the end of `claude -p`, and the transcript may not
 * hold the turn yet.
 */
export async function stop(input: HookInput): Promise<HookOutput> {
  if (input.stop_hook_active === true) return {};
  const ctx = loadContext({}, hookCwd(input));
  const { project, config } = ctx;
  if (config["summarizer.provider"] === "off") return {};
  const sessionId = input.session_id ?? "unknown";
  const promptId = input.prompt_id;
  // With no prompt id, the session's latest prompt: the UserPromptSubmit of this very turn ran before this Stop.
  const recorded = readPromptRecord(project.dataDir, sessionId, promptId ?? LATEST_PROMPT);
  try {
    const file = enqueueTurn(project.dataDir, {
      sessionId,
      agent: input.agent,
      promptId,
      promptSource: recorded?.source,
      transcriptPath: input.transcript_path,
      stoppedAt: stoppedAt(input.fired_at),
      // An agent without prompt ids gives the prompt to its stop hook itself (Gemini CLI), or its prompt hook kept it (Copilot CLI).
      prompt: recorded?.prompt ?? input.prompt,
      lastAssistantMessage: input.last_assistant_message,
    });
    debugLog("stop", `queued ${file}`);
  } catch (e) {
    // Disk full, no permission: the next session's status line says so.
    recordProblem(project.dataDir, `a turn could not be queued for memory: ${oneLine(e)}`);
    throw e;
  }
  kickDrainer(ctx);
  return {};
}

/** How far the agent's own time of a Stop may be from ours: beyond it, a clock is wrong and ours stands. */
const FIRED_AT_SLACK_MS = 10 * 60_000;

/** When Stop fired: the agent's own time when it gives a plausible one (its transcript records the same), else now. */
function stoppedAt(firedAt: string | undefined, now = Date.now()): string {
  const t = firedAt === undefined ? NaN : Date.parse(firedAt);
  return Number.isFinite(t) && Math.abs(t - now) <= FIRED_AT_SLACK_MS ? new Date(t).toISOString() : new Date(now).toISOString();
}
