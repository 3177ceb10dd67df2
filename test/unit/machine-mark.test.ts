import { describe, expect, test } from "bun:test";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isMarkOf, markOf } from "../../src/core/machine-mark.ts";
import { enqueueTurn, queuedHere, readPending } from "../../src/memory/pending.ts";

const REPO = join(import.meta.dir, "..", "..");

describe("this machine's mark", () => {
  test("processes making their first mark at the same moment share one key, and leave no temporary file", async () => {
    const home = mkdtempSync(join(tmpdir(), "ms-mark-"));
    const script = `import { markOf } from ${JSON.stringify(join(REPO, "src/core/machine-mark.ts"))}; process.stdout.write(markOf("the same text"));`;
    const runs = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const p = Bun.spawn([process.execPath, "-e", script], { env: { ...process.env, MEMSEARCH_HOME: home }, stdout: "pipe", stderr: "pipe" });
        const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
        return { out, err, code };
      }),
    );
    expect(runs.map((r) => [r.code, r.err])).toEqual(runs.map(() => [0, ""]));
    expect(new Set(runs.map((r) => r.out)).size).toBe(1);
    expect(isMarkOf(runs[0]!.out, "the same text", { ...process.env, MEMSEARCH_HOME: home })).toBe(true);
    // No temporary file is left beside the key.
    expect(readdirSync(home)).toEqual(["machine.key"]);
  }, 30_000);

  test("a key file that holds no key is replaced, and marks are made again", () => {
    const home = mkdtempSync(join(tmpdir(), "ms-mark-"));
    writeFileSync(join(home, "machine.key"), "");
    const env = { ...process.env, MEMSEARCH_HOME: home };
    const m = markOf("text", env);
    expect(isMarkOf(m, "text", env)).toBe(true);
    expect(readFileSync(join(home, "machine.key"), "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    expect(readdirSync(home)).toEqual(["machine.key"]);
  });

  test("a key file that cannot be read (a link) is left alone: nothing is marked, nothing replaced", () => {
    const home = mkdtempSync(join(tmpdir(), "ms-mark-"));
    const elsewhere = join(home, "dotfiles-key");
    writeFileSync(elsewhere, `${"ab".repeat(32)}\n`);
    symlinkSync(elsewhere, join(home, "machine.key"));
    const env = { ...process.env, MEMSEARCH_HOME: home };
    expect(() => markOf("text", env)).toThrow();
    expect(lstatSync(join(home, "machine.key")).isSymbolicLink()).toBe(true);
    expect(readdirSync(home).sort()).toEqual(["dotfiles-key", "machine.key"]);
  });

  test("a queued turn is this machine's for its own data folder and transcript only", () => {
    const env = { ...process.env, MEMSEARCH_HOME: mkdtempSync(join(tmpdir(), "ms-mark-")) };
    const mine = process.env.MEMSEARCH_HOME;
    process.env.MEMSEARCH_HOME = env.MEMSEARCH_HOME;
    try {
      const dataDir = join(mkdtempSync(join(tmpdir(), "ms-mark-proj-")), ".memsearch");
      const file = enqueueTurn(dataDir, { sessionId: "s", promptId: "p", transcriptPath: "/t/s.jsonl", stoppedAt: new Date().toISOString(), prompt: "hi" });
      const turn = readPending(file)!;
      expect(turn.mark).toMatch(/^[0-9a-f]{32}$/);
      expect(queuedHere(dataDir, turn)).toBe(true);
      expect(queuedHere(join(dataDir, "..", "..", "elsewhere", ".memsearch"), turn)).toBe(false);
      expect(queuedHere(dataDir, { ...turn, transcriptPath: "/t/other.jsonl" })).toBe(false);
      expect(queuedHere(dataDir, { ...turn, mark: undefined })).toBe(false);
      expect(isMarkOf(markOf("x"), "y")).toBe(false);
      // The folder, not its spelling: queued through a link, the drainer of the real path finds it its own.
      const real = mkdtempSync(join(tmpdir(), "ms-mark-real-"));
      const link = join(mkdtempSync(join(tmpdir(), "ms-mark-link-")), "proj");
      symlinkSync(real, link);
      const linked = readPending(enqueueTurn(join(link, ".memsearch"), { sessionId: "s", promptId: "q", transcriptPath: "/t/s.jsonl", stoppedAt: new Date().toISOString() }))!;
      expect(queuedHere(join(real, ".memsearch"), linked)).toBe(true);
    } finally {
      process.env.MEMSEARCH_HOME = mine;
    }
  });
});
