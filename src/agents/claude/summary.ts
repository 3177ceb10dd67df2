/** A Claude Code turn as a summariser reads it (the drainer's turn, `import`'s). */
import type { Turn } from "../../transcript/types.ts";
import { renderAgentTurn } from "../render.ts";
import { TOOL_OUTPUT_CHARS } from "../turn.ts";

/** As people call it, and as a summariser reads its words. */
export const CLAUDE_LABEL = "Claude Code";

/** Tool output is clipped to this many chars in the summariser text, as every agent's is. */
export const LAST_TURN_OUTPUT_CHARS = TOOL_OUTPUT_CHARS;

/** `[User]`, `[Claude Code]`, `[Claude Code calls tool]`, `[Tool output]` / `[Tool error]` lines. */
export function renderTurnForSummary(turn: Turn): string {
  return renderAgentTurn(turn, CLAUDE_LABEL);
}
