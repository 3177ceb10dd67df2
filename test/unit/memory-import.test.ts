import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anchorsIn } from "../../src/core/anchor.ts";
import {
  dayOfTurn,
  estimateCost,
  existingNotes,
  planImport,
  runImport,
  SummarizerGaveUpError,
  turnTimes,
  turnToLastTurn,
} from "../../src/memory/import.ts";
import { appendTurnNote, localDay } from "../../src/memory/journal.ts";
import { findProjectTranscripts, projectSlug } from "../../src/agents/claude/files.ts";
import { extractBullets, type Summary } from "../../src/memory/summarizer.ts";
import type { LastTurn, ProjectTranscripts, Turn } from "../../src/transcript/types.ts";
import { claudeProject, wholeSource } from "../helpers/sources.ts";
import { renderTurnForSummary } from "../../src/agents/claude/summary.ts";
import { srcModule, withFileSizeLimit } from "../helpers/file-size-limit.ts";

let dir: string;
let root: string;
let memory: string;
let projects: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "memsearch-import-"));
  root = join(dir, "proj");
  mkdirSync(join(root, ".git"), { recursive: true });
  memory = join(root, ".memsearch", "memory");
  projects = join(dir, "claude", "projects");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface T {
  uuid: string;
  ts: string;
  prompt: string;
  reply?: string;
  promptId?: string;
  tool?: { name: string; input: Record<string, unknown>; output: string };
}

/** A Claude Code 2.1.x session file: per turn a prompt, maybe one tool call and result, a reply. */
function transcript(session: string, cwd: string, turns: T[]): string {
  const base = { parentUuid: null, isSidechain: false, userType: "external", cwd, sessionId: session, version: "2.1.40" };
  const lines: unknown[] = [];
  for (const t of turns) {
    lines.push({ ...base, type: "user", message: { role: "user", content: t.prompt }, uuid: t.uuid, timestamp: t.ts, ...(t.promptId ? { promptId: t.promptId } : {}) });
    if (t.tool) {
      lines.push({ ...base, type: "assistant", message: { id: `m-${t.uuid}-1`, role: "assistant", content: [{ type: "tool_use", id: `tu-${t.uuid}`, name: t.tool.name, input: t.tool.input }] }, uuid: `${t.uuid}-a1`, timestamp: t.ts });
      lines.push({ ...base, type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: `tu-${t.uuid}`, content: t.tool.output }] }, uuid: `${t.uuid}-r`, timestamp: t.ts });
    }
    lines.push({ ...base, type: "assistant", message: { id: `m-${t.uuid}-2`, role: "assistant", content: [{ type: "text", text: t.reply ?? `Done with ${t.prompt}.` }] }, uuid: `${t.uuid}-a2`, timestamp: t.ts });
  }
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

const OLD = new Date("2026-01-01T00:00:00Z");

/** Writes a session file into the projects folder, dated in the past (not an active session). */
function session(slugDir: string, session: string, cwd: string, turns: T[], name = `${session}.jsonl`): string {
  const d = join(projects, slugDir);
  mkdirSync(d, { recursive: true });
  const p = join(d, name);
  writeFileSync(p, transcript(session, cwd, turns));
  utimesSync(p, OLD, OLD);
  return p;
}

const extract = async (t: LastTurn): Promise<Summary> => ({ bullets: extractBullets(t), provider: "extract" });
const plan = (over: Partial<Parameters<typeof planImport>[0]> & { others?: ProjectTranscripts[] } = {}) => {
  const { others = [], ...rest } = over;
  return planImport({ root, memoryDir: memory, sources: [claudeProject(root, projects, over.warn), ...others], ...rest });
};
const anchorsOf = (day: string) => anchorsIn(readFileSync(join(memory, `${day}.md`), "utf8"));
const allAnchors = () =>
  readdirSync(memory)
    .filter((n) => n.endsWith(".md"))
    .flatMap((n) => anchorsIn(readFileSync(join(memory, n), "utf8")));

