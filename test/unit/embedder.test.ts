import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Ollama } from "ollama";
import {
  EmbedderError,
  modelBaseName,
  modelPrefixes,
  OllamaEmbedder,
} from "../../src/index/embedder.ts";
import { resolveOllamaHost } from "../../src/core/ollama-client.ts";
import { MemsearchError } from "../../src/core/errors.ts";
import { fakeEmbedding, startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";

let double: OllamaDouble;
let tmp: string;

beforeAll(async () => {
  double = await startOllamaDouble();
  tmp = mkdtempSync(join(tmpdir(), "memsearch-embedder-"));
});

afterAll(async () => {
  await double.stop();
  rmSync(tmp, { recursive: true, force: true });
});

afterEach(() => {
  double.setMode("ok");
  double.requests.length = 0;
});

function embedder(extra: Partial<ConstructorParameters<typeof OllamaEmbedder>[0]> = {}): OllamaEmbedder {
  return new OllamaEmbedder({ host: double.host, model: "nomic-embed-text", timeoutMs: 5000, ...extra });
}

async function failure(p: Promise<unknown>): Promise<EmbedderError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(EmbedderError);
    expect(err).toBeInstanceOf(MemsearchError);
    return err as EmbedderError;
  }
  throw new Error("expected the call to fail");
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot; // both sides are unit vectors
}

function embedInputs(d: OllamaDouble): string[][] {
  return d.requests.filter((r) => r.path === "/api/embed").map((r) => r.body.input);
}

describe("embedding round trip", () => {
  test("documents and queries carry the nomic prefixes and come back as Float32Array", async () => {
    const e = embedder();
    const [doc] = await e.embedDocuments(["the cat sat"]);
    const query = await e.embedQuery("where did the cat sit");
    expect(embedInputs(double)).toEqual([["search_document: the cat sat"], ["search_query: where did the cat sit"]]);
    expect(doc).toBeInstanceOf(Float32Array);
    expect(doc!.length).toBe(768);
    expect(query.length).toBe(768);
    expect(e.dim).toBe(768);
    expect(double.requests[0]!.body.model).toBe("nomic-embed-text");
  });

  test("batches by batchSize and keeps order", async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `note number ${i} about topic ${i * 7}`);
    const vectors = await embedder({ batchSize: 3 }).embedDocuments(texts);
    expect(embedInputs(double).map((b) => b.length)).toEqual([3, 3, 3, 1]);
    expect(vectors).toHaveLength(10);
    vectors.forEach((v, i) => {
      const want = fakeEmbedding(texts[i]!, 768);
      expect(cosine(v, want)).toBeCloseTo(1, 5);
    });
  });

  test("an empty list makes no request", async () => {
    expect(await embedder().embedDocuments([])).toEqual([]);
    expect(double.requests).toHaveLength(0);
  });

  test("a model without prefixes sends the text untouched", async () => {
    const d = await startOllamaDouble({ models: ["all-minilm:l6-v2"], dim: 384 });
    try {
      const e = new OllamaEmbedder({ host: d.host, model: "all-minilm:l6-v2" });
      await e.embedDocuments(["plain text"]);
      await e.embedQuery("plain query");
      expect(embedInputs(d)).toEqual([["plain text"], ["plain query"]]);
      expect(e.dim).toBe(384);
    } finally {
      await d.stop();
    }
  });
});

describe("probe", () => {
  test("reads the dimension from show without embedding", async () => {
    const d = await startOllamaDouble({ dim: 384 });
    try {
      const e = new OllamaEmbedder({ host: d.host, model: "nomic-embed-text" });
      expect(await e.probe()).toEqual({ ok: true, dim: 384 });
      expect(d.requests.map((r) => r.path)).toEqual(["/api/show"]);
      expect(e.dim).toBe(384);
    } finally {
      await d.stop();
    }
  });

  test("reports a missing model as data, not a throw", async () => {
    const result = await embedder({ model: "mxbai-embed-large" }).probe();
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason.kind).toBe("model-missing");
    expect(result.reason.message).toContain("ollama pull mxbai-embed-large");
  });

  test("reports a dimension other than the index's", async () => {
    const result = await embedder({ expectDim: 1024 }).probe();
    expect(result).toMatchObject({ ok: false, reason: { kind: "dimension" } });
  });
});

