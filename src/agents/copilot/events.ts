/**
 * Copilot CLI sessions (`$COPILOT_HOME/session-state/<session id>/events.jsonl`, 1.0.102) read
 * into the neutral turn. Each line is an event `{id, parentId, timestamp, type, data}`:
 *   - `session.start`: the session's id and `context.cwd`;
 *   - `user.message`: the user's words in `content`, opening a turn (its `interactionId` names
 *     it); `transformedContent` also holds the date and, inside `<system_reminder>`, the context
 *     our prompt hook gave: never read;
 *   - `assistant.message`: the words, and `toolRequests` (its tool calls);
 *   - `tool.execution_complete`: a call's `result.content`, `success`;
 *   - `assistant.turn_end`: one model call done; the turn is over when the call it ends asked
 *     for no tool (or when the agentStop hook started);
 *   - `hook.start` / `hook.end`: each hook's input and output, the session start's context among
 *     them: never a turn's text.
 */
import { readTranscriptText } from "../files.ts";
import { clipRedacted } from "../../core/redact.ts";
import { oneLine } from "../../core/text.ts";
import { isObj } from "../../transcript/entries.ts";
import { TurnSegmenter } from "../../transcript/turns.ts";
import type { FoundTurn, Turn, TurnQuery } from "../../transcript/types.ts";
import { renderAgentTurn } from "../render.ts";
import { COPILOT_LABEL } from "./files.ts";
import { addAssistantText, addToolCall, agentLastTurn, agentTurns, argsSummary, asString as str, jsonLines, endedWith, OpenCalls, TOOL_OUTPUT_CHARS, type AgentTurn } from "../turn.ts";

export interface EventsTurn extends AgentTurn {
  /** The user message's `interactionId`, else `line-N` of the line that opened it. */
  id: string;
  /** When each stop hook of the turn fired (ms): Stop's own `timestamp`, as its hook input had it. */
  stops: number[];
  /** 1-based line of the file that opened the turn. */
  line: number;
}

export interface CopilotSession {
  sessionId?: string;
  cwd?: string;
  turns: EventsTurn[];
}


/** Parse a session's events. `redact` is applied to every text before it is kept (tool outputs before their clip). */
export function parseEvents(text: string, opts: { redact?: (s: string) => string } = {}): CopilotSession {
  const redact = opts.redact ?? ((s: string) => s);
  const out: CopilotSession = { turns: [] };
  const seg = new TurnSegmenter<EventsTurn>();
  const add = (t?: EventsTurn) => t && out.turns.push(t);
  // The last model call of the open turn asked for tools: its turn_end does not end the turn.
  let askedTools = false;
  const calls = new OpenCalls();
  jsonLines(text).forEach((o, i) => {
    const d = isObj(o.data) ? o.data : {};
    switch (o.type) {
      case "session.start": {
        out.sessionId ??= str(d.sessionId);
        const cwd = isObj(d.context) ? str(d.context.cwd) : undefined;
        if (cwd && !cwd.includes("\0")) out.cwd ??= cwd;
        return;
      }
      case "user.message": {
        const words = str(d.content) ?? "";
        if (!words.trim()) return;
        const id = str(d.interactionId) ?? `line-${i + 1}`;
        // A message typed while Copilot worked belongs to the turn it joined.
        if (seg.open && seg.open.turn.id === id) {
          seg.open.turn.userText += `\n\n${redact(words)}`;
          return;
        }
        askedTools = false;
        add(seg.start({ id, timestamp: str(o.timestamp), userText: redact(words), assistantTexts: [], tools: [], items: [], complete: false, stops: [], line: i + 1 }, false).closed);
        return;
      }
      case "assistant.message": {
        const a = seg.answer();
        if (!a) return;
        const words = str(d.content) ?? "";
        if (words.trim()) addAssistantText(a.turn, redact(words));
        const requests = Array.isArray(d.toolRequests) ? d.toolRequests.filter(isObj) : [];
        for (const r of requests) {
          const call = { id: str(r.toolCallId) ?? "", name: str(r.name) ?? "tool", input: oneLine(redact(argsSummary(r.arguments))), unpaired: true };
          addToolCall(a.turn, call);
          calls.of(a.turn).add(call);
        }
        askedTools = requests.length > 0;
        return;
      }
      case "tool.execution_complete": {
        const open = seg.open?.turn;
        const call = open && calls.of(open).take(str(d.toolCallId) ?? "");
        if (!call) return;
        const result = isObj(d.result) ? d.result : {};
        const output = str(result.content) ?? str(result.detailedContent) ?? (isObj(d.error) ? (str(d.error.message) ?? "") : "");
        Object.assign(call, { output: clipRedacted(output, TOOL_OUTPUT_CHARS, redact), outputChars: output.length, isError: d.success === false, unpaired: false });
        return;
      }
      case "assistant.turn_end":
        if (seg.open && !askedTools && seg.open.turn.assistantTexts.length) seg.open.turn.complete = true;
        return;
      case "hook.start":
        if (seg.open && d.hookType === "agentStop") {
          seg.open.turn.complete = true;
          const at = Date.parse(str(o.timestamp) ?? "");
          if (Number.isFinite(at)) seg.open.turn.stops.push(at);
        }
        return;
    }
  });
  add(seg.finish().closed);
  return out;
}

/** A turn labelled for a summariser, in the order Copilot CLI wrote it. */
export function renderEventsTurn(t: Pick<EventsTurn, "userText" | "items">): string {
  return renderAgentTurn(t, COPILOT_LABEL);
}

/**
 * The turn a stop hook fired for: the one whose `hook.start` has the stop's time. Copilot writes
 * its file behind its hooks, so until that event is in it the candidate is the last turn begun
 * before the stop, not yet complete (the drainer reads again); without a time, the last turn when
 * its prompt is the recorded one.
 */
function pick(turns: EventsTurn[], q: TurnQuery): { turn: EventsTurn; stopped: boolean } | undefined {
  const stopped = q.stoppedAt ? Date.parse(q.stoppedAt) : NaN;
  if (Number.isFinite(stopped)) {
    const named = turns.find((t) => t.stops.includes(stopped));
    if (named) return { turn: named, stopped: true };
    const before = turns.findLast((t) => !(Date.parse(t.timestamp ?? "") > stopped));
    return before && { turn: before, stopped: false };
  }
  const last = turns.at(-1);
  if (!last || (q.prompt !== undefined && last.userText.trim() !== q.prompt.trim())) return undefined;
  return { turn: last, stopped: endedWith(last, q.lastAssistantMessage) };
}

/** Throws when the file cannot be read (the drainer then uses what the hooks saw). */
export async function findStoppedEventsTurn(path: string, q: TurnQuery): Promise<FoundTurn | undefined> {
  const s = parseEvents(readTranscriptText(path), { redact: q.redact });
  const p = pick(s.turns, q);
  if (!p) return undefined;
  return { turn: agentLastTurn(p.turn, s.sessionId ?? "", renderEventsTurn(p.turn)), complete: p.stopped };
}

/** A session's turns in the shape the transcript views print (`memsearch transcript`). */
export function eventsTurns(s: CopilotSession): Turn[] {
  return agentTurns(s.turns);
}
