/**
 * The conversation index's session table (plans, compaction summaries, final todo lists, first
 * prompts) and its archive of deleted transcripts: what goes in, what a rebuild keeps.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, openSync, closeSync, readdirSync, rmSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTranscriptDb, openTranscriptIndex, SCHEMA_VERSION, transcriptHealLine, withTranscriptIndex } from "../../src/conversations/db.ts";
import { archivedTurns, archiveStats, readArchivedTranscript } from "../../src/conversations/archive.ts";
import { updateTranscriptIndex } from "../../src/conversations/ingest.ts";
import { searchSessions, searchTranscripts, snippetOf } from "../../src/conversations/search.ts";
import { mergeRankings } from "../../src/recall/recall.ts";
import { claudeIndex } from "../helpers/sources.ts";

const tmp = mkdtempSync(join(tmpdir(), "ms-archive-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

function setup() {
  const dir = join(tmp, `case-${++n}`);
  const config = join(dir, "claude");
  const projects = join(config, "projects");
  const slug = join(projects, "-home-dev-proj");
  mkdirSync(slug, { recursive: true });
  const dbPath = join(dir, "t.sqlite");
  const db = openTranscriptDb(dbPath);
  const update = (o: { full?: boolean; archiveDays?: number } = {}) => updateTranscriptIndex(db, { sources: [claudeIndex(projects)], ...o });
  return { dir, config, projects, slug, dbPath, db, update };
}

const CWD = "/nonexistent/dev/proj";
let ts = Date.parse("2026-03-01T10:00:00Z");
const base = (uuid: string, session: string) => ({ uuid, sessionId: session, cwd: CWD, timestamp: new Date((ts += 60_000)).toISOString(), isSidechain: false });
const user = (uuid: string, text: string, session = "S1", extra: Record<string, unknown> = {}) => JSON.stringify({ type: "user", message: { role: "user", content: text }, ...base(uuid, session), ...extra }) + "\n";
const assistant = (uuid: string, msgId: string, content: unknown[], session = "S1", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "assistant", message: { id: msgId, role: "assistant", content }, ...base(uuid, session), ...extra }) + "\n";
const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({ type: "tool_use", id, name, input });
/** The client's answer to a tool call, as a user entry (Claude Code writes one per result). */
const result = (uuid: string, toolId: string, text: string, error = false, session = "S1") =>
  JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: toolId, content: text, ...(error ? { is_error: true } : {}) }] }, ...base(uuid, session) }) + "\n";
const APPROVED = "User has approved your plan. You can now start coding.";
const REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
const DISABLED = "<tool_use_error>No such tool available: ExitPlanMode. ExitPlanMode is disabled for this session.</tool_use_error>";
const todos = (...items: [string, string][]) => ({ todos: items.map(([content, status]) => ({ content, status, activeForm: content })) });

function sessionRows(db: Database) {
  return db.query("SELECT kind, key, title, text, ref, turn_uuid, session FROM session_content ORDER BY id").all() as { kind: string; key: string; title: string; text: string; ref: string; turn_uuid: string; session: string }[];
}

