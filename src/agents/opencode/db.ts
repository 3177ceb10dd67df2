/**
 * OpenCode's transcripts: one SQLite database for every session of the machine
 * (`$XDG_DATA_HOME/opencode/opencode.db`, or `OPENCODE_DB`), tables `message` and `part` whose
 * `data` column is JSON. Read-only, through bun:sqlite, never through a link: the database is
 * OpenCode's and may be large and busy (WAL), and every byte of it is treated as hostile.
 *
 * A turn is a user message and the assistant messages whose `parentID` is it; their parts hold
 * the text (`text`, `synthetic` ones are OpenCode's scaffolding), tool calls (`tool`, with
 * `state.input` / `state.output`) and steps. Injected memory is never in it: memsearch injects
 * through the system prompt, which OpenCode does not store.
 */
import * as v from "valibot";
import { clip, oneLine } from "../../core/text.ts";
import type { FoundTurn, ToolCall, TurnQuery } from "../../transcript/types.ts";
import { renderToolsThenWords } from "../render.ts";
import { ident, MAX_ROW_BYTES, openOpencodeDb, splitSessionKey, type OpencodeDb } from "./session-key.ts";
import { addAssistantText, addToolCall, agentLastTurn, TOOL_OUTPUT_CHARS as OUTPUT_CHARS, type AgentTurn } from "../turn.ts";

const UserData = v.object({ role: v.literal("user") });
const AssistantData = v.object({
  role: v.literal("assistant"),
  parentID: v.string(),
  finish: v.fallback(v.optional(v.string()), undefined),
  time: v.fallback(v.optional(v.object({ completed: v.fallback(v.optional(v.number()), undefined) })), undefined),
});
const TextPart = v.object({ type: v.literal("text"), text: v.string(), synthetic: v.fallback(v.optional(v.boolean()), undefined), ignored: v.fallback(v.optional(v.boolean()), undefined) });
const ToolPart = v.object({
  type: v.literal("tool"),
  tool: v.string(),
  callID: v.fallback(v.optional(v.string()), undefined),
  state: v.object({
    status: v.string(),
    input: v.fallback(v.optional(v.unknown()), undefined),
    output: v.fallback(v.optional(v.string()), undefined),
    error: v.fallback(v.optional(v.string()), undefined),
  }),
});

export interface OpencodeTurn extends AgentTurn {
  /** The user message's id (`msg_…`): the prompt id the plugin gave the hooks. */
  id: string;
  sessionId: string;
  /** The last assistant message finished the turn (completed, and not stopped for a tool call). */
  complete: boolean;
}