describe("failures", () => {
  test("model not pulled → model-missing naming 'ollama pull'", async () => {
    const err = await failure(embedder({ model: "qwen3-embedding:0.6b" }).embedDocuments(["x"]));
    expect(err.kind).toBe("model-missing");
    expect(err.message).toBe("embedding model 'qwen3-embedding:0.6b' is not pulled (run 'ollama pull qwen3-embedding:0.6b')");
  });

  test("server down → down naming 'ollama serve' and the host", async () => {
    const gone = await startOllamaDouble();
    await gone.stop();
    const e = new OllamaEmbedder({ host: gone.host, model: "nomic-embed-text" });
    const err = await failure(e.embedQuery("hello"));
    expect(err.kind).toBe("down");
    expect(err.message).toBe(`Ollama is not reachable at ${gone.host} (start it with 'ollama serve')`);
    expect(await e.probe()).toMatchObject({ ok: false, reason: { kind: "down" } });
  });

  test("slow server → timeout, per call or from the constructor", async () => {
    const slow = await startOllamaDouble({ mode: "slow", delayMs: 400 });
    try {
      const e = new OllamaEmbedder({ host: slow.host, model: "nomic-embed-text", timeoutMs: 100 });
      const err = await failure(e.embedDocuments(["x"]));
      expect(err.kind).toBe("timeout");
      expect(err.message).toBe(`Ollama did not answer within 0.1s at ${slow.host}`);
      const patient = new OllamaEmbedder({ host: slow.host, model: "nomic-embed-text", timeoutMs: 30_000 });
      expect((await failure(patient.embedQuery("x", 50))).kind).toBe("timeout");
      expect((await patient.embedQuery("x")).length).toBe(768);
    } finally {
      await slow.stop();
    }
  });

  test("HTTP 500 → http with the server's text", async () => {
    double.setMode("http-500");
    const err = await failure(embedder().embedDocuments(["x"]));
    expect(err.kind).toBe("http");
    expect(err.message).toBe("Ollama error 500: boom");
  });

  test("wrong dimension with expectDim → dimension", async () => {
    double.setMode("wrong-dim");
    const err = await failure(embedder({ expectDim: 768 }).embedDocuments(["x"]));
    expect(err.kind).toBe("dimension");
    expect(err.message).toStartWith("Ollama returned 384-d vectors but the index holds 768-d");
  });

  test("a dimension change between calls is refused", async () => {
    const e = embedder();
    await e.embedQuery("first");
    double.setMode("wrong-dim");
    expect((await failure(e.embedQuery("second"))).kind).toBe("bad-response");
  });

  test("malformed vectors and short replies → bad-response", async () => {
    let reply: unknown = { embeddings: [[0.1, null]] };
    const fake = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json(reply) });
    try {
      const e = new OllamaEmbedder({ host: `http://127.0.0.1:${fake.port}`, model: "m" });
      expect((await failure(e.embedQuery("x"))).kind).toBe("bad-response");
      reply = { embeddings: [[0.1, 0.2]] };
      expect((await failure(e.embedDocuments(["a", "b"]))).kind).toBe("bad-response");
      reply = { embeddings: [[]] };
      expect((await failure(e.embedQuery("x"))).kind).toBe("bad-response");
    } finally {
      await fake.stop(true);
    }
  });
});

