/**
 * One reading of each agent's transcripts. For Claude Code's, in depth: recall joins a note (anchored by the turn id the reader
 * gives) to its conversation rows (keyed by the turn id the conversation index gives), so both
 * must draw the same turns. Over every transcript fixture, the turn ids of the reader's listing,
 * of its full read and of the conversation rows are the same list, also when the index reads the
 * file a piece at a time, as it does while Claude Code writes it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import type { Database } from "bun:sqlite";
import { UnrecognisedFormatError } from "../../src/core/errors.ts";
import { openTranscriptDb } from "../../src/conversations/db.ts";
import { updateTranscriptIndex } from "../../src/conversations/ingest.ts";
import { listTurns, readTranscript, readTurnRange } from "../../src/agents/claude/reader.ts";
import { FIXTURES, jsonlFiles, REAL_SOURCES } from "../helpers/fixtures.ts";
import { claudeIndex } from "../helpers/sources.ts";
import { AGENTS, projectTranscripts, transcriptSources } from "../../src/agents/registry.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { agentEnv, codexRollout } from "../helpers/accounted-others.ts";
import { opencodeFixtureDb } from "../helpers/opencode-db.ts";

const tmp = mkdtempSync(join(tmpdir(), "ms-agreement-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const fixtures = jsonlFiles(FIXTURES);
/** Formats that are not Claude Code's: the reader refuses them, the index keeps no row of them. */
const FOREIGN = new Set(["codex-rollout.jsonl", "openclaw.jsonl"]);

/**
 * Where a fixture goes under a projects folder: real transcripts keep their layout
 * (`<source>/<session>.jsonl`, `<source>/<session>/subagents/agent-*.jsonl`), the synthetic ones
 * go to a folder of their own, so the index finds each where Claude Code would have written it.
 */
function placed(projects: string, fixture: string): string {
  const rel = relative(FIXTURES, fixture);
  const first = rel.split(sep)[0]!;
  return (REAL_SOURCES as readonly string[]).includes(first) ? join(projects, rel) : join(projects, "-synthetic", rel);
}

function rowTurns(db: Database, path: string): string[] {
  const rows = db.query("SELECT m.turn_uuid AS t FROM messages m JOIN files f ON f.id = m.file_id WHERE f.path = ? GROUP BY m.turn_uuid ORDER BY MIN(m.id)").all(path) as { t: string }[];
  return rows.map((r) => r.t);
}

async function readerTurns(path: string): Promise<{ listed: string[]; full: string[]; ranged: string[] } | "foreign"> {
  try {
    const index = await listTurns(path);
    const full = await readTranscript(path);
    const ranged = index.turns.length ? await readTurnRange(index, 0, index.turns.length - 1) : [];
    return { listed: index.turns.map((t) => t.uuid), full: full.turns.map((t) => t.uuid), ranged: ranged.map((t) => t.uuid) };
  } catch (e) {
    if (e instanceof UnrecognisedFormatError) return "foreign";
    throw e;
  }
}

describe("the reader and the conversation index draw the same turns", () => {
  test("the fixtures are all here", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
  });

  test("every fixture, read whole: listing = full read = range read = conversation rows", async () => {
    const projects = join(tmp, "whole", "projects");
    for (const f of fixtures) {
      const dest = placed(projects, f);
      mkdirSync(dirname(dest), { recursive: true });
      writeFileSync(dest, readFileSync(f));
    }
    const db = openTranscriptDb(join(tmp, "whole", "t.sqlite"));
    const report = await updateTranscriptIndex(db, { sources: [claudeIndex(projects)], full: true });
    expect(report.errors).toEqual([]);
    let turns = 0;
    for (const f of fixtures) {
      const dest = placed(projects, f);
      const r = await readerTurns(dest);
      const rows = rowTurns(db, dest);
      const name = relative(FIXTURES, f);
      if (r === "foreign") {
        expect({ name, foreign: FOREIGN.has(name), rows }).toEqual({ name, foreign: true, rows: [] });
        continue;
      }
      expect({ name, full: r.full, ranged: r.ranged, rows }).toEqual({ name, full: r.listed, ranged: r.listed, rows: r.listed });
      turns += r.listed.length;
    }
    expect(turns).toBeGreaterThan(40);
    db.close();
  });

  test("every fixture, indexed a piece at a time (cut anywhere, mid-line included): the same turn ids", async () => {
    const projects = join(tmp, "pieces", "projects");
    const db = openTranscriptDb(join(tmp, "pieces", "t.sqlite"));
    for (const f of fixtures) {
      const name = relative(FIXTURES, f);
      if (FOREIGN.has(name)) continue;
      const bytes = readFileSync(f);
      const dest = placed(projects, f);
      mkdirSync(dirname(dest), { recursive: true });
      writeFileSync(dest, "");
      // Seven pieces of uneven sizes: lines are cut wherever the cuts fall.
      const cuts = [0.05, 0.13, 0.3, 0.47, 0.61, 0.88, 1].map((x) => Math.floor(bytes.length * x));
      let from = 0;
      for (const to of cuts) {
        appendFileSync(dest, bytes.subarray(from, to));
        from = to;
        const report = await updateTranscriptIndex(db, { sources: [claudeIndex(projects)], full: true });
        expect(report.errors).toEqual([]);
      }
      const r = await readerTurns(dest);
      if (r === "foreign") throw new Error(`${name}: unexpectedly foreign`);
      expect({ name, rows: rowTurns(db, dest) }).toEqual({ name, rows: r.listed });
    }
    db.close();
  });

  test("small fixtures indexed a line at a time, each line first without its newline: the same turn ids", async () => {
    const projects = join(tmp, "lines", "projects");
    const db = openTranscriptDb(join(tmp, "lines", "t.sqlite"));
    for (const f of fixtures) {
      const name = relative(FIXTURES, f);
      const bytes = readFileSync(f);
      if (FOREIGN.has(name) || bytes.toString("utf8").split("\n").length > 60) continue;
      const dest = placed(projects, f);
      mkdirSync(dirname(dest), { recursive: true });
      writeFileSync(dest, "");
      // A writer caught between a line and its newline, at every line of the file.
      const cuts: number[] = [];
      for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) cuts.push(i, i + 1);
      cuts.push(bytes.length);
      let from = 0;
      for (const to of cuts) {
        if (to <= from) continue;
        appendFileSync(dest, bytes.subarray(from, to));
        from = to;
        expect((await updateTranscriptIndex(db, { sources: [claudeIndex(projects)], full: true })).errors).toEqual([]);
      }
      const r = await readerTurns(dest);
      if (r === "foreign") throw new Error(`${name}: unexpectedly foreign`);
      expect({ name, rows: rowTurns(db, dest) }).toEqual({ name, rows: r.listed });
    }
    db.close();
  });
});

