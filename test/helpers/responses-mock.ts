/**
 * A local stand-in for the OpenAI Responses API, good enough for the real Codex CLI (0.169.0) to run
 * `codex exec` offline through a custom provider (`wire_api = "responses"`, see codexConfig in
 * real-codex.ts). The same patterns as anthropic-mock.ts: every request recorded, replies chosen by
 * rules on the prompt.
 *
 * It answers
 *   POST /v1/responses   a streamed reply as named server-sent events (response.created,
 *                        response.output_item.added, response.output_text.delta,
 *                        response.output_item.done, response.completed with usage)
 *   anything else        404
 */

import { afterCommand, bodyOf, ruleFor, serveModel, SSE_HEADERS, type ModelRule } from "./model-mock.ts";

export interface ResponsesRequest {
  seq: number;
  method: string;
  path: string;
  body: any;
  /** The last text the user typed (the last user message's input_text, without Codex's own scaffolding). */
  prompt: string;
  /** Every developer-role message's text, in order (hook context arrives as one). */
  developer: string[];
  /** The whole request body as text, for "did X reach the model" checks. */
  raw: string;
}

/** A rule's `command` is asked for as `exec_command`. */
export type ResponsesRule = ModelRule;

export interface ResponsesMock {
  url: string;
  requests: ResponsesRequest[];
  stop(): void;
}

function textsOf(item: any): string[] {
  if (!item || typeof item !== "object" || !Array.isArray(item.content)) return [];
  return item.content.filter((c: any) => c && typeof c.text === "string").map((c: any) => c.text as string);
}

/** Codex sends AGENTS.md and the environment as user messages too: the prompt is the last other one. */
function promptOf(input: any[]): string {
  const users = input.filter((i) => i?.type === "message" && i.role === "user").map((i) => textsOf(i).join("\n"));
  const typed = users.filter((t) => !t.startsWith("<environment_context>") && !t.startsWith("# AGENTS.md instructions"));
  return typed.at(-1) ?? "";
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify({ type: event, ...(data as object) })}\n\n`;
}

function toolEvents(command: string, seq: number): string {
  const id = `resp_${seq}`;
  const item = { id: `fc_${seq}`, type: "function_call", status: "completed", name: "exec_command", call_id: `call_${seq}`, arguments: JSON.stringify({ cmd: command }) };
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
  return [
    sse("response.created", { response: { id, status: "in_progress", output: [] } }),
    sse("response.output_item.added", { output_index: 0, item }),
    sse("response.output_item.done", { output_index: 0, item }),
    sse("response.completed", { response: { id, status: "completed", output: [item], usage } }),
  ].join("");
}

function replyEvents(text: string, seq: number): string {
  const id = `resp_${seq}`;
  const item = { id: `msg_${seq}`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
  return [
    sse("response.created", { response: { id, status: "in_progress", output: [] } }),
    sse("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } }),
    sse("response.output_text.delta", { output_index: 0, content_index: 0, item_id: item.id, delta: text }),
    sse("response.output_item.done", { output_index: 0, item }),
    sse("response.completed", { response: { id, status: "completed", output: [item], usage } }),
  ].join("");
}

export async function startResponsesMock(opts: { rules?: ResponsesRule[]; defaultText?: string } = {}): Promise<ResponsesMock> {
  const requests: ResponsesRequest[] = [];
  const server = serveModel((path, raw) => {
    if (!path.endsWith("/responses")) return undefined;
    const body = bodyOf(raw, (r) => r);
    const input: any[] = Array.isArray(body?.input) ? body.input : [];
    const seq = requests.length + 1;
    const prompt = promptOf(input);
    const developer = input.filter((i) => i?.type === "message" && i.role === "developer").map((i) => textsOf(i).join("\n"));
    requests.push({ seq, method: "POST", path, body, prompt, developer, raw });
    const rule = ruleFor(opts.rules, prompt);
    const headers = SSE_HEADERS;
    // The tool's output comes back as the last input item: the turn goes on with a text.
    const last = input.at(-1);
    if (rule?.command && last?.type === "function_call_output") {
      const out = typeof last.output === "string" ? last.output : JSON.stringify(last.output);
      return new Response(replyEvents(afterCommand(rule, out), seq), { headers });
    }
    if (rule?.command) return new Response(toolEvents(rule.command, seq), { headers });
    const text = rule?.text ?? opts.defaultText ?? "OK.";
    return new Response(replyEvents(text, seq), { headers });
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, requests, stop: server.stop };
}
