/**
 * Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, lines of
 * `{timestamp, type, payload}`) read into the neutral turn. Two layouts are in use:
 *   - paginated (0.169's default): `event_msg` `item_completed` with a UserMessage, AgentMessage or
 *     CommandExecution item, each carrying the `turn_id` the hooks get;
 *   - legacy: `event_msg` `user_message` / `agent_message`, turns opened by `task_started`.
 * Either way the model's own input (`response_item`) is read only when a file holds neither: it
 * also carries the developer messages (skills, our injected memory), AGENTS.md and the
 * environment, which are never the user's words and are dropped.
 */
import { readTranscriptText } from "../files.ts";
import { clip, oneLine } from "../../core/text.ts";
import { TurnSegmenter } from "../../transcript/turns.ts";
import type { FoundTurn, ToolCall, Turn, TurnQuery } from "../../transcript/types.ts";
import { isObj, type Obj } from "../../transcript/entries.ts";
import { renderAgentTurn } from "../render.ts";
import { addAssistantText, addToolCall, agentLastTurn, agentTurns, asString as str, jsonLines, endedWith, OpenCalls, TOOL_OUTPUT_CHARS as OUTPUT_CHARS, type AgentTurn } from "../turn.ts";

export interface RolloutTurn extends AgentTurn {
  /** Codex's turn id (the hooks' `turn_id`), else `line-N` of the line that opened it. */
  id: string;
  /** Codex reported the turn finished (`task_complete`). */
  complete: boolean;
  /** 1-based line of the rollout that opened the turn. */
  line: number;
}

export interface Rollout {
  sessionId?: string;
  cwd?: string;
  turns: RolloutTurn[];
}

/** Scaffolding Codex sends as user messages: never a prompt. */
export function isCodexScaffolding(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith("<environment_context>") || t.startsWith("# AGENTS.md instructions") || t.startsWith("<user_instructions>") || t.startsWith("<turn_aborted>");
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(isObj)
    .map((c) => str(c.text) ?? "")
    .filter(Boolean)
    .join("\n");
}

type Kind = { user: string } | { assistant: string } | { tool: ToolCall } | { output: { id: string; text: string } } | undefined;

/** A shell call's command line: `{cmd}` (0.169's exec_command), `{command: [...]}` (older `shell`: `bash -lc X` is X). */
function commandOf(args: string): string {
  try {
    const a = JSON.parse(args);
    if (isObj(a) && typeof a.cmd === "string") return a.cmd;
    if (isObj(a) && Array.isArray(a.command)) {
      const c = a.command.filter((x): x is string => typeof x === "string");
      return c.length === 3 && /(^|\/)(ba|z)?sh$/.test(c[0]!) && c[1]!.startsWith("-") ? c[2]! : c.join(" ");
    }
  } catch {}
  return args;
}

/** A tool's output as the model got it: older rollouts wrap it in `{"output": …}`. */
function outputOf(v: unknown): string {
  const text = typeof v === "string" ? v : textOf(v);
  try {
    const o = JSON.parse(text);
    if (isObj(o) && typeof o.output === "string") return o.output;
  } catch {}
  return text;
}

/**
 * What a line says. `events`: the user's and agent's words come from the rollout's events, else
 * from the model input; `items`: tool calls from the model input (older rollouts have no
 * CommandExecution events).
 */
function readLine(o: Obj, events: boolean, items: boolean, redact: (s: string) => string): Kind {
  const p = isObj(o.payload) ? o.payload : undefined;
  if (!p) return undefined;
  if (events && o.type === "event_msg") {
    if (p.type === "user_message") return { user: str(p.message) ?? "" };
    if (p.type === "agent_message") return { assistant: str(p.message) ?? "" };
    if (p.type !== "item_completed" || !isObj(p.item)) return undefined;
    const item = p.item;
    if (item.type === "UserMessage") return { user: textOf(item.content) };
    if (item.type === "AgentMessage") return { assistant: textOf(item.content) };
    if (item.type === "CommandExecution") {
      const out = redact(str(item.aggregated_output) ?? "");
      const cmd = Array.isArray(item.command) ? item.command.filter((x) => typeof x === "string").join(" ") : (str(item.command) ?? "");
      return { tool: { id: str(item.id) ?? "", name: "exec_command", input: oneLine(redact(cmd)), output: clip(out, OUTPUT_CHARS), outputChars: out.length, isError: typeof item.exit_code === "number" && item.exit_code !== 0 } };
    }
    return undefined;
  }
  if (o.type !== "response_item") return undefined;
  if (!events && p.type === "message" && p.role === "user") return { user: textOf(p.content) };
  if (!events && p.type === "message" && p.role === "assistant") return { assistant: textOf(p.content) };
  if (!items) return undefined;
  if (p.type === "function_call") return { tool: { id: str(p.call_id) ?? "", name: str(p.name) ?? "tool", input: oneLine(redact(commandOf(str(p.arguments) ?? ""))), unpaired: true } };
  if (p.type === "function_call_output") return { output: { id: str(p.call_id) ?? "", text: redact(outputOf(p.output)) } };
  return undefined;
}

