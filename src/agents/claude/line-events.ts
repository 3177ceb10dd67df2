/**
 * What one line of a Claude Code transcript gives the conversation index. Which entries open a
 * turn is the shared classifier's reading (src/transcript/entries.ts), and where turns start and
 * end the shared segmenter's (src/transcript/turns.ts), fed by conversation-rows.ts; thinking is never taken; injected context and
 * system reminders are cleaned out of every text (cleanText).
 * Lines other than `user` and `assistant` entries (api-request*, attachments, progress,
 * snapshots, system, summaries…) are recognised from their first bytes and never parsed.
 */
import { sanitize } from "../../core/redact.ts";
import { entryType, isObj, readUserEntry, turnId, type Obj } from "../../transcript/entries.ts";
import { parseLine, peekEntry } from "../../transcript/lines.ts";
import { cleanText, mediaPlaceholder, summarizeToolInput } from "../../transcript/sanitize.ts";

export type LineEvent =
  | { kind: "skip" }
  | { kind: "prompt"; uuid: string; promptId?: string; ts?: string; text: string; command: boolean; cwd?: string; sessionId?: string; sidechain: boolean }
  | {
      kind: "assistant";
      uuid: string;
      msgKey: string;
      ts?: string;
      texts: string[];
      tools: ToolUse[];
      results: ToolResult[];
      /** Plans and todo lists this message passed to Claude Code's tools (session-level record). */
      session: SessionPart[];
      /** The session's plan slug (Claude Code names its plan file after it). */
      slug?: string;
      cwd?: string;
      sessionId?: string;
      sidechain: boolean;
    }
  /** The summary that continues a compacted conversation: session-level record, no message of its own. */
  | { kind: "summary"; uuid: string; ts?: string; text: string; sidechain: boolean; cwd?: string; sessionId?: string }
  | { kind: "results"; results: ToolResult[]; sidechain: boolean; cwd?: string; sessionId?: string }
  /** Any other user or assistant entry: nothing to index, but its thread counts (see TurnSegmenter). */
  | { kind: "other"; sidechain: boolean; cwd?: string; sessionId?: string };

export interface ToolUse {
  id: string;
  name: string;
  /** One-line summary of the input (command, pattern…), redacted before it was clipped. */
  input: string;
  paths: string[];
}

/**
 * A piece of a session's own record as a message carries it, not yet redacted: a plan (the text
 * passed to ExitPlanMode, or a plan file written with Write), or a todo list (TodoWrite's input).
 */
export interface SessionPart {
  kind: "plan" | "todos";
  /** Empty for an ExitPlanMode call that passes no plan (newer clients: the plan is the file written). */
  text: string;
  /** The plan file it names (ExitPlanMode's planFilePath, or the file Write wrote). */
  file?: string;
  /** Written with Write (kept only when the file is in Claude Code's plans folder). */
  viaWrite?: boolean;
  /** An ExitPlanMode call: the plan is the session's only once the user approves it (its tool result). */
  asks?: boolean;
  toolId: string;
}