function json(text: unknown): unknown {
  if (typeof text !== "string") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The one-line input of a tool call: a shell command as itself, a path as itself, else compact JSON. */
function toolInput(input: unknown): string {
  if (input && typeof input === "object") {
    const o = input as Record<string, unknown>;
    for (const k of ["command", "filePath", "path", "pattern", "url"]) if (typeof o[k] === "string") return o[k] as string;
    return JSON.stringify(o);
  }
  return input === undefined ? "" : String(input);
}

interface Row {
  id: string;
  session_id: string;
  time_created: number;
  data: string;
}

/** The parts of one message, in order: its words (OpenCode's own synthetic scaffolding left out) and its tool calls. */
function partsInto(turn: OpencodeTurn, parts: { data: string }[], redact: (s: string) => string): void {
  for (const p of parts) {
    const d = json(p.data);
    const t = v.safeParse(TextPart, d);
    if (t.success) {
      if (t.output.synthetic || t.output.ignored || !t.output.text.trim()) continue;
      addAssistantText(turn, redact(t.output.text));
      continue;
    }
    const tool = v.safeParse(ToolPart, d);
    if (!tool.success) continue;
    const s = tool.output.state;
    const done = s.status === "completed" || s.status === "error";
    const out = redact(s.output ?? s.error ?? "");
    const call: ToolCall = {
      id: tool.output.callID ?? "",
      name: tool.output.tool,
      input: oneLine(redact(toolInput(s.input))),
      ...(done ? { output: clip(out, OUTPUT_CHARS), outputChars: out.length, isError: s.status === "error" } : { unpaired: true }),
    };
    addToolCall(turn, call);
  }
}

/** The typed words of a user message's parts. */
function userWords(parts: { data: string }[]): string {
  return parts
    .map((p) => v.safeParse(TextPart, json(p.data)))
    .filter((p) => p.success && !p.output.synthetic && !p.output.ignored)
    .map((p) => (p as { output: v.InferOutput<typeof TextPart> }).output.text)
    .join("\n");
}

/** A session's messages in order, each checked: users, and assistants with the user message they answer. */
function sessionMessages(rows: Row[]): { row: Row; answers?: string; data?: v.InferOutput<typeof AssistantData> }[] {
  const out: { row: Row; answers?: string; data?: v.InferOutput<typeof AssistantData> }[] = [];
  for (const row of rows) {
    const d = json(row.data);
    if (v.is(UserData, d)) out.push({ row });
    else {
      const a = v.safeParse(AssistantData, d);
      if (a.success) out.push({ row, answers: a.output.parentID, data: a.output });
    }
  }
  return out;
}

function newTurn(user: Row, redact: (s: string) => string, words: string): OpencodeTurn {
  return {
    id: user.id,
    sessionId: user.session_id,
    timestamp: Number.isFinite(user.time_created) ? new Date(user.time_created).toISOString() : undefined,
    userText: redact(words),
    assistantTexts: [],
    tools: [],
    items: [],
    complete: false,
  };
}

/**
 * A row's `data`, or null when it is larger than MAX_ROW_BYTES: SQLite counts the bytes without
 * reading them, so a 200 MB row costs nothing (a pasted image is no turn's words).
 */
const DATA = `CASE WHEN octet_length(data) <= ${MAX_ROW_BYTES} THEN data END AS data`;

/** Every read goes through OpenCode's own index (INDEXED BY: an error, never a scan, if it cannot be used). */
const messagesOfSession = (o: OpencodeDb) => `SELECT id, session_id, time_created, ${DATA} FROM message INDEXED BY ${ident(o.idx.messageBySession)} WHERE session_id = ? ORDER BY time_created, id`;

/** The turn opened by user message `promptId`, redacted; undefined when the database does not hold it (yet). */
export function readOpencodeTurn(o: OpencodeDb, promptId: string, redact: (s: string) => string = (s) => s): OpencodeTurn | undefined {
  const { db } = o;
  const user = db.query<Row, [string]>(`SELECT id, session_id, time_created, ${DATA} FROM message INDEXED BY ${ident(o.idx.messageById)} WHERE id = ?`).get(promptId);
  if (!user || !v.is(UserData, json(user.data))) return undefined;
  const answers = sessionMessages(db.query<Row, [string]>(messagesOfSession(o)).all(user.session_id)).filter((m) => m.answers === promptId);
  const partsOf = db.query<{ data: string }, [string]>(`SELECT ${DATA} FROM part INDEXED BY ${ident(o.idx.partByMessage)} WHERE message_id = ? ORDER BY id`);
  const turn = newTurn(user, redact, userWords(partsOf.all(user.id)));
  for (const a of answers) partsInto(turn, partsOf.all(a.row.id), redact);
  const last = answers.at(-1)?.data;
  turn.complete = !!last?.time?.completed && last.finish !== "tool-calls";
  return turn;
}

/** Every turn of a session, in order, redacted: two queries however long the session. */
export function readOpencodeSession(o: OpencodeDb, sessionId: string, redact: (s: string) => string = (s) => s): OpencodeTurn[] {
  const { db } = o;
  const parts = new Map<string, { data: string }[]>();
  for (const p of db.query<{ message_id: string; data: string }, [string]>(`SELECT message_id, ${DATA} FROM part INDEXED BY ${ident(o.idx.partBySession)} WHERE session_id = ? ORDER BY id`).all(sessionId)) {
    const list = parts.get(p.message_id);
    if (list) list.push(p);
    else parts.set(p.message_id, [p]);
  }
  const turns = new Map<string, OpencodeTurn & { last?: v.InferOutput<typeof AssistantData> }>();
  for (const m of sessionMessages(db.query<Row, [string]>(messagesOfSession(o)).all(sessionId))) {
    const own = parts.get(m.row.id) ?? [];
    if (m.answers === undefined) turns.set(m.row.id, newTurn(m.row, redact, userWords(own)));
    else {
      const t = turns.get(m.answers);
      if (!t) continue; // an answer to no user message of this session
      partsInto(t, own, redact);
      t.last = m.data;
    }
  }
  return [...turns.values()].map(({ last, ...t }) => ({ ...t, complete: !!last?.time?.completed && last.finish !== "tool-calls" }));
}

/** A turn labelled for a summariser, as Claude Code's and Codex's are. */
export function renderOpencodeTurn(t: OpencodeTurn): string {
  return renderToolsThenWords(t, "OpenCode");
}

/**
 * The turn an OpenCode idle (the plugin's stop) fired for, by the user message's id, in the session
 * `path` names. Throws when the database cannot be opened (the drainer then uses what the plugin saw).
 */
export async function findStoppedOpencodeTurn(path: string, q: TurnQuery): Promise<FoundTurn | undefined> {
  if (!q.promptId) return undefined;
  const k = splitSessionKey(path);
  const db = openOpencodeDb(k.db);
  try {
    const t = readOpencodeTurn(db, q.promptId, q.redact);
    if (!t || (k.sessionId !== undefined && t.sessionId !== k.sessionId)) return undefined;
    const complete = t.complete || (q.lastAssistantMessage !== undefined && oneLine(t.assistantTexts.at(-1) ?? "") === oneLine(q.redact ? q.redact(q.lastAssistantMessage) : q.lastAssistantMessage));
    return { turn: agentLastTurn(t, t.sessionId, renderOpencodeTurn(t)), complete };
  } finally {
    db.close();
  }
}
