/**
 * The conversation index reads other agents' transcripts beside Claude Code's: Codex rollouts
 * (real 0.169.0 files), Gemini CLI chats (real 0.61.0 files) and OpenCode sessions (a database
 * shaped like 1.18.33's), each through its adapter; rows name their agent, injected memory and
 * scaffolding stay out, secrets are redacted, a changed transcript replaces its rows, a gone one
 * is archived, and a link is never followed.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TRANSCRIPT_READ_MAX } from "../../src/agents/files.ts";
import { transcriptSources } from "../../src/agents/registry.ts";
import { openTranscriptDb } from "../../src/conversations/db.ts";
import { updateTranscriptIndex } from "../../src/conversations/ingest.ts";
import { searchSessions, searchTranscripts } from "../../src/conversations/search.ts";
import { opencodeFixtureDb } from "../helpers/opencode-db.ts";

const FIX = join(import.meta.dir, "..", "fixtures");
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

let home: string;
let env: NodeJS.ProcessEnv;
let db: Database;
let rollout: string;
let chat: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "ms-others-"));
  temps.push(home);
  env = { HOME: home, CODEX_HOME: join(home, ".codex"), GEMINI_CLI_HOME: home, XDG_DATA_HOME: join(home, ".local", "share"), XDG_CONFIG_HOME: join(home, ".config") };
  const day = join(home, ".codex", "sessions", "2026", "11", "26");
  mkdirSync(day, { recursive: true });
  rollout = join(day, "rollout-2026-11-26T11-17-51-01a2178f.jsonl");
  copyFileSync(join(FIX, "codex", "paginated-0.169.jsonl"), rollout);
  const slot = join(home, ".gemini", "tmp", "proj");
  mkdirSync(join(slot, "chats"), { recursive: true });
  writeFileSync(join(slot, ".project_root"), "/tmp/gm-project\n");
  chat = join(slot, "chats", "session-2026-11-26T11-00-86a69924.jsonl");
  copyFileSync(join(FIX, "gemini", "tool-0.61.jsonl"), chat);
  const data = join(home, ".local", "share", "opencode");
  mkdirSync(data, { recursive: true });
  opencodeFixtureDb(data, "/tmp/oc-project");
  mkdirSync(join(home, ".claude", "projects"), { recursive: true });
  db = openTranscriptDb(join(home, ".memsearch", "transcripts.sqlite"));
});

const update = () => updateTranscriptIndex(db, { sources: transcriptSources(env) });
const find = (query: string, o: { agent?: string; project?: string } = {}) => searchTranscripts(db, { query, limit: 20, ...o });

describe("other agents' transcripts in the conversation index", () => {
  test("a Codex rollout, a Gemini CLI chat and an OpenCode session are found, each named by its agent and project", async () => {
    const r = await update();
    expect(r.errors).toEqual([]);
    expect(r.read).toBe(4); // the rollout, the chat, and the two main OpenCode sessions (the sub-agent's is left out)
    const codex = find("Zanzibar scheduler");
    expect(codex.map((h) => [h.agent, h.path, h.project])).toContainEqual(["codex", rollout, "/tmp/h12-cx/proj"]);
    expect(codex[0]!.turnUuid).toBe("01a2178f-35dc-78c0-987f-b6c79cdadb6a");
    const gemini = find("marmalade");
    expect(gemini.length).toBeGreaterThan(0);
    expect(gemini.every((h) => h.agent === "gemini" && h.path === chat && h.project === "/tmp/gm-project")).toBe(true);
    const opencode = find("three tests pass");
    expect(opencode.map((h) => [h.agent, h.turnUuid, h.project])).toContainEqual(["opencode", "msg_u1", "/tmp/oc-project"]);
    expect(opencode[0]!.path).toBe(`${join(home, ".local", "share", "opencode", "opencode.db")}#ses_1`);
    // Tool calls and their output are found too, and the first prompt is in the session table.
    expect(find("lint", { agent: "opencode" }).map((h) => [h.role, h.tools])).toEqual(expect.arrayContaining([["user", []], ["assistant", ["bash"]]]));
    expect(searchSessions(db, { query: "scheduler nightly", limit: 5 }).map((s) => [s.kind, s.agent])).toEqual([["first_prompt", "codex"]]);
  });

  test("the agent and project filters hold: another agent's or project's turns are not returned", async () => {
    await update();
    expect(find("Zanzibar", { agent: "claude" })).toEqual([]);
    expect(find("Zanzibar", { agent: "gemini" })).toEqual([]);
    expect(find("Zanzibar", { agent: "codex", project: "/tmp/h12-cx/proj" }).length).toBeGreaterThan(0);
    expect(find("Zanzibar", { project: "/tmp/oc-project" })).toEqual([]);
  });

  test("memory memsearch injected, the agents' scaffolding and secrets are not indexed", async () => {
    await update();
    // The rollout holds memsearch's SessionStart context as a developer message, and Codex's AGENTS.md / environment scaffolding.
    expect(readFileSync(rollout, "utf8")).toContain("Recent memory (memsearch)");
    expect(find("Recent memory memsearch quoted")).toEqual([]);
    expect(find("environment_context")).toEqual([]);
    // OpenCode's synthetic part (its scaffolding) and a key typed into a prompt.
    expect(find("scaffold")).toEqual([]);
    const rows = db.query("SELECT text || inputs || results AS t FROM messages").all() as { t: string }[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((r) => r.t.includes("AAAAAAAAAAAAAAAA"))).toBe(false);
  });

  test("an unchanged transcript is not read again; a changed one replaces its rows; a gone one is archived", async () => {
    await update();
    const again = await update();
    expect(again.read).toBe(0);
    // The rollout now holds another session (Codex rewrote it): read whole again, the old rows replaced.
    copyFileSync(join(FIX, "codex", "paginated-tool-0.169.jsonl"), rollout);
    const later = new Date(Date.now() + 5_000);
    utimesSync(rollout, later, later);
    const r = await update();
    expect(r.read).toBe(1);
    expect(r.reread).toBe(1);
    expect(find("Zanzibar")).toEqual([]);
    expect([...new Set(find("fixture folder holds", { agent: "codex" }).map((h) => h.path))]).toEqual([rollout]);
    expect((db.query("SELECT count(*) AS n FROM files WHERE path = ?").get(rollout) as { n: number }).n).toBe(1);
    // Deleted: kept, archived.
    rmSync(chat);
    const gone = await update();
    expect(gone.archived).toBe(1);
    const hit = find("marmalade")[0]!;
    expect(hit.agent).toBe("gemini");
    expect(hit.archivedAt).toBeGreaterThan(0);
  });

  test("OpenCode's database unchanged is not even listed; a new message in it re-reads only its session", async () => {
    await update();
    const quiet = await update();
    expect(quiet.files).toBe(2); // the rollout and the chat, stat'ed; the database's stat alone said nothing changed
    const oc = new Database(join(home, ".local", "share", "opencode", "opencode.db"));
    oc.run("INSERT INTO message VALUES ('msg_u9', 'ses_2', 3000, 3000, ?)", [JSON.stringify({ role: "user", time: { created: 3000 } })]);
    oc.run("INSERT INTO part VALUES ('prt_u9', 'msg_u9', 'ses_2', 3000, 3000, ?)", [JSON.stringify({ type: "text", text: "Where do the flamingo fixtures live" })]);
    oc.close();
    const r = await update();
    expect(r.read).toBe(1);
    expect(find("flamingo").map((h) => [h.agent, h.path.endsWith("#ses_2")])).toEqual([["opencode", true]]);
  });

  test("links are never followed: a linked rollout is not listed, a linked OpenCode database is an error that archives nothing", async () => {
    await update();
    const elsewhere = mkdtempSync(join(tmpdir(), "ms-others-x-"));
    temps.push(elsewhere);
    const secret = join(elsewhere, "secret.jsonl");
    copyFileSync(join(FIX, "codex", "paginated-tool-0.169.jsonl"), secret);
    symlinkSync(secret, join(home, ".codex", "sessions", "2026", "11", "26", "rollout-2026-11-26T12-00-00-link.jsonl"));
    const dbPath = join(home, ".local", "share", "opencode", "opencode.db");
    const real = join(elsewhere, "opencode.db");
    copyFileSync(dbPath, real);
    rmSync(dbPath);
    symlinkSync(real, dbPath);
    const r = await update();
    expect(find("fixture folder holds", { agent: "codex" })).toEqual([]);
    expect(r.errors.map((e) => e.path)).toEqual(["opencode"]);
    expect(r.archived).toBe(0);
    expect(find("three tests pass", { agent: "opencode" })[0]?.archivedAt).toBeUndefined();
  });

  test("a FIFO named like a rollout or a chat, and a FIFO in place of OpenCode's database, are never opened", async () => {
    const day = join(home, ".codex", "sessions", "2026", "11", "26");
    const fifos = [join(day, "rollout-2026-11-26T14-00-00-fifo.jsonl"), join(home, ".gemini", "tmp", "proj", "chats", "session-fifo.jsonl")];
    const db = join(home, ".local", "share", "opencode", "opencode.db");
    rmSync(db);
    for (const f of [...fifos, db]) expect(Bun.spawnSync(["mkfifo", f]).exitCode).toBe(0);
    // A read of any of them would block this test until its timeout.
    const r = await update();
    expect(r.errors.map((e) => e.path)).toEqual(["opencode"]);
    expect(find("Zanzibar scheduler", { agent: "codex" }).map((h) => h.path)).toContain(rollout);
    expect(find("marmalade", { agent: "gemini" }).length).toBeGreaterThan(0);
  });

  test("a transcript too large to read whole is refused with one line before it is read; the others are still indexed", async () => {
    const huge = join(home, ".codex", "sessions", "2026", "11", "26", "rollout-2026-11-26T13-00-00-huge.jsonl");
    writeFileSync(huge, readFileSync(rollout, "utf8"));
    truncateSync(huge, TRANSCRIPT_READ_MAX + 1); // sparse: no disk, no memory
    const r = await update();
    expect(r.errors.map((e) => [e.path, e.message])).toEqual([[huge, expect.stringMatching(/is 257 MiB, over the 256 MiB memsearch reads of one transcript/)]]);
    expect(find("Zanzibar scheduler", { agent: "codex" }).map((h) => h.path)).toContain(rollout);
    expect(find("marmalade").length).toBeGreaterThan(0);
  });

  test("a damaged transcript is an error of its own; the other agents' are still indexed", async () => {
    writeFileSync(rollout, "\u0000\u0001not json at all\n{\"type\":");
    const r = await update();
    expect(find("marmalade").length).toBeGreaterThan(0);
    expect(find("three tests pass").length).toBeGreaterThan(0);
    expect(r.errors.filter((e) => e.path !== rollout)).toEqual([]);
  });
});
