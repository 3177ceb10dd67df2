/**
 * The re-index a hook asks for reads only the files the watcher saw change. A file the whole scan
 * leaves out (a dot folder, an `indexing.exclude` pattern) must stay out of that shorter path too:
 * it is given to the indexer by name, and a file named is indexed.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadContext } from "../../src/core/context.ts";
import { Store } from "../../src/index/store.ts";
import { Daemon } from "../../src/watch/daemon.ts";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

test("a changed file the whole scan ignores is not indexed by the partial re-index either", async () => {
  const root = mkdtempSync(join(tmpdir(), "ms-partial-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, ".git"));
  const memory = join(root, ".memsearch", "memory");
  mkdirSync(join(memory, ".drafts"), { recursive: true });
  mkdirSync(join(memory, "private"), { recursive: true });
  writeFileSync(join(memory, "2026-11-20.md"), "# 2026-11-20\n\n## Session\n- the quokka balancer moved\n");
  // The debounced whole scan would take the changes first and clear them: it never fires here.
  const ctx = loadContext({ "embedding.provider": "none", "watch.debounce_ms": 600_000, "indexing.exclude": ["private/"] }, root, { HOME: root, MEMSEARCH_HOME: join(root, "home") });
  const daemon = new Daemon(ctx, [memory]);
  cleanups.push(() => daemon.close());
  await daemon.reindex("initial");
  daemon.watchFiles();
  await Bun.sleep(100);
  writeFileSync(join(memory, ".drafts", "wombat.md"), "# draft\n- the wombat ledger is secret\n");
  writeFileSync(join(memory, "private", "wombat.md"), "# private\n- the wombat ledger is private\n");
  writeFileSync(join(memory, "2026-11-20.md"), "# 2026-11-20\n\n## Session\n- the quokka balancer moved\n- the wombat gate opened\n");
  await Bun.sleep(400);
  await daemon.reindex("request");
  expect(daemon.lastError).toBeUndefined();
  const files = Store.open(ctx.project.indexDir, "nomic-embed-text").store.searchText(["wombat"], 10).map((h) => h.chunk.source);
  // The watcher did see the day's file change: the partial path ran and indexed it.
  expect(files.map((f) => f.slice(memory.length + 1))).toEqual(["2026-11-20.md"]);
});
