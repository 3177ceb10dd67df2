import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { CONFIG_KEYS, type Config } from "../../src/core/config.ts";
import { EmbedderError, MemsearchError } from "../../src/core/errors.ts";
import { dimensionError, ollamaClient, ollamaError, ollamaTimeoutMs, type OllamaCall } from "../../src/core/ollama-client.ts";

const call: OllamaCall = { host: "http://127.0.0.1:11434", model: "nomic-embed-text", timeoutMs: 2_500 };

/** What the client throws for an HTTP error: its ResponseError is not exported, only its shape is known. */
function responseError(status: number, message: string): Error {
  return Object.assign(new Error(message), { name: "ResponseError", status_code: status });
}

function both(err: unknown): { embed: EmbedderError; chat: EmbedderError } {
  return { embed: ollamaError(err, call), chat: ollamaError(err, call, "chat") };
}

describe("ollamaError: what a failure means", () => {
  test("a timeout, from AbortSignal.timeout or an abort", () => {
    for (const name of ["TimeoutError", "AbortError"]) {
      const { embed, chat } = both(new DOMException("The operation timed out.", name));
      expect(embed.kind).toBe("timeout");
      expect(embed.message).toBe("Ollama did not answer within 2.5s at http://127.0.0.1:11434");
      expect(chat.kind).toBe("timeout");
      expect(chat.message).toBe("timed out after 2.5s");
    }
  });

  test("a server that is not there, as Bun and as Node report it", () => {
    const bun = Object.assign(new TypeError("Unable to connect. Is the computer able to access the url?"), { code: "ConnectionRefused" });
    const node = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND nowhere"), { code: "ENOTFOUND" });
    for (const err of [bun, node, dns]) {
      const { embed, chat } = both(err);
      expect(embed.kind).toBe("down");
      expect(embed.message).toBe("Ollama is not reachable at http://127.0.0.1:11434 (start it with 'ollama serve')");
      expect(chat.message).toBe("not reachable at http://127.0.0.1:11434");
    }
  });

  test("a model that is not pulled, only in Ollama's wording", () => {
    const { embed, chat } = both(responseError(404, "model 'nomic-embed-text' not found, try pulling it first"));
    expect(embed.kind).toBe("model-missing");
    expect(embed.message).toBe("embedding model 'nomic-embed-text' is not pulled (run 'ollama pull nomic-embed-text')");
    expect(chat.message).toBe("model 'nomic-embed-text' not found (run 'ollama pull nomic-embed-text')");
    // Another program on the port answers 404 too; that is not a missing model.
    const other = ollamaError(responseError(404, "404 page not found"), call);
    expect(other.kind).toBe("http");
    expect(other.message).toBe("Ollama error 404: 404 page not found");
  });

  test("any other HTTP error, on one line and clipped", () => {
    const { embed, chat } = both(responseError(500, "boom\n  at the loader\n"));
    expect(embed.kind).toBe("http");
    expect(embed.message).toBe("Ollama error 500: boom at the loader");
    expect(chat.message).toBe("HTTP 500: boom");
    const long = both(responseError(502, "x".repeat(1_000)));
    expect(long.embed.message).toBe(`Ollama error 502: ${"x".repeat(199)}…`);
    expect(long.chat.message).toHaveLength(200);
    expect(long.chat.message).toEndWith("x…");
  });

  test("anything else is an unusable answer", () => {
    const { embed, chat } = both(new SyntaxError("JSON Parse error:\tUnexpected identifier \"oops\""));
    expect(embed.kind).toBe("bad-response");
    expect(embed.message).toBe(`Ollama at http://127.0.0.1:11434 gave an unusable answer: JSON Parse error: Unexpected identifier "oops"`);
    expect(chat.message).toBe(`JSON Parse error:\tUnexpected identifier "oops"`);
    expect(ollamaError("a thrown string", call).message).toEndWith("gave an unusable answer: a thrown string");
  });

  test("an error already classified passes through untouched; every one is a MemsearchError", () => {
    const dim = dimensionError(384, 768);
    expect(ollamaError(dim, call)).toBe(dim);
    expect(ollamaError(dim, call, "chat")).toBe(dim);
    expect(dim).toBeInstanceOf(MemsearchError);
    expect(dim.kind).toBe("dimension");
    expect(dim.message).toBe("Ollama returned 384-d vectors but the index holds 768-d vectors (embedding model changed? rebuild with 'memsearch index --force')");
    expect(ollamaError(new Error("x"), call)).toBeInstanceOf(MemsearchError);
  });
});