// Midday UTC: the same calendar day in every time zone from UTC−11 to UTC+11.
const DAY1 = "2026-02-10T12:00:00.000Z";
const at = (iso: string, min: number) => new Date(Date.parse(iso) + min * 60_000).toISOString();

describe("turn → note", () => {
  test("the summariser input is the Stop hook's: labelled, tool calls included, secrets redacted everywhere", () => {
    const key = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0".repeat(4);
    const turn: Turn = {
      index: 0,
      uuid: "u1",
      timestamp: DAY1,
      kind: "prompt",
      userText: `use the key ${key} <private>my salary</private>`,
      assistantTexts: [`I stored ${key}.`],
      tools: [{ id: "t1", name: "Bash", input: `export ANTHROPIC_API_KEY=${key}`, output: `ok ${key}` }],
      items: [],
      toolCount: 1,
      line: 1,
      start: 0,
      end: 10,
    };
    turn.items = [{ kind: "tool", call: turn.tools[0]! }, { kind: "assistant", text: turn.assistantTexts[0]! }];
    const t = turnToLastTurn("s1", turn, renderTurnForSummary);
    expect(t).toMatchObject({ sessionId: "s1", turnUuid: "u1", timestamp: DAY1 });
    const all = JSON.stringify(t);
    expect(all).not.toContain(key);
    expect(all).not.toContain("my salary");
    expect(t.text).toStartWith("[User]: use the key [REDACTED");
    expect(t.text).toContain("[Claude Code calls tool]: Bash export ANTHROPIC_API_KEY=[REDACTED");
    expect(t.text).toContain("[Tool output]: ok [REDACTED");
    expect(t.tools[0]!.input).not.toContain(key);
  });

  test("a turn's day is its own timestamp's local day; a turn without one takes its neighbour's", () => {
    expect(dayOfTurn({ timestamp: DAY1 })).toBe(localDay(new Date(DAY1)));
    expect(dayOfTurn({ timestamp: "2025-09-19T12:00:00Z" })).toBe(localDay(new Date("2025-09-19T12:00:00Z")));
    const t = turnTimes([{ timestamp: undefined }, { timestamp: DAY1 }, { timestamp: "garbage" }, { timestamp: at(DAY1, 60) }], 0);
    expect(t).toEqual([Date.parse(DAY1), Date.parse(DAY1), Date.parse(DAY1), Date.parse(at(DAY1, 60))]);
    expect(turnTimes([{}], 1234)).toEqual([1234]);
  });
});

