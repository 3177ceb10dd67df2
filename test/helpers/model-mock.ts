/**
 * What the stand-ins for other agents' model APIs (responses-mock.ts, chat-mock.ts,
 * gemini-mock.ts) share: a local server that answers what the API's handler takes and 404s the
 * rest, the request body read leniently, and the rules that choose a reply by the prompt.
 */

export interface ModelRule {
  match: string | RegExp;
  /** A plain assistant reply. */
  text?: string;
  /** A shell command the model asks the agent to run; the request carrying its output gets `after` (default: a text quoting it). */
  command?: string;
  after?: (output: string) => string;
}

export const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** The first rule whose match is in the prompt (a string, case-insensitively) or matches it (a pattern). */
export function ruleFor(rules: ModelRule[] | undefined, prompt: string): ModelRule | undefined {
  return rules?.find((r) => (typeof r.match === "string" ? prompt.toLowerCase().includes(r.match.toLowerCase()) : r.match.test(prompt)));
}

/** The reply to the request that carries a command rule's output. */
export function afterCommand(rule: ModelRule, output: string): string {
  return rule.after ? rule.after(output) : `The command printed: ${output.slice(0, 200)}`;
}

/** A request body as JSON, else `fallback` (the mock answers it all the same). */
export function bodyOf(raw: string, fallback: (raw: string) => any): any {
  try {
    return JSON.parse(raw);
  } catch {
    return fallback(raw);
  }
}

/**
 * Serves `handle` on a free local port: it gets every POST with its path and body text, and
 * answers undefined for a path it does not serve (a 404).
 */
export function serveModel(handle: (path: string, raw: string) => Response | undefined): { port: number; stop(): void } {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const raw = await req.text();
      const res = req.method === "POST" ? handle(path, raw) : undefined;
      return res ?? new Response("not found", { status: 404 });
    },
  });
  return { port: server.port!, stop: () => server.stop(true) };
}
