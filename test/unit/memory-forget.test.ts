/**
 * Forget in the core: the section leaves the daily file (and an emptied session heading with it),
 * the turn goes on the list, and the journal, the drainer and import's plan all leave it out.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drainPending } from "../../src/memory/capture.ts";
import { forgetTurn, readForgotten, undoForget } from "../../src/memory/forget.ts";
import { appendTurnNote } from "../../src/memory/journal.ts";
import { enqueueTurn, listPending } from "../../src/memory/pending.ts";
import type { Summary } from "../../src/memory/summarizer.ts";

function project() {
  const dir = mkdtempSync(join(tmpdir(), "ms-forget-"));
  const dataDir = join(dir, ".memsearch");
  return { dir, dataDir, memoryDir: join(dataDir, "memory") };
}

const at = (hm: string) => new Date(`2026-11-20T${hm}:00`);
async function note(memoryDir: string, session: string, turn: string, hm: string, bullet: string) {
  await appendTurnNote({ memoryDir, sessionId: session, turnUuid: turn, transcriptPath: "/t.jsonl", bullets: [bullet], now: at(hm) });
}

describe("forgetTurn", () => {
  test("removes the turn's section, and the session heading it leaves empty; the rest is byte for byte", async () => {
    const p = project();
    await note(p.memoryDir, "s1", "t1", "09:00", "first session note");
    await note(p.memoryDir, "s2", "t2", "10:00", "the redis secret plan");
    await note(p.memoryDir, "s3", "t3", "11:00", "third session note");
    const file = join(p.memoryDir, "2026-11-20.md");
    const before = readFileSync(file, "utf8");
    const res = await forgetTurn(p.dataDir, { turn: "t2" });
    expect(res.notes.map((n) => n.heading)).toEqual(["10:00"]);
    const after = readFileSync(file, "utf8");
    expect(after).not.toContain("redis");
    expect(after).not.toContain("## Session 10:00");
    expect(after).toBe(before.replace(/## Session 10:00\n\n### 10:00\n.*\n- the redis secret plan\n\n/, ""));
    expect(readForgotten(p.dataDir).entries).toMatchObject([{ turn: "t2", session: "s2", file: "2026-11-20.md", summary: "the redis secret plan" }]);
  });

  test("by a line of its section (a chunk, a hub entry): the same as by its turn", async () => {
    const p = project();
    await note(p.memoryDir, "s1", "t1", "09:00", "keep me");
    await note(p.memoryDir, "s1", "t2", "09:30", "drop me");
    const line = readFileSync(join(p.memoryDir, "2026-11-20.md"), "utf8").split("\n").indexOf("- drop me") + 1;
    const dry = await forgetTurn(p.dataDir, { file: "2026-11-20.md", line }, { dryRun: true });
    expect(dry).toMatchObject({ turn: "t2", dryRun: true });
    expect(readFileSync(join(p.memoryDir, "2026-11-20.md"), "utf8")).toContain("drop me");
    expect(readForgotten(p.dataDir).entries).toEqual([]);
    await forgetTurn(p.dataDir, { file: "2026-11-20.md", line });
    const md = readFileSync(join(p.memoryDir, "2026-11-20.md"), "utf8");
    expect(md).not.toContain("drop me");
    expect(md).toContain("## Session 09:00");
    expect(md).toContain("keep me");
  });

  test("the journal never writes a forgotten turn again; after undo it does", async () => {
    const p = project();
    await note(p.memoryDir, "s1", "t1", "09:00", "a note");
    await forgetTurn(p.dataDir, { turn: "t1" });
    const again = await appendTurnNote({ memoryDir: p.memoryDir, sessionId: "s1", turnUuid: "t1", transcriptPath: "/t.jsonl", bullets: ["a note"], now: at("12:00") });
    expect(again).toMatchObject({ appended: false, forgotten: true });
    expect(readFileSync(join(p.memoryDir, "2026-11-20.md"), "utf8")).not.toContain("a note");
    await undoForget(p.dataDir, "t1");
    expect((await appendTurnNote({ memoryDir: p.memoryDir, sessionId: "s1", turnUuid: "t1", transcriptPath: "/t.jsonl", bullets: ["a note"], now: at("12:00") })).appended).toBe(true);
  });

  test("the drainer takes a forgotten turn off the queue without asking the summariser", async () => {
    const p = project();
    await note(p.memoryDir, "s1", "prompt-1", "09:00", "a note from the hooks");
    await forgetTurn(p.dataDir, { turn: "prompt-1" });
    enqueueTurn(p.dataDir, { sessionId: "s1", promptId: "prompt-1", prompt: "the question", lastAssistantMessage: "the answer", stoppedAt: new Date().toISOString() });
    let calls = 0;
    const summarize = async (): Promise<Summary> => {
      calls++;
      return { bullets: ["- x"], provider: "claude" };
    };
    const report = await drainPending({ memoryDir: p.memoryDir, dataDir: p.dataDir, summarize, transcriptWaitMs: 0 });
    expect(report).toMatchObject({ written: 0, forgotten: 1 });
    expect(calls).toBe(0);
    expect(listPending(p.dataDir)).toEqual([]);
  });

  test("a damaged list is refused, never overwritten", async () => {
    const p = project();
    await note(p.memoryDir, "s1", "t1", "09:00", "a note");
    writeFileSync(join(p.dataDir, "forgotten.json"), JSON.stringify({ v: 1, turns: [{ turn: 5 }] }));
    await expect(forgetTurn(p.dataDir, { turn: "t1" })).rejects.toThrow(/forgotten\.json is damaged \(turns\.0\.turn/);
    expect(readFileSync(join(p.memoryDir, "2026-11-20.md"), "utf8")).toContain("a note");
  });
});
