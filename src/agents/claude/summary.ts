/** A Claude Code turn as a summariser reads it (the drainer's turn, `import`'s). */
import type { Turn } from "../../transcript/types.ts";
import { renderAgentTurn } from "../render.ts";

/** As people call it, and as a summariser reads its words. */
export const CLAUDE_LABEL = "Claude Code";

/** Tool output is clipped to this many chars in the summariser text. */
export const LAST_TURN_OUTPUT_CHARS = 1000;

/** `[User]`, `[Claude Code]`, `[Claude Code calls tool]`, `[Tool output]` / `[Tool error]` lines. */
export function renderTurnForSummary(turn: Turn): string {
  return renderAgentTurn(turn, CLAUDE_LABEL);
}