describe("stdout stays clean", () => {
  test("a non-JSON error body does not reach console.log or process.stdout", async () => {
    double.setMode("non-json-error");
    const logged: unknown[][] = [];
    let written = "";
    const originalLog = console.log;
    const originalWrite = process.stdout.write;
    const spy = (...args: unknown[]) => void logged.push(args);
    console.log = spy;
    process.stdout.write = ((chunk: unknown) => {
      written += String(chunk);
      return true;
    }) as typeof process.stdout.write;
    let err: EmbedderError;
    try {
      // Two overlapping calls: the guard must still restore the original at the end.
      const e = embedder();
      const [a, b] = await Promise.allSettled([e.embedQuery("a"), e.embedDocuments(["b"])]);
      expect(b.status).toBe("rejected");
      err = (a as PromiseRejectedResult).reason;
    } finally {
      process.stdout.write = originalWrite;
      expect(console.log).toBe(spy);
      console.log = originalLog;
    }
    expect(err.kind).toBe("http");
    expect(err.message).toBe("Ollama error 500: upstream exploded");
    expect(logged).toEqual([]);
    expect(written).toBe("");
  });

  test("a real process writes nothing to stdout on a non-JSON error", async () => {
    // Bun's console.log bypasses process.stdout.write, so only a child process proves fd 1 is clean.
    double.setMode("non-json-error");
    const script = join(tmp, "child.ts");
    const embedderPath = resolve(import.meta.dir, "../../src/index/embedder.ts");
    writeFileSync(
      script,
      `import { OllamaEmbedder } from ${JSON.stringify(embedderPath)};
const e = new OllamaEmbedder({ host: ${JSON.stringify(double.host)}, model: "nomic-embed-text" });
try { await e.embedQuery("x"); } catch (err) { console.error("kind=" + err.kind); }`,
    );
    const child = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "pipe", cwd: tmp });
    const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
    await child.exited;
    expect(stderr).toContain("kind=http");
    // The client's own console.log on a non-JSON body is never reached, not merely redirected.
    expect(stderr).not.toContain("Getting text from response");
    expect(stdout).toBe("");
  });
});

describe("resolveOllamaHost", () => {
  const cases: [string, string][] = [
    ["", "http://127.0.0.1:11434"],
    [":11434", "http://127.0.0.1:11434"],
    [":8080", "http://127.0.0.1:8080"],
    ["localhost", "http://localhost:11434"],
    ["gpu-box:9999", "http://gpu-box:9999"],
    ["gpu-box:80", "http://gpu-box:80"],
    ["0.0.0.0", "http://127.0.0.1:11434"],
    ["0.0.0.0:5000", "http://127.0.0.1:5000"],
    ["http://example.com", "http://example.com:80"],
    ["https://example.com", "https://example.com:443"],
    ["https://example.com:8443/ollama/", "https://example.com:8443/ollama"],
    ["HTTP://Example.COM:11434/", "http://example.com:11434"],
    ["[::]:11434", "http://[::1]:11434"],
    ["[::1]", "http://[::1]:11434"],
    ["::1", "http://[::1]:11434"],
    ['"127.0.0.1:11435"', "http://127.0.0.1:11435"],
  ];
  for (const [input, want] of cases) {
    test(`config '${input}' → ${want}`, () => {
      expect(resolveOllamaHost(input, {})).toBe(want);
    });
  }

  test("config wins over OLLAMA_HOST, which wins over the default", () => {
    expect(resolveOllamaHost("a:1", { OLLAMA_HOST: "b:2" })).toBe("http://a:1");
    expect(resolveOllamaHost("  ", { OLLAMA_HOST: "0.0.0.0" })).toBe("http://127.0.0.1:11434");
    expect(resolveOllamaHost("", { OLLAMA_HOST: "https://remote" })).toBe("https://remote:443");
    expect(resolveOllamaHost("", {})).toBe("http://127.0.0.1:11434");
  });

  test("garbage is a ConfigError naming its source", () => {
    expect(() => resolveOllamaHost("ftp://x", {})).toThrow(/embedding\.host/);
    expect(() => resolveOllamaHost("", { OLLAMA_HOST: "host:99999" })).toThrow(/OLLAMA_HOST/);
    expect(() => resolveOllamaHost("host:abc", {})).toThrow(/not an Ollama host/);
  });

  test("the resolved host is one the ollama client accepts unchanged", () => {
    for (const [, want] of cases) {
      const client = new Ollama({ host: want }) as unknown as { config: { host: string } };
      expect(client.config.host).toBe(want);
    }
  });
});

