import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { INDEX_FILE, sealHead } from "../../src/index/format.ts";
import { checkIndex } from "../../src/index/disk.ts";
import { BIN, REPO, run, tempProject } from "../helpers/cli.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";

/**
 * Issue 9: a broken index heals itself. Whatever command meets an index it cannot use rebuilds
 * it from the markdown, answers as if nothing had happened, and says so in exactly one line.
 */

type Project = ReturnType<typeof tempProject>;
const ms = (p: Project, args: string[], extra: Record<string, string | undefined> = {}, stdin?: string) => run(args, { cwd: p.root, env: { ...p.env, ...extra }, stdin });
const indexDir = (p: Project) => join(p.root, ".memsearch", "index");
const indexFile = (p: Project) => join(indexDir(p), INDEX_FILE);
const rebuiltLines = (stderr: string) => stderr.split("\n").filter((l) => l.includes("rebuilt it from the markdown"));

/** The file is a current, whole, checksum-clean index holding `chunks` chunks. */
function expectHealthy(p: Project, chunks: number): void {
  const check = checkIndex(indexDir(p));
  expect(check.state).toBe("ok");
  if (check.state === "ok") expect(check.file.chunks).toBe(chunks);
}

/** Rewrite the head JSON in place (same reserved length), sealed again: a whole header that says something else. */
function patchHead(file: string, edit: (head: Record<string, any>) => void): void {
  const bytes = readFileSync(file);
  const len = bytes.readUInt32LE(16);
  const head = JSON.parse(bytes.subarray(20, 20 + len).toString());
  edit(head);
  const text = Buffer.from(sealHead(head).padEnd(len, " "));
  if (text.length !== len) throw new Error("patched head does not fit");
  text.copy(bytes, 20);
  writeFileSync(file, bytes);
}

const DAMAGES: { name: string; damage: (file: string) => void; reason: RegExp }[] = [
  { name: "truncated", damage: (f) => truncateSync(f, statSync(f).size - 100), reason: /the index was unreadable \(truncated/ },
  {
    name: "bytes flipped in the middle",
    damage: (f) => {
      const b = readFileSync(f);
      const mid = Math.floor(b.length / 2);
      for (let i = mid; i < mid + 16; i++) b[i] = b[i]! ^ 0xff;
      writeFileSync(f, b);
    },
    reason: /the index was unreadable \(checksum mismatch/,
  },
  { name: "garbage", damage: (f) => writeFileSync(f, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))), reason: /the index was unreadable \(not a memsearch index\)/ },
  {
    name: "a directory in place of index.bin",
    damage: (f) => {
      rmSync(f);
      mkdirSync(join(f, "inside"), { recursive: true });
      writeFileSync(join(f, "inside", "x"), "x");
    },
    reason: /the index was unreadable \(index\.bin is a directory\)/,
  },
  { name: "an older format version", damage: (f) => patchHead(f, (h) => (h.meta.schemaVersion = 5)), reason: /the index was in an older format \(v5, now v\d+\)/ },
  {
    name: "a header promising more than the file holds",
    damage: (f) =>
      patchHead(f, (h) => {
        h.sections[h.sections.length - 1] += 4096;
        h.jsonBytes += 4096;
        h.fileBytes += 4096;
      }),
    reason: /the index was unreadable \(truncated: \d+ of \d+ bytes\)/,
  },
  {
    // Saved empty by a release before the fix: its state lacked the per-property BM25 maps.
    name: "an empty index saved by an older release",
    damage: (f) => copyFileSync(join(REPO, "test", "fixtures", "index", "v5-saved-empty.bin"), f),
    reason: /the index was in an older format \(v5, now v\d+\)/,
  },
  {
    // Written by the last release before stemming: its tokens are the words as written, stop words left out.
    name: "an index written before stemming",
    damage: (f) => copyFileSync(V7_INDEX, f),
    reason: /the index was in an older format \(v7, now v\d+\)/,
  },
];

/** The sample memory indexed by the release before stemming (format v7), keyword only. */
const V7_INDEX = join(REPO, "test", "fixtures", "index", "v7-sample-bm25.bin");
const V10_INDEX = join(REPO, "test", "fixtures", "index", "v10-sample-768.bin");

/** A project with the sample memory (6 chunks) and a healthy index, keyword search only (Ollama is a closed port). */
async function indexedProject(): Promise<Project> {
  const p = tempProject();
  const r = await ms(p, ["index"]);
  expect(r.stdout.trim()).toBe("Indexed 6 chunks.");
  return p;
}

