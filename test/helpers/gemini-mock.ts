/**
 * A local stand-in for the Gemini API, good enough for the real Gemini CLI (0.61.0) to run
 * `gemini -p` offline (GOOGLE_GEMINI_BASE_URL at it, see real-gemini.ts). The same patterns as
 * anthropic-mock.ts and responses-mock.ts: every request recorded, replies chosen by rules on the
 * prompt, a `command` rule for a shell tool round-trip.
 *
 * It answers
 *   POST /v1beta/models/<model>:streamGenerateContent   `data:` server-sent events, each a
 *                                                       GenerateContentResponse
 *   POST /v1beta/models/<model>:generateContent         the same response as one JSON body
 *   anything else                                       404
 */

import { afterCommand, bodyOf, ruleFor, serveModel, SSE_HEADERS, type ModelRule } from "./model-mock.ts";

export interface GeminiRequest {
  seq: number;
  path: string;
  body: any;
  /** The last text the user typed: the last user content's text parts without Gemini CLI's `<session_context>` and the hooks' `<hook_context>`. */
  prompt: string;
  /** Every text part of every user content, in order (hook context arrives among them). */
  userTexts: string[];
  /** The whole request body as text, for "did X reach the model" checks. */
  raw: string;
}

/** A rule's `command` is asked for as `run_shell_command`. */
export type GeminiRule = ModelRule;

export interface GeminiMock {
  url: string;
  requests: GeminiRequest[];
  stop(): void;
}

const texts = (c: any): string[] => (Array.isArray(c?.parts) ? c.parts.filter((p: any) => typeof p?.text === "string").map((p: any) => p.text as string) : []);
/** What Gemini CLI and the hooks add to the user's words, in tags of their own. */
const ADDED = /<(session_context|hook_context)>[\s\S]*?<\/\1>/g;
const responsesOf = (c: any): any[] => (Array.isArray(c?.parts) ? c.parts.filter((p: any) => p?.functionResponse).map((p: any) => p.functionResponse) : []);

function response(parts: object[]): object {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: "gemini-2.5-flash",
  };
}

export async function startGeminiMock(opts: { rules?: GeminiRule[]; defaultText?: string } = {}): Promise<GeminiMock> {
  const requests: GeminiRequest[] = [];
  const server = serveModel((path, raw) => {
    const stream = path.endsWith(":streamGenerateContent");
    if (!(stream || path.endsWith(":generateContent"))) return undefined;
    const body = bodyOf(raw, (r) => r);
    const contents: any[] = Array.isArray(body?.contents) ? body.contents : [];
    const users = contents.filter((c) => c?.role === "user");
    const typed = users.map((c) => texts(c).join("\n").replace(ADDED, "").trim()).filter(Boolean);
    const prompt = typed.at(-1) ?? "";
    const seq = requests.length + 1;
    requests.push({ seq, path, body, prompt, userTexts: users.flatMap(texts), raw });
    const rule = ruleFor(opts.rules, prompt);
    const lastResponse = responsesOf(contents.at(-1)).at(-1);
    let parts: object[];
    if (rule?.command && lastResponse) {
      const out = JSON.stringify(lastResponse.response ?? lastResponse);
      parts = [{ text: afterCommand(rule, out) }];
    } else if (rule?.command) parts = [{ functionCall: { name: "run_shell_command", args: { command: rule.command, description: "run it" } } }];
    else parts = [{ text: rule?.text ?? opts.defaultText ?? "OK." }];
    const r = response(parts);
    if (!stream) return Response.json(r);
    return new Response(`data: ${JSON.stringify(r)}\r\n\r\n`, { headers: SSE_HEADERS });
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: server.stop };
}
