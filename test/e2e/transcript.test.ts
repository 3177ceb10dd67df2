/** `memsearch transcript` through the compiled binary (MEMSEARCH_BIN or dist/memsearch). */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, run } from "../helpers/cli.ts";

const FIX = join(REPO, "test/fixtures/transcripts");
const SPOTTER = join(FIX, "spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl");
const LARGE = join(FIX, "episodic-memory/large-conversation.jsonl");
const cwd = mkdtempSync(join(tmpdir(), "ms-e2e-transcript-"));
const env = { HOME: cwd, MEMSEARCH_HOME: join(cwd, ".memsearch"), TZ: "UTC" };
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
// Fixtures live outside Claude Code's projects folder: read as files the user names.
const ms = (...args: string[]) => run(["transcript", "--any-file", ...args], { cwd, env });

describe("memsearch transcript", () => {
  test("lists turns: All turns (N):, uuid prefix, HH:MM:SS, preview, [N tools]", async () => {
    const r = await ms(SPOTTER);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("All turns (2):");
    expect(lines[2]).toMatch(/^ {2}942615e0-f36 {2}15:36:09 {2}Work on bead spotter-a0y\. .{40,}\.\.\. {2}\[62 tools\]$/);
    expect(lines[3]).toMatch(/^ {2}b9667a84-bc5 {2}\d\d:\d\d:\d\d {2}continue until all are done +\[2 tools\]$/);
    expect(r.stdout).toContain("Subagents (3):");
    expect(r.stdout).toContain("agent-acompact-70d8e7");
  });

  test("--turn shows the turns around a uuid prefix, target marked >>>", async () => {
    const r = await ms(LARGE, "--turn", "26a3ec40", "-c", "1");
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("Showing 3 turns around 26a3ec40:\n\n")).toBe(true);
    const targets = r.stdout.split("\n").filter((l) => l.startsWith(">>> "));
    expect(targets).toEqual([">>> [23:43:36] 26a3ec40"]);
    expect(r.stdout).toContain("ok. uh. no. the ci is running on the current commit");
    expect(r.stdout).toContain("  [Bash] pwd && git branch -v");
    expect(r.stdout).toMatch(/…\[truncated, \d+ chars total\]/);
    expect(r.stdout.length).toBeLessThanOrEqual(12001);
  });

  test("--json-output: listing, --turn and --last-turn are valid JSON", async () => {
    const list = await ms(SPOTTER, "--json-output");
    expect(list.code).toBe(0);
    const l = JSON.parse(list.stdout);
    expect(l.turn_count).toBe(2);
    expect(l.turns[0].uuid.startsWith("942615e0")).toBe(true);
    expect(l.turns[0]).toMatchObject({ tool_count: 62, kind: "prompt", timestamp: "2026-02-12T15:36:09.570Z" });
    expect(l.turns[0].preview.length).toBeLessThanOrEqual(80);
    expect(l.session_id).toBe("fa812bfe-b295-4cca-9c2f-fdf01028cb46");

    const turn = await ms(LARGE, "-t", "26a3ec40", "-j");
    expect(turn.code).toBe(0);
    const t = JSON.parse(turn.stdout);
    expect(t.target.startsWith("26a3ec40")).toBe(true);
    expect(t.turns.length).toBe(7);
    const target = t.turns.find((x: { target: boolean }) => x.target);
    expect(target.user).toContain("the ci is running on the current commit");
    for (const x of t.turns) {
      expect(typeof x.uuid).toBe("string");
      for (const c of x.tools) {
        expect(typeof c.name).toBe("string");
        expect(typeof c.input).toBe("string");
        expect(c.output === null ? c.unpaired : c.output.length <= 600).toBe(true);
      }
    }

    const last = await ms(LARGE, "--last-turn", "-j");
    expect(last.code).toBe(0);
    const lt = JSON.parse(last.stdout);
    expect(lt.turn_uuid.startsWith("fba404a5")).toBe(true);
    expect(lt.text.startsWith("[User]: can we rebase on main, please?")).toBe(true);
  });

  test("--last-turn prints the labelled turn; --last-assistant-message fills a lagging file", async () => {
    const r = await ms(join(FIX, "lagging.jsonl"), "--last-turn", "--last-assistant-message", "It is 002_users.sql.");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      "[User]: Which one adds the users table?\n[Claude Code calls tool]: Grep CREATE TABLE users in migrations\n[Tool output]: (no result in the transcript)\n[Claude Code]: It is 002_users.sql.\n",
    );
  });

  test("missing file: exit 1 with a clear message", async () => {
    const p = join(cwd, "missing.jsonl");
    const r = await ms(p);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(`Error: transcript not found: ${p}`);
  });

  test("codex rollout: exit 3, unrecognised format", async () => {
    const r = await ms(join(FIX, "codex-rollout.jsonl"));
    expect(r.code).toBe(3);
    expect(r.stderr.trim()).toBe("Error: Unrecognized transcript format. Read the file directly to locate the relevant turns.");
    expect((await ms(join(FIX, "codex-rollout.jsonl"), "--last-turn")).code).toBe(3);
  });

  test("a directory, an empty file, binary data: exit 1 with a message", async () => {
    const d = await ms(cwd);
    expect(d.code).toBe(1);
    expect(d.stderr).toContain("is a directory");
    const empty = join(cwd, "empty.jsonl");
    writeFileSync(empty, "");
    const e = await ms(empty);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("transcript is empty");
    const bin = join(cwd, "bin.jsonl");
    writeFileSync(bin, new Uint8Array(256).map((_, i) => i));
    const b = await ms(bin);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("binary");
  });

  test("unknown --turn id: exit 1; bad --context: usage error", async () => {
    const r = await ms(SPOTTER, "--turn", "deadbeef");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("turn not found: deadbeef");
    const c = await ms(SPOTTER, "--turn", "942615e0", "--context", "-2");
    expect(c.code).toBe(2);
    expect(c.stderr).toContain("--context");
  });

  test("garbage and truncated lines do not fail the command", async () => {
    for (const f of ["garbage.jsonl", "truncated.jsonl", "images.jsonl"]) {
      const r = await ms(join(FIX, f));
      expect(r.code).toBe(0);
      expect(r.stdout).toStartWith("All turns (2):");
      expect(r.stdout).not.toMatch(/[A-Za-z0-9+/]{200,}/);
    }
  });
});