describe("an index first saved empty (issue 9)", () => {
  test("takes the first notes: index, write a note, index, then search finds it and stats counts it", async () => {
    const p = tempProject();
    rmSync(p.memory, { recursive: true });
    mkdirSync(p.memory, { recursive: true });
    const first = await ms(p, ["index"]);
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe("Indexed 0 chunks.");
    appendFileSync(join(p.memory, "2026-11-23.md"), "# 2026-11-23\n\n### 10:02\n- the deploy key lives in vault\n");
    const second = await ms(p, ["index"]);
    expect(second.stderr).not.toContain("Error");
    expect(second.code).toBe(0);
    expect(second.stdout.trim()).toBe("Indexed 1 chunks.");
    const hits = JSON.parse((await ms(p, ["search", "deploy key vault", "-j"])).stdout);
    expect(hits.map((h: { content: string }) => h.content)).toEqual([expect.stringContaining("the deploy key lives in vault")]);
    expect(JSON.parse((await ms(p, ["stats", "-j"])).stdout)).toMatchObject({ total_chunks: 1, files: 1 });
    expectHealthy(p, 1);
  });
});

describe("a broken index is rebuilt by the first command that meets it", () => {
  const commands: { name: string; args: string[]; check: (r: { stdout: string }) => void }[] = [
    {
      name: "search",
      args: ["search", "redis connection pool", "-j"],
      check: (r) => {
        const hits = JSON.parse(r.stdout);
        expect(hits.length).toBeGreaterThan(0);
        expect(hits[0].content).toContain("Redis connection pool");
      },
    },
    { name: "stats", args: ["stats", "-j"], check: (r) => expect(JSON.parse(r.stdout)).toMatchObject({ total_chunks: 6, files: 2 }) },
    { name: "index", args: ["index"], check: (r) => expect(r.stdout.trim()).toBe("Indexed 6 chunks.") },
    {
      name: "expand",
      // The hash of the 09:47 section of sample/memory/2026-11-21.md (from the content and model, so stable across rebuilds).
      args: ["expand", "CHUNK", "-j"],
      check: (r) => expect(JSON.parse(r.stdout).content.startsWith("### 09:47")).toBe(true),
    },
  ];

  for (const d of DAMAGES) {
    for (const c of commands) {
      test(`${d.name}: ${c.name}`, async () => {
        const p = await indexedProject();
        const [hit] = JSON.parse((await ms(p, ["search", "document the cache decision", "-j", "-k", "1"])).stdout);
        d.damage(indexFile(p));
        const r = await ms(p, c.args.map((a) => (a === "CHUNK" ? hit.chunk_hash : a)));
        expect(r.stderr).not.toContain("Error");
        expect(r.code).toBe(0);
        c.check(r);
        const lines = rebuiltLines(r.stderr);
        expect(lines.length).toBe(1);
        expect(lines[0]).toMatch(/^memsearch: /);
        expect(lines[0]).toMatch(d.reason);
        expect(lines[0]).toContain("(6 chunks");
        expectHealthy(p, 6);
        // Healed for good: the next command says nothing about it.
        const again = await ms(p, ["search", "redis", "-j"]);
        expect(rebuiltLines(again.stderr)).toEqual([]);
        expect(JSON.parse(again.stdout).length).toBeGreaterThan(0);
      });
    }
  }

  test("the prompt hook's cold search rebuilds it and still injects memories", async () => {
    const p = await indexedProject();
    DAMAGES[1]!.damage(indexFile(p));
    const r = await ms(p, ["hook", "user-prompt-submit"], { MEMSEARCH_NO_WATCH: "1" }, JSON.stringify({ prompt: "what did we decide about the redis connection pool?", cwd: p.root }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.additionalContext).toContain("Redis connection pool");
    expectHealthy(p, 6);
  });

  test("watch rebuilds it when it loads it, says so once and serves searches", async () => {
    const p = await indexedProject();
    DAMAGES[1]!.damage(indexFile(p));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...p.env })) if (v !== undefined) env[k] = v;
    const proc = Bun.spawn([BIN, "watch"], { cwd: p.root, env, stdout: "pipe", stderr: "pipe" });
    try {
      let healthy = false;
      for (let i = 0; i < 80 && !healthy; i++) {
        await Bun.sleep(100);
        healthy = existsSync(join(p.root, ".memsearch", "watch.pid")) && checkIndex(indexDir(p)).state === "ok";
      }
      expect(healthy).toBe(true);
      const s = await ms(p, ["search", "redis connection pool", "-j"]);
      expect(JSON.parse(s.stdout)[0].content).toContain("Redis connection pool");
      expect(rebuiltLines(s.stderr)).toEqual([]);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    const stderr = await new Response(proc.stderr).text();
    const lines = rebuiltLines(stderr);
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatch(/^memsearch: the index was unreadable \(checksum mismatch/);
    expectHealthy(p, 6);
  });
});

