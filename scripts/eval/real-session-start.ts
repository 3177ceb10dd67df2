/**
 * What SessionStart's context gives a new session, as the hook builds it (memory/recent.ts) and
 * records it for the prompt hook, with the sessions it holds: the benchmark of real work (real.ts)
 * counts a positive as covered when this context, or the prompt hook's injection, holds a
 * relevant session.
 */
import type { Context } from "../../src/core/context.ts";
import { readDailyTexts } from "../../src/memory/journal.ts";
import { recordSessionStart } from "../../src/memory/injections.ts";
import { RECENT_DAYS, recentSessions, SESSION_START_CHARS } from "../../src/memory/recent.ts";

export function sessionStartGiven(ctx: Context, session: string): { sessions: string[]; chars: number } {
  const recent = recentSessions(readDailyTexts(ctx.project.memoryDir, RECENT_DAYS), { lines: ctx.config["hooks.session_start_lines"], chars: SESSION_START_CHARS, exclude: session, ours: () => true });
  if (recent.text) recordSessionStart(ctx.project.dataDir, session, recent.turns);
  return { sessions: recent.sessions, chars: recent.text?.length ?? 0 };
}
