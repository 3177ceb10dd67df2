import type { ToolCall, Turn } from "../transcript/types.ts";

/**
 * A turn labelled for a summariser: `[User]`, the agent's name on its words and its tool calls, in
 * the order the agent wrote them (what `import` and the drainer write a note from); a message the
 * user sent while the agent worked is `[User]` again (Claude Code's transcripts record them).
 */
export function renderAgentTurn(t: Pick<Turn, "userText" | "items">, agent: string): string {
  const out = [`[User]: ${t.userText}`];
  for (const it of t.items) {
    if (it.kind === "assistant") out.push(`[${agent}]: ${it.text}`);
    else if (it.kind === "tool") out.push(...toolLines(it.call, agent));
    else if (it.kind === "user") out.push(`[User]: ${it.text}`);
  }
  return out.join("\n");
}

/** A tool call as a summariser reads it: the call, then its output (or that there was none). */
export function toolLines(c: ToolCall, agent: string): [string, string] {
  return [
    `[${agent} calls tool]: ${c.name}${c.input ? " " + c.input : ""}`,
    c.output === undefined ? "[Tool output]: (no result in the transcript)" : `${c.isError ? "[Tool error]" : "[Tool output]"}: ${c.output || "(empty)"}`,
  ];
}

/**
 * A turn labelled for a summariser with its tool calls first and the agent's words after (the
 * order Gemini CLI's and OpenCode's notes have always been written in).
 */
export function renderToolsThenWords(t: Pick<Turn, "userText" | "tools" | "assistantTexts">, agent: string): string {
  const out = [`[User]: ${t.userText}`];
  for (const c of t.tools) out.push(...toolLines(c, agent));
  for (const a of t.assistantTexts) out.push(`[${agent}]: ${a}`);
  return out.join("\n");
}
