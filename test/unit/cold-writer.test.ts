/**
 * A writer without a watch process (`remember`, `forget`, `index` of a few files) touches the index
 * only as much as it needs (issue 34): it reads the engine's state and the rows it asks for, never
 * the whole vector block, and writes the change as a segment, never the whole index.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/core/config.ts";
import { indexPaths, type DocumentEmbedder } from "../../src/index/indexer.ts";
import { INDEX_FILE, peekIndex } from "../../src/index/format.ts";
import { Store } from "../../src/index/store.ts";
import { rankingTerms } from "../../src/index/tokenizer.ts";
import { fakeEmbedding } from "../helpers/ollama-double.ts";

const DIM = 768;
const root = mkdtempSync(join(tmpdir(), "ms-cold-writer-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Bytes this process has read through read(2) and the like so far (Linux). */
function readBytes(): number {
  const m = /^rchar:\s+(\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  return Number(m![1]);
}

/** Bytes of the files in `dir` that are new or changed since `before` (a listing of name → size:mtime). */
function listing(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).map((n) => [n, `${statSync(join(dir, n)).size}:${statSync(join(dir, n)).mtimeMs}`]));
}
function written(dir: string, before: Map<string, string>): number {
  let bytes = 0;
  for (const [n, v] of listing(dir)) if (before.get(n) !== v) bytes += statSync(join(dir, n)).size;
  return bytes;
}

const embedder: DocumentEmbedder = {
  model: "nomic-embed-text",
  embedDocuments: async (texts: string[]) => texts.map((t) => Float32Array.from(fakeEmbedding(t, DIM))),
  reportedDim: async () => DIM,
};

const day = (d: number, turns: number) =>
  [`# 2026-03-${d}`, "", "## Session", "", ...Array.from({ length: turns }, (_, t) => `### 09:${String(t).padStart(2, "0")}\n<!-- session:s${d} turn:t${d}-${t} -->\n- note ${d} ${t} about the quokka cluster and rack ${d * t}\n`)].join("\n");

describe.skipIf(process.platform !== "linux")("a writer without a watch process", () => {
  test("reads no vector block and writes a segment of the change alone", async () => {
    const memory = join(root, "memory");
    const indexDir = join(root, "index");
    mkdirSync(memory, { recursive: true });
    for (let d = 1; d <= 100; d++) writeFileSync(join(memory, `day-${String(d).padStart(3, "0")}.md`), day(d, 30));
    const config = loadConfig({ projectRoot: root, env: { MEMSEARCH_HOME: join(root, "home") }, flags: {} }).values;
    await indexPaths({ paths: [memory], indexDir, config, embedder });
    const head = peekIndex(indexDir)!;
    expect(head.vectors).toBe(3000);
    const blockBytes = head.vectors * DIM * 4;
    // The control: a whole open reads the block.
    let t = readBytes();
    Store.open(indexDir, "nomic-embed-text");
    expect(readBytes() - t).toBeGreaterThan(blockBytes);

    // A new turn in one file (remember), then a section taken out of another (forget).
    const before = listing(indexDir);
    writeFileSync(join(memory, "day-050.md"), day(50, 30) + "\n### 10:00\n<!-- session:s turn:new -->\n- the walrus queue drains at noon\n");
    t = readBytes();
    const added = await indexPaths({ paths: [memory], indexDir, config, embedder });
    expect(added.indexedChunks).toBe(1);
    expect(readBytes() - t).toBeLessThan(blockBytes / 3);
    expect(written(indexDir, before)).toBeLessThan(64 * 1024);

    const text = readFileSync(join(memory, "day-020.md"), "utf8");
    writeFileSync(join(memory, "day-020.md"), text.replace(/### 09:03\n[^#]*/, ""));
    const before2 = listing(indexDir);
    t = readBytes();
    const forgot = await indexPaths({ paths: [memory], indexDir, config, embedder });
    expect(forgot.removedChunks).toBeGreaterThan(0);
    expect(readBytes() - t).toBeLessThan(blockBytes / 3);
    // The file's later sections moved up a few lines: their chunks are new ones (their vectors from
    // the embedding cache), so the segment weighs what the file does, not what the index does.
    expect(written(indexDir, before2)).toBeLessThan(30 * (DIM * 4 + 1024));
    expect(written(indexDir, before2)).toBeLessThan(statSync(join(indexDir, INDEX_FILE)).size / 20);
    expect(statSync(join(indexDir, INDEX_FILE)).mtimeMs).toBe(Number(before2.get(INDEX_FILE)!.split(":")[1]));

    // What they wrote is what a whole open finds.
    const { store } = Store.open(indexDir, "nomic-embed-text");
    expect(store.searchText(rankingTerms("walrus queue").map((t) => t.stem), 5)[0]?.chunk.content).toContain("walrus queue");
    expect(store.vectorCount).toBe(store.size);
  });
});
