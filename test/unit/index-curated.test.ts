/**
 * Curated files in the notes index (src/index/indexer.ts, store.ts, search.ts): indexed with their
 * kind, left alone by a run that names none (a note's re-index), removed when a run's curated set
 * no longer holds them, re-read when a file changes kind, and ranked above a note on a tie.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexPaths } from "../../src/index/indexer.ts";
import { searchChunks } from "../../src/index/search.ts";
import { Store } from "../../src/index/store.ts";
import { testConfig } from "../helpers/store-of.ts";

function world() {
  const root = mkdtempSync(join(tmpdir(), "ms-idx-cur-"));
  const memoryDir = join(root, ".memsearch", "memory");
  const indexDir = join(root, ".memsearch", "index");
  mkdirSync(memoryDir, { recursive: true });
  const config = testConfig();
  const note = join(memoryDir, "2026-11-20.md");
  const claude = join(root, "CLAUDE.md");
  writeFileSync(note, "# 2026-11-20\n\n### 09:00\n- The gannet cache holds sessions.\n");
  // The same text as the note: a tie, which the source path alone would give to the note.
  writeFileSync(claude, "# 2026-11-20\n\n### 09:00\n- The gannet cache holds sessions.\n");
  const index = (curated?: string[]) => indexPaths({ paths: [memoryDir], indexDir, config, embedder: null, ...(curated ? { curated } : {}) });
  const search = async (query: string) => {
    const { store } = Store.open(indexDir, config["embedding.model"]);
    return (await searchChunks({ query, topK: 5, store, config, embedder: null })).results.map((r) => ({ source: r.chunk.source, kind: r.kind, score: r.score }));
  };
  return { root, note, claude, index, search };
}

describe("curated files in the notes index", () => {
  test("indexed as curated, first on a tie with a note, kept by a run that names none, gone when no longer listed", async () => {
    const w = world();
    await w.index([w.claude]);
    const hits = await w.search("gannet cache");
    expect(hits).toHaveLength(2);
    expect(hits[0]!.score).toBe(hits[1]!.score);
    expect(hits.map((h) => [h.source, h.kind])).toEqual([
      [w.claude, "curated"],
      [w.note, "note"],
    ]);
    // A note's re-index (the drainer, the gateway's refresh) names no curated files: they stay.
    writeFileSync(w.note, "# 2026-11-20\n\n### 09:00\n- The gannet cache holds sessions.\n\n### 10:00\n- Added a puffin.\n");
    await w.index();
    expect((await w.search("gannet cache")).map((h) => h.kind)).toEqual(["curated", "note"]);
    // The watch process's next walk no longer finds it (deleted, or the memory folder moved).
    await w.index([]);
    expect((await w.search("gannet cache")).map((h) => h.kind)).toEqual(["note"]);
  });

  test("a curated file that is not text is recorded once, as curated, and not read again", async () => {
    const w = world();
    const binary = join(w.root, "pkg", "CLAUDE.md");
    mkdirSync(join(w.root, "pkg"));
    writeFileSync(binary, new Uint8Array([0x23, 0x20, 0x00, 0xff, 0xfe]));
    const first = await w.index([w.claude, binary]);
    expect(first.skippedFiles.map((f) => f.path)).toEqual([binary]);
    // Nothing changed: the no-op path answers, and the index file is not written again.
    const indexFile = join(w.root, ".memsearch", "index", "index.bin");
    const before = statSync(indexFile).mtimeMs;
    await Bun.sleep(20);
    const again = await w.index([w.claude, binary]);
    expect(again.indexedFiles).toBe(0);
    expect(again.totalChunks).toBe(first.totalChunks);
    expect(statSync(indexFile).mtimeMs).toBe(before);
  });

  test("a file indexed by hand as a plain file becomes curated when a run lists it, without changing", async () => {
    const w = world();
    await indexPaths({ paths: [w.claude], indexDir: join(w.root, ".memsearch", "index"), config: testConfig(), embedder: null });
    await w.index();
    expect((await w.search("gannet cache")).find((h) => h.source === w.claude)?.kind).toBe("note");
    await w.index([w.claude]);
    expect((await w.search("gannet cache")).find((h) => h.source === w.claude)?.kind).toBe("curated");
  });
});
