import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accountTurns, turnsLine } from "../../src/memory/accounting.ts";
import { changeList } from "../../src/memory/forgotten.ts";
import { appendTurnNote } from "../../src/memory/journal.ts";
import { planImport, runImport } from "../../src/memory/import.ts";
import { extractBullets, type Summary } from "../../src/memory/summarizer.ts";
import type { LastTurn } from "../../src/transcript/types.ts";
import { accountedSession, SESSION } from "../helpers/accounted-session.ts";
import { agentEnv, CODEX_MISSING, CODEX_NOTED, codexRollout, GEMINI_NOTED, OPENCODE_EPOCH, OPENCODE_FORGOTTEN, OPENCODE_NOTED, otherAgentSessions } from "../helpers/accounted-others.ts";
import { projectTranscripts } from "../../src/agents/registry.ts";
import { claudeProject } from "../helpers/sources.ts";

let dir: string;
let root: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "memsearch-accounting-"));
  root = join(dir, "proj");
  home = join(dir, "home");
  mkdirSync(join(root, ".git"), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const opts = () => ({ root, memoryDir: join(root, ".memsearch", "memory"), dataDir: join(root, ".memsearch"), sources: [claudeProject(root, join(home, ".claude", "projects"))] });
const extract = async (t: LastTurn): Promise<Summary> => ({ bullets: extractBullets(t), provider: "extract" });

describe("every turn accounted for", () => {
  test("a noted, a queued and a missing turn, local commands and a trivial turn: each counted once, the missing one named", async () => {
    const s = await accountedSession(root, home);
    const a = await accountTurns(opts());
    expect(a.sessions).toHaveLength(1);
    // The transcript's own turns: everything but the /clear nobody answered.
    expect(a.sessions[0]).toMatchObject({ sessionId: SESSION, turns: 5, noted: 1, queued: 1, running: 0, missing: 1, notTurns: { "local-command": 2, "no-reply": 0, trivial: 1 } });
    expect(a.toCapture).toBe(3);
    expect(a.missingTurns.map((m) => [m.turn, m.prompt])).toEqual([[s.missing, "Write the release notes for version 2"]]);
    expect(a.since).toBe("2026-02-10T12:00:00.000Z");
    expect(Object.values(a.days).reduce((n, d) => n + d.missing, 0)).toBe(1);
    expect(turnsLine(a)).toStartWith(`1 of 3 turns since 2026-02-10 have no note: 2026-02-10 12:04 session acc0be11 turn t-missin "Write the release notes for version 2"; 1 queued (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)`);
  });

  test("import plans exactly the missing turns, and afterwards none is missing", async () => {
    const s = await accountedSession(root, home);
    const before = await accountTurns(opts());
    const plan = await planImport({ ...opts() });
    // The queued turn is the drainer's; local commands and the trivial turn are no turns.
    expect(plan.todo.map((t) => t.uuid)).toEqual([s.missing]);
    expect(plan.queued).toBe(1);
    expect(before.missingTurns.map((m) => m.turn)).toEqual([s.missing]);
    await runImport(plan, { memoryDir: opts().memoryDir, summarize: extract });
    const after = await accountTurns(opts());
    expect(after).toMatchObject({ missing: 0, noted: 2, queued: 1, toCapture: 3 });
    expect(turnsLine(after)).toBe("2 of 3 turns since 2026-02-10 have a note; 1 queued (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)");
  });

  test("a forgotten turn is no missing one: doctor does not ask import to write what import leaves out", async () => {
    const s = await accountedSession(root, home);
    await changeList(opts().dataDir, (entries) => ({ entries: [...entries, { turn: s.missing, at: new Date().toISOString() }], result: undefined }));
    const a = await accountTurns(opts());
    expect(a).toMatchObject({ missing: 0, forgotten: 1, noted: 1, queued: 1, toCapture: 2 });
    expect(turnsLine(a)).toBe("1 of 2 turns since 2026-02-10 have a note; 1 queued, 1 forgotten (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)");
    expect((await planImport({ ...opts() })).todo).toEqual([]);
  });

  test("a session written to in the last minutes: its last turn is running, not missing, and import leaves it to the Stop hook", async () => {
    const s = await accountedSession(root, home);
    const { appendFileSync, utimesSync } = await import("node:fs");
    appendFileSync(s.transcript, JSON.stringify({ type: "user", sessionId: SESSION, cwd: root, uuid: "t-live", timestamp: "2026-02-10T12:20:00.000Z", message: { role: "user", content: "Bump the version in package.json" } }) + "\n");
    const now = Date.parse("2026-02-10T13:05:00Z");
    utimesSync(s.transcript, new Date(now - 60_000), new Date(now - 60_000));
    const a = await accountTurns({ ...opts(), now });
    expect(a).toMatchObject({ running: 1, missing: 1 });
    expect((await planImport({ ...opts(), now })).todo.map((t) => t.uuid)).toEqual([s.missing]);
  });

  test("the cache: an unchanged transcript is not read again, a changed one is, a damaged cache is ignored", async () => {
    const s = await accountedSession(root, home);
    const { readFileSync, statSync, utimesSync, writeFileSync } = await import("node:fs");
    const cacheFile = join(home, ".memsearch", "turns-cache.json");
    const first = await accountTurns({ ...opts(), cacheFile });
    expect(first.missing).toBe(1);
    // The same bytes count (same size, same time, same inode) with the missing turn's prompt rewritten: the cache answers.
    const before = statSync(s.transcript);
    writeFileSync(s.transcript, readFileSync(s.transcript, "utf8").replace("Write the release notes", "Write the RELEASE notes"));
    utimesSync(s.transcript, before.atime, before.mtime);
    expect((await accountTurns({ ...opts(), cacheFile })).missingTurns[0]!.prompt).toBe("Write the release notes for version 2");
    // Grown: read again.
    writeFileSync(s.transcript, readFileSync(s.transcript, "utf8") + JSON.stringify({ type: "user", sessionId: SESSION, cwd: root, uuid: "t-late", timestamp: "2026-02-10T12:30:00.000Z", message: { role: "user", content: "Tag the release as v2.0.0 now" } }) + "\n");
    utimesSync(s.transcript, before.atime, before.mtime);
    const grown = await accountTurns({ ...opts(), cacheFile });
    expect(grown.missingTurns[0]!.prompt).toBe("Write the RELEASE notes for version 2");
    expect(grown.turns).toBe(6);
    writeFileSync(cacheFile, "{ not json");
    expect(await accountTurns({ ...opts(), cacheFile })).toMatchObject({ turns: 6, missing: 1 });
    expect(JSON.parse(readFileSync(cacheFile, "utf8")).version).toBe(1);
  });
});

describe("every turn accounted for, every agent's", () => {
  // Claude Code's are opts()'s.
  const others = (env: NodeJS.ProcessEnv) => projectTranscripts(root, env).filter((s) => s.agent !== "claude");

  test("a Codex rollout, a Gemini CLI chat and an OpenCode session of the project: noted turns counted, the one without a note missing with its agent, the forgotten one forgotten; another project's rollout left out", async () => {
    const o = await otherAgentSessions(root, home);
    await accountedSession(root, home);
    // The same rollout, run in another project: not this project's turn.
    const elsewhere = join(dir, "other");
    mkdirSync(join(elsewhere, ".git"), { recursive: true });
    codexRollout(home, elsewhere, "paginated-tool-0.169.jsonl", "rollout-2026-11-26T11-20-00-01a21799.jsonl");
    const a = await accountTurns({ ...opts(), sources: [...opts().sources, ...others(o.env)] });
    expect(a.unreadable).toEqual([]);
    expect(a.agents.map((x) => [x.label, x.turns, x.noted, x.missing, x.forgotten])).toEqual([
      ["Claude Code", 5, 1, 1, 0],
      ["Codex CLI", 2, 1, 1, 0],
      ["Gemini CLI", 1, 1, 0, 0],
      ["OpenCode", 2, 1, 0, 1],
    ]);
    expect(a).toMatchObject({ noted: 4, missing: 2, queued: 1, forgotten: 1, toCapture: 7 });
    expect(a.sessions.map((s) => [s.agent, s.sessionId, s.transcript])).toEqual(
      expect.arrayContaining([
        ["codex", CODEX_NOTED.session, o.rollouts.noted],
        ["codex", CODEX_MISSING.session, o.rollouts.missing],
        ["gemini", GEMINI_NOTED.session, o.chat],
        ["opencode", "ses_1", o.opencode],
      ]),
    );
    expect(a.missingTurns.map((m) => [m.agent, m.sessionId, m.turn, m.at, m.transcript])).toEqual([
      ["claude", SESSION, "t-missing", "2026-02-10T12:04:00.000Z", a.missingTurns[0]!.transcript],
      ["codex", CODEX_MISSING.session, CODEX_MISSING.turn, CODEX_MISSING.at, o.rollouts.missing],
    ]);
    expect(a.days["2026-11-26"]).toEqual({ noted: 2, missing: 1 });
    expect(turnsLine(a)).toBe(
      `2 of 7 turns since 2026-02-10 have no note (Claude Code 3, Codex CLI 2, Gemini CLI 1, OpenCode 1): 2026-02-10 12:04 Claude Code session acc0be11 turn t-missin "Write the release notes for version 2", 2026-11-26 11:17 Codex CLI session 01a21793 turn 01a21793 "RUNTOOL show me what the fixture folder…"; 1 queued, 1 forgotten (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)`,
    );
  });

  test("another agent's turn without substance (a \"thanks\" answered with words only) is not a turn to capture, as the drainer and import judge it", async () => {
    const o = await otherAgentSessions(root, home);
    const before = await accountTurns({ ...opts(), sources: [...opts().sources, ...others(o.env)] });
    const oc = new Database(join(home, ".local", "share", "opencode", "opencode.db"));
    const t = OPENCODE_EPOCH + 5000;
    oc.run("INSERT INTO message VALUES ('msg_u7', 'ses_1', ?, ?, ?)", [t, t, JSON.stringify({ role: "user", time: { created: t } })]);
    oc.run("INSERT INTO part VALUES ('prt_u7', 'msg_u7', 'ses_1', ?, ?, ?)", [t, t, JSON.stringify({ type: "text", text: "thanks" })]);
    oc.run("INSERT INTO message VALUES ('msg_a7', 'ses_1', ?, ?, ?)", [t + 1, t + 1, JSON.stringify({ role: "assistant", parentID: "msg_u7", finish: "stop", time: { created: t + 1, completed: t + 2 } })]);
    oc.run("INSERT INTO part VALUES ('prt_a7', 'msg_a7', 'ses_1', ?, ?, ?)", [t + 1, t + 1, JSON.stringify({ type: "text", text: "You're welcome." })]);
    oc.close();
    const after = await accountTurns({ ...opts(), sources: [...opts().sources, ...others(o.env)] });
    const agent = (a: typeof after) => a.agents.find((x) => x.agent === "opencode")!;
    expect(agent(after).turns).toBe(agent(before).turns + 1);
    expect(agent(after).missing).toBe(agent(before).missing);
    expect(agent(after).notTurns.trivial).toBe(agent(before).notTurns.trivial + 1);
  });

  test("the notes the drainer writes for each agent name the ids the accounting reads: each drained turn counts as noted", async () => {
    const o = await otherAgentSessions(root, home);
    const a = await accountTurns({ ...opts(), sources: [...opts().sources, ...others(o.env)] });
    // Only the turn that never got a note (the forgotten one aside).
    expect(a.missingTurns.map((m) => [m.agent, m.turn])).toEqual([["codex", CODEX_MISSING.turn]]);
    expect(a).toMatchObject({ noted: 3, missing: 1, forgotten: 1, queued: 0, running: 0 });
    expect(turnsLine(a)).toStartWith("1 of 4 turns since 2026-11-25 have no note (Codex CLI 2, Gemini CLI 1, OpenCode 1): 2026-11-26 11:17 Codex CLI session 01a21793");
    expect(a.sessions.find((s) => s.sessionId === OPENCODE_NOTED.session)).toMatchObject({ turns: 2, noted: 1, forgotten: 1 });
  });

  test("import writes exactly the missing turns of every agent, an OpenCode session's included, and afterwards none is missing", async () => {
    const o = await otherAgentSessions(root, home);
    await accountedSession(root, home);
    // The forgotten OpenCode turn is wanted back: now missing too.
    await changeList(opts().dataDir, () => ({ entries: [], result: undefined }));
    const before = await accountTurns({ ...opts(), sources: [...opts().sources, ...others(o.env)] });
    expect(before.missingTurns.map((m) => [m.agent, m.turn])).toEqual([
      ["claude", "t-missing"],
      ["opencode", OPENCODE_FORGOTTEN.turn],
      ["codex", CODEX_MISSING.turn],
    ]);
    const plan = await planImport({ ...opts(), sources: [...opts().sources, ...others(o.env)] });
    expect(plan.skipped).toEqual([]);
    expect(plan.todo.map((t) => t.uuid)).toEqual(before.missingTurns.map((m) => m.turn));
    await runImport(plan, { memoryDir: opts().memoryDir, summarize: extract });
    const after = await accountTurns({ ...opts(), sources: [...opts().sources, ...others(o.env)] });
    expect(after).toMatchObject({ missing: 0, noted: 7, queued: 1, toCapture: 8 });
    expect(turnsLine(after)).toBe("7 of 8 turns since 2026-02-10 have a note (Claude Code 3, Codex CLI 2, Gemini CLI 1, OpenCode 2); 1 queued (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)");
  });

  test("the cache: another agent's transcript is read once while its listing's stamp holds (an OpenCode session too), again when it changes, and kept between runs", async () => {
    const o = await otherAgentSessions(root, home);
    const cacheFile = join(home, ".memsearch", "turns-cache.json");
    const reads: string[] = [];
    const counted = () => others(o.env).map((s) => ({ ...s, listTurns: (p: string) => (reads.push(p), s.listTurns(p)) }));
    const first = await accountTurns({ ...opts(), cacheFile, sources: [...opts().sources, ...counted()] });
    expect(reads.sort()).toEqual([o.chat, o.opencode, `${o.opencode.slice(0, -2)}_2`, o.rollouts.noted, o.rollouts.missing].sort());
    expect(Object.keys(JSON.parse(readFileSync(cacheFile, "utf8")).files)).toContain(o.opencode);
    reads.length = 0;
    const warm = await accountTurns({ ...opts(), cacheFile, sources: [...opts().sources, ...counted()] });
    expect(reads).toEqual([]);
    expect(warm).toMatchObject({ noted: first.noted, missing: first.missing, forgotten: first.forgotten });
    // A new turn in the OpenCode session: only it is read again, and its new turn counts.
    const db = new Database(o.opencode.slice(0, o.opencode.lastIndexOf("#")));
    const t = Date.parse("2026-11-25T10:00:00.000Z");
    db.run("INSERT INTO message VALUES ('msg_u3', 'ses_1', ?, ?, ?)", [t, t, JSON.stringify({ role: "user", time: { created: t } })]);
    db.run("INSERT INTO part VALUES ('prt_u3a', 'msg_u3', 'ses_1', ?, ?, ?)", [t, t, JSON.stringify({ type: "text", text: "Add a changelog entry for the lint fix" })]);
    db.run("INSERT INTO message VALUES ('msg_a3b', 'ses_1', ?, ?, ?)", [t + 1, t + 1, JSON.stringify({ role: "assistant", parentID: "msg_u3", finish: "stop", time: { created: t + 1, completed: t + 2 } })]);
    db.run("INSERT INTO part VALUES ('prt_a3b', 'msg_a3b', 'ses_1', ?, ?, ?)", [t + 1, t + 1, JSON.stringify({ type: "text", text: "Added the entry under Fixed." })]);
    db.close();
    const grown = await accountTurns({ ...opts(), cacheFile, sources: [...opts().sources, ...counted()] });
    expect(reads).toEqual([o.opencode]);
    expect(grown.missingTurns.map((m) => [m.agent, m.turn])).toEqual([["opencode", "msg_u3"], ["codex", CODEX_MISSING.turn]]);
    // A rollout gone from Codex's listing leaves the cache; the OpenCode sessions stay.
    rmSync(o.rollouts.missing);
    reads.length = 0;
    writeFileSync(o.chat, readFileSync(o.chat, "utf8") + "\n");
    await accountTurns({ ...opts(), cacheFile, sources: [...opts().sources, ...counted()] });
    expect(reads).toEqual([o.chat]);
    const kept = Object.keys(JSON.parse(readFileSync(cacheFile, "utf8")).files);
    expect(kept).not.toContain(o.rollouts.missing);
    expect(kept).toEqual(expect.arrayContaining([o.opencode, o.rollouts.noted, o.chat]));
  });

  test("a Codex rollout of the older layout names its turns by line: another session's note of the same line is not theirs, for the accounting as for import", async () => {
    const env = agentEnv(home);
    codexRollout(home, root, "legacy.jsonl", "rollout-2025-09-01T10-00-00-0198aa00.jsonl");
    const memoryDir = opts().memoryDir;
    await appendTurnNote({ memoryDir, sessionId: "0198aa00-1111-7000-8000-00000000leg1", turnUuid: "line-14", transcriptPath: "", agent: "codex", bullets: ["- Moved the cron job"], now: new Date("2025-09-01T10:01:00Z") });
    await appendTurnNote({ memoryDir, sessionId: "another-session", turnUuid: "line-6", transcriptPath: "", agent: "codex", bullets: ["- Another session's turn"], now: new Date("2025-09-01T10:00:00Z") });
    const a = await accountTurns({ ...opts(), sources: [...opts().sources, ...others(env)] });
    expect(a).toMatchObject({ turns: 2, noted: 1, missing: 1 });
    expect(a.missingTurns.map((m) => [m.agent, m.turn])).toEqual([["codex", "line-6"]]);
    expect((await planImport({ ...opts(), sources: [...opts().sources, ...others(env)] })).todo.map((t) => t.uuid)).toEqual(["line-6"]);
  });

  test("an agent whose transcripts cannot be listed is named unreadable; the other agents' turns still count", async () => {
    const o = await otherAgentSessions(root, home);
    const broken = others(o.env).map((s) => (s.agent === "opencode" ? { ...s, files: [], problem: "file is not a database" } : s));
    const a = await accountTurns({ ...opts(), sources: [...opts().sources, ...broken] });
    expect(a.unreadable).toEqual([{ path: "OpenCode", reason: "its transcripts could not be listed: file is not a database" }]);
    expect(a.agents.map((x) => x.agent)).toEqual(["codex", "gemini"]);
    expect(a.missing).toBe(1);
  });
});
