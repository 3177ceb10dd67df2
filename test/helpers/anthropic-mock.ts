/**
 * A local stand-in for the Anthropic Messages API, good enough for the real Claude Code CLI
 * (2.1.328) to run whole sessions offline: `ANTHROPIC_BASE_URL=<api.url>`.
 *
 * It answers
 *   POST /v1/messages[?beta=true]     streaming (server-sent events, as the real API sends them) or one JSON message
 *   POST /v1/messages/count_tokens    a rough estimate
 *   HEAD (any path: /, /api/hello)    200, empty (connectivity probes)
 *   anything else                     404 in the API's error shape
 * and records every request (path, headers, parsed body, how it was classified, what it answered).
 *
 * Replies to /v1/messages are chosen per request:
 *   1. the summariser (memsearch's own `claude -p --tools "" --model haiku`: no tools, the first user
 *      message contains "You are a note-taker"; model claude-haiku-5-5) gets 2–4 `- ` bullets that
 *      echo distinctive words of the turn (see summaryFor), after `summaryDelayMs` (default 3 s);
 *   2. `script.reply(req)` if given and it returns something;
 *   3. a request whose last user message carries a tool_result for a tool_use this mock issued gets a
 *      plain text reply quoting the tool output (the rule's `after`, or "The command printed: …");
 *   4. the first of `script.rules` whose `match` fits the request's prompt (the last text the user typed);
 *   5. main-model requests (those with tools) get `script.defaultText`;
 *   6. any other background call (title, topic, quota, a non-summariser haiku call) gets a short answer.
 */

export type MockReply =
  /** A plain assistant text reply (stop_reason end_turn). */
  | { type: "text"; text: string; delayMs?: number }
  /**
   * A `tool_use` of the Bash tool (stop_reason tool_use) with `{command, description}`. When the
   * tool_result comes back, the follow-up request is answered with `after(output)` (default: a text
   * that quotes the output).
   */
  | { type: "bash"; command: string; description?: string; delayMs?: number; after?: (output: string, isError: boolean) => string }
  /** Any other tool. */
  | { type: "tool"; name: string; input: Record<string, unknown>; delayMs?: number; after?: (output: string, isError: boolean) => string }
  /** An HTTP error in the API's error shape (e.g. 529 overloaded, 400 invalid_request_error). */
  | { type: "error"; status: number; errorType?: string; message?: string; delayMs?: number };

export interface MockRule {
  /** A substring (case-insensitive), a RegExp, or a predicate on the prompt (the last text the user typed). */
  match: string | RegExp | ((prompt: string, req: MockRequest) => boolean);
  reply: MockReply | ((req: MockRequest) => MockReply);
  /** Use the rule at most this many times (default unlimited). */
  times?: number;
}

export interface MockScript {
  /** Consulted first for every /v1/messages request except the summariser's; return undefined to fall through. */
  reply?: (req: MockRequest) => MockReply | undefined;
  /** Replies keyed by the prompt of main-model requests; the first match wins. */
  rules?: MockRule[];
  /** Text for main-model requests nothing else answered (default "OK."). */
  defaultText?: string;
  /** Delay before main-model replies, ms (default 0; a reply's own delayMs wins). */
  replyDelayMs?: number;
  /** Delay before the summariser's reply, ms (default 3000). */
  summaryDelayMs?: number;
  /** The summariser's answer; default: bullets built from the turn's words (see `summaryFor`). */
  summarise?: (turnText: string, req: MockRequest) => string;
  /** Pause between server-sent events, ms (default 2). */
  chunkDelayMs?: number;
}

export type RequestKind = "main" | "summariser" | "background" | "count_tokens" | "other";

export interface ToolResult {
  toolUseId: string;
  output: string;
  isError: boolean;
}

export interface MockRequest {
  seq: number;
  method: string;
  /** Path without the query, e.g. /v1/messages */
  path: string;
  /** The query string with its `?`, or "". */
  query: string;
  headers: Record<string, string>;
  /** Parsed JSON body (or the raw text when it was not JSON; undefined without body). */
  body: any;
  kind: RequestKind;
  model?: string;
  stream?: boolean;
  /** Names of the tools offered. */
  tools: string[];
  /** The last text the user typed (last user text block that is not a <system-reminder>), "" if none. */
  prompt: string;
  /** Tool results in the last user message. */
  toolResults: ToolResult[];
  /** For the summariser: the turn text after "Transcript:". */
  turnText?: string;
  receivedAt: number;
  /** Set once the whole answer has been sent. */
  answeredAt?: number;
  /** What was answered. */
  answer?: { status: number; stopReason?: "end_turn" | "tool_use"; text?: string; toolUse?: { id: string; name: string; input: unknown } };
}

