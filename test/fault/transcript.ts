/**
 * Claude Code transcript lines for the fault suite: a turn is a user entry carrying the
 * `promptId` the hooks also get, an assistant tool call, its result and a final text.
 */
import { appendFileSync } from "node:fs";

export interface TurnSpec {
  sessionId: string;
  uuid: string;
  promptId: string;
  prompt: string;
  /** Bash command of the tool call, and what it printed. */
  command: string;
  output: string;
  reply: string;
  /** The session's working folder, written on every entry as Claude Code does. */
  cwd?: string;
}

const line = (o: unknown) => JSON.stringify(o) + "\n";

const where = (t: TurnSpec) => ({ timestamp: new Date().toISOString(), ...(t.cwd ? { cwd: t.cwd } : {}) });

/** The user entry that opens the turn. */
export function userLines(t: TurnSpec): string {
  return line({ type: "user", uuid: t.uuid, parentUuid: null, sessionId: t.sessionId, ...where(t), promptId: t.promptId, message: { role: "user", content: t.prompt } });
}

/** The rest of the turn: a tool call, its result, the final reply. */
export function replyLines(t: TurnSpec): string {
  const tu = `tu-${t.uuid}`;
  return (
    line({ type: "assistant", uuid: `${t.uuid}-a1`, parentUuid: t.uuid, sessionId: t.sessionId, ...where(t), message: { id: `m-${t.uuid}-1`, role: "assistant", content: [{ type: "tool_use", id: tu, name: "Bash", input: { command: t.command } }] } }) +
    line({ type: "user", uuid: `${t.uuid}-r1`, parentUuid: `${t.uuid}-a1`, sessionId: t.sessionId, ...where(t), message: { role: "user", content: [{ type: "tool_result", tool_use_id: tu, content: t.output }] } }) +
    line({ type: "assistant", uuid: `${t.uuid}-a2`, parentUuid: `${t.uuid}-r1`, sessionId: t.sessionId, ...where(t), message: { id: `m-${t.uuid}-2`, role: "assistant", content: [{ type: "text", text: t.reply }] } })
  );
}

export function appendTurn(path: string, t: TurnSpec, part: "user" | "reply" | "all"): void {
  if (part !== "reply") appendFileSync(path, userLines(t));
  if (part !== "user") appendFileSync(path, replyLines(t));
}
