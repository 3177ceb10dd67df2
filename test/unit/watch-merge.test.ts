/**
 * Who merges the segments into a new base, and when (issue 34): the watch process, in the
 * background once a merge is due, never on a re-index a hook asked for; `memsearch index` when due;
 * a command (remember, forget, import) only past the hard bound; the drainer, on a hook's time, never.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadContext } from "../../src/core/context.ts";
import { indexPaths } from "../../src/index/indexer.ts";
import { INDEX_FILE, readManifest } from "../../src/index/format.ts";
import { Store } from "../../src/index/store.ts";
import { Daemon } from "../../src/watch/daemon.ts";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function project() {
  const root = mkdtempSync(join(tmpdir(), "ms-merge-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, ".git"));
  const memory = join(root, ".memsearch", "memory");
  mkdirSync(memory, { recursive: true });
  const ctx = loadContext({ "embedding.provider": "none" }, root, { HOME: root, MEMSEARCH_HOME: join(root, "home") });
  return { root, memory, ctx, indexDir: ctx.project.indexDir };
}

const segments = (indexDir: string) => readdirSync(indexDir).filter((n) => n.startsWith("seg-")).length;
const DAY = "2026-11-20.md";
const turn = (i: number) => `\n### 10:${String(i).padStart(2, "0")}\n<!-- session:s turn:t${i} -->\n- the quokka balancer ${i} moved to rack ${i * 7}\n`;

describe("merging the segments", () => {
  test("the watch process appends a segment per re-index, and merges only in the background once due", async () => {
    const { memory, ctx, indexDir } = project();
    let text = "# 2026-11-20\n\n## Session\n";
    writeFileSync(join(memory, DAY), text);
    const daemon = new Daemon(ctx, [memory]);
    cleanups.push(() => daemon.close());
    await daemon.reindex("initial");
    const base = readFileSync(join(indexDir, INDEX_FILE));
    for (let i = 0; i < 5; i++) {
      writeFileSync(join(memory, DAY), (text += turn(i)));
      await daemon.reindex("request");
      // The request's re-index wrote a segment, not the base: the merge is not on its path.
      expect(segments(indexDir)).toBe(i + 1);
      expect(readFileSync(join(indexDir, INDEX_FILE)).equals(base)).toBe(true);
    }
    const store = Store.open(indexDir, "nomic-embed-text").store;
    expect(store.mergeDue("due")).toBe(true);
    const before = store.searchText(["quokka"], 10).map((h) => [h.chunk.chunkHash, h.bm25]);
    await daemon.mergeNow();
    expect(segments(indexDir)).toBe(0);
    expect(readManifest(indexDir)).toMatchObject({ segments: [] });
    expect(readFileSync(join(indexDir, INDEX_FILE)).equals(base)).toBe(false);
    expect(Store.open(indexDir, "nomic-embed-text").store.searchText(["quokka"], 10).map((h) => [h.chunk.chunkHash, h.bm25])).toEqual(before);
  });

  test("a writer without a watch: the drainer never merges, a command past the hard bound, `index` once due", async () => {
    const { memory, ctx, indexDir } = project();
    let text = "# 2026-11-20\n\n## Session\n";
    writeFileSync(join(memory, DAY), text);
    const run = (merge?: "due" | "hard" | "never") => indexPaths({ paths: [memory], indexDir, config: ctx.config, embedder: null, ...(merge ? { merge } : {}) });
    await run();
    let i = 0;
    // Past the hard bound (the segments outweigh the base), the drainer still only appends.
    while (!Store.open(indexDir, "nomic-embed-text").store.mergeDue("hard")) {
      writeFileSync(join(memory, DAY), (text += turn(i++)));
      await run("never");
    }
    const n = segments(indexDir);
    expect(n).toBeGreaterThan(1);
    writeFileSync(join(memory, DAY), (text += turn(i++)));
    await run("never");
    expect(segments(indexDir)).toBe(n + 1);
    // A command (the default) merges past the hard bound.
    writeFileSync(join(memory, DAY), (text += turn(i++)));
    await run();
    expect(segments(indexDir)).toBe(0);
    // Once due but below the hard bound: a command appends, `memsearch index` merges.
    while (!Store.open(indexDir, "nomic-embed-text").store.mergeDue("due")) {
      writeFileSync(join(memory, DAY), (text += turn(i++)));
      await run();
    }
    expect(segments(indexDir)).toBeGreaterThan(0);
    expect(Store.open(indexDir, "nomic-embed-text").store.mergeDue("hard")).toBe(false);
    writeFileSync(join(memory, DAY), (text += turn(i++)));
    await run("due");
    expect(segments(indexDir)).toBe(0);
  });

  test("a request's re-index reads the files the watcher saw change; a deleted one makes it scan them all", async () => {
    const { memory, ctx, indexDir } = project();
    for (let d = 1; d <= 5; d++) writeFileSync(join(memory, `2026-11-0${d}.md`), `# day ${d}\n${turn(d)}`);
    const daemon = new Daemon(ctx, [memory]);
    cleanups.push(() => daemon.close());
    expect((await daemon.reindex("initial"))?.totalFiles).toBe(5);
    daemon.watchFiles();
    const seen = async (name: string) => {
      for (let i = 0; i < 200 && !(daemon as unknown as { changed: Set<string> }).changed.has(join(memory, name)); i++) await Bun.sleep(5);
    };
    writeFileSync(join(memory, "2026-11-03.md"), `# day 3\n${turn(3)}${turn(33)}`);
    await seen("2026-11-03.md");
    const partial = await daemon.reindex("request");
    expect(partial).toMatchObject({ totalFiles: 1, indexedFiles: 1 });
    expect(Store.open(indexDir, "nomic-embed-text").store.searchText(["33"], 5).length).toBeGreaterThan(0);
    // A deletion the request cannot see from the changed files alone: every file is scanned, the gone one pruned.
    rmSync(join(memory, "2026-11-05.md"));
    writeFileSync(join(memory, "2026-11-04.md"), `# day 4\n${turn(44)}`);
    await seen("2026-11-04.md");
    (daemon as unknown as { changed: Set<string> }).changed.add(join(memory, "2026-11-05.md"));
    const full = await daemon.reindex("request");
    expect(full?.totalFiles).toBe(4);
    expect(Store.open(indexDir, "nomic-embed-text").store.sources().some((s) => s.endsWith("2026-11-05.md"))).toBe(false);
  });
});
