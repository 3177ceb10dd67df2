/**
 * What one transcript line gives the index. The rules follow the transcript reader
 * (src/transcript/reader.ts): a turn opens at a real user prompt (or a slash command Claude then
 * acts on); tool results, interruptions, local-command output, meta entries and compaction
 * summaries never do; sidechain lines of a main session file are left out; thinking is never
 * taken; injected context and system reminders are cleaned out of every text (cleanText).
 * Lines other than `user` and `assistant` entries (api-request*, attachments, progress,
 * snapshots, system, summaries…) are recognised from their first bytes and never parsed.
 */
import { sanitize } from "../core/redact.ts";
import { parseLine, peekEntry } from "../transcript/lines.ts";
import { classifyUserText, cleanText, commandText, mediaPlaceholder, summarizeToolInput } from "../transcript/sanitize.ts";

type Obj = Record<string, unknown>;

export type LineEvent =
  | { kind: "skip" }
  | { kind: "prompt"; uuid: string; promptId?: string; ts?: string; text: string; command: boolean; cwd?: string; sessionId?: string; sidechain: boolean }
  | { kind: "assistant"; uuid: string; msgKey: string; ts?: string; texts: string[]; tools: ToolUse[]; results: ToolResult[]; cwd?: string; sessionId?: string; sidechain: boolean }
  | { kind: "results"; results: ToolResult[]; sidechain: boolean; cwd?: string; sessionId?: string };

export interface ToolUse {
  id: string;
  name: string;
  /** One-line summary of the input (command, pattern…), redacted before it was clipped. */
  input: string;
  paths: string[];
}

export interface ToolResult {
  toolUseId: string;
  text: string;
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v ? v : undefined;
}

const PATH_KEYS = ["file_path", "notebook_path", "path"];

/** File paths named by a tool input (Read/Edit/Write/Grep/Glob… all use these keys). */
export function pathsOfInput(input: unknown): string[] {
  if (!isObj(input)) return [];
  const out: string[] = [];
  for (const k of PATH_KEYS) {
    const v = input[k];
    if (typeof v === "string" && v.trim() && v.length < 1000) out.push(v.trim());
  }
  return out;
}

function resultText(b: Obj): string {
  const c = b.content;
  if (typeof c === "string") return cleanText(c);
  if (!Array.isArray(c)) return "";
  const parts: string[] = [];
  for (const x of c) {
    if (!isObj(x)) continue;
    if (x.type === "text" && typeof x.text === "string") parts.push(x.text);
    else if (x.type === "image" || x.type === "document") parts.push(mediaPlaceholder(x));
  }
  return cleanText(parts.join("\n"));
}

/** One line of a transcript as the index sees it. `buf[start, end)` is the line without its newline. */
export function lineEvent(buf: Uint8Array, start: number, end: number): LineEvent {
  const peek = peekEntry(buf, start, end);
  if (peek.type !== undefined && peek.type !== "user" && peek.type !== "assistant") return { kind: "skip" };
  const o = parseLine(buf, start, end);
  if (!o) return { kind: "skip" };
  const type = str(o.type) ?? (isObj(o.message) && o.message.role === "assistant" ? "assistant" : undefined);
  const common = { sidechain: o.isSidechain === true, cwd: str(o.cwd), sessionId: str(o.sessionId) };
  if (type === "user") return userEvent(o, common);
  if (type === "assistant") return assistantEvent(o, common);
  return { kind: "skip" };
}

type Common = { sidechain: boolean; cwd?: string; sessionId?: string };

function userEvent(o: Obj, common: Common): LineEvent {
  // Command expansions, skill bodies, caveats: text Claude Code added, not the user's words.
  if (o.isMeta === true || o.isCompactSummary === true) return { kind: "skip" };
  const msg = o.message;
  if (!isObj(msg)) return { kind: "skip" };
  const content = msg.content;
  const parts: string[] = [];
  const results: ToolResult[] = [];
  if (typeof content === "string") parts.push(content);
  else if (Array.isArray(content)) {
    for (const b of content) {
      if (!isObj(b)) continue;
      if (b.type === "text" && typeof b.text === "string") parts.push(b.text);
      else if (b.type === "image" || b.type === "document") parts.push(mediaPlaceholder(b));
      else if (b.type === "tool_result" && typeof b.tool_use_id === "string") results.push({ toolUseId: b.tool_use_id, text: resultText(b) });
    }
  } else return { kind: "skip" };
  // Text beside tool results is an interruption notice or a reminder, never a prompt.
  if (results.length) return { kind: "results", results, ...common };
  const text = cleanText(parts.join("\n\n"));
  const kind = classifyUserText(text);
  if (kind !== "prompt" && kind !== "command") return { kind: "skip" };
  const uuid = str(o.uuid);
  if (!uuid) return { kind: "skip" };
  return { kind: "prompt", uuid, promptId: str(o.promptId), ts: str(o.timestamp), text: kind === "command" ? commandText(text) : text, command: kind === "command", ...common };
}

function assistantEvent(o: Obj, common: Common): LineEvent {
  const msg = o.message;
  if (!isObj(msg)) return { kind: "skip" };
  const content = typeof msg.content === "string" ? [{ type: "text", text: msg.content }] : msg.content;
  if (!Array.isArray(content)) return { kind: "skip" };
  const texts: string[] = [];
  const tools: ToolUse[] = [];
  const results: ToolResult[] = [];
  for (const b of content) {
    if (!isObj(b)) continue;
    if (b.type === "text" && typeof b.text === "string") {
      const t = cleanText(b.text);
      if (t) texts.push(t);
    } else if (b.type === "tool_use" || b.type === "server_tool_use") {
      const name = str(b.name) ?? "?";
      tools.push({ id: str(b.id) ?? "", name, input: summarizeToolInput(name, b.input, 300, sanitize), paths: pathsOfInput(b.input) });
    } else if (typeof b.type === "string" && b.type.endsWith("_tool_result") && typeof b.tool_use_id === "string") {
      results.push({ toolUseId: b.tool_use_id, text: resultText(b) });
    }
    // thinking / redacted_thinking: never indexed.
  }
  const uuid = str(o.uuid) ?? "";
  return { kind: "assistant", uuid, msgKey: str(msg.id) ?? uuid, ts: str(o.timestamp), texts, tools, results, ...common };
}