/** Parse a rollout's text. Lines that are not JSON objects (a line cut by a crash) are skipped. */
export function parseRollout(text: string, opts: { redact?: (s: string) => string } = {}): Rollout {
  const redact = opts.redact ?? ((s: string) => s);
  const lines = jsonLines(text);
  const out: Rollout = { turns: [] };
  // The events say the turn as the user saw it; the model input only when there are none.
  const events = lines.some((o) => o.type === "event_msg" && isObj(o.payload) && (o.payload.type === "user_message" || (o.payload.type === "item_completed" && isObj(o.payload.item) && o.payload.item.type === "UserMessage")));
  const items = !lines.some((o) => o.type === "event_msg" && isObj(o.payload) && o.payload.type === "item_completed" && isObj(o.payload.item) && o.payload.item.type === "CommandExecution");
  const seg = new TurnSegmenter<RolloutTurn>();
  const add = (t?: RolloutTurn) => t && out.turns.push(t);
  let pendingId: string | undefined;
  let openId: string | undefined;
  const calls = new OpenCalls();
  lines.forEach((o, i) => {
    const p = isObj(o.payload) ? o.payload : {};
    if (o.type === "session_meta") {
      out.sessionId ??= str(p.id) ?? str(p.session_id);
      out.cwd ??= str(p.cwd);
      return;
    }
    if (o.type === "event_msg" && p.type === "task_started") pendingId = str(p.turn_id);
    if (o.type === "turn_context") pendingId ??= str(p.turn_id);
    if (o.type === "event_msg" && p.type === "task_complete") {
      const open = seg.open?.turn;
      if (open && (!str(p.turn_id) || p.turn_id === open.id)) open.complete = true;
      return;
    }
    const k = readLine(o, events, events ? items : true, redact);
    if (!k) return;
    if ("user" in k) {
      if (!k.user.trim() || isCodexScaffolding(k.user)) return;
      const id = str(p.turn_id) ?? (isObj(p.internal_chat_message_metadata_passthrough) ? str(p.internal_chat_message_metadata_passthrough.turn_id) : undefined) ?? pendingId ?? `line-${i + 1}`;
      // A second user message of the same turn (typed while Codex worked) stays in that turn.
      if (seg.open && openId === id) {
        seg.open.turn.userText += `\n\n${redact(k.user)}`;
        return;
      }
      add(seg.start({ id, timestamp: str(o.timestamp), userText: redact(k.user), assistantTexts: [], tools: [], items: [], complete: false, line: i + 1 }, false).closed);
      openId = id;
      pendingId = undefined;
      return;
    }
    const a = seg.answer();
    if (!a) return;
    if ("assistant" in k) {
      if (k.assistant.trim()) addAssistantText(a.turn, redact(k.assistant));
    } else if ("tool" in k) {
      addToolCall(a.turn, k.tool);
      if (k.tool.unpaired) calls.of(a.turn).add(k.tool);
    } else {
      const call = calls.of(a.turn).take(k.output.id);
      if (call) Object.assign(call, { output: clip(k.output.text, OUTPUT_CHARS), outputChars: k.output.text.length, unpaired: false });
    }
  });
  add(seg.finish().closed);
  return out;
}

/** A turn labelled for a summariser, in the order Codex wrote it. */
export function renderRolloutTurn(t: Pick<RolloutTurn, "userText" | "items">): string {
  return renderAgentTurn(t, "Codex");
}

/**
 * The turn a Codex Stop hook fired for: by its `turn_id`, else the last turn when its prompt is
 * the recorded one. Throws when the file cannot be read (the drainer then uses what the hooks saw).
 */
export async function findStoppedRolloutTurn(path: string, q: TurnQuery): Promise<FoundTurn | undefined> {
  const r = parseRollout(readTranscriptText(path), { redact: q.redact });
  const last = r.turns.at(-1);
  const t = q.promptId ? r.turns.find((x) => x.id === q.promptId) : last && q.prompt !== undefined && last.userText.trim() === q.prompt.trim() ? last : undefined;
  if (!t) return undefined;
  return { turn: agentLastTurn(t, r.sessionId ?? "", renderRolloutTurn(t)), complete: endedWith(t, q.lastAssistantMessage) };
}

/** A rollout's turns in the shape the transcript views print (`memsearch transcript`). */
export function rolloutTurns(r: Rollout): Turn[] {
  return agentTurns(r.turns, { promptIds: true });
}
