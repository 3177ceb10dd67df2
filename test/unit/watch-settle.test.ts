/**
 * The watch process collects its heap once it has been quiet a while (issue 25): a load, a
 * re-index and a save leave garbage that JSC otherwise kept, growing the process by tens of MB.
 * Only when quiet: a burst of work is not interrupted by collections.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadContext } from "../../src/core/context.ts";
import { Daemon } from "../../src/watch/daemon.ts";

const realGc = Bun.gc;
const cleanups: (() => void)[] = [];
afterEach(() => {
  (Bun as { gc: typeof Bun.gc }).gc = realGc;
  for (const c of cleanups.splice(0)) c();
});

describe("watch process", () => {
  test("collects its heap once, a second after its last re-index, not during a burst of them", async () => {
    const root = mkdtempSync(join(tmpdir(), "ms-settle-"));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, ".git"));
    const memory = join(root, ".memsearch", "memory");
    mkdirSync(memory, { recursive: true });
    writeFileSync(join(memory, "2026-11-20.md"), "## Deploy notes\n\nThe staging cluster uses the quokka load balancer.\n");
    const ctx = loadContext({ "embedding.provider": "none" }, root, { HOME: root, MEMSEARCH_HOME: join(root, "home") });
    const daemon = new Daemon(ctx, [memory]);
    cleanups.push(() => void daemon.close());
    const calls: unknown[] = [];
    (Bun as { gc: unknown }).gc = (full: boolean) => void calls.push(full);
    await daemon.reindex("initial");
    for (let i = 0; i < 4; i++) {
      writeFileSync(join(memory, "2026-11-20.md"), `## Deploy notes\n\nThe staging cluster uses the quokka load balancer ${i}.\n`);
      await Bun.sleep(300);
      await daemon.reindex("request");
      expect(calls).toEqual([]);
    }
    await Bun.sleep(1_300);
    expect(calls).toEqual([true]);
  });
});
