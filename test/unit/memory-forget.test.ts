/**
 * Forget in the core: the section leaves the daily file (and an emptied session heading with it),
 * the turn goes on the list, and the journal, the drainer and import's plan all leave it out.
 */
import { describe, expect, test } from "bun:test";
import { agentOrDefault, anchorPromptId } from "../../src/agents/registry.ts";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drainPending } from "../../src/memory/capture.ts";
import { forgetTurn, readForgotten, undoForget } from "../../src/memory/forget.ts";
import { ConflictError } from "../../src/core/errors.ts";
import { appendTurnNote, notesIn, sectionId, sectionText } from "../../src/memory/journal.ts";
import { enqueueTurn, listPending } from "../../src/memory/pending.ts";
import type { Summary } from "../../src/memory/summarizer.ts";
import { appendTurn } from "../fault/transcript.ts";

function project() {
  const dir = mkdtempSync(join(tmpdir(), "ms-forget-"));
  const dataDir = join(dir, ".memsearch");
  return { dir, dataDir, memoryDir: join(dataDir, "memory") };
}

const at = (hm: string) => new Date(`2026-11-20T${hm}:00`);
async function note(memoryDir: string, session: string, turn: string, hm: string, bullet: string) {
  await appendTurnNote({ memoryDir, sessionId: session, turnUuid: turn, transcriptPath: "/t.jsonl", bullets: [bullet], now: at(hm) });
}

/** What the page (or the CLI, from a chunk) names a note by, taken while it is shown: its section's id and line. */
function shownNote(memoryDir: string, file: string, words: string) {
  const text = readFileSync(join(memoryDir, file), "utf8");
  const n = notesIn(text, file).find((x) => x.bullets.some((b) => b.includes(words)))!;
  return { file, id: sectionId(sectionText(text, n)), line: n.line };
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

  test("by the id of its section's text (a chunk, a hub entry): the same as by its turn", async () => {
    const p = project();
    await note(p.memoryDir, "s1", "t1", "09:00", "keep me");
    await note(p.memoryDir, "s1", "t2", "09:30", "drop me");
    const target = shownNote(p.memoryDir, "2026-11-20.md", "drop me");
    const dry = await forgetTurn(p.dataDir, target, { dryRun: true });
    expect(dry).toMatchObject({ turn: "t2", dryRun: true });
    expect(readFileSync(join(p.memoryDir, "2026-11-20.md"), "utf8")).toContain("drop me");
    expect(readForgotten(p.dataDir).entries).toEqual([]);
    await forgetTurn(p.dataDir, target);
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
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize, transcriptWaitMs: 0 });
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

describe("a forgotten turn's prompt id", () => {
  test("read from the project's own transcript: a Stop queued again after the transcript is gone is left out too", async () => {
    const p = project();
    const root = join(p.dir, "proj");
    mkdirSync(join(root, ".git"), { recursive: true });
    const dataDir = join(root, ".memsearch");
    const memoryDir = join(dataDir, "memory");
    const dir = join(process.env.HOME!, ".claude", "projects", realpathSync(root).replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(dir, { recursive: true });
    const transcript = join(dir, "s1.jsonl");
    appendTurn(transcript, { sessionId: "s1", uuid: "uuid-1", promptId: "prompt-1", prompt: "the question", command: "true", output: "", reply: "the answer", cwd: root }, "all");
    await appendTurnNote({ memoryDir, sessionId: "s1", turnUuid: "uuid-1", transcriptPath: transcript, bullets: ["a note"], now: at("09:00") });
    await forgetTurn(dataDir, { turn: "uuid-1" }, { promptIdOf: anchorPromptId(root) });
    expect(readForgotten(dataDir).entries).toMatchObject([{ turn: "uuid-1", promptId: "prompt-1" }]);
    rmSync(transcript);
    enqueueTurn(dataDir, { sessionId: "s1", promptId: "prompt-1", prompt: "the question", lastAssistantMessage: "the answer", transcriptPath: transcript, stoppedAt: new Date().toISOString() });
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir, dataDir, summarize: async () => ({ bullets: ["- x"], provider: "claude" }), transcriptWaitMs: 0 });
    expect(report).toMatchObject({ written: 0, forgotten: 1 });
    expect(readFileSync(join(memoryDir, "2026-11-20.md"), "utf8")).not.toContain("turn:prompt-1");
  });

  test("an anchor to a transcript outside the project's own is not followed", async () => {
    const p = project();
    const root = join(p.dir, "proj");
    mkdirSync(join(root, ".git"), { recursive: true });
    const dataDir = join(root, ".memsearch");
    const planted = join(p.dir, "elsewhere.jsonl");
    appendTurn(planted, { sessionId: "s1", uuid: "uuid-2", promptId: "prompt-2", prompt: "q", command: "true", output: "", reply: "a", cwd: root }, "all");
    await appendTurnNote({ memoryDir: join(dataDir, "memory"), sessionId: "s1", turnUuid: "uuid-2", transcriptPath: planted, bullets: ["a note"], now: at("09:00") });
    await forgetTurn(dataDir, { turn: "uuid-2" }, { promptIdOf: anchorPromptId(root) });
    expect(readForgotten(dataDir).entries[0]!.promptId).toBeUndefined();
  });
});