export interface MockApi {
  url: string;
  port: number;
  /** Every request, in arrival order. */
  requests: MockRequest[];
  /** The script in use; may be replaced or mutated between turns. */
  script: MockScript;
  main(): MockRequest[];
  summariser(): MockRequest[];
  background(): MockRequest[];
  /** Main-model requests answered with a final (end_turn) reply: one per finished turn. */
  finishedTurns(): MockRequest[];
  /** Requests (of `kind`, default any /v1/messages) whose body contains `text`. */
  withText(text: string, kind?: RequestKind): MockRequest[];
  /** Resolves with the first request (existing or future) for which `pred` holds once it is answered. */
  waitFor(pred: (r: MockRequest) => boolean, timeoutMs?: number): Promise<MockRequest>;
  /** Waits until `n` main-model turns have been answered with end_turn. */
  waitForTurns(n: number, timeoutMs?: number): Promise<MockRequest>;
  stop(): Promise<void>;
}

const STOPWORDS = new Set(
  "about above after again against also been before being below between both could does doing down during each from further have having here hers herself himself into itself just more most myself once only other ought ourselves over same should some such than that their theirs them themselves then there these they this those through under until very were what when where which while whom will with would your yours yourself yourselves please tell claude code user asked answer answered reply replied the and for you are was not but can".split(
    " ",
  ),
);

/** Distinctive words of `text`, in order of appearance, without duplicates. */
export function distinctiveWords(text: string, max = 6): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}_-]*[\p{L}\p{N}]/gu)) {
    const w = m[0];
    const key = w.toLowerCase();
    if (w.length < 4 || STOPWORDS.has(key) || seen.has(key)) continue;
    seen.add(key);
    out.push(w);
    if (out.length === max) break;
  }
  return out;
}

/** The default summariser answer: 2–4 bullets echoing the turn's words. */
export function summaryFor(turnText: string): string {
  const user: string[] = [];
  const claude: string[] = [];
  const tools: string[] = [];
  for (const line of turnText.split("\n")) {
    const m = /^\[(User|Claude Code|Claude Code calls tool|Tool output|Tool error)\]:\s?(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === "User") user.push(m[2]!);
    else if (m[1] === "Claude Code") claude.push(m[2]!);
    else if (m[1] === "Claude Code calls tool") tools.push(m[2]!);
  }
  const userWords = distinctiveWords(user.join(" ") || turnText);
  const bullets = [`- User asked about ${userWords.join(", ") || "something"}.`];
  const claudeWords = distinctiveWords(claude.join(" "));
  if (claudeWords.length) bullets.push(`- Claude Code answered with ${claudeWords.join(", ")}.`);
  if (tools.length) bullets.push(`- Claude Code ran ${tools[0]!.slice(0, 120)}.`);
  if (bullets.length < 2) bullets.push("- Claude Code replied to the request.");
  return bullets.slice(0, 4).join("\n") + "\n";
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: any) => (b?.type === "text" ? String(b.text ?? "") : ""))
    .filter(Boolean)
    .join("\n");
}

