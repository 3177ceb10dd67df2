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
import { Database } from "bun:sqlite";
import { lstatSync } from "node:fs";
import * as v from "valibot";
import { clip, oneLine } from "../../core/text.ts";
import type { FoundTurn, TurnQuery } from "../../transcript/last-turn.ts";
import type { ToolCall } from "../../transcript/types.ts";
import { renderToolsThenWords } from "../render.ts";
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

/** Opens OpenCode's database read-only; throws when it is not a plain file (a link could point anywhere). */
export function openOpencodeDb(path: string): Database {
  if (!lstatSync(path).isFile()) throw new Error(`${path} is not a plain file`);
  return new Database(path, { readonly: true });
}

interface Row {
  id: string;
  session_id: string;
  time_created: number;
  data: string;
}

/** The turn opened by user message `promptId`, redacted; undefined when the database does not hold it (yet). */
export function readOpencodeTurn(db: Database, promptId: string, redact: (s: string) => string = (s) => s): OpencodeTurn | undefined {
  const user = db.query<Row, [string]>("SELECT id, session_id, time_created, data FROM message WHERE id = ?").get(promptId);
  if (!user || !v.is(UserData, json(user.data))) return undefined;
  const answers = db
    .query<Row, [string]>("SELECT id, session_id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id")
    .all(user.session_id)
    .map((r) => ({ row: r, data: v.safeParse(AssistantData, json(r.data)) }))
    .filter((a) => a.data.success && a.data.output.parentID === promptId)
    .map((a) => ({ row: a.row, data: (a.data as { output: v.InferOutput<typeof AssistantData> }).output }));
  const partsOf = db.query<{ data: string }, [string]>("SELECT data FROM part WHERE message_id = ? ORDER BY id");
  const texts = (id: string) =>
    partsOf
      .all(id)
      .map((p) => v.safeParse(TextPart, json(p.data)))
      .filter((p) => p.success && !p.output.synthetic && !p.output.ignored)
      .map((p) => (p as { output: v.InferOutput<typeof TextPart> }).output.text);
  const turn: OpencodeTurn = {
    id: user.id,
    sessionId: user.session_id,
    timestamp: Number.isFinite(user.time_created) ? new Date(user.time_created).toISOString() : undefined,
    userText: redact(texts(user.id).join("\n")),
    assistantTexts: [],
    tools: [],
    items: [],
    complete: false,
  };
  for (const a of answers) {
    for (const p of partsOf.all(a.row.id)) {
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
  const last = answers.at(-1)?.data;
  turn.complete = !!last?.time?.completed && last.finish !== "tool-calls";
  return turn;
}

/** A turn labelled for a summariser, as Claude Code's and Codex's are. */
export function renderOpencodeTurn(t: OpencodeTurn): string {
  return renderToolsThenWords(t, "OpenCode");
}

/**
 * The turn an OpenCode idle (the plugin's stop) fired for, by the user message's id. Throws when
 * the database cannot be opened (the drainer then uses what the plugin saw).
 */
export async function findStoppedOpencodeTurn(path: string, q: TurnQuery): Promise<FoundTurn | undefined> {
  if (!q.promptId) return undefined;
  const db = openOpencodeDb(path);
  try {
    const t = readOpencodeTurn(db, q.promptId, q.redact);
    if (!t) return undefined;
    const complete = t.complete || (q.lastAssistantMessage !== undefined && oneLine(t.assistantTexts.at(-1) ?? "") === oneLine(q.redact ? q.redact(q.lastAssistantMessage) : q.lastAssistantMessage));
    return { turn: agentLastTurn(t, t.sessionId, renderOpencodeTurn(t)), complete };
  } finally {
    db.close();
  }
}