describe("finding the project's transcripts", () => {
  test("by the recorded cwd: root, subdirectory and linked worktree count; other projects and subagents do not", async () => {
    // A linked worktree of the project: its .git file points into the main repository's .git.
    const wt = join(dir, "wt");
    mkdirSync(join(root, ".git", "worktrees", "wt"), { recursive: true });
    writeFileSync(join(root, ".git", "worktrees", "wt", "commondir"), "../..\n");
    mkdirSync(wt);
    writeFileSync(join(wt, ".git"), `gitdir: ${join(root, ".git", "worktrees", "wt")}\n`);
    const other = join(dir, "other");
    mkdirSync(join(other, ".git"), { recursive: true });
    mkdirSync(join(root, "src"));
    const t = (u: string): T[] => [{ uuid: u, ts: DAY1, prompt: "hello, fix the build" }];
    const a = session(projectSlug(root), "a", root, t("a1"));
    const b = session(projectSlug(join(root, "src")), "b", join(root, "src"), t("b1"));
    const c = session(projectSlug(wt), "c", wt, t("c1"));
    session(projectSlug(other), "d", other, t("d1"));
    // No cwd recorded anywhere: the root's own folder is the evidence.
    mkdirSync(join(projects, projectSlug(root), "a", "subagents"), { recursive: true });
    writeFileSync(join(projects, projectSlug(root), "a", "subagents", "agent-x.jsonl"), transcript("a", root, t("x1")));
    const e = join(projects, projectSlug(root), "e.jsonl");
    writeFileSync(e, transcript("e", root, t("e1")).replaceAll(`"cwd":${JSON.stringify(root)},`, ""));
    const found = await findProjectTranscripts(root, projects);
    expect(found.files.sort()).toEqual([a, e, b, c].sort());
    expect(found.otherProjects).toBe(1);
  });

  test("no projects folder: nothing found, no error", async () => {
    const p = await plan();
    expect(p.transcripts).toEqual([]);
    expect(p.projectsDir).toBe(projects);
  });

  test("a garbage or foreign file is skipped with one warning, an empty one silently, the rest imported", async () => {
    const slug = projectSlug(root);
    session(slug, "good", root, [{ uuid: "g1", ts: DAY1, prompt: "hello, fix the build" }]);
    writeFileSync(join(projects, slug, "junk.jsonl"), `{"cwd":${JSON.stringify(root)},"type":"event_msg"}\n{"type":"response_item"}\n`);
    writeFileSync(join(projects, slug, "empty.jsonl"), "");
    const warnings: string[] = [];
    const p = await plan({ warn: (m) => warnings.push(m) });
    expect(p.todo.map((t) => t.uuid)).toEqual(["g1"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("junk.jsonl");
    expect(p.skipped.map((s) => s.path)).toEqual([join(projects, slug, "junk.jsonl")]);
  });
});

describe("planning", () => {
  test("turns already noted are skipped, by turn uuid and by the prompt id of a hook-written note, in any day's file", async () => {
    session(projectSlug(root), "s1", root, [
      { uuid: "u1", ts: DAY1, prompt: "write step one" },
      { uuid: "u2", ts: at(DAY1, 5), prompt: "write step two", promptId: "p2" },
      { uuid: "u3", ts: at(DAY1, 10), prompt: "write step three", promptId: "p3" },
    ]);
    // The Stop hook noted u1 by its uuid; the hooks' own record noted u2 by its prompt id, a day later.
    await appendTurnNote({ memoryDir: memory, sessionId: "s1", turnUuid: "u1", transcriptPath: "x", bullets: ["- one"], now: new Date(DAY1) });
    await appendTurnNote({ memoryDir: memory, sessionId: "s1", turnUuid: "p2", transcriptPath: "x", bullets: ["- two"], now: new Date(at(DAY1, 24 * 60)) });
    const p = await plan();
    expect(p.already).toBe(2);
    expect(p.todo.map((t) => t.uuid)).toEqual(["u3"]);
    const res = await runImport(p, { memoryDir: memory, summarize: extract });
    expect(res.written).toBe(1);
    expect(allAnchors().map((a) => a.turn).sort()).toEqual(["p2", "u1", "u3"]);
  });

  test("the last turn of a session written to in the last minutes is left to the Stop hook", async () => {
    const p0 = session(projectSlug(root), "s1", root, [
      { uuid: "u1", ts: DAY1, prompt: "write step one" },
      { uuid: "u2", ts: at(DAY1, 5), prompt: "write step two" },
    ]);
    const now = Date.now();
    utimesSync(p0, new Date(now - 60_000), new Date(now - 60_000));
    const p = await plan({ now });
    expect(p.todo.map((t) => t.uuid)).toEqual(["u1"]);
    expect(p.active).toBe(1);
    expect((await plan({ now: now + 11 * 60_000 })).todo).toHaveLength(2);
  });

  test("activeMs 0 leaves no turn to the Stop hook, even for a file written in the same millisecond as the plan", async () => {
    const p0 = session(projectSlug(root), "s1", root, [
      { uuid: "u1", ts: DAY1, prompt: "write step one" },
      { uuid: "u2", ts: at(DAY1, 5), prompt: "write step two" },
    ]);
    // A file time a fraction of a millisecond past `now` (Date.now() is whole milliseconds, a file's time is not).
    const now = Date.now();
    utimesSync(p0, (now + 0.5) / 1000, (now + 0.5) / 1000);
    const p = await plan({ now, activeMs: 0 });
    expect(p.todo.map((t) => t.uuid)).toEqual(["u1", "u2"]);
    expect(p.active).toBe(0);
  });

  test("another agent's turns follow the same rule: a trivial prompt answered with words only and a turn nobody answered are not written", async () => {
    const turn = (uuid: string, prompt: string, o: { reply?: string; tool?: boolean } = {}): Turn => ({
      index: 0,
      uuid,
      kind: "prompt",
      userText: prompt,
      assistantTexts: o.reply ? [o.reply] : [],
      tools: o.tool ? [{ id: "c1", name: "bash", input: "ls", output: "a" }] : [],
      items: [],
      toolCount: o.tool ? 1 : 0,
      replied: !!o.reply || !!o.tool,
      timestamp: DAY1,
      line: 1,
      start: 0,
      end: 0,
    });
    const rollout = join(dir, "rollout-1.jsonl");
    const old = new Date(Date.now() - 3_600_000);
    const turns = [turn("t1", "wire the billing webhook to the queue", { reply: "Done.", tool: true }), turn("t2", "thanks", { reply: "You're welcome." }), turn("t3", "explain the retry policy please"), turn("t4", "ok", { tool: true })];
    const p = await plan({ others: [wholeSource({ agent: "codex", files: [{ path: rollout, size: 3, mtime: old.getTime() }], read: async () => ({ sessionId: "cx", turns }) })] });
    expect(p.todo.map((t) => t.uuid)).toEqual(["t1", "t4"]);
    expect(p.notTurns).toMatchObject({ trivial: 1, "no-reply": 1 });
  });

  test("a turn copied into a resumed session's file is written once", async () => {
    session(projectSlug(root), "s1", root, [{ uuid: "u1", ts: DAY1, prompt: "write step one" }]);
    session(projectSlug(root), "s2", root, [
      { uuid: "u1", ts: DAY1, prompt: "write step one" },
      { uuid: "u2", ts: at(DAY1, 5), prompt: "write step two" },
    ]);
    const p = await plan();
    expect(p.todo.map((t) => `${t.sessionId}/${t.uuid}`)).toEqual(["s1/u1", "s2/u2"]);
    expect(p.repeated).toBe(1);
  });

  test("the cost: none for the extract; for a model one call per turn and characters/4 tokens", async () => {
    session(projectSlug(root), "s1", root, [
      { uuid: "u1", ts: DAY1, prompt: "remember the parser ".repeat(250) },
      { uuid: "u2", ts: at(DAY1, 5), prompt: "write step two" },
    ]);
    const p = await plan();
    expect(await estimateCost(p, "extract")).toEqual({ provider: "extract", calls: 0, inputChars: 0, inputTokens: 0 });
    const c = await estimateCost(p, "claude");
    expect(c.calls).toBe(2);
    expect(c.inputChars).toBeGreaterThan(4000);
    expect(c.inputTokens).toBe(Math.ceil(c.inputChars / 4));
  });
});

describe("writing", () => {
  test("notes go oldest first across sessions, each into its own day's file, under the session's heading", async () => {
    const DAY2 = "2026-02-14T12:00:00.000Z";
    session(projectSlug(root), "s1", root, [
      { uuid: "a1", ts: DAY1, prompt: "alpha step one" },
      { uuid: "a2", ts: at(DAY1, 20), prompt: "alpha step two" },
      { uuid: "a3", ts: DAY2, prompt: "alpha step three" },
    ]);
    session(projectSlug(root), "s2", root, [
      { uuid: "b1", ts: at(DAY1, 10), prompt: "beta step one" },
      { uuid: "b2", ts: at(DAY1, 30), prompt: "beta step two" },
    ]);
    const p = await plan();
    expect(p.todo.map((t) => t.uuid)).toEqual(["a1", "b1", "a2", "b2", "a3"]);
    expect(p.days).toEqual([localDay(new Date(DAY1)), localDay(new Date(DAY2))]);
    const progress: number[] = [];
    const res = await runImport(p, { memoryDir: memory, summarize: extract, onProgress: (x) => progress.push(x.done) });
    expect(res).toMatchObject({ written: 5, sessions: 2, files: 2, fallbacks: 0 });
    expect(progress).toEqual([0, 1, 2, 3, 4, 5]);
    expect(anchorsOf(localDay(new Date(DAY1))).map((a) => a.turn)).toEqual(["a1", "b1", "a2", "b2"]);
    expect(anchorsOf(localDay(new Date(DAY2))).map((a) => a.turn)).toEqual(["a3"]);
    const text = readFileSync(join(memory, `${localDay(new Date(DAY1))}.md`), "utf8");
    expect(text.match(/^## Session /gm)).toHaveLength(2);
    expect(text).toContain("- User asked: alpha step one");
    expect(text).toContain(`transcript:${join(projects, projectSlug(root), "s1.jsonl")}`);
    // A second run finds everything noted.
    const again = await plan();
    expect(again.todo).toHaveLength(0);
    expect(again.already).toBe(5);
  });

  test("control characters in a transcript (prompt, reply, tool call, session id) never reach the notes; a re-run finds every turn noted", async () => {
    const bad = "\0\x1b[31m\x07\x7f\x85\r";
    session(projectSlug(root), `s-${bad}-1`, root, [
      { uuid: "c1", ts: DAY1, prompt: `fix the walrus${bad} build`, reply: `Fixed${bad} it.`, tool: { name: "Bash", input: { command: `echo '${bad}'` }, output: `${bad}ok` } },
      { uuid: `c2-${bad}`, ts: at(DAY1, 5), prompt: `and the pelican${bad} one` },
    ], "hostile.jsonl");
    const p = await plan();
    const res = await runImport(p, { memoryDir: memory, summarize: extract });
    expect(res.written).toBe(2);
    const bytes = readFileSync(join(memory, `${localDay(new Date(DAY1))}.md`));
    expect(bytes.includes(0)).toBe(false);
    const text = bytes.toString("utf8");
    expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    // The control characters are gone and the request is whole.
    expect(text).toContain("- User asked: fix the walrus build\n");
    expect(text).toContain("- User asked: and the pelican one\n");
    expect(anchorsOf(localDay(new Date(DAY1))).map((a) => [a.session, a.turn])).toEqual([[`s-${bad}-1`, "c1"], [`s-${bad}-1`, `c2-${bad}`]]);
    expect((await plan()).todo).toHaveLength(0);
  });

  test("earlier turns land after later notes already in a day's file, and the plan says which days", async () => {
    session(projectSlug(root), "s1", root, [{ uuid: "u1", ts: DAY1, prompt: "write step one" }]);
    await appendTurnNote({ memoryDir: memory, sessionId: "live", turnUuid: "later", transcriptPath: "x", bullets: ["- later"], now: new Date(at(DAY1, 120)) });
    const p = await plan();
    expect(p.laterNotesDays).toEqual([localDay(new Date(DAY1))]);
    const before = readFileSync(join(memory, `${localDay(new Date(DAY1))}.md`), "utf8");
    await runImport(p, { memoryDir: memory, summarize: extract });
    const after = readFileSync(join(memory, `${localDay(new Date(DAY1))}.md`), "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect(anchorsOf(localDay(new Date(DAY1))).map((a) => a.turn)).toEqual(["later", "u1"]);
  });

  test("summaries run ahead concurrently but notes are written in plan order", async () => {
    session(projectSlug(root), "s1", root, Array.from({ length: 6 }, (_, i) => ({ uuid: `u${i}`, ts: at(DAY1, i), prompt: `work on turn ${i}` })));
    const p = await plan();
    let running = 0;
    let peak = 0;
    const slowFirst = async (t: LastTurn): Promise<Summary> => {
      running++;
      peak = Math.max(peak, running);
      await Bun.sleep(t.turnUuid === "u0" ? 60 : 5);
      running--;
      return { bullets: [`- note for ${t.turnUuid}`], provider: "claude" };
    };
    await runImport(p, { memoryDir: memory, summarize: slowFirst, concurrency: 3 });
    expect(peak).toBe(3);
    expect(anchorsOf(localDay(new Date(DAY1))).map((a) => a.turn)).toEqual(["u0", "u1", "u2", "u3", "u4", "u5"]);
  });

  test("a model failing turn after turn stops the import; the turns before keep their notes", async () => {
    session(projectSlug(root), "s1", root, Array.from({ length: 8 }, (_, i) => ({ uuid: `u${i}`, ts: at(DAY1, i), prompt: `work on turn ${i}` })));
    const p = await plan();
    const failing = async (t: LastTurn): Promise<Summary> =>
      t.turnUuid === "u0" ? { bullets: ["- fine"], provider: "claude" } : { bullets: extractBullets(t), provider: "extract", fallbackReason: "claude not found on PATH" };
    const warnings: string[] = [];
    const err = await runImport(p, { memoryDir: memory, summarize: failing, warn: (m) => warnings.push(m) }).catch((e) => e);
    expect(err).toBeInstanceOf(SummarizerGaveUpError);
    expect(err.message).toContain("claude not found on PATH");
    // u0 from the model, u1–u4 from the extract (per-turn fallback), then the fifth failure in a row stops.
    expect(allAnchors().map((a) => a.turn)).toEqual(["u0", "u1", "u2", "u3", "u4"]);
    expect(warnings).toHaveLength(1);
  });

  test("a disk that fills up mid-import: one StorageError, whole notes only, and a re-run writes the rest exactly once", async () => {
    session(projectSlug(root), "s1", root, Array.from({ length: 5 }, (_, i) => ({ uuid: `u${i}`, ts: at(DAY1, i), prompt: `work on turn ${i}` })));
    // The daily file may not grow past 4 KiB (the first two notes fit), and the third note is longer than that.
    const limit = 4096;
    const err = await withFileSizeLimit<{ storage: boolean; message: string }>(
      limit,
      `import { planImport, runImport } from ${srcModule("src/memory/import.ts")};
      import { extractBullets } from ${srcModule("src/memory/summarizer.ts")};
      import { StorageError } from ${srcModule("src/core/errors.ts")};
      import { claudeProjectTranscripts } from ${srcModule("src/agents/claude/transcripts.ts")};
      const o = ${JSON.stringify({ root, memoryDir: memory, projectsDir: projects })};
      const summarize = async (t) => ({ bullets: t.turnUuid === "u2" ? ["- " + "w".repeat(${limit})] : extractBullets(t), provider: "extract" });
      try {
        await runImport(await planImport({ ...o, sources: [claudeProjectTranscripts(o.root, { projectsDir: o.projectsDir })] }), { memoryDir: o.memoryDir, summarize });
        console.log(JSON.stringify({ storage: false, message: "imported" }));
      } catch (e) {
        console.log(JSON.stringify({ storage: e instanceof StorageError, message: String(e?.message ?? e) }));
      }`,
    );
    expect(err.storage).toBe(true);
    expect(err.message).toMatch(/file too large|EFBIG/);
    expect(err.message).toContain("2 notes were written before it");
    const file = join(memory, `${localDay(new Date(DAY1))}.md`);
    const text = readFileSync(file, "utf8");
    expect(anchorsIn(text).map((a) => a.turn)).toEqual(["u0", "u1"]);
    expect(text.endsWith("\n\n")).toBe(true);
    const again = await plan();
    expect(again.todo.map((t) => t.uuid)).toEqual(["u2", "u3", "u4"]);
    await runImport(again, { memoryDir: memory, summarize: extract });
    expect(anchorsIn(readFileSync(file, "utf8")).map((a) => a.turn)).toEqual(["u0", "u1", "u2", "u3", "u4"]);
  });

  test("existingNotes reads anchors and the latest ### time of every daily file", async () => {
    await appendTurnNote({ memoryDir: memory, sessionId: "s", turnUuid: "t1", transcriptPath: "x", bullets: ["- a"], now: new Date(2026, 1, 3, 9, 5) });
    await appendTurnNote({ memoryDir: memory, sessionId: "s", turnUuid: "t2", transcriptPath: "x", bullets: ["- b"], now: new Date(2026, 1, 3, 17, 40) });
    const e = existingNotes(memory);
    expect([...e.turns].sort()).toEqual(["t1", "t2"]);
    expect(e.lastTime.get("2026-02-03")).toBe("17:40");
  });
});