describe("modelPrefixes", () => {
  test("per model card, matched by base name", () => {
    const nomic = modelPrefixes("registry.ollama.ai/library/nomic-embed-text:v1.5");
    expect(nomic.document("x")).toBe("search_document: x");
    expect(nomic.query("x")).toBe("search_query: x");
    const mxbai = modelPrefixes("mxbai-embed-large:latest");
    expect(mxbai.document("x")).toBe("x");
    expect(mxbai.query("x")).toBe("Represent this sentence for searching relevant passages: x");
    const gemma = modelPrefixes("embeddinggemma:300m");
    expect(gemma.document("x")).toBe("title: none | text: x");
    expect(gemma.query("x")).toBe("task: search result | query: x");
    for (const m of ["bge-m3", "all-minilm:l6-v2", "qwen3-embedding:0.6b", "my-nomic-embed-text"]) {
      expect(modelPrefixes(m).document("x")).toBe("x");
      expect(modelPrefixes(m).query("x")).toBe("x");
    }
  });

  test("base names", () => {
    expect(modelBaseName("Nomic-Embed-Text:Latest")).toBe("nomic-embed-text");
    expect(modelBaseName("localhost:5000/team/bge-m3:q8")).toBe("bge-m3");
  });
});

describe("fakeEmbedding", () => {
  test("is deterministic, unit length and never zero", () => {
    const a = fakeEmbedding("Hello world", 768);
    expect(fakeEmbedding("Hello world", 768)).toEqual(a);
    expect(a).toHaveLength(768);
    expect(cosine(a, a)).toBeCloseTo(1, 10);
    const empty = fakeEmbedding("", 64);
    expect(empty.every((x) => Number.isFinite(x))).toBe(true);
    expect(cosine(empty, empty)).toBeCloseTo(1, 10);
  });

  test("shared words score higher than unrelated text; prefixes and case do not matter", () => {
    const q = fakeEmbedding("search_query: orama vector index persistence", 768);
    const related = fakeEmbedding("search_document: The Orama index stores each vector", 768);
    const unrelated = fakeEmbedding("search_document: lunch was a sandwich with pickles", 768);
    expect(cosine(q, related)).toBeGreaterThan(cosine(q, unrelated) + 0.3);
    expect(fakeEmbedding("search_query: Cat", 128)).toEqual(fakeEmbedding("cat", 128));
    expect(fakeEmbedding("Represent this sentence for searching relevant passages: cat", 128)).toEqual(
      fakeEmbedding("cat", 128),
    );
  });

  test("is fast enough for the benchmark", () => {
    const t0 = performance.now();
    for (let i = 0; i < 5000; i++) fakeEmbedding(`chunk ${i} about the memory index and hooks ${i % 13}`, 768);
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});

describe("the double", () => {
  test("answers tags, chat and generate as Ollama does", async () => {
    const d = await startOllamaDouble({ chatReply: "- noted", models: ["nomic-embed-text", "llama3.2:1b"] });
    try {
      const client = new Ollama({ host: d.host });
      const tags = await client.list();
      expect(tags.models.map((m) => m.name)).toEqual(["nomic-embed-text:latest", "llama3.2:1b"]);
      expect(tags.models[0]!.details.family).toBe("nomic-bert");
      const chat = await client.chat({ model: "llama3.2:1b", messages: [{ role: "user", content: "hi" }], stream: false });
      expect(chat.message).toEqual({ role: "assistant", content: "- noted" });
      expect(chat.done).toBe(true);
      const gen = await client.generate({ model: "llama3.2:1b", prompt: "hi", stream: false });
      expect(gen.response).toBe("- noted");
    } finally {
      await d.stop();
    }
  });

  test("runs standalone and prints its host", async () => {
    const probe = await startOllamaDouble();
    const port = probe.port;
    await probe.stop();
    const script = resolve(import.meta.dir, "../helpers/ollama-double.ts");
    const child = Bun.spawn([process.execPath, script, "--port", String(port), "--dim", "32"], { stdout: "pipe" });
    try {
      const reader = child.stdout.getReader();
      const { value } = await reader.read();
      const host = new TextDecoder().decode(value).trim();
      expect(host).toBe(`http://127.0.0.1:${port}`);
      const res = await new Ollama({ host }).embed({ model: "nomic-embed-text", input: "x" });
      expect(res.embeddings[0]).toHaveLength(32);
    } finally {
      child.kill();
      await child.exited;
    }
  });
});