describe("ollamaClient against a server", () => {
  let server: ReturnType<typeof Bun.serve>;
  let host: string;

  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      async fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === "/text/api/tags") return new Response("upstream exploded", { status: 502, headers: { "content-type": "text/plain" } });
        if (path === "/bad-json/api/tags") return new Response("{not json", { status: 500, headers: { "content-type": "application/json" } });
        if (path === "/empty/api/tags") return new Response("", { status: 503, statusText: "Service Unavailable" });
        if (path === "/json/api/tags") return Response.json({ error: "model 'm' not found" }, { status: 404 });
        if (path === "/slow/api/tags") await Bun.sleep(1_000);
        return Response.json({ models: [] });
      },
    });
    host = `http://127.0.0.1:${server.port}`;
  });

  afterAll(() => server.stop(true));

  async function thrown(p: Promise<unknown>): Promise<unknown> {
    try {
      await p;
    } catch (e) {
      return e;
    }
    throw new Error("expected the call to fail");
  }

  test("error bodies of any shape reach the caller as the client's message, and nothing is logged", async () => {
    const log = spyOn(console, "log");
    try {
      const cases: [string, number, string][] = [
        ["text", 502, "upstream exploded"],
        ["bad-json", 500, "Error 500: Internal Server Error"],
        ["empty", 503, "Error 503: Service Unavailable"],
        ["json", 404, "model 'm' not found"],
      ];
      for (const [path, status, message] of cases) {
        const e = (await thrown(ollamaClient(`${host}/${path}`, 2_000).list())) as { name: string; status_code: number; message: string };
        expect({ name: e.name, status: e.status_code, message: e.message }).toEqual({ name: "ResponseError", status, message });
      }
      expect(log).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
  });

  test("a success passes through", async () => {
    expect(await ollamaClient(host, 2_000).list()).toEqual({ models: [] });
  });

  test("every request gives up after the timeout it was made with", async () => {
    const t0 = performance.now();
    const e = ollamaError(await thrown(ollamaClient(`${host}/slow`, 100).list()), { ...call, host, timeoutMs: 100 });
    expect(performance.now() - t0).toBeLessThan(900);
    expect(e.kind).toBe("timeout");
    expect(e.message).toBe(`Ollama did not answer within 0.1s at ${host}`);
  });

  test("a closed port is 'down'", async () => {
    const e = ollamaError(await thrown(ollamaClient("http://127.0.0.1:9", 2_000).list()), call);
    expect(e.kind).toBe("down");
  });
});

describe("ollamaTimeoutMs", () => {
  const defaults = Object.fromEntries(Object.entries(CONFIG_KEYS).map(([k, v]) => [k, v.default])) as unknown as Config;

  test("each purpose reads its own key", () => {
    const config = { ...defaults, "embedding.timeout_ms": 11, "embedding.query_timeout_ms": 22, "summarizer.timeout_ms": 33 };
    expect(ollamaTimeoutMs(config, "index")).toBe(11);
    expect(ollamaTimeoutMs(config, "query")).toBe(22);
    expect(ollamaTimeoutMs(config, "summary")).toBe(33);
  });

  test("the session-start probe stays under a second whatever is configured", () => {
    expect(ollamaTimeoutMs({ ...defaults, "embedding.query_timeout_ms": 60_000 }, "session-start")).toBeLessThan(1_000);
  });
});