function describe(body: any, req: MockRequest): void {
  if (!body || typeof body !== "object") return;
  req.model = typeof body.model === "string" ? body.model : undefined;
  req.stream = body.stream === true;
  req.tools = Array.isArray(body.tools) ? body.tools.map((t: any) => String(t?.name ?? t?.type ?? "?")) : [];
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const users = messages.filter((m) => m?.role === "user");
  // The prompt: the last user text block that is not a system reminder.
  outer: for (let i = users.length - 1; i >= 0; i--) {
    const c = users[i].content;
    const blocks = typeof c === "string" ? [{ type: "text", text: c }] : Array.isArray(c) ? c : [];
    for (let j = blocks.length - 1; j >= 0; j--) {
      const b = blocks[j];
      if (b?.type === "text" && typeof b.text === "string" && !b.text.trimStart().startsWith("<system-reminder>")) {
        req.prompt = b.text;
        break outer;
      }
    }
  }
  const last = users[users.length - 1];
  if (last && Array.isArray(last.content)) {
    for (const b of last.content) {
      if (b?.type !== "tool_result") continue;
      const output = typeof b.content === "string" ? b.content : textOf(b.content);
      req.toolResults.push({ toolUseId: String(b.tool_use_id), output, isError: b.is_error === true });
    }
  }
  const first = textOf(users[0]?.content);
  // memsearch's summariser: `claude -p --tools "" --model haiku` (claude-haiku-5-5 in 2.1.328); the
  // model is not required here so that a configured other model still counts (tests can check it).
  if (req.tools.length === 0 && first.includes("You are a note-taker")) {
    req.kind = "summariser";
    const at = first.indexOf("Transcript:");
    req.turnText = at >= 0 ? first.slice(at + "Transcript:".length).trim() : first;
  } else if (req.tools.length > 0) {
    req.kind = "main";
  } else {
    req.kind = "background";
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function randomId(prefix: string): string {
  return prefix + crypto.randomUUID().replace(/-/g, "").slice(0, 24);
}

/** Splits a string into about `n` pieces (for input_json_delta / text_delta). */
function pieces(s: string, n: number): string[] {
  if (s.length <= n) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** A value that satisfies a (simple) JSON schema, for structured-output background calls. */
export function valueFromSchema(schema: any): unknown {
  if (!schema || typeof schema !== "object") return null;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if ("const" in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries<any>(schema.properties ?? {})) out[k] = k === "title" && v?.type === "string" ? "Mock session" : valueFromSchema(v);
      return out;
    }
    case "array":
      return [];
    case "string":
      return "mock";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}

/**
 * A short, harmless answer for a background call. Seen from 2.1.328: the session-title call (haiku,
 * no tools, `output_config.format` = json_schema {title}) when non-essential traffic is allowed.
 */
function backgroundAnswer(req: MockRequest): string {
  const body = req.body ?? {};
  const format = body.output_config?.format ?? body.output_format;
  if (format?.type === "json_schema" && format.schema) return JSON.stringify(valueFromSchema(format.schema));
  const sys = typeof body.system === "string" ? body.system : textOf(body.system);
  const all = `${sys}\n${textOf(body.messages?.[body.messages.length - 1]?.content)}`;
  const wantsJson = /\bjson\b/i.test(all);
  if (/title/i.test(all)) return wantsJson ? JSON.stringify({ title: "Mock session" }) : "Mock session";
  if (/isNewTopic/i.test(all)) return JSON.stringify({ isNewTopic: false, title: null });
  if (wantsJson) return "{}";
  return "OK";
}

export async function startMockApi(script: MockScript | ((req: MockRequest) => MockReply | undefined) = {}): Promise<MockApi> {
  const requests: MockRequest[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const issuedTools = new Map<string, MockReply>();
  const ruleUses = new Map<MockRule, number>();

  const api: MockApi = {
    url: "",
    port: 0,
    requests,
    script: typeof script === "function" ? { reply: script } : script,
    main: () => requests.filter((r) => r.kind === "main"),
    summariser: () => requests.filter((r) => r.kind === "summariser"),
    background: () => requests.filter((r) => r.kind === "background"),
    finishedTurns: () => requests.filter((r) => r.kind === "main" && r.answeredAt !== undefined && r.answer?.stopReason === "end_turn"),
    withText(text, kind) {
      return requests.filter((r) => (kind ? r.kind === kind : r.path.startsWith("/v1/messages")) && JSON.stringify(r.body ?? "").includes(JSON.stringify(text).slice(1, -1)));
    },
    waitFor(pred, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = requests.find((r) => r.answeredAt !== undefined && pred(r));
          if (hit) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hit);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`mock API: no matching request within ${timeoutMs} ms (${requests.length} requests so far)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async waitForTurns(n, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (api.finishedTurns().length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`mock API: ${api.finishedTurns().length} of ${n} turns answered within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const w = () => {
            waiters.delete(w);
            clearTimeout(t);
            resolve();
          };
          const t = setTimeout(w, Math.min(left, 500));
          waiters.add(w);
        });
      }
      return api.finishedTurns()[n - 1]!;
    },
    async stop() {
      await server.stop(true);
    },
  };

  function choose(req: MockRequest): { reply: MockReply; isSummary?: boolean } {
    const s = api.script;
    if (req.kind === "summariser") {
      const text = s.summarise ? s.summarise(req.turnText ?? "", req) : summaryFor(req.turnText ?? "");
      return { reply: { type: "text", text, delayMs: s.summaryDelayMs ?? 3000 }, isSummary: true };
    }
    const custom = s.reply?.(req);
    if (custom) return { reply: custom };
    if (req.toolResults.length) {
      const tr = req.toolResults[req.toolResults.length - 1]!;
      const origin = issuedTools.get(tr.toolUseId);
      if (origin || req.kind === "main") {
        const after = origin && "after" in origin ? origin.after : undefined;
        const text = after ? after(tr.output, tr.isError) : `The command printed:\n${tr.output}`;
        return { reply: { type: "text", text, delayMs: s.replyDelayMs } };
      }
    }
    if (req.kind === "main") {
      for (const rule of s.rules ?? []) {
        const used = ruleUses.get(rule) ?? 0;
        if (rule.times !== undefined && used >= rule.times) continue;
        const m = rule.match;
        const ok = typeof m === "string" ? req.prompt.toLowerCase().includes(m.toLowerCase()) : m instanceof RegExp ? m.test(req.prompt) : m(req.prompt, req);
        if (!ok) continue;
        ruleUses.set(rule, used + 1);
        const reply = typeof rule.reply === "function" ? rule.reply(req) : rule.reply;
        return { reply: reply.delayMs === undefined && s.replyDelayMs ? { ...reply, delayMs: s.replyDelayMs } : reply };
      }
      return { reply: { type: "text", text: s.defaultText ?? "OK.", delayMs: s.replyDelayMs } };
    }
    return { reply: { type: "text", text: backgroundAnswer(req) } };
  }

  function usage(req: MockRequest) {
    const bytes = JSON.stringify(req.body ?? "").length;
    return { input_tokens: Math.max(1, Math.ceil(bytes / 4)), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: "standard" };
  }

  async function messages(req: MockRequest, signal: AbortSignal): Promise<Response> {
    const { reply } = choose(req);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.type === "error") {
      req.answer = { status: reply.status };
      req.answeredAt = Date.now();
      notify();
      return Response.json(
        { type: "error", error: { type: reply.errorType ?? (reply.status === 529 ? "overloaded_error" : "api_error"), message: reply.message ?? "mock error" } },
        { status: reply.status },
      );
    }
    const id = randomId("msg_mock");
    const model = req.model ?? "claude-mock";
    let block: any;
    let stopReason: "end_turn" | "tool_use";
    if (reply.type === "text") {
      block = { type: "text", text: reply.text };
      stopReason = "end_turn";
      req.answer = { status: 200, stopReason, text: reply.text };
    } else {
      const name = reply.type === "bash" ? "Bash" : reply.name;
      const input = reply.type === "bash" ? { command: reply.command, description: reply.description ?? "Run the command the test chose" } : reply.input;
      const toolId = randomId("toolu_mock");
      issuedTools.set(toolId, reply);
      block = { type: "tool_use", id: toolId, name, input };
      stopReason = "tool_use";
      req.answer = { status: 200, stopReason, toolUse: { id: toolId, name, input } };
    }
    const outTokens = Math.max(1, Math.ceil(JSON.stringify(block).length / 4));
    const u = usage(req);
    if (!req.stream) {
      req.answeredAt = Date.now();
      notify();
      return Response.json({
        id,
        type: "message",
        role: "assistant",
        model,
        content: [block],
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { ...u, output_tokens: outTokens },
      });
    }
    const events: [string, unknown][] = [];
    events.push(["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: u } }]);
    if (block.type === "text") {
      events.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]);
      events.push(["ping", { type: "ping" }]);
      for (const p of pieces(block.text, 3)) events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } }]);
    } else {
      events.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }]);
      events.push(["ping", { type: "ping" }]);
      events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "" } }]);
      for (const p of pieces(JSON.stringify(block.input), 4)) events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: p } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index: 0 }]);
    events.push(["message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outTokens } }]);
    events.push(["message_stop", { type: "message_stop" }]);
    const chunkDelay = api.script.chunkDelayMs ?? 2;
    const enc = new TextEncoder();
    const stream = new ReadableStream({
      async pull(controller) {
        for (const [event, data] of events) {
          if (signal.aborted) break;
          controller.enqueue(enc.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
          if (chunkDelay) await sleep(chunkDelay);
        }
        controller.close();
        req.answeredAt = Date.now();
        notify();
      },
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "request-id": randomId("req_mock"), "anthropic-organization-id": "00000000-0000-0000-0000-000000000000" },
    });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const raw = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
      let body: any = undefined;
      if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const req: MockRequest = {
        seq: requests.length,
        method: request.method,
        path: url.pathname,
        query: url.search,
        headers: Object.fromEntries(request.headers),
        body,
        kind: "other",
        tools: [],
        prompt: "",
        toolResults: [],
        receivedAt: Date.now(),
      };
      requests.push(req);
      const done = (res: Response) => {
        req.answer ??= { status: res.status };
        req.answeredAt = Date.now();
        notify();
        return res;
      };
      if (request.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
        req.kind = "count_tokens";
        return done(Response.json({ input_tokens: Math.max(1, Math.ceil(raw.length / 4)) }));
      }
      if (request.method === "POST" && url.pathname === "/v1/messages") {
        describe(body, req);
        return messages(req, request.signal);
      }
      // HEAD / and HEAD /api/hello are connectivity probes.
      if (request.method === "HEAD") return done(new Response(null, { status: 200 }));
      if (request.method === "GET" && url.pathname === "/") return done(new Response("ok"));
      return done(Response.json({ type: "error", error: { type: "not_found_error", message: `mock: no ${request.method} ${url.pathname}` } }, { status: 404 }));
    },
  });
  api.port = server.port!;
  api.url = `http://127.0.0.1:${server.port}`;
  return api;
}