describe("a note's anchor is followed only to this project's transcripts", () => {
  // Notes may come with a cloned repository: the path an anchor names is untrusted.
  const base = mkdtempSync(join(tmpdir(), "ms-e2e-anchor-"));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const root = join(base, "proj");
  const other = join(base, "other");
  const home = join(base, "home");
  const projects = join(home, ".claude", "projects");
  const slug = (p: string) => p.replace(/[^A-Za-z0-9]/g, "-");
  /** A fixture with every line's cwd set to `cwd`. */
  const copyAs = (dest: string, cwd: string) => {
    mkdirSync(join(dest, ".."), { recursive: true });
    const lines = readFileSync(join(FIX, "spotter/short.jsonl"), "utf8").split("\n");
    writeFileSync(dest, lines.map((l) => (l.trim() ? JSON.stringify({ ...JSON.parse(l), cwd }) : l)).join("\n"));
  };
  mkdirSync(join(root, ".git"), { recursive: true });
  mkdirSync(join(other, ".git"), { recursive: true });
  const own = join(projects, slug(root), "own.jsonl");
  const theirs = join(projects, slug(other), "theirs.jsonl");
  const evil = join(base, "evil.jsonl");
  copyAs(own, root);
  copyAs(theirs, other);
  copyAs(evil, root);
  const aEnv = { HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), CLAUDE_CONFIG_DIR: undefined, CLAUDE_PROJECT_DIR: undefined, MEMSEARCH_DIR: undefined, TZ: "UTC" };
  const tx = (...args: string[]) => run(["transcript", ...args], { cwd: root, env: aEnv });

  test("this project's transcript under Claude Code's projects folder is read", async () => {
    const r = await tx(own);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("All turns (1):");
  });

  test("a .jsonl outside Claude Code's projects folder is refused in one line, whatever the mode", async () => {
    for (const args of [[evil], [evil, "--turn", "x"], [evil, "--last-turn"]]) {
      const r = await tx(...args);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(`Error: refused: ${evil} is not a Claude Code transcript (not under ${projects}); pass --any-file to read it anyway\n`);
    }
    const ok = await tx(evil, "--any-file");
    expect(ok.code).toBe(0);
  });

  test("another project's transcript is refused unless --all-projects", async () => {
    const r = await tx(theirs, "--turn", "x");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`Error: refused: ${theirs} is another project's transcript (this project: ${root}); pass --all-projects to read it anyway\n`);
    const ok = await tx(theirs, "--all-projects");
    expect(ok.code).toBe(0);
  });
});