describe("the session table", () => {
  test("plans (ExitPlanMode, a plan file written), the compaction summary, the final todo list and the first prompt; redacted", async () => {
    const { config, slug, db, update } = setup();
    const key = "sk-ant-api03-" + "A1b2C3d4".repeat(5);
    const f = join(slug, "S1.jsonl");
    writeFileSync(
      f,
      user("u1", "design the ingest of parquet files") +
        assistant("a1", "m1", [toolUse("t1", "TodoWrite", todos(["read the spec", "in_progress"], ["write the reader", "pending"]))]) +
        assistant("a2", "m2", [toolUse("t2", "ExitPlanMode", { plan: `## Parquet ingest\n\nUse the arrowkite reader. Token ${key}` })], "S1", { slug: "calm-red-fox" }) +
        result("r2", "t2", APPROVED) +
        user("u2", "now the writer") +
        // A plan file written in Claude Code's plans folder is a plan once ExitPlanMode (passing no
        // plan, as newer clients call it) is approved; a markdown file elsewhere is none.
        assistant("a3", "m3", [toolUse("t3", "Write", { file_path: join(config, "plans", "calm-red-fox.md"), content: "# Writer plan\n\nbatch rows by 4096 (gnuwriter)" })]) +
        assistant("a4", "m4", [toolUse("t4", "Write", { file_path: "/repo/docs/plans/other.md", content: "# Not a plan of Claude's\n\nfennecfox" })]) +
        assistant("a6", "m6", [toolUse("t6", "ExitPlanMode", {})]) +
        result("r6", "t6", "User has approved exiting plan mode. You can now proceed.") +
        assistant("a5", "m5", [toolUse("t5", "TodoWrite", todos(["read the spec", "completed"], ["write the reader", "completed"], ["ship it", "pending"]))]) +
        JSON.stringify({ type: "user", isCompactSummary: true, message: { role: "user", content: "Summary: the team settled on okapi compression." }, ...base("c1", "S1") }) +
        "\n",
    );
    const r = await update();
    expect(r.errors).toEqual([]);
    const rows = sessionRows(db);
    const byKind = (k: string) => rows.filter((x) => x.kind === k);
    expect(byKind("first_prompt").map((x) => x.text)).toEqual(["design the ingest of parquet files"]);
    // ExitPlanMode's plan and the plan file written later are the same file: one row, the later text.
    expect(byKind("plan")).toHaveLength(1);
    expect(byKind("plan")[0]!.ref).toBe(join(config, "plans", "calm-red-fox.md"));
    expect(byKind("plan")[0]!.title).toBe("Writer plan");
    expect(byKind("plan")[0]!.turn_uuid).toBe("u2");
    // The final todo list only.
    expect(byKind("todos").map((x) => x.text)).toEqual(["- [completed] read the spec\n- [completed] write the reader\n- [pending] ship it"]);
    expect(byKind("summary").map((x) => x.text)).toEqual(["Summary: the team settled on okapi compression."]);
    expect(searchSessions(db, { query: "fennecfox", limit: 5 })).toEqual([]);
    expect(searchSessions(db, { query: "okapi", limit: 5 })[0]!.kind).toBe("summary");
    expect(searchSessions(db, { query: "gnuwriter", limit: 5 })[0]!.planFile).toBe(join(config, "plans", "calm-red-fox.md"));
    // The compaction summary is not a message of its own.
    expect(searchTranscripts(db, { query: "okapi", limit: 5 })).toEqual([]);
    for (const x of rows) expect(x.text).not.toContain(key);
  });

  test("a plan with no slug and no file is kept under its tool call; a secret in it never reaches the table", async () => {
    const { slug, db, update } = setup();
    const key = "ghp_" + "a1B2c3D4e5".repeat(4);
    writeFileSync(join(slug, "S1.jsonl"), user("u1", "plan it") + assistant("a1", "m1", [toolUse("t9", "ExitPlanMode", { plan: `Rotate ${key} then use the lynxqueue.` })]) + result("r1", "t9", APPROVED));
    await update();
    const hit = searchSessions(db, { query: "lynxqueue", limit: 5 })[0]!;
    expect(hit.kind).toBe("plan");
    expect(hit.planFile).toBe("");
    expect(hit.snippet).not.toContain(key);
    expect(sessionRows(db)[1]!.key).toBe("plan:t9");
  });

  test("a plan the user did not approve is none: refused in its dialog, disabled under -p, never answered; one approved before a refused revision stays", async () => {
    const { config, slug, db, update } = setup();
    const planFile = join(config, "plans", "amber-slow-wren.md");
    const plans = () => sessionRows(db).filter((x) => x.kind === "plan").map((x) => `${x.key.replace(config, "~")} ${x.title}`);
    // Refused in the dialog: the file written for it is a draft, not the session's plan.
    writeFileSync(
      join(slug, "S1.jsonl"),
      user("u1", "plan the wren migration") +
        assistant("a1", "m1", [toolUse("w1", "Write", { file_path: planFile, content: "# Wren plan\n\nmove the wrenqueue first" })], "S1", { slug: "amber-slow-wren" }) +
        assistant("a2", "m2", [toolUse("x1", "ExitPlanMode", {})]) +
        result("r2", "x1", REJECTED, true),
    );
    // Under -p the client disables ExitPlanMode: its plan is never approved.
    writeFileSync(join(slug, "S2.jsonl"), user("v1", "plan the heron port", "S2") + assistant("b1", "n1", [toolUse("x2", "ExitPlanMode", { plan: "# Heron plan\n\nport the heronlog" })], "S2") + result("v2", "x2", DISABLED, true, "S2"));
    // Asked, and the session went on to another prompt without an answer.
    writeFileSync(join(slug, "S3.jsonl"), user("k1", "plan the kite work", "S3") + assistant("c1", "o1", [toolUse("x3", "ExitPlanMode", { plan: "# Kite plan\n\nthe kiteband" })], "S3") + user("k2", "never mind", "S3"));
    await update();
    expect(plans()).toEqual([]);
    expect(searchSessions(db, { query: "wrenqueue", limit: 5 })).toEqual([]);
    expect(searchSessions(db, { query: "heronlog", limit: 5 })).toEqual([]);
    expect(searchSessions(db, { query: "kiteband", limit: 5 })).toEqual([]);

    // The answer in a later read than the call; then a revision refused: the approved text stays.
    const f = join(slug, "S4.jsonl");
    let text = user("p1", "plan the plover work", "S4") + assistant("d1", "q1", [toolUse("x4", "ExitPlanMode", { plan: "# Plover plan\n\nthe ploverbank first" })], "S4", { slug: "pale-plover" });
    writeFileSync(f, text);
    await update();
    expect(plans()).toEqual([]);
    writeFileSync(f, (text += result("p2", "x4", APPROVED, false, "S4")));
    await update();
    const approved = [`plan:${join("~", "plans", "pale-plover.md")} Plover plan`];
    expect(plans()).toEqual(approved);
    writeFileSync(f, (text += user("p3", "revise it", "S4") + assistant("d2", "q2", [toolUse("x5", "ExitPlanMode", { plan: "# Plover plan v2\n\nthe ploverdock" })], "S4") + result("p4", "x5", REJECTED, true, "S4")));
    await update();
    expect(plans()).toEqual(approved);
    expect(searchSessions(db, { query: "ploverdock", limit: 5 })).toEqual([]);
  });

  test("a plan hit's snippet is the passage that matched, not the plan's start, even when its title holds a query word", async () => {
    const { slug, db, update } = setup();
    const filler = "Context on the thumbnail pipeline and its queues. ".repeat(10);
    const plan = `# Thumbnail worker plan\n\n${filler}\n\nzq-plan-7: migrate the thumbnail worker to SQS in two phases, the resize consumers first.`;
    writeFileSync(join(slug, "S1.jsonl"), user("u1", "plan the move") + assistant("a1", "m1", [toolUse("t1", "ExitPlanMode", { plan })]) + result("r1", "t1", APPROVED));
    await update();
    const hit = searchSessions(db, { query: "plan SQS in two phases zq-plan-7", limit: 5 })[0]!;
    expect(hit.kind).toBe("plan");
    expect(hit.snippet).toContain("SQS in two phases");
    expect(hit.snippet.startsWith("…")).toBe(true);
    // A text whose first window holds every word it holds: that window, as before.
    expect(snippetOf(`alpha beta ${"x ".repeat(300)}`, ["beta", "alpha"])).toBe(`alpha beta ${"x ".repeat(300)}`.slice(0, 240) + "…");
  });

  test("an appended read adds to the table without duplicating the first prompt; subagent files add nothing", async () => {
    const { slug, db, update } = setup();
    const f = join(slug, "S1.jsonl");
    writeFileSync(f, user("u1", "first words about herons"));
    await update();
    writeFileSync(f, user("u1", "first words about herons") + user("u2", "second words about egrets"));
    await update();
    expect(sessionRows(db).map((x) => x.kind + ":" + x.text)).toEqual(["first_prompt:first words about herons"]);
    mkdirSync(join(slug, "S1", "subagents"), { recursive: true });
    writeFileSync(
      join(slug, "S1", "subagents", "agent-x.jsonl"),
      user("s1", "subagent task about storks", "S1", { isSidechain: true }) + assistant("s2", "sm1", [toolUse("st", "TodoWrite", todos(["stork todo", "pending"]))], "S1", { isSidechain: true }),
    );
    await update({ full: true });
    expect(sessionRows(db)).toHaveLength(1);
  });

  test("recall fuses the session table with the messages: a plan joins its turn's result, a summary with no hit of its own is a result of its own", () => {
    const hit = { rowid: 1, project: "p", session: "S", turnUuid: "T1", uuid: "x", ts: 1, role: "assistant" as const, path: "/t.jsonl", tools: [], paths: [], snippet: "s", score: 1, agent: "claude" };
    const plan = { id: 1, project: "p", session: "S", kind: "plan" as const, title: "P", turnUuid: "T1", ts: 1, path: "/t.jsonl", planFile: "/plans/a.md", snippet: "p", score: 2, agent: "claude" };
    const summary = { ...plan, id: 2, kind: "summary" as const, turnUuid: "T9", planFile: "" };
    const out = mergeRankings([], [hit], [plan, summary]);
    expect(out.map((r) => r.from)).toEqual([["transcript", "session"], ["session"]]);
    expect(out[0]!.sessionContent!.planFile).toBe("/plans/a.md");
    expect(out[0]!.score).toBeGreaterThan(out[1]!.score);
  });
});