describe("vectors survive damage elsewhere in the file", () => {
  // One double per test: "without re-embedding" is read from the double's own request log.
  let ollama: OllamaDouble;
  beforeEach(async () => {
    ollama = await startOllamaDouble({ dim: 768 });
  });
  afterEach(() => ollama.stop());
  const embeds = () => ollama.requests.filter((q) => q.path === "/api/embed").flatMap((q) => q.body.input as string[]);

  test("a damaged search index is rebuilt without re-embedding: its checksummed vectors are kept", async () => {
    const p = tempProject();
    const env = { OLLAMA_HOST: ollama.host };
    expect((await ms(p, ["index"], env)).code).toBe(0);
    const file = indexFile(p);
    const bytes = readFileSync(file);
    const len = bytes.readUInt32LE(16);
    const head = JSON.parse(bytes.subarray(20, 20 + len).toString());
    const stateAt = 20 + len + head.layoutBytes;
    for (let i = stateAt + 8; i < stateAt + 24; i++) bytes[i] = bytes[i]! ^ 0xff;
    writeFileSync(file, bytes);
    const before = embeds().filter((t) => t.startsWith("search_document: ")).length;
    const r = await ms(p, ["search", "why do checkout requests time out", "-j"], env);
    expect(r.code).toBe(0);
    const hits = JSON.parse(r.stdout);
    expect(hits[0].mode).toBe("hybrid");
    expect(hits[0].content).toContain("time out");
    expect(rebuiltLines(r.stderr)).toEqual([expect.stringMatching(/^memsearch: the index was unreadable \(checksum mismatch in the search index\); rebuilt it from the markdown \(6 chunks\)$/)]);
    expect(embeds().filter((t) => t.startsWith("search_document: ")).length).toBe(before);
    expect(JSON.parse((await ms(p, ["stats", "-j"], env)).stdout)).toMatchObject({ total_chunks: 6, vectors: 6, dimension: 768 });
    expectHealthy(p, 6);
  });

  test("a search with embeddings off leaves the vectors unread, and a rebuild it makes still keeps them", async () => {
    const p = tempProject();
    const env = { OLLAMA_HOST: ollama.host };
    expect((await ms(p, ["index"], env)).code).toBe(0);
    const file = indexFile(p);
    const bytes = readFileSync(file);
    // The vectors' parts are the file's end (the codes last): damaged there, a keyword search neither reads nor minds it.
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    writeFileSync(file, bytes);
    const off = { MEMSEARCH_EMBEDDING_PROVIDER: "none" };
    const quiet = await ms(p, ["search", "why do checkout requests time out", "-j"], off);
    expect(quiet.code).toBe(0);
    expect(JSON.parse(quiet.stdout)[0]).toMatchObject({ mode: "bm25" });
    expect(rebuiltLines(quiet.stderr)).toEqual([]);
    expect(readFileSync(file)).toEqual(bytes);
    // A damaged state: the same search rebuilds from the whole file, carrying every vector whose checksum holds.
    const fresh = tempProject();
    expect((await ms(fresh, ["index"], env)).code).toBe(0);
    const whole = readFileSync(indexFile(fresh));
    const len = whole.readUInt32LE(16);
    const head = JSON.parse(whole.subarray(20, 20 + len).toString());
    const stateAt = 20 + len + head.layoutBytes;
    for (let i = stateAt + 8; i < stateAt + 24; i++) whole[i] = whole[i]! ^ 0xff;
    writeFileSync(indexFile(fresh), whole);
    const before = embeds().filter((t) => t.startsWith("search_document: ")).length;
    const healed = await ms(fresh, ["search", "why do checkout requests time out", "-j"], off);
    expect(healed.code).toBe(0);
    expect(rebuiltLines(healed.stderr)).toHaveLength(1);
    expect(JSON.parse((await ms(fresh, ["stats", "-j"], env)).stdout)).toMatchObject({ total_chunks: 6, vectors: 6 });
    expect(embeds().filter((t) => t.startsWith("search_document: ")).length).toBe(before);
    expectHealthy(fresh, 6);
  });

  test("watch: an index damaged while it runs is rebuilt by the next search, which says so once; the vectors come back", async () => {
    const p = tempProject();
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...p.env, OLLAMA_HOST: ollama.host })) if (v !== undefined) env[k] = v;
    const proc = Bun.spawn([BIN, "watch"], { cwd: p.root, env, stdout: "pipe", stderr: "pipe" });
    const vectors = async () => JSON.parse((await ms(p, ["stats", "-j"], env)).stdout).vectors;
    const until = async (ok: () => Promise<boolean>) => {
      for (let i = 0; i < 80; i++) {
        if (await ok()) return true;
        await Bun.sleep(100);
      }
      return false;
    };
    try {
      expect(await until(async () => existsSync(join(p.root, ".memsearch", "watch.pid")) && (await vectors()) === 6)).toBe(true);
      writeFileSync(indexFile(p), "not an index at all");
      const s = await ms(p, ["search", "redis connection pool", "-j"], env);
      expect(s.code).toBe(0);
      expect(JSON.parse(s.stdout)[0].content).toContain("Redis connection pool");
      expect(rebuiltLines(s.stderr)).toEqual([expect.stringMatching(/^memsearch: the index was unreadable \(not a memsearch index\); rebuilt it from the markdown \(6 chunks; their vectors are added/)]);
      expect(await until(async () => checkIndex(indexDir(p)).state === "ok" && (await vectors()) === 6)).toBe(true);
      expect(rebuiltLines((await ms(p, ["search", "redis", "-j"], env)).stderr)).toEqual([]);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    expect(rebuiltLines(await new Response(proc.stderr).text()).length).toBe(1);
    expectHealthy(p, 6);
  });

  for (const command of [["index"], ["search", "why do checkout requests time out", "-j"]]) {
    test(`an index of an older format is upgraded by ${command[0]} without re-embedding`, async () => {
      // The sample memory as the last release before the codes wrote it (format v10), with this double's vectors.
      const p = tempProject();
      const env = { OLLAMA_HOST: ollama.host };
      mkdirSync(indexDir(p), { recursive: true });
      copyFileSync(V10_INDEX, indexFile(p));
      const before = embeds().filter((t) => t.startsWith("search_document: ")).length;
      const r = await ms(p, command, env);
      expect(r.code).toBe(0);
      expect(rebuiltLines(r.stderr)).toEqual([expect.stringMatching(/^memsearch: the index was in an older format \(v10, now v\d+\); rebuilt it from the markdown \(6 chunks\)$/)]);
      expect(embeds().filter((t) => t.startsWith("search_document: ")).length).toBe(before);
      expect(JSON.parse((await ms(p, ["stats", "-j"], env)).stdout)).toMatchObject({ total_chunks: 6, vectors: 6, dimension: 768 });
      expectHealthy(p, 6);
    });
  }
});

