/**
 * Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, 0.61;
 * packages/core/src/services/chatRecordingService.ts) read into the neutral turn. A file is a log
 * of changes to one list of messages, replayed here:
 *   - its first line is the session's metadata (`sessionId`, `projectHash`, `kind`);
 *   - a message record (`{id, type, content, displayContent?, toolCalls?}`) is appended, or
 *     replaces the message of the same id where it stands (the tool-calling answer is rewritten
 *     with its results);
 *   - `{"$set": {messages}}` replaces the whole list (a checkpoint); other `$set` keys are metadata;
 *   - `{"$rewindTo": id}` drops that message and every one after it.
 * A turn opens at a user message with words in it: not the `<session_context>` Gemini CLI sends
 * first, not the tool results it files as user messages, and without the `<hook_context>` our own
 * hooks gave it (its `displayContent` leaves BeforeAgent's out; the session start's is in both).
 */
import { readTranscriptText } from "../files.ts";
import { clip, oneLine } from "../../core/text.ts";
import { isObj, type Obj } from "../../transcript/entries.ts";
import type { FoundTurn, ToolCall, Turn, TurnQuery } from "../../transcript/types.ts";
import { renderToolsThenWords } from "../render.ts";
import { addAssistantText, addToolCall, agentLastTurn, agentTurns, argsSummary, asString as str, endedWith, TOOL_OUTPUT_CHARS as OUTPUT_CHARS, type AgentTurn } from "../turn.ts";
import { stripHookContext } from "./hook.ts";

export interface ChatTurn extends AgentTurn {
  /** The id of the user message that opened it. */
  id: string;
  /** Gemini CLI wrote an answer with no tool call still waiting for its result. */
  complete: boolean;
  /** 1-based line of the file that last wrote the user message. */
  line: number;
}

export interface Chat {
  sessionId?: string;
  projectHash?: string;
  kind?: string;
  turns: ChatTurn[];
}

/** The text parts of a content: a string, a part, or a list of them. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  const parts = Array.isArray(content) ? content : isObj(content) ? [content] : [];
  return parts
    .filter(isObj)
    .filter((p) => p.thought !== true)
    .map((p) => str(p.text) ?? "")
    .filter(Boolean)
    .join("\n");
}

/** Scaffolding Gemini CLI sends as the first user message: the date, the OS, the folder tree. */
export function isGeminiScaffolding(text: string): boolean {
  return text.trimStart().startsWith("<session_context>");
}

/** A tool's result as the model got it: its functionResponse's `output` (or `error`), else the whole response. */
function resultOf(result: unknown, display: unknown): string | undefined {
  const parts = Array.isArray(result) ? result : [];
  const texts = parts.filter(isObj).map((p) => {
    const r = isObj(p.functionResponse) ? p.functionResponse.response : undefined;
    if (isObj(r)) return str(r.output) ?? str(r.error) ?? JSON.stringify(r);
    return str(p.text) ?? "";
  });
  if (texts.some(Boolean)) return texts.join("\n");
  return typeof display === "string" ? display : undefined;
}

function toolOf(c: Obj, redact: (s: string) => string): ToolCall {
  const out = resultOf(c.result, c.resultDisplay);
  const call: ToolCall = { id: str(c.id) ?? "", name: str(c.name) ?? "tool", input: oneLine(redact(argsSummary(c.args))) };
  if (out === undefined) return { ...call, unpaired: true };
  const text = redact(out);
  return { ...call, output: clip(text, OUTPUT_CHARS), outputChars: text.length, isError: c.status === "error" || c.status === "cancelled" };
}

interface Held {
  msg: Obj;
  line: number;
}

/**
 * Replay a chat's lines into its messages. Lines that are not JSON objects (cut by a crash) are
 * skipped. Where each id stands is kept in a map, so a record costs the same however long the
 * chat already is (a search of the list for each record made a long chat quadratic).
 */