export interface ToolResult {
  toolUseId: string;
  text: string;
  /** The tool failed or was refused (`is_error`): a rejected ExitPlanMode, a tool the client disabled. */
  error?: boolean;
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

/**
 * One line of a transcript as the index sees it. `buf[start, end)` is the line without its
 * newline; `lineNo` its 1-based number in the file (names a turn whose entry has no uuid).
 */
export function lineEvent(buf: Uint8Array, start: number, end: number, lineNo: number): LineEvent {
  const peek = peekEntry(buf, start, end);
  if (peek.type !== undefined && peek.type !== "user" && peek.type !== "assistant") return { kind: "skip" };
  const o = parseLine(buf, start, end);
  if (!o) return { kind: "skip" };
  const type = entryType(o);
  const common = { sidechain: o.isSidechain === true, cwd: str(o.cwd), sessionId: str(o.sessionId) };
  if (type === "user") return userEvent(o, common, lineNo);
  if (type === "assistant") return assistantEvent(o, common);
  return { kind: "skip" };
}

type Common = { sidechain: boolean; cwd?: string; sessionId?: string };

function userEvent(o: Obj, common: Common, lineNo: number): LineEvent {
  const u = readUserEntry(o);
  if (u.kind === "results") {
    const results: ToolResult[] = [];
    for (const b of u.results) if (typeof b.tool_use_id === "string") results.push({ toolUseId: b.tool_use_id, text: resultText(b), ...(b.is_error === true ? { error: true } : {}) });
    return { kind: "results", results, ...common };
  }
  if (u.kind === "compact-summary") return u.text ? { kind: "summary", uuid: turnId(o, lineNo), ts: str(o.timestamp), text: u.text, ...common } : { kind: "other", ...common };
  if (u.kind === "prompt" || u.kind === "command") return { kind: "prompt", uuid: turnId(o, lineNo), promptId: str(o.promptId), ts: str(o.timestamp), text: u.text, command: u.kind === "command", ...common };
  // Meta entries, interruptions, local command output…: no text to index, but still a user line of this thread or a subagent's.
  return { kind: "other", ...common };
}

function assistantEvent(o: Obj, common: Common): LineEvent {
  const msg = o.message;
  if (!isObj(msg)) return { kind: "other", ...common };
  // Any assistant message answers its turn, whatever its content (as the reader counts it).
  const content = typeof msg.content === "string" ? [{ type: "text", text: msg.content }] : Array.isArray(msg.content) ? msg.content : [];
  const texts: string[] = [];
  const tools: ToolUse[] = [];
  const results: ToolResult[] = [];
  const session: SessionPart[] = [];
  for (const b of content) {
    if (!isObj(b)) continue;
    if (b.type === "text" && typeof b.text === "string") {
      const t = cleanText(b.text);
      if (t) texts.push(t);
    } else if (b.type === "tool_use" || b.type === "server_tool_use") {
      const name = str(b.name) ?? "?";
      tools.push({ id: str(b.id) ?? "", name, input: summarizeToolInput(name, b.input, 300, sanitize), paths: pathsOfInput(b.input) });
      const part = sessionPart(name, str(b.id) ?? "", b.input);
      if (part) session.push(part);
    } else if (typeof b.type === "string" && b.type.endsWith("_tool_result") && typeof b.tool_use_id === "string") {
      results.push({ toolUseId: b.tool_use_id, text: resultText(b) });
    }
    // thinking / redacted_thinking: never indexed.
  }
  const uuid = str(o.uuid) ?? "";
  return { kind: "assistant", uuid, msgKey: str(msg.id) ?? uuid, ts: str(o.timestamp), texts, tools, results, session, slug: str(o.slug), ...common };
}

/** What a tool call adds to its session's record: ExitPlanMode's plan, a plan file written, TodoWrite's list. */
function sessionPart(name: string, toolId: string, input: unknown): SessionPart | undefined {
  if (!isObj(input)) return undefined;
  if (name === "ExitPlanMode") {
    return { kind: "plan", text: typeof input.plan === "string" ? input.plan : "", toolId, asks: true, ...(str(input.planFilePath) ? { file: str(input.planFilePath) } : {}) };
  }
  if (name === "Write" && typeof input.content === "string" && input.content.trim()) {
    const file = str(input.file_path);
    if (file && file.endsWith(".md")) return { kind: "plan", text: input.content, toolId, file, viaWrite: true };
  }
  if (name === "TodoWrite" && Array.isArray(input.todos)) {
    const lines: string[] = [];
    for (const t of input.todos) {
      if (!isObj(t) || typeof t.content !== "string" || !t.content.trim()) continue;
      lines.push(`- [${typeof t.status === "string" ? t.status : "?"}] ${t.content.trim()}`);
    }
    return { kind: "todos", text: lines.join("\n"), toolId };
  }
  return undefined;
}
