/**
 * The last turn of a session, for the Stop hook: the last real user message through the end of
 * the file, labelled for a summariser. Only the last turn's bytes are parsed fully.
 */
import { oneLine } from "../../core/text.ts";
import { EmptyTranscriptError } from "../../transcript/files.ts";
import { listTurns, readTurnRange } from "./reader.ts";
import { cleanText } from "../../transcript/sanitize.ts";
import type { FoundTurn, LastTurn, Turn, TurnQuery } from "../../transcript/types.ts";
import { turnKind } from "../../transcript/turn-kind.ts";
import { LAST_TURN_OUTPUT_CHARS, renderTurnForSummary } from "./summary.ts";

export { LAST_TURN_OUTPUT_CHARS };

export interface LastTurnOptions {
  /**
   * The Stop hook's `last_assistant_message`. The transcript is written asynchronously and can lag
   * behind the hook: when the file's last turn does not hold this text yet, it is appended.
   */
  lastAssistantMessage?: string;
  /** Redact every text of the turn (tool inputs and outputs before their clip) and the message with this. */
  redact?: (text: string) => string;
}

/**
 * Last turn of a transcript, or undefined when the file is empty or holds no real user message.
 * Missing file, directory, garbage and foreign formats throw the reader's typed errors.
 */
export async function extractLastTurn(path: string, opts: LastTurnOptions = {}): Promise<LastTurn | undefined> {
  const index = await turnIndex(path);
  if (!index?.turns.length) return undefined;
  const [turn] = await readTurnRange(index, index.turns.length - 1, index.turns.length - 1, { maxOutput: LAST_TURN_OUTPUT_CHARS, redact: opts.redact });
  const msg = opts.redact && opts.lastAssistantMessage !== undefined ? opts.redact(opts.lastAssistantMessage) : opts.lastAssistantMessage;
  return turn && toLastTurn(index.sessionId, turn, msg, opts.redact);
}

/**
 * The turn a Stop hook fired for, as far as the transcript holds it yet. Claude Code writes the
 * prompt id on the user entry, so that is matched first; without one, the last turn counts only
 * if its text is the recorded prompt (an older turn must never be taken for a lagging one).
 */
export async function findStoppedTurn(path: string, q: TurnQuery): Promise<FoundTurn | undefined> {
  const index = await turnIndex(path);
  if (!index) return undefined;
  const pick = pickTurn(index.turns, q);
  if (!pick) return undefined;
  // Redacted by the reader, tool outputs before their clip: the same redaction as the recorded texts.
  const [turn] = await readTurnRange(index, pick.i, pick.i, { maxOutput: LAST_TURN_OUTPUT_CHARS, redact: q.redact });
  if (!turn) return undefined;
  const same = q.redact ?? ((s: string) => s);
  const msg = q.lastAssistantMessage === undefined ? "" : oneLine(cleanText(q.lastAssistantMessage));
  // Without the final message there is nothing to wait for.
  const complete = msg ? turn.assistantTexts.some((t) => oneLine(same(t)).includes(msg)) : true;
  // With nothing that names the turn, only its final message shows the last turn is this one.
  if (!pick.named && msg && !complete) return undefined;
  return { turn: toLastTurn(index.sessionId, turn, q.lastAssistantMessage, same), complete };
}

/** The turn's position, and whether its prompt id or text named it (else it is just the last turn). */
function pickTurn(turns: Turn[], q: TurnQuery): { i: number; named: boolean } | undefined {
  if (q.promptId) {
    for (let i = turns.length - 1; i >= 0; i--) if (turns[i]!.promptId === q.promptId) return { i, named: true };
    // This client writes prompt ids: the turn is not in the file yet.
    if (turns.some((t) => t.promptId)) return undefined;
  }
  const last = turns.length - 1;
  if (last < 0) return undefined;
  if (q.prompt === undefined) return { i: last, named: false };
  const want = oneLine(q.prompt);
  const have = oneLine((q.redact ?? ((s: string) => s))(turns[last]!.userText));
  const same = want === have || (want.length > 0 && have.length > 0 && (want.startsWith(have) || have.startsWith(want)));
  return same ? { i: last, named: true } : undefined;
}

async function turnIndex(path: string) {
  try {
    return await listTurns(path);
  } catch (e) {
    if (e instanceof EmptyTranscriptError) return undefined;
    throw e;
  }
}

function toLastTurn(sessionId: string, turn: Turn, lastAssistantMessage: string | undefined, same: (text: string) => string = (s) => s): LastTurn {
  const msg = lastAssistantMessage === undefined ? "" : cleanText(lastAssistantMessage);
  const used = msg ? applyLastAssistantMessage(turn, msg, same) : false;
  const last: LastTurn = {
    sessionId,
    turnUuid: turn.uuid,
    timestamp: turn.timestamp,
    userText: turn.userText,
    assistantTexts: turn.assistantTexts,
    tools: turn.tools,
    text: renderTurnForSummary(turn),
  };
  if (used) last.usedLastAssistantMessage = true;
  last.turnKind = turnKind({ kind: turn.kind, userText: turn.userText, replied: turn.replied === true || used, toolCount: turn.tools.length });
  return last;
}

/**
 * Add the hook's last assistant message when the transcript does not have it yet. `same` maps a
 * transcript text into the form `msg` was recorded in (redacted), so the two compare.
 */
function applyLastAssistantMessage(turn: Turn, msg: string, same: (text: string) => string): boolean {
  const m = oneLine(msg);
  if (turn.assistantTexts.some((t) => oneLine(same(t)).includes(m))) return false;
  const lastItem = turn.items[turn.items.length - 1];
  if (lastItem?.kind === "assistant" && m.startsWith(oneLine(same(lastItem.text)))) {
    // The file holds the start of the final message only.
    lastItem.text = msg;
    turn.assistantTexts[turn.assistantTexts.length - 1] = msg;
    return true;
  }
  turn.items.push({ kind: "assistant", text: msg });
  turn.assistantTexts.push(msg);
  return true;
}

