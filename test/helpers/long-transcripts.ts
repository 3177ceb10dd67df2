/**
 * Long sessions of the other agents, generated: a Gemini CLI chat of many turns (each tool-calling
 * answer written, then rewritten with its results, as Gemini CLI does), a Codex rollout of one turn
 * with many tool calls (the older layout: calls and outputs from the model input), and a Copilot
 * CLI session of one turn with many tool calls. `n` scales each; the readers must stay linear in it.
 */

/** A Gemini CLI chat (`session-*.jsonl`) of `n` turns, each a question and a tool-calling answer. */
export function geminiChat(n: number, pad = 0): string {
  const lines: unknown[] = [{ sessionId: "gem-long", projectHash: "h", kind: "main", startTime: "2025-09-01T10:00:00.000Z" }];
  const filler = "x".repeat(pad);
  for (let i = 0; i < n; i++) {
    const ts = new Date(Date.UTC(2025, 8, 1, 10, 0, i)).toISOString();
    lines.push({ id: `u${i}`, type: "user", timestamp: ts, content: [{ text: `question ${i} about the ledger ${filler}` }] });
    const call = { id: `c${i}`, name: "run_shell_command", args: { command: `grep -n ledger file${i}.ts` }, status: "executing" };
    lines.push({ id: `g${i}`, type: "gemini", timestamp: ts, content: "", toolCalls: [call] });
    lines.push({ id: `g${i}`, type: "gemini", timestamp: ts, content: `answer ${i}: the ledger is fine ${filler}`, toolCalls: [{ ...call, status: "success", result: [{ functionResponse: { response: { output: `file${i}.ts:1: ledger ${filler}` } } }] }] });
  }
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/** A Codex rollout (older layout, no turn ids) of one turn that made `n` shell calls. */
export function codexRollout(n: number, pad = 0, cwd = "/home/u/proj", session = "0198aa00-1111-7000-8000-00000000long"): string {
  const filler = "y".repeat(pad);
  const at = (i: number) => new Date(Date.UTC(2025, 8, 1, 10, 0, 0, i)).toISOString();
  const lines: unknown[] = [
    { timestamp: at(0), type: "session_meta", payload: { id: session, timestamp: at(0), cwd, originator: "codex_cli_rs", cli_version: "0.30.0" } },
    { timestamp: at(1), type: "event_msg", payload: { type: "user_message", message: "Find every use of the ledger", images: [] } },
  ];
  for (let i = 0; i < n; i++) {
    lines.push({ timestamp: at(2 + i), type: "response_item", payload: { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", `grep -n ledger file${i}.ts`] }), call_id: `call_${i}` } });
    lines.push({ timestamp: at(2 + i), type: "response_item", payload: { type: "function_call_output", call_id: `call_${i}`, output: JSON.stringify({ output: `file${i}.ts:1: ledger ${filler}`, metadata: { exit_code: 0 } }) } });
  }
  lines.push({ timestamp: at(3 + n), type: "event_msg", payload: { type: "agent_message", message: "Every use of the ledger is listed." } });
  lines.push({ timestamp: at(4 + n), type: "event_msg", payload: { type: "task_complete" } });
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/** A Copilot CLI session (`events.jsonl`) of one turn that made `n` tool calls. */
export function copilotEvents(n: number, pad = 0): string {
  const filler = "z".repeat(pad);
  const at = (i: number) => new Date(Date.UTC(2025, 8, 1, 10, 0, 0, i)).toISOString();
  const ev = (i: number, type: string, data: unknown) => ({ id: `e${i}`, parentId: null, timestamp: at(i), type, data });
  const lines: unknown[] = [ev(0, "session.start", { sessionId: "cop-long", context: { cwd: "/home/u/proj" } }), ev(1, "user.message", { content: "Find every use of the ledger", interactionId: "int-1" })];
  for (let i = 0; i < n; i++) {
    lines.push(ev(2 + 2 * i, "assistant.message", { content: "", toolRequests: [{ toolCallId: `tc${i}`, name: "bash", arguments: { command: `grep -n ledger file${i}.ts` } }] }));
    lines.push(ev(3 + 2 * i, "tool.execution_complete", { toolCallId: `tc${i}`, success: true, result: { content: `file${i}.ts:1: ledger ${filler}` } }));
  }
  lines.push(ev(2 + 2 * n, "assistant.message", { content: "Every use of the ledger is listed.", toolRequests: [] }));
  lines.push(ev(3 + 2 * n, "assistant.turn_end", {}));
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/** A Gemini CLI chat of about `bytes` bytes of one-word messages (the hostile case: as many messages as the size allows). */
export function tinyGeminiChat(bytes: number): string {
  const out = [JSON.stringify({ sessionId: "gem-tiny", projectHash: "h", kind: "main" })];
  let size = out[0]!.length;
  for (let i = 0; size < bytes; i++) {
    const line = JSON.stringify({ id: `m${i}`, type: i % 2 ? "gemini" : "user", content: `w${i}` });
    out.push(line);
    size += line.length + 1;
  }
  return out.join("\n") + "\n";
}

/** A Codex rollout of about `bytes` bytes: one turn of as many small shell calls as the size allows. */
export function tinyRollout(bytes: number, cwd = "/home/u/proj"): string {
  const out = [JSON.stringify({ timestamp: "2025-09-01T10:00:00.000Z", type: "session_meta", payload: { id: "0198aa00-1111-7000-8000-00000000tiny", cwd } }), JSON.stringify({ timestamp: "2025-09-01T10:00:00.001Z", type: "event_msg", payload: { type: "user_message", message: "Find every use of the ledger" } })];
  let size = out.join("\n").length;
  for (let i = 0; size < bytes; i++) {
    const call = JSON.stringify({ type: "response_item", payload: { type: "function_call", name: "shell", arguments: `{"command":["ls"]}`, call_id: `c${i}` } });
    const res = JSON.stringify({ type: "response_item", payload: { type: "function_call_output", call_id: `c${i}`, output: "ok" } });
    out.push(call, res);
    size += call.length + res.length + 2;
  }
  out.push(JSON.stringify({ type: "event_msg", payload: { type: "agent_message", message: "Done." } }));
  return out.join("\n") + "\n";
}
