import type { Turn } from "../transcript/types.ts";

/**
 * A turn of another agent labelled for a summariser, as Claude Code's are: `[User]`, the agent's
 * name on its words and its tool calls, in the order the agent wrote them (what `import` and the
 * drainer write a note from).
 */
export function renderAgentTurn(t: Pick<Turn, "userText" | "items">, agent: string): string {
  const out = [`[User]: ${t.userText}`];
  for (const it of t.items) {
    if (it.kind === "assistant") out.push(`[${agent}]: ${it.text}`);
    else if (it.kind === "tool") {
      const c = it.call;
      out.push(`[${agent} calls tool]: ${c.name}${c.input ? " " + c.input : ""}`);
      out.push(c.output === undefined ? "[Tool output]: (no result in the transcript)" : `${c.isError ? "[Tool error]" : "[Tool output]"}: ${c.output || "(empty)"}`);
    }
  }
  return out.join("\n");
}