function replay(text: string): { meta: Obj; messages: Held[] } {
  let meta: Obj = {};
  const messages: Held[] = [];
  // The first place of each id: a checkpoint may list an id twice, and a search found the first.
  const at = new Map<string, number>();
  const cut = (to: number) => {
    for (let j = messages.length - 1; j >= to; j--) {
      const id = messages[j]!.msg.id as string;
      if (at.get(id) === j) at.delete(id);
    }
    messages.length = to;
  };
  text.split("\n").forEach((raw, i) => {
    if (!raw.trim()) return;
    let o: unknown;
    try {
      o = JSON.parse(raw);
    } catch {
      return;
    }
    if (!isObj(o)) return;
    const line = i + 1;
    if (typeof o.$rewindTo === "string") {
      const to = at.get(o.$rewindTo);
      if (to !== undefined) cut(to);
      return;
    }
    if (isObj(o.$set)) {
      if (Array.isArray(o.$set.messages)) {
        cut(0);
        for (const msg of o.$set.messages) {
          if (!isObj(msg) || typeof msg.id !== "string") continue;
          if (!at.has(msg.id)) at.set(msg.id, messages.length);
          messages.push({ msg, line });
        }
      }
      return;
    }
    if (typeof o.id === "string" && typeof o.type === "string") {
      const place = at.get(o.id);
      if (place !== undefined) messages[place] = { msg: o, line };
      else {
        at.set(o.id, messages.length);
        messages.push({ msg: o, line });
      }
      return;
    }
    if (typeof o.sessionId === "string" && i === 0) meta = o;
  });
  return { meta, messages };
}

/** Parse a chat's text into its turns, every text through `redact` (memsearch's redaction: sanitize). */
export function parseChat(text: string, opts: { redact?: (s: string) => string } = {}): Chat {
  const redact = opts.redact ?? ((s: string) => s);
  const { meta, messages } = replay(text);
  const chat: Chat = { sessionId: str(meta.sessionId), projectHash: str(meta.projectHash), kind: str(meta.kind), turns: [] };
  let open: ChatTurn | undefined;
  for (const { msg, line } of messages) {
    if (msg.type === "user") {
      // BeforeAgent's context is a part of its own, left out of what was displayed.
      const shown = stripHookContext(textOf(msg.displayContent ?? msg.content));
      if (!shown || isGeminiScaffolding(shown)) continue;
      open = { id: msg.id as string, timestamp: str(msg.timestamp), userText: redact(shown), assistantTexts: [], tools: [], items: [], complete: false, line };
      chat.turns.push(open);
      continue;
    }
    if (msg.type !== "gemini" || !open) continue;
    const said = textOf(msg.content);
    if (said.trim()) addAssistantText(open, redact(said));
    const calls = Array.isArray(msg.toolCalls) ? msg.toolCalls.filter(isObj).map((c) => toolOf(c, redact)) : [];
    for (const call of calls) addToolCall(open, call);
    open.complete = calls.length === 0 && said.trim().length > 0;
  }
  return chat;
}

/** A chat turn labelled for a summariser, as Claude Code's are (`[User]`, the agent's name, tools). */
export function renderChatTurn(t: ChatTurn): string {
  return renderToolsThenWords(t, "Gemini CLI");
}

/** The chat's prompt is the one recorded, which the queue may have clipped (with an ellipsis). */
function samePrompt(have: string, recorded: string): boolean {
  const h = oneLine(have);
  const r = oneLine(recorded);
  if (h === r) return true;
  const head = r.endsWith("…") ? r.slice(0, -1) : undefined;
  return head !== undefined && head.length > 0 && h.startsWith(head);
}

/**
 * The turn an AfterAgent hook fired for: the last turn, when its prompt is the one the hook gave
 * (Gemini CLI has no prompt id; an older turn must never be taken for one not written yet). Throws
 * when the file cannot be read (the drainer then uses what the hooks saw).
 */
export async function findStoppedChatTurn(path: string, q: TurnQuery): Promise<FoundTurn | undefined> {
  const chat = parseChat(readTranscriptText(path), { redact: q.redact });
  const last = chat.turns.at(-1);
  if (!last) return undefined;
  if (q.prompt !== undefined && !samePrompt(last.userText, q.prompt)) return undefined;
  return { turn: agentLastTurn(last, chat.sessionId ?? "", renderChatTurn(last)), complete: endedWith(last, q.lastAssistantMessage) };
}

/** A chat's turns in the shape the transcript views print (`memsearch transcript`). */
export function chatTurns(chat: Chat): Turn[] {
  return agentTurns(chat.turns);
}
