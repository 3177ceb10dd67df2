import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";
import { indexedProject, run, sampleSnapshot, tempProject } from "../helpers/cli.ts";
import pkg from "../../package.json" with { type: "json" };

describe("memsearch binary, no Ollama (BM25 path)", () => {
  test("--version prints the package version from any directory", async () => {
    const r = await run(["--version"], { cwd: "/", env: tempProject().env });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`memsearch, version ${pkg.version}`);
  });

  test("index works on BM25 alone and says once how to get vectors", async () => {
    const r = await tempProject().ms(["index"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("Indexed 6 chunks.");
    expect(r.stderr.match(/ollama serve/g)?.length).toBe(1);
  });

  test("search finds by keyword, says vectors did not take part, JSON stays valid", async () => {
    const p = await indexedProject();
    const t = await p.ms(["search", "redis connection pool"]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain("BM25 only");
    expect(t.stdout).toContain("--- Result 1 (score:");
    expect(t.stdout).toContain("redis.ts");
    const j = await p.ms(["search", "fly.io deploy health checks", "--json-output", "-k", "2"]);
    const results = JSON.parse(j.stdout);
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(2);
    expect(results[0].content).toContain("health checks");
    expect(results[0].mode).toBe("bm25");
    expect(Object.keys(results[0])).toEqual(expect.arrayContaining(["content", "source", "heading", "chunk_hash", "heading_level", "start_line", "end_line", "score"]));
  });

  test("CJK memories are searchable by keyword", async () => {
    const p = await indexedProject();
    const j = JSON.parse((await p.ms(["search", "翻译", "-j"])).stdout);
    expect(j[0].content).toContain("翻译");
  });

  test("expand returns the chunk's own section with the parsed anchor", async () => {
    const p = await indexedProject();
    const [hit] = JSON.parse((await p.ms(["search", "document the cache decision", "-j", "-k", "1"])).stdout);
    const x = await p.ms(["expand", hit.chunk_hash, "--json-output"]);
    expect(x.code).toBe(0);
    const e = JSON.parse(x.stdout);
    expect(e.content.startsWith("### 09:47")).toBe(true);
    expect(e.content).not.toContain("### 09:12"); // not the previous sibling
    expect(e.content).not.toContain("## Session 14:30");
    expect(e.anchor).toEqual({ session: "7f3c2a10-5b1e-4c8e-9a61-2d4f8e0b7c11", turn: "0a1b2c3d-2222-4e5f-8a9b-0c1d2e3f4a5b", transcript: "/home/dev/.claude/projects/-home-dev-shop/7f3c2a10-5b1e-4c8e-9a61-2d4f8e0b7c11.jsonl" });
    const txt = await p.ms(["expand", hit.chunk_hash.slice(0, 8)]);
    expect(txt.stdout).toContain("[Session: 7f3c2a10-5b1e-4c8e-9a61-2d4f8e0b7c11  Turn: 0a1b2c3d-2222-4e5f-8a9b-0c1d2e3f4a5b]");
    const ctx = JSON.parse((await p.ms(["expand", hit.chunk_hash, "--lines", "1", "-j"])).stdout);
    expect(ctx.start_line).toBe(e.start_line - 1);
  });

  test("expand fails clearly on an unknown hash", async () => {
    const p = await indexedProject();
    const r = await p.ms(["expand", "0123456789abcdef"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("Error: Chunk not found: 0123456789abcdef");
    expect(r.stdout).toBe("");
  });

  test("stats reads the index header", async () => {
    const p = await indexedProject();
    const r = await p.ms(["stats"]);
    expect(r.stdout).toContain("Total indexed chunks: 6");
    expect(JSON.parse((await p.ms(["stats", "-j"])).stdout).files).toBe(2);
  });

  test("re-index is incremental; edits, deletions and renames are followed", async () => {
    const p = await indexedProject();
    expect((await p.ms(["index"])).stdout.trim()).toBe("Indexed 0 chunks.");
    writeFileSync(join(p.memory, "2026-11-22.md"), "# 2026-11-22\n\n### 08:00\n- Migrated the queue to NATS JetStream.\n");
    expect((await p.ms(["index"])).stdout.trim()).toBe("Indexed 1 chunks.");
    renameSync(join(p.memory, "2026-11-22.md"), join(p.memory, "notes-nats.md"));
    await p.ms(["index"]);
    const hits = JSON.parse((await p.ms(["search", "jetstream", "-j"])).stdout);
    expect(hits.map((h: { source: string }) => h.source)).toEqual([join(p.memory, "notes-nats.md")]);
    rmSync(join(p.memory, "notes-nats.md"));
    await p.ms(["index"]);
    expect(JSON.parse((await p.ms(["search", "jetstream", "-j"])).stdout)).toEqual([]);
    expect((await p.ms(["stats"])).stdout).toContain("Total indexed chunks: 6");
  });

  test("expand on a deleted source file fails clearly", async () => {
    const p = await indexedProject();
    const [hit] = JSON.parse((await p.ms(["search", "flaky orders spec", "-j", "-k", "1"])).stdout);
    rmSync(hit.source);
    const r = await p.ms(["expand", hit.chunk_hash]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Source file not found: ${hit.source}`);
  });

  test("a corrupt index is rebuilt from the markdown by the first command that meets it, with one notice", async () => {
    const p = await indexedProject();
    writeFileSync(join(p.root, ".memsearch", "index", "index.bin"), "not an index at all");
    const s = await p.ms(["search", "redis", "-j"]);
    expect(s.code).toBe(0);
    expect(JSON.parse(s.stdout)[0].content).toContain("Redis");
    expect(s.stderr.trim()).toMatch(/^memsearch: the index was unreadable \(not a memsearch index\); rebuilt it from the markdown \(6 chunks[;)]/);
    writeFileSync(join(p.root, ".memsearch", "index", "index.bin"), "not an index at all");
    const r = await p.ms(["index"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("memsearch: the index was unreadable (not a memsearch index); rebuilt it from the markdown (6 chunks)");
    expect(r.stdout.trim()).toBe("Indexed 6 chunks.");
  });

  test("a project with no memory yet indexes nothing, without an error", async () => {
    const r = await tempProject({ notes: "none" }).ms(["index"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("Indexed 0 chunks.");
    expect(r.stderr).toContain("no memory yet");
  });

  test("bad input: clear one-line errors and exit codes", async () => {
    const p = await indexedProject();
    const missing = await p.ms(["index", "nope/dir"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("path not found");
    const flag = await p.ms(["search", "x", "--top-k", "zero"]);
    expect(flag.code).not.toBe(0);
    const unknown = await p.ms(["frobnicate"]);
    expect(unknown.code).toBe(2);
    const noYes = await p.ms(["reset"]);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain("--yes");
  });

  test("a few bytes that are not UTF-8 cost only themselves: the file is indexed, one line names it, nothing crashes", async () => {
    const p = await indexedProject();
    writeFileSync(join(p.memory, "bad.md"), Buffer.concat([Buffer.from("# Bad bytes\n\nlatin1 caf"), Buffer.from([0xe9, 0xff, 0xfe]), Buffer.from(" kombucha notes\n")]));
    const r = await p.ms(["index"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`memsearch: cleaned ${join(p.memory, "bad.md")}: 1 section held control characters or bytes that are not UTF-8 (indexed without them)\n`);
    const hits = JSON.parse((await p.ms(["search", "kombucha", "-j"])).stdout);
    expect(hits.length).toBe(1);
    expect(hits[0].content).toContain("caf\ufffd\ufffd\ufffd kombucha notes");
  });

  test("an unwritable index location fails with exit 1 and leaves the old index and markdown", async () => {
    const p = await indexedProject();
    const before = sampleSnapshot(p.memory);
    const idx = join(p.root, ".memsearch", "index");
    rmSync(idx, { recursive: true });
    writeFileSync(idx, "a file where the index folder should be");
    writeFileSync(join(p.memory, "new.md"), "# New\n\nsomething to index\n");
    const r = await p.ms(["index"]);
    expect(r.code).toBe(1);
    expect(r.stderr.split("\n").filter(Boolean).at(-1)).toMatch(/^Error: .*index/);
    expect(readFileSync(idx, "utf8")).toBe("a file where the index folder should be");
    expect(sampleSnapshot(p.memory)).toBe(before);
  });

  test("reset --yes drops the index and keeps the markdown", async () => {
    const p = await indexedProject();
    const before = sampleSnapshot(p.memory);
    const r = await p.ms(["reset", "--yes"]);
    expect(r.code).toBe(0);
    expect((await p.ms(["stats"])).stdout).toContain("Total indexed chunks: 0");
    expect(sampleSnapshot(p.memory)).toBe(before);
  });
});

describe("memsearch binary with the Ollama test double (hybrid path)", () => {
  // One double per test: each reads the double's request log as its own.
  let ollama: OllamaDouble;
  beforeEach(async () => {
    ollama = await startOllamaDouble({ dim: 768 });
  });
  afterEach(() => ollama.stop());
  const hybridProject = () => tempProject({ env: { OLLAMA_HOST: ollama.host } });
  const indexedHybridProject = () => indexedProject({ env: { OLLAMA_HOST: ollama.host } });

  test("index embeds every chunk with the nomic document prefix", async () => {
    const p = hybridProject();
    const r = await p.ms(["index"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const embeds = ollama.requests.filter((q) => q.path === "/api/embed");
    const inputs = embeds.flatMap((q) => q.body.input);
    expect(inputs.length).toBe(6);
    expect(inputs.every((s: string) => s.startsWith("search_document: "))).toBe(true);
    expect(JSON.parse((await p.ms(["stats", "-j"])).stdout)).toMatchObject({ total_chunks: 6, vectors: 6, dimension: 768 });
  });

  test("search is hybrid and reports vector scores", async () => {
    const p = await indexedHybridProject();
    const j = JSON.parse((await p.ms(["search", "why do checkout requests time out", "-j"])).stdout);
    expect(j[0].mode).toBe("hybrid");
    expect(j[0].content).toContain("time out");
    expect(j[0].vector_score).toBeGreaterThan(0);
    const last = ollama.requests.at(-1)!;
    expect(last.body.input[0] ?? last.body.input).toMatch(/^search_query: /);
    expect((await p.ms(["search", "redis"])).stdout).toContain("hybrid (BM25 + nomic-embed-text vectors)");
  });

  test("an unchanged chunk is never re-embedded", async () => {
    const p = await indexedHybridProject();
    const n = ollama.requests.length;
    expect((await p.ms(["index"])).stdout.trim()).toBe("Indexed 0 chunks.");
    writeFileSync(join(p.memory, "2026-11-20.md"), readFileSync(join(p.memory, "2026-11-20.md"), "utf8") + "\n### 18:00\n- Added a canary deploy stage.\n");
    await p.ms(["index"]);
    const newInputs = ollama.requests.slice(n).filter((q) => q.path === "/api/embed").flatMap((q) => q.body.input);
    expect(newInputs.length).toBe(1);
    expect(newInputs[0]).toContain("canary");
  });

  test("Ollama down at search time: BM25 results, one warning, valid JSON", async () => {
    const p = await indexedHybridProject();
    const r = await p.ms(["search", "redis pool", "-j"], { OLLAMA_HOST: "http://127.0.0.1:9" });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j[0].mode).toBe("bm25");
    expect(r.stderr.match(/ollama serve/g)?.length).toBe(1);
  });

  test("chunks indexed while Ollama was down get vectors on the next run", async () => {
    const p = await indexedHybridProject();
    writeFileSync(join(p.memory, "later.md"), "# Later\n\n### 09:00\n- Switched the ORM from Prisma to Drizzle.\n");
    const down = await p.ms(["index"], { OLLAMA_HOST: "http://127.0.0.1:9" });
    expect(down.code).toBe(0);
    expect(down.stderr).toContain("keyword search only");
    const up = await p.ms(["index"]);
    expect(up.stderr).toBe("");
    const s = JSON.parse((await p.ms(["stats", "-j"])).stdout);
    expect(s.total_chunks).toBe(7);
    expect(s.vectors).toBe(s.total_chunks);
  });

  test("model not pulled: BM25 fallback naming 'ollama pull'", async () => {
    const p = await indexedHybridProject();
    const r = await p.ms(["search", "redis", "-m", "mxbai-embed-large"]);
    expect(r.code).toBe(0);
    const i = await p.ms(["index", "-m", "mxbai-embed-large"]);
    expect(i.code).toBe(0);
    expect(i.stderr).toContain("ollama pull mxbai-embed-large");
    expect(i.stderr).toContain("embedding model 'nomic-embed-text'"); // rebuilt for the other model, never mixed
  });

  test("another vector dimension for the same model rebuilds instead of mixing", async () => {
    const p = await indexedHybridProject();
    const other = await startOllamaDouble({ dim: 384 });
    try {
      writeFileSync(join(p.memory, "dim.md"), "# Dim\n\nnotes written after the model was re-pulled\n");
      const r = await p.ms(["index"], { OLLAMA_HOST: other.host });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("384-d");
      expect(JSON.parse((await p.ms(["stats", "-j"], { OLLAMA_HOST: other.host })).stdout).dimension).toBe(384);
    } finally {
      await other.stop();
    }
  });

  test("an Ollama returning vectors of the wrong dimension is refused with a clear message", async () => {
    const p = await indexedHybridProject();
    const before = readFileSync(join(p.memory, "2026-11-21.md"), "utf8");
    const bad = await startOllamaDouble({ dim: 768, mode: "wrong-dim" });
    try {
      writeFileSync(join(p.memory, "x.md"), "# X\n\nnew text for the broken server\n");
      const r = await p.ms(["index"], { OLLAMA_HOST: bad.host });
      expect(r.stderr).toMatch(/384|dimension|-d vectors/);
      const s = await p.ms(["search", "broken server", "-j"], { OLLAMA_HOST: bad.host });
      expect(s.code).toBe(0);
      expect(JSON.parse(s.stdout)[0].mode).toBe("bm25");
      expect(readFileSync(join(p.memory, "2026-11-21.md"), "utf8")).toBe(before);
    } finally {
      await bad.stop();
    }
  });
});
