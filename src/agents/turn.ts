import { isObj, type Obj } from "../transcript/entries.ts";
import type { LastTurn, ToolCall, Turn, TurnItem } from "../transcript/types.ts";
import { turnKind } from "../transcript/turn-kind.ts";

/** Tool output kept per call of a turn a summariser reads (Claude Code's last turn's too). */
export const TOOL_OUTPUT_CHARS = 1000;

/** What every other agent's reader makes of a turn, before its own fields. */
export interface AgentTurn {
  id: string;
  timestamp?: string;
  userText: string;
  assistantTexts: string[];
  tools: ToolCall[];
  /** Assistant texts and tool calls in the order the agent wrote them. */
  items: TurnItem[];
  complete: boolean;
}

export const asString = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A tool call's arguments in one string: the command, path, pattern… it names, else the whole of them. */
export function argsSummary(args: unknown): string {
  if (!isObj(args)) return "";
  for (const k of ["command", "file_path", "absolute_path", "path", "pattern", "query", "url"]) if (typeof args[k] === "string") return args[k] as string;
  return JSON.stringify(args);
}

/** Records the agent's words, kept both in its texts and in the ordered items. */
export function addAssistantText(t: AgentTurn, text: string): void {
  t.assistantTexts.push(text);
  t.items.push({ kind: "assistant", text });
}

/** Records a tool call, kept both in its calls and in the ordered items. */
export function addToolCall(t: AgentTurn, call: ToolCall): void {
  t.tools.push(call);
  t.items.push({ kind: "tool", call });
}

/**
 * A turn's tool calls still waiting for their output, by call id, oldest first: an output finds
 * its call at once however many calls the turn made (a search through the turn's calls made a
 * long turn quadratic).
 */
export class OpenCalls {
  private byId = new Map<string, ToolCall[]>();
  private owner: unknown;

  /** The calls of `turn`: those of another turn are forgotten (an output never pairs across turns). */
  of(turn: unknown): this {
    if (turn !== this.owner) {
      this.owner = turn;
      this.byId.clear();
    }
    return this;
  }

  add(call: ToolCall): void {
    const list = this.byId.get(call.id);
    if (list) list.push(call);
    else this.byId.set(call.id, [call]);
  }

  /** The oldest call of that id still waiting, taken off the list. */
  take(id: string): ToolCall | undefined {
    const list = this.byId.get(id);
    const call = list?.shift();
    if (list && !list.length) this.byId.delete(id);
    return call;
  }
}

/** The turn finished, or its last words are the ones the stop hook carried. */
export function endedWith(t: AgentTurn, lastAssistantMessage: string | undefined): boolean {
  return t.complete || (lastAssistantMessage !== undefined && t.assistantTexts.at(-1)?.trim() === lastAssistantMessage.trim());
}

/** A model answered: words or a tool call (an agent's turn has no command of Claude Code's kind). */
const replied = (t: AgentTurn) => t.assistantTexts.length > 0 || t.tools.length > 0;

export function agentLastTurn(t: AgentTurn, sessionId: string, text: string): LastTurn {
  // Whether it is worth a note, by the rule Claude Code's turns follow (the drainer applies it once the turn is complete).
  const kind = turnKind({ kind: "prompt", userText: t.userText, replied: replied(t), toolCount: t.tools.length });
  return { sessionId, turnUuid: t.id, timestamp: t.timestamp, userText: t.userText, assistantTexts: t.assistantTexts, tools: t.tools, text, turnKind: kind };
}

/** Turns in the shape the transcript views print (`memsearch transcript`); `promptIds` when the agent's turn id is its prompt id. */
export function agentTurns(turns: (AgentTurn & { line: number })[], o: { promptIds?: boolean } = {}): Turn[] {
  return turns.map((t, index) => ({
    index,
    uuid: t.id,
    timestamp: t.timestamp,
    ...(o.promptIds ? { promptId: t.id } : {}),
    kind: "prompt",
    userText: t.userText,
    assistantTexts: t.assistantTexts,
    tools: t.tools,
    items: t.items,
    toolCount: t.tools.length,
    replied: replied(t),
    line: t.line,
    start: 0,
    end: 0,
  }));
}

/**
 * A JSONL transcript's lines as objects, blank lines left out: a line that is not one JSON object
 * (cut by a crash, or not JSON at all) is an empty object, which holds no turn.
 */
export function jsonLines(text: string): Obj[] {
  const out: Obj[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const o = JSON.parse(line);
      out.push(isObj(o) ? o : {});
    } catch {
      out.push({});
    }
  }
  return out;
}
