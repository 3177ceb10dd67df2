import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/core/config.ts";
import { indexPaths } from "../../src/index/indexer.ts";
import { Store } from "../../src/index/store.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "memsearch-damage-")));
  made.push(root);
  const memory = join(root, "memory");
  mkdirSync(memory);
  const config = loadConfig({ projectRoot: root, env: { HOME: root } }).values;
  const req = { paths: [memory], indexDir: join(root, "index"), config, embedder: null };
  return { memory, req, model: config["embedding.model"] };
}

const DAY = "# 2026-11-20\n\n## Session 09:00\n\n### 09:00\n- chose redis for the cache\n\n### 09:10\n- the answer\0had a NUL\n\n### 09:20\n- kubernetes rollout fixed\n";

describe("a daily file with a NUL in one section", () => {
  test("is indexed whole but that one character, and reported as cleaned on every run", async () => {
    const { memory, req } = setup();
    const file = join(memory, "2026-11-20.md");
    writeFileSync(file, DAY);
    const first = await indexPaths(req);
    expect(first.skippedFiles).toEqual([]);
    expect(first.cleanedFiles).toEqual([{ path: file, cleaned: 1, dropped: 0 }]);
    expect(first.totalChunks).toBeGreaterThan(0);
    const again = await indexPaths(req);
    expect(again.indexedChunks).toBe(0);
    expect(again.cleanedFiles).toEqual([{ path: file, cleaned: 1, dropped: 0 }]);
    // Fixed by hand: no longer reported.
    writeFileSync(file, DAY.replace("\0", " "));
    expect((await indexPaths(req)).cleanedFiles).toEqual([]);
  });

  test("a file an older version skipped as not-text is read again, not left out for good", async () => {
    const { memory, req, model } = setup();
    const file = join(memory, "2026-11-20.md");
    writeFileSync(file, DAY);
    const built = await indexPaths(req);
    // What the older version recorded: no chunks, skipped, with the file's current stat.
    const { store } = Store.open(req.indexDir, model);
    store.removeFile(file);
    const st = statSync(file);
    store.meta.files[file] = { mtimeMs: st.mtimeMs, size: st.size, chunks: [], skipped: "not-text" };
    store.save();
    const healed = await indexPaths(req);
    expect(healed.skippedFiles).toEqual([]);
    expect(healed.indexedChunks).toBe(built.totalChunks);
    expect(healed.totalChunks).toBe(built.totalChunks);
  });
});
