/**
 * The last turn of a session, for the Stop hook: the last real user message through the end of
 * the file, labelled for a summariser. Only the last turn's bytes are parsed fully.
 */
import { EmptyTranscriptError, listTurns, readTurnRange } from "./reader.ts";
import { cleanText } from "./sanitize.ts";
import type { LastTurn, Turn } from "./types.ts";

/** Tool output is clipped to this many chars in the summariser text. */
export const LAST_TURN_OUTPUT_CHARS = 1000;

export interface LastTurnOptions {
  /**
   * The Stop hook's `last_assistant_message`. The transcript is written asynchronously and can lag
   * behind the hook: when the file's last turn does not hold this text yet, it is appended.
   */
  lastAssistantMessage?: string;
}

const norm = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * Last turn of a transcript, or undefined when the file is empty or holds no real user message.
 * Missing file, directory, garbage and foreign formats throw the reader's typed errors.
 */
export async function extractLastTurn(path: string, opts: LastTurnOptions = {}): Promise<LastTurn | undefined> {
  let index;
  try {
    index = await listTurns(path);
  } catch (e) {
    if (e instanceof EmptyTranscriptError) return undefined;
    throw e;
  }
  const n = index.turns.length;
  if (n === 0) return undefined;
  const [turn] = await readTurnRange(index, n - 1, n - 1, { maxOutput: LAST_TURN_OUTPUT_CHARS });
  if (!turn) return undefined;
  let used = false;
  const msg = opts.lastAssistantMessage === undefined ? "" : cleanText(opts.lastAssistantMessage);
  if (msg) used = applyLastAssistantMessage(turn, msg);
  const last: LastTurn = {
    sessionId: index.sessionId,
    turnUuid: turn.uuid,
    timestamp: turn.timestamp,
    userText: turn.userText,
    assistantTexts: turn.assistantTexts,
    tools: turn.tools,
    text: renderTurnForSummary(turn),
  };
  if (used) last.usedLastAssistantMessage = true;
  return last;
}

/** Add the hook's last assistant message when the transcript does not have it yet. */
function applyLastAssistantMessage(turn: Turn, msg: string): boolean {
  const m = norm(msg);
  if (turn.assistantTexts.some((t) => norm(t).includes(m))) return false;
  const lastItem = turn.items[turn.items.length - 1];
  if (lastItem?.kind === "assistant" && m.startsWith(norm(lastItem.text))) {
    // The file holds the start of the final message only.
    lastItem.text = msg;
    turn.assistantTexts[turn.assistantTexts.length - 1] = msg;
    return true;
  }
  turn.items.push({ kind: "assistant", text: msg });
  turn.assistantTexts.push(msg);
  return true;
}

/** `[User]`, `[Claude Code]`, `[Claude Code calls tool]`, `[Tool output]` / `[Tool error]` lines. */
export function renderTurnForSummary(turn: Turn): string {
  const out: string[] = [`[User]: ${turn.userText}`];
  for (const it of turn.items) {
    switch (it.kind) {
      case "assistant":
        out.push(`[Claude Code]: ${it.text}`);
        break;
      case "user":
        out.push(`[User]: ${it.text}`);
        break;
      case "tool": {
        const c = it.call;
        out.push(`[Claude Code calls tool]: ${c.name}${c.input ? " " + c.input : ""}`);
        if (c.output === undefined) out.push("[Tool output]: (no result in the transcript)");
        else out.push(`${c.isError ? "[Tool error]" : "[Tool output]"}: ${c.output || "(empty)"}`);
        break;
      }
      case "compaction":
        break;
    }
  }
  return out.join("\n");
}
