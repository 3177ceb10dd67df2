/**
 * OpenCode's sessions as transcripts, through the binary: OpenCode keeps every session in one
 * database, so a session is named `<opencode.db>#<session id>`. `import` writes its turns' notes
 * (once), `transcript` opens a turn, `recall` fuses the note with the conversation and points its
 * drill-down there; a name of any other database is refused. (The real OpenCode run is
 * test/e2e/real-opencode.test.ts; this database is shaped like its 1.18.33 one.)
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempProject, type Project } from "../helpers/cli.ts";
import { opencodeFixtureDb } from "../helpers/opencode-db.ts";

let p: Project;
let db: string;
let key: string;
// Each test its own project and home: they run in any order.
beforeEach(() => {
  p = tempProject({ notes: "none", env: { MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_SUMMARIZER_PROVIDER: "extract", TZ: "UTC" } });
  const data = join(p.home, ".local", "share", "opencode");
  mkdirSync(data, { recursive: true });
  db = opencodeFixtureDb(data, p.root);
  key = `${db}#ses_1`;
});
afterEach(() => {
  for (const d of [p.root, p.home]) rmSync(d, { recursive: true, force: true });
});

describe("OpenCode sessions", () => {
  test("import writes each turn's note once, named by its agent and its session", async () => {
    const dry = await p.ms(["import", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("Would import 2 turns from 1 session");
    const r = await p.ms(["import"]);
    expect(r.code).toBe(0);
    const text = readdirSync(p.memory).map((f) => readFileSync(join(p.memory, f), "utf8")).join("\n");
    expect(text).toContain(`<!-- session:ses_1 turn:msg_u1 transcript:${key} agent:opencode -->`);
    expect(text).toContain("(agent: opencode)");
    expect(text).toContain("Outcome: All three tests pass.");
    expect(text).not.toContain("AAAAAAAAAAAAAAAA");
    expect((await p.ms(["import", "--dry-run"])).stdout).toContain("2 turns already have notes");
  });

  test("transcript opens a session and a turn of it; another database's name is refused", async () => {
    const list = await p.ms(["transcript", key]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("OpenCode session ses_1: 2 turns");
    const turn = await p.ms(["transcript", key, "--turn", "msg_u1"]);
    expect(turn.code).toBe(0);
    expect(turn.stdout).toContain("All three tests pass.");
    expect(turn.stdout).toContain("[REDACTED:anthropic-key]");
    const copy = join(p.root, "opencode.db");
    copyFileSync(db, copy);
    const other = await p.ms(["transcript", `${copy}#ses_1`]);
    expect(other.code).not.toBe(0);
    expect(other.stderr.trim().split("\n")).toHaveLength(1);
    expect(other.stdout).not.toContain("three tests");
    const missing = await p.ms(["transcript", `${db}#ses_nope`]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("no OpenCode session ses_nope");
  });

  test("a session of another project (a planted note's anchor could name one) is refused unless --all-projects", async () => {
    const other = join(p.home, "elsewhere");
    const db2 = new Database(db);
    db2.run("UPDATE session SET directory = ? WHERE id = 'ses_1'", [other]);
    db2.close();
    const refused = await p.ms(["transcript", key, "--turn", "msg_u1"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("another project's session");
    expect(refused.stdout).not.toContain("three tests");
    const all = await p.ms(["transcript", key, "--turn", "msg_u1", "--all-projects"]);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain("All three tests pass.");
    // import leaves it alone too.
    expect((await p.ms(["import", "--dry-run"])).stdout).not.toContain("Would import 2 turns");
  });

  test("recall finds the turn in notes and conversations as one result, and points at the session", async () => {
    await p.ms(["import"]);
    await p.ms(["index"]);
    const r = await p.ms(["recall", "--raw", "-j", "three tests pass"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { results: { agent: string; from: string[]; open: string; transcript?: { path: string } }[] };
    const hit = out.results.find((x) => x.transcript?.path === key)!;
    expect(hit.agent).toBe("opencode");
    expect(hit.from).toEqual(expect.arrayContaining(["note", "transcript"]));
    expect(hit.open).toBe(`memsearch transcript '${key}' --turn msg_u1`);
    const claude = JSON.parse((await p.ms(["recall", "--raw", "-j", "--agent", "claude", "three tests pass"])).stdout) as { results: unknown[] };
    expect(claude.results).toEqual([]);
  });
});