/**
 * Every agent's adapter gives a transcript's turns to four readers: `memsearch transcript` (its
 * `read`), `import` and the turn accounting (`projectTranscripts`: a listing, then the turns it
 * needs), the conversation index (`transcriptSources`) and the drainer (`findStoppedTurn`, which
 * names the note's anchor). A note is joined to its conversation and counted as noted by the turn
 * id, so all four must name the same turns, for every agent.
 */
describe("each agent's readers draw the same turns", () => {
  const home = join(tmp, "agents", "home");
  const root = join(tmp, "agents", "proj");
  mkdirSync(join(root, ".git"), { recursive: true });
  const env = { ...agentEnv(home), COPILOT_HOME: join(home, ".copilot") };
  // A Claude Code session of the fixtures, as if it had run in `root`.
  const claudeDir = join(home, ".claude", "projects", projectSlug(root));
  mkdirSync(claudeDir, { recursive: true });
  const inRoot = (line: string) => {
    if (!line.trim()) return line;
    const o = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify("cwd" in o ? { ...o, cwd: root } : o);
  };
  writeFileSync(join(claudeDir, "s-agree.jsonl"), readFileSync(join(FIXTURES, "commands.jsonl"), "utf8").split("\n").map(inRoot).join("\n"));
  codexRollout(home, root, "paginated-tool-0.169.jsonl", "rollout-2026-11-26T11-17-51-01a21793.jsonl");
  const slot = join(home, ".gemini", "tmp", "proj");
  mkdirSync(join(slot, "chats"), { recursive: true });
  writeFileSync(join(slot, ".project_root"), `${root}\n`);
  copyFileSync(join(FIXTURES, "..", "gemini", "tool-0.61.jsonl"), join(slot, "chats", "session-2026-11-26T11-45-86a69924.jsonl"));
  mkdirSync(join(home, ".local", "share", "opencode"), { recursive: true });
  opencodeFixtureDb(join(home, ".local", "share", "opencode"), root);
  mkdirSync(join(home, ".copilot", "session-state", "s-agree"), { recursive: true });
  writeFileSync(join(home, ".copilot", "session-state", "s-agree", "events.jsonl"), readFileSync(join(FIXTURES, "..", "copilot", "resumed-tool-1.0.102.jsonl"), "utf8").replaceAll('"/tmp/c4x/p2"', JSON.stringify(root)));

  for (const agent of Object.values(AGENTS)) {
    test(`${agent.label}: memsearch transcript, import, the conversation index and the drainer name the same turns`, async () => {
      const source = projectTranscripts(root, env).find((s) => s.agent === agent.name)!;
      expect(source.problem).toBeUndefined();
      const files = source.files.filter((f) => !f.path.endsWith("#ses_2"));
      expect(files.length).toBe(1);
      const db = openTranscriptDb(join(tmp, "agents", `${agent.name}.sqlite`));
      const report = await updateTranscriptIndex(db, { sources: transcriptSources(env).filter((s) => s.agent === agent.name), full: true });
      expect(report.errors).toEqual([]);
      for (const { path } of files) {
        const list = await source.listTurns(path);
        const listed = list.turns.map((t) => t.uuid);
        expect(listed.length).toBeGreaterThan(0);
        const read = (await source.readTurns(list, 0, listed.length - 1)).map((t) => t.uuid);
        const shown = (await agent.transcripts.read(path, env)).turns.map((t) => t.uuid);
        const stopped = await agent.findStoppedTurn(path, { promptId: listed.at(-1), stoppedAt: "2100-01-01T00:00:00.000Z" });
        expect({ read, shown, rows: rowTurns(db, path), stopped: stopped?.turn.turnUuid }).toEqual({ read: listed, shown: listed, rows: listed, stopped: listed.at(-1) });
      }
      db.close();
    });
  }
});