describe("the archive", () => {
  test("a rebuild keeps the archived rows: recall --reindex (reset) and a file of another schema version", async () => {
    const { slug, dbPath, db, update } = setup();
    writeFileSync(join(slug, "S1.jsonl"), user("u1", "we picked the ibexstore backend") + assistant("a1", "m1", [{ type: "text", text: "ibexstore it is" }]));
    writeFileSync(join(slug, "S2.jsonl"), user("v1", "an ordinary day with condors", "S2"));
    await update();
    rmSync(join(slug, "S1.jsonl"));
    expect((await update()).archived).toBe(1);
    db.close();

    const reset = openTranscriptDb(dbPath, { reset: true });
    // Only the archive survives a reset: the file on disk is read again by the next update.
    expect(searchTranscripts(reset, { query: "condors", limit: 5 })).toEqual([]);
    const kept = searchTranscripts(reset, { query: "ibexstore", limit: 5 });
    expect(kept.map((h) => h.role).sort()).toEqual(["assistant", "user"]);
    expect(kept[0]!.archivedAt).toBeNumber();
    expect(searchSessions(reset, { query: "ibexstore", limit: 5 })[0]!.kind).toBe("first_prompt");
    await updateTranscriptIndex(reset, { sources: [claudeIndex(join(slug, ".."))] });
    expect(searchTranscripts(reset, { query: "condors", limit: 5 })).toHaveLength(1);
    // A new row after the carry gets a fresh id (no clash with the carried ones).
    const ids = reset.query("SELECT id FROM messages ORDER BY id").all() as { id: number }[];
    expect(new Set(ids.map((r) => r.id)).size).toBe(ids.length);
    // A later schema version opening this file: rebuilt, archive carried.
    reset.run(`PRAGMA user_version = ${SCHEMA_VERSION - 1}`);
    reset.close();
    const bumped = openTranscriptDb(dbPath);
    expect((bumped.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(SCHEMA_VERSION);
    expect(searchTranscripts(bumped, { query: "ibexstore", limit: 5 })[0]!.archivedAt).toBeNumber();
    expect(searchTranscripts(bumped, { query: "condors", limit: 5 })).toEqual([]);
    bumped.close();
  });

  test("two processes meeting another version's file at once: one rebuilds (archive carried once), the other opens the new file; a stale aside file is swept", async () => {
    const { dir, slug, dbPath, db, update } = setup();
    writeFileSync(join(slug, "S1.jsonl"), user("u1", "the narwhal decision"));
    await update();
    rmSync(join(slug, "S1.jsonl"));
    await update();
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION - 1}`);
    db.close();
    writeFileSync(`${dbPath}.rebuild-999999`, "left by a crash");
    const [a, b] = await Promise.all([openTranscriptIndex(dbPath), openTranscriptIndex(dbPath)]);
    for (const x of [a, b]) {
      expect(x.healed).toBeUndefined();
      expect(searchTranscripts(x.db, { query: "narwhal", limit: 5 })).toHaveLength(1);
      x.db.close();
    }
    expect(readdirSync(dir).filter((n) => n.includes(".rebuild-"))).toEqual([]);
  });

  test("a file of an older version with no archive is rebuilt empty; a damaged one is healed, saying nothing of an archive it never showed", async () => {
    const { dir } = setup();
    const old = join(dir, "v2.sqlite");
    const v2 = new Database(old, { create: true });
    v2.run("CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT)");
    v2.run("INSERT INTO files (path) VALUES ('/x.jsonl')");
    v2.run("PRAGMA user_version = 2");
    v2.close();
    const db = openTranscriptDb(old);
    expect(db.query("SELECT count(*) AS n FROM files").get()).toEqual({ n: 0 });
    db.close();
    const bad = join(dir, "bad.sqlite");
    writeFileSync(bad, Buffer.alloc(4096, 0x41));
    const healed = await openTranscriptIndex(bad);
    expect(healed.healed?.archiveLost).toBeUndefined();
    healed.db.close();
  });

  /** An index with an archived transcript and one on disk, closed, and the pages of `table` overwritten. */
  async function damaged(table: string) {
    const { slug, projects, dbPath, db, update } = setup();
    const words = (i: number) => Array.from({ length: 40 }, (_, k) => `w${i}x${k}`).join(" ");
    let text = "";
    for (let i = 0; i < 200; i++) text += user(`k${i}`, `archived talk about ptarmigans ${words(i)}`, "GONE");
    writeFileSync(join(slug, "GONE.jsonl"), text);
    writeFileSync(join(slug, "HERE.jsonl"), user("h1", "still here, about puffins", "HERE"));
    await update();
    rmSync(join(slug, "GONE.jsonl"));
    expect((await update()).archived).toBe(1);
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const pages = (db.query("SELECT pageno FROM dbstat WHERE name = ? AND pageno > 1").all(table) as { pageno: number }[]).map((r) => r.pageno);
    const size = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
    db.close();
    expect(pages.length).toBeGreaterThan(1);
    const fd = openSync(dbPath, "r+");
    for (const p of pages) writeSync(fd, Buffer.alloc(size, 0x5a), 0, size, (p - 1) * size);
    closeSync(fd);
    return { dbPath, projects };
  }

  test("a damaged index is healed with its archive when the archive's pages still read (damage in the FTS pages)", async () => {
    const { dbPath, projects } = await damaged("msg_fts_data");
    const r = await withTranscriptIndex(dbPath, {}, async (db) => {
      await updateTranscriptIndex(db, { sources: [claudeIndex(projects)] });
      return searchTranscripts(db, { query: "ptarmigans", limit: 500 });
    });
    expect(r.healed).toBeDefined();
    expect(r.healed!.archiveLost).toBeUndefined();
    expect(r.value).toHaveLength(200);
    expect(r.value.every((h) => h.archivedAt !== undefined)).toBe(true);
    expect(r.healed!.archiveKept).toBe(1);
    expect(transcriptHealLine(r.healed!)).toEndWith("; its archive of 1 deleted transcript was read back and kept");
  });

  test("a damaged index whose archived messages cannot be read back: healed, and the line says the archive is lost", async () => {
    const { dbPath, projects } = await damaged("messages");
    const r = await withTranscriptIndex(dbPath, {}, async (db) => {
      await updateTranscriptIndex(db, { sources: [claudeIndex(projects)], full: true });
      return searchTranscripts(db, { query: "ptarmigans OR puffins", limit: 500 });
    });
    expect(r.healed?.archiveLost).toBe(true);
    expect(transcriptHealLine(r.healed!)).toEndWith("; its archive of deleted transcripts could not be read back and is lost");
    // What is on disk is indexed again.
    expect(r.value.map((h) => h.session)).toEqual(["HERE"]);
  });

  test("archive_days prunes by last activity; stats and the archived turns read without writing", async () => {
    const { slug, dbPath, db, update } = setup();
    const old = join(slug, "OLD.jsonl");
    const recent = join(slug, "NEW.jsonl");
    writeFileSync(old, user("o1", "forty days ago we chose tapirsync", "OLD") + assistant("o2", "om", [toolUse("ot", "Bash", { command: "make tapir" })], "OLD"));
    writeFileSync(recent, user("n1", "ten days ago we chose gecko", "NEW"));
    const at = (days: number) => new Date(Date.now() - days * 86_400_000);
    utimesSync(old, at(40), at(40));
    utimesSync(recent, at(10), at(10));
    await update();
    rmSync(old);
    rmSync(recent);
    expect((await update({ archiveDays: 0 })).archived).toBe(2);
    const stats = archiveStats(dbPath)!;
    expect(stats.transcripts).toBe(2);
    expect(stats.messages).toBe(3);
    expect(stats.sessionRows).toBe(2);
    const turns = readArchivedTranscript(dbPath, old)!.turns;
    expect(turns.map((t) => [t.uuid, t.userText, t.tools.map((c) => `${c.name} ${c.input}`)])).toEqual([["o1", "forty days ago we chose tapirsync", ["Bash make tapir"]]]);
    expect(readArchivedTranscript(dbPath, join(slug, "nothing.jsonl"))).toBeUndefined();
    const oldId = (db.query("SELECT id FROM files WHERE path = ?").get(old) as { id: number }).id;
    const r = await update({ archiveDays: 30 });
    expect(r.pruned).toBe(1);
    expect(searchTranscripts(db, { query: "tapirsync", limit: 5 })).toEqual([]);
    expect(searchSessions(db, { query: "tapirsync", limit: 5 })).toEqual([]);
    expect(searchTranscripts(db, { query: "gecko", limit: 5 })).toHaveLength(1);
    expect(archivedTurns(db, oldId)).toEqual([]);
    expect(archiveStats(dbPath)!.transcripts).toBe(1);
    expect(archiveStats(join(slug, "missing.sqlite"))).toBeUndefined();
  });
});
