/**
 * A local stand-in for the OpenAI Chat Completions API, good enough for the real OpenCode CLI
 * (1.18.33) to run `opencode run` offline through an `@ai-sdk/openai-compatible` provider (see
 * real-opencode.ts). The same patterns as anthropic-mock.ts and responses-mock.ts (whose rules it
 * takes as they are): every request recorded, replies chosen by rules on the prompt, a rule with a
 * `command` asks for a `bash` tool call and answers the request carrying its output.
 *
 * It answers
 *   POST /v1/chat/completions   a streamed reply (chat.completion.chunk events, then [DONE])
 *   anything else               404
 */
import { afterCommand, bodyOf, ruleFor, serveModel, SSE_HEADERS, type ModelRule } from "./model-mock.ts";

/** A rule's `command` is asked for as a `bash` tool call. */
export type ChatRule = ModelRule;

export interface ChatRequest {
  seq: number;
  path: string;
  body: any;
  /** The last user message's text. */
  prompt: string;
  /** Every system message's text, in order (plugin context arrives as one, or inside one). */
  system: string[];
  /** OpenCode's title generator asks too: its requests carry no tools. */
  title: boolean;
  raw: string;
}

export interface ChatMock {
  url: string;
  requests: ChatRequest[];
  stop(): void;
}

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((c: any) => (typeof c?.text === "string" ? c.text : "")).join("\n") : "";

function chunk(seq: number, delta: object, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: `chatcmpl-${seq}`, object: "chat.completion.chunk", created: 0, model: "mock-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

function usage(seq: number): string {
  return `data: ${JSON.stringify({ id: `chatcmpl-${seq}`, object: "chat.completion.chunk", created: 0, model: "mock-model", choices: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } })}\n\n`;
}

function replyEvents(text: string, seq: number): string {
  return chunk(seq, { role: "assistant", content: "" }) + chunk(seq, { content: text }) + chunk(seq, {}, "stop") + usage(seq) + "data: [DONE]\n\n";
}

function toolEvents(command: string, seq: number): string {
  const call = { index: 0, id: `call_${seq}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command, description: "Runs the command" }) } };
  return chunk(seq, { role: "assistant", content: null, tool_calls: [call] }) + chunk(seq, {}, "tool_calls") + usage(seq) + "data: [DONE]\n\n";
}

/**
 * `matchOn`: the part of the last user message the rules are matched against (Copilot CLI sends
 * the prompt with the date and our injected memory around it, which quote earlier prompts).
 */
export async function startChatMock(opts: { rules?: ChatRule[]; defaultText?: string; matchOn?: (prompt: string) => string } = {}): Promise<ChatMock> {
  const requests: ChatRequest[] = [];
  const server = serveModel((path, raw) => {
    if (!path.endsWith("/chat/completions")) return undefined;
    const body = bodyOf(raw, () => ({}));
    const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
    const seq = requests.length + 1;
    const prompt = textOf(messages.filter((m) => m?.role === "user").at(-1)?.content);
    const system = messages.filter((m) => m?.role === "system").map((m) => textOf(m.content));
    const title = !Array.isArray(body?.tools) || body.tools.length === 0;
    requests.push({ seq, path, body, prompt, system, title, raw });
    const headers = SSE_HEADERS;
    if (title) return new Response(replyEvents("Mock session", seq), { headers });
    const rule = ruleFor(opts.rules, opts.matchOn ? opts.matchOn(prompt) : prompt);
    const last = messages.at(-1);
    if (rule?.command && last?.role === "tool") {
      const out = textOf(last.content);
      return new Response(replyEvents(afterCommand(rule, out), seq), { headers });
    }
    if (rule?.command) return new Response(toolEvents(rule.command, seq), { headers });
    return new Response(replyEvents(rule?.text ?? opts.defaultText ?? "OK.", seq), { headers });
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, requests, stop: server.stop };
}
