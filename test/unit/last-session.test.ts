/**
 * What SessionStart says about the previous session, and the note parser behind it (also the
 * hub's and `memsearch projects`'): notes one by one, the previous session, its first request.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastSessionPhrase } from "../../src/hooks/session-start.ts";
import { appendTurnNote, journalNotes, notesIn, previousSession } from "../../src/memory/journal.ts";
import { timeAgo } from "../../src/core/text.ts";
import { firstPrompt } from "../../src/agents/claude/first-prompt.ts";
import { FIXTURES } from "../helpers/fixtures.ts";
import { appendTurn } from "../fault/transcript.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ms-last-session-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = (day: number, h: number, m: number) => new Date(2026, 10, day, h, m);
const add = (sessionId: string, turnUuid: string, now: Date, bullets: string[], transcriptPath = "-") => appendTurnNote({ memoryDir: dir, sessionId, turnUuid, transcriptPath, bullets, now });

describe("notesIn", () => {
  test("one note per ### section: time, lines, anchor, bullets; a fence hides headings", () => {
    const text = [
      "# 2026-11-21", // 1
      "",
      "## Session 10:00",
      "",
      "### 10:00", // 5
      "<!-- session:s1 turn:t1 transcript:/x/s1.jsonl -->",
      "- first bullet",
      "* second bullet",
      "```",
      "### not a heading", // 10
      "```",
      "",
      "### Decisions", // 13
      "- hand-written",
      "",
      "## Session 11:00", // 16
      "prose",
      "",
    ].join("\n");
    const notes = notesIn(text, "2026-11-21.md");
    expect(notes).toHaveLength(2);
    expect(notes[0]).toEqual({
      file: "2026-11-21.md",
      day: "2026-11-21",
      time: "10:00",
      line: 5,
      endLine: 11,
      heading: "10:00",
      anchor: { session: "s1", turn: "t1", transcript: "/x/s1.jsonl" },
      bullets: ["first bullet", "second bullet"],
    });
    expect(notes[1]).toMatchObject({ time: "", line: 13, endLine: 14, heading: "Decisions", bullets: ["hand-written"] });
    expect(notes[1]!.anchor).toBeUndefined();
  });

  test("journalNotes: every daily file, newest note first", async () => {
    await add("a", "a1", at(20, 9, 0), ["one"]);
    await add("a", "a2", at(20, 9, 30), ["two"]);
    await add("b", "b1", at(21, 8, 0), ["three"]);
    writeFileSync(join(dir, "notes.md"), "### 10:00\n- not a daily file\n");
    expect(journalNotes(dir).map((n) => `${n.day} ${n.time} ${n.bullets[0]}`)).toEqual(["2026-11-21 08:00 three", "2026-11-20 09:30 two", "2026-11-20 09:00 one"]);
  });
});

describe("previousSession", () => {
  test("the most recently active session other than the one starting, with its first and last notes", async () => {
    await add("A", "a1", at(20, 9, 0), ["User asked to add a cache"]);
    await add("A", "a2", at(21, 10, 0), ["follow-up"]);
    await add("manual", "note-1", at(21, 11, 0), ["a note of the user's own"]);
    await add("B", "b1", at(21, 12, 0), ["User asked to fix CI"]);
    const prev = previousSession(dir)!;
    expect(prev.session).toBe("B");
    // Resuming B: the previous one is A, which began the day before.
    const a = previousSession(dir, { exclude: "B" })!;
    expect(a.session).toBe("A");
    expect(`${a.first.day} ${a.first.time}`).toBe("2026-11-20 09:00");
    expect(`${a.last.day} ${a.last.time}`).toBe("2026-11-21 10:00");
    expect(previousSession(join(dir, "none"))).toBeUndefined();
  });
});

describe("firstPrompt", () => {
  test("the first typed prompt of real transcripts, read from their head", async () => {
    expect(await firstPrompt(join(FIXTURES, "spotter/short.jsonl"))).toBe("mix phx.server doesnt seem to start");
    // Injected memory and local command output are not the user's request.
    expect(await firstPrompt(join(FIXTURES, "injected.jsonl"))).toBe("Add a health check endpoint");
    expect(await firstPrompt(join(FIXTURES, "commands.jsonl"))).toBe("ok, ship it");
    expect(await firstPrompt(join(dir, "missing.jsonl"))).toBeUndefined();
  });

  test("a session that only ran slash commands is named by the first one", async () => {
    const path = join(dir, "cmd.jsonl");
    writeFileSync(path, JSON.stringify({ type: "user", uuid: "u1", sessionId: "s", message: { role: "user", content: "<command-name>/review</command-name><command-args>src/a.ts</command-args>" } }) + "\n");
    expect(await firstPrompt(path)).toBe("/review src/a.ts");
  });

  test("only the head of a long transcript is read", async () => {
    const path = join(dir, "late.jsonl");
    const filler = JSON.stringify({ type: "progress", data: "x".repeat(1000) }) + "\n";
    writeFileSync(path, filler.repeat(600) + JSON.stringify({ type: "user", uuid: "u1", sessionId: "s", message: { role: "user", content: "too late" } }) + "\n");
    expect(await firstPrompt(path)).toBeUndefined();
    expect(await firstPrompt(path, 10 * 1024 * 1024)).toBe("too late");
  });
});

describe("lastSessionPhrase", () => {
  test("how long ago, and the first request from the transcript, redacted before it is clipped", async () => {
    const transcript = join(dir, "B.jsonl");
    const key = `sk-ant-api03-${"Q".repeat(60)}`;
    appendTurn(transcript, { sessionId: "B", uuid: "b1", promptId: "p1", prompt: `Rotate the key ${key} and then   fix\nthe deploy script`, command: "ls", output: "ok", reply: "done" }, "all");
    await add("B", "b1", at(21, 12, 0), ["User asked to rotate a key"], transcript);
    await add("B", "b2", at(21, 13, 30), ["later turn"], transcript);
    const phrase = await lastSessionPhrase(dir, "C", at(21, 15, 45));
    expect(phrase).toBe('Last session (2h ago): "Rotate the key [REDACTED:anthropic-key] and then fix the deploy script"');
    // Long requests are clipped, and the secret never shows even partly.
    writeFileSync(transcript, "");
    appendTurn(transcript, { sessionId: "B", uuid: "b1", promptId: "p1", prompt: `${"word ".repeat(19)}${key} ${"tail ".repeat(40)}`, command: "ls", output: "ok", reply: "done" }, "all");
    const long = (await lastSessionPhrase(dir, "C", at(21, 15, 45)))!;
    expect(long).not.toContain("QQQQ");
    expect(long.length).toBeLessThan(140);
    expect(long).toEndWith('…"');
  });

  test("without its transcript, the first note's first bullet; with no previous session, nothing", async () => {
    expect(await lastSessionPhrase(dir, "X", at(21, 9, 0))).toBeUndefined();
    await add("A", "a1", at(19, 9, 0), ["User asked about the cache"], "/gone/A.jsonl");
    expect(await lastSessionPhrase(dir, "X", at(21, 9, 30))).toBe('Last session (2d ago): "User asked about the cache"');
    // The session starting now (a resume) is not its own previous session.
    expect(await lastSessionPhrase(dir, "A", at(21, 9, 30))).toBeUndefined();
  });
});

test("timeAgo: the largest unit that fits, days rounded, nothing for the future", () => {
  const now = new Date(2026, 10, 23, 12, 0);
  const before = (min: number) => new Date(now.getTime() - min * 60_000);
  expect([0.5, 5, 59, 60, 23 * 60 + 59, 36 * 60, 47 * 60, 59 * 1440, 61 * 1440, 800 * 1440].map((m) => timeAgo(before(m), now))).toEqual([
    "just now",
    "5m ago",
    "59m ago",
    "1h ago",
    "23h ago",
    "2d ago",
    "2d ago",
    "59d ago",
    "2mo ago",
    "2y ago",
  ]);
  expect(timeAgo(before(-120), now)).toBeUndefined();
});