describe("a note named while shown, its file changed before the forget (issue 31)", () => {
  const FILE = "2026-11-20.md";
  async function three() {
    const p = project();
    await note(p.memoryDir, "s1", "t-alpha", "09:00", "ALPHA about the queue");
    await note(p.memoryDir, "s2", "t-bravo", "10:00", "BRAVO about the cache");
    await note(p.memoryDir, "s3", "t-charlie", "11:00", "CHARLIE about the schema");
    return { p, bravo: shownNote(p.memoryDir, FILE, "BRAVO"), md: () => readFileSync(join(p.memoryDir, FILE), "utf8") };
  }

  test("another note forgotten meanwhile (another tab, the CLI): BRAVO goes, CHARLIE stays", async () => {
    const { p, bravo, md } = await three();
    await forgetTurn(p.dataDir, { turn: "t-alpha" });
    const res = await forgetTurn(p.dataDir, bravo);
    expect(res.turn).toBe("t-bravo");
    expect(md()).not.toContain("BRAVO");
    expect(md()).toContain("CHARLIE about the schema");
    expect(readForgotten(p.dataDir).entries.map((e) => e.turn)).toEqual(["t-alpha", "t-bravo"]);
  });

  test("text added above it (a git pull, a hand edit): BRAVO goes, nothing else", async () => {
    const { p, bravo, md } = await three();
    writeFileSync(join(p.memoryDir, FILE), `# 2026-11-20\n\n### 08:00\n- a hand-written note\n- on two lines\n\n${md().replace(/^# 2026-11-20\n\n/, "")}`);
    await forgetTurn(p.dataDir, bravo);
    expect(md()).not.toContain("BRAVO");
    expect(md()).toContain("a hand-written note");
    expect(md()).toContain("ALPHA about the queue");
    expect(md()).toContain("CHARLIE about the schema");
  });

  test("the note itself edited, or gone: a conflict, and nothing changes", async () => {
    const { p, bravo, md } = await three();
    writeFileSync(join(p.memoryDir, FILE), md().replace("BRAVO about the cache", "BRAVO about the cache, edited"));
    const edited = md();
    await expect(forgetTurn(p.dataDir, bravo)).rejects.toBeInstanceOf(ConflictError);
    expect(md()).toBe(edited);
    await forgetTurn(p.dataDir, { turn: "t-bravo" });
    const after = md();
    // Where BRAVO stood, CHARLIE stands now: it is not taken for it.
    await expect(forgetTurn(p.dataDir, bravo)).rejects.toThrow("no longer in 2026-11-20.md as it was shown");
    expect(md()).toBe(after);
    expect(readForgotten(p.dataDir).entries.map((e) => e.turn)).toEqual(["t-bravo"]);
  });
});

describe("turn ids made of a line number, in several sessions (issue 31)", () => {
  test("the same line-N of three sessions on one day: three notes; forgetting one leaves the others, and their turns writable", async () => {
    const p = project();
    for (const s of ["s1", "s2", "s3"]) await note(p.memoryDir, s, "line-2", "09:00", `note of session ${s}`);
    const md = () => readFileSync(join(p.memoryDir, "2026-11-20.md"), "utf8");
    expect(["s1", "s2", "s3"].map((s) => md().includes(`note of session ${s}`))).toEqual([true, true, true]);
    // By its id alone it is ambiguous; by its section (a chunk, a hub entry) it is one note.
    await expect(forgetTurn(p.dataDir, { turn: "line-2" })).rejects.toThrow("names notes of 3 sessions");
    await forgetTurn(p.dataDir, shownNote(p.memoryDir, "2026-11-20.md", "session s2"));
    expect(["s1", "s2", "s3"].map((s) => md().includes(`note of session s${s.slice(1)}`))).toEqual([true, false, true]);
    expect(readForgotten(p.dataDir).entries).toMatchObject([{ turn: "line-2", session: "s2" }]);
    expect(readForgotten(p.dataDir).has("line-2", "s2")).toBe(true);
    expect(readForgotten(p.dataDir).has("line-2", "s4")).toBe(false);
    // Session s2's turn is not written again; another session's line-2 is.
    expect((await appendTurnNote({ memoryDir: p.memoryDir, sessionId: "s2", turnUuid: "line-2", transcriptPath: "/t.jsonl", bullets: ["again"], now: at("12:00") })).forgotten).toBe(true);
    expect((await appendTurnNote({ memoryDir: p.memoryDir, sessionId: "s4", turnUuid: "line-2", transcriptPath: "/t.jsonl", bullets: ["a fourth session"], now: at("12:00") })).appended).toBe(true);
    // And by id with its session, the CLI's and the hub's way for a line id.
    await forgetTurn(p.dataDir, { turn: "line-2", session: "s3" });
    expect(md()).not.toContain("note of session s3");
    expect(md()).toContain("note of session s1");
  });
});
