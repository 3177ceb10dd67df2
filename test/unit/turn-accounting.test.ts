import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accountTurns, turnsLine } from "../../src/memory/accounting.ts";
import { changeList } from "../../src/memory/forgotten.ts";
import { planImport, runImport } from "../../src/memory/import.ts";
import { extractBullets, type Summary } from "../../src/memory/summarizer.ts";
import type { LastTurn } from "../../src/transcript/types.ts";
import { accountedSession, SESSION } from "../helpers/accounted-session.ts";

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

const opts = () => ({ root, memoryDir: join(root, ".memsearch", "memory"), dataDir: join(root, ".memsearch"), projectsDir: join(home, ".claude", "projects") });
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