describe("an index written before stemming (format v7)", () => {
  test("is rebuilt from the markdown by the first search, which says so once and finds other forms of a word", async () => {
    const p = tempProject();
    mkdirSync(indexDir(p), { recursive: true });
    copyFileSync(V7_INDEX, indexFile(p));
    const r = await ms(p, ["search", "deploying to fly", "-j"]);
    expect(r.code).toBe(0);
    expect(rebuiltLines(r.stderr)).toEqual([expect.stringMatching(/^memsearch: the index was in an older format \(v7, now v\d+\); rebuilt it from the markdown \(6 chunks[;)]/)]);
    const hits = JSON.parse(r.stdout);
    expect(hits[0].content).toContain("flyctl deploy");
    expectHealthy(p, 6);
    // Upgraded for good: no second notice, and a query of stop words only finds something.
    const again = await ms(p, ["search", "what is it", "-j"]);
    expect(rebuiltLines(again.stderr)).toEqual([]);
    expect(JSON.parse(again.stdout).length).toBeGreaterThan(0);
  });
});

describe("a missing index is not a broken one", () => {
  test("search with markdown but no index builds it first and says so once", async () => {
    const p = tempProject();
    const r = await ms(p, ["search", "redis connection pool", "-j"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)[0].content).toContain("Redis connection pool");
    expect(r.stderr.trim()).toBe("memsearch: there was no index yet; indexed 6 chunks first");
    expectHealthy(p, 6);
  });

  test("search with no markdown at all says nothing is indexed yet, exit 0, empty results", async () => {
    const p = tempProject();
    rmSync(p.memory, { recursive: true });
    const text = await ms(p, ["search", "redis"]);
    expect(text.code).toBe(0);
    expect(text.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^Nothing is indexed yet: no markdown in /)]);
    const json = await ms(p, ["search", "redis", "-j"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
    expect(json.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^Nothing is indexed yet/)]);
    expect(existsSync(indexFile(p))).toBe(false);
  });

  test("stats on a project never indexed still says so, without building anything", async () => {
    const p = tempProject();
    const r = await ms(p, ["stats"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("not built yet");
    expect(r.stderr).toBe("");
    expect(existsSync(indexFile(p))).toBe(false);
  });
});
