/**
 * The conversation index (src/conversations/): incremental ingest of Claude Code transcripts into
 * SQLite FTS5, its queries, and recall's merge of notes and transcript hits.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Database } from "bun:sqlite";
import { mergeRankings, type RecallNote } from "../../src/recall/recall.ts";
import { parseSince } from "../../src/core/since.ts";
import { UsageError } from "../../src/core/errors.ts";
import { openTranscriptDb } from "../../src/conversations/db.ts";
import { matchExpression } from "../../src/conversations/fts.ts";
import { updateTranscriptIndex } from "../../src/conversations/ingest.ts";
import { FULL_SCAN_MS, HOT_MS, lastFullScan, setLastFullScan } from "../../src/agents/claude/conversation.ts";
import { searchTranscripts } from "../../src/conversations/search.ts";
import { FIXTURES, realTranscripts } from "../helpers/fixtures.ts";
import { claudeIndex } from "../helpers/sources.ts";

const tmp = mkdtempSync(join(tmpdir(), "ms-tx-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;

/** A fresh projects folder and database. */
function setup() {
  const dir = join(tmp, `case-${++n}`);
  const projects = join(dir, "projects");
  mkdirSync(join(projects, "-home-dev-proj"), { recursive: true });
  const db = openTranscriptDb(join(dir, "t.sqlite"));
  const update = (o: { full?: boolean } = {}) => updateTranscriptIndex(db, { sources: [claudeIndex(projects)], ...o });
  return { dir, projects, slug: join(projects, "-home-dev-proj"), db, update };
}

const CWD = "/nonexistent/dev/proj";
let ts = Date.parse("2026-03-01T10:00:00Z");
const base = (uuid: string, session = "S1", cwd = CWD) => ({ uuid, sessionId: session, cwd, timestamp: new Date((ts += 60_000)).toISOString(), isSidechain: false });
const user = (uuid: string, text: string, extra: Record<string, unknown> = {}) => JSON.stringify({ type: "user", message: { role: "user", content: text }, ...base(uuid), ...extra }) + "\n";
const assistant = (uuid: string, msgId: string, content: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "assistant", message: { id: msgId, role: "assistant", content }, ...base(uuid), ...extra }) + "\n";
const text = (t: string) => ({ type: "text", text: t });
const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({ type: "tool_use", id, name, input });
const toolResult = (uuid: string, id: string, out: string) => JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: out }] }, ...base(uuid) }) + "\n";

type MessageRow = { role: string; text: string; turn_uuid: string; prompt_id: string | null; tools: string; paths: string; results: string; project: string };

function rows(db: Database): MessageRow[] {
  return db.query<MessageRow, []>("SELECT role, text, turn_uuid, prompt_id, tools, paths, results, project FROM messages ORDER BY id").all();
}

function find(db: Database, query: string, project?: string, sinceMs?: number) {
  return searchTranscripts(db, { query, project, sinceMs, limit: 50 });
}

describe("ingest", () => {
  test("one row per message; turn uuid and prompt id; tool names, paths and a result excerpt on the calling message", async () => {
    const { slug, db, update } = setup();
    const f = join(slug, "S1.jsonl");
    writeFileSync(
      f,
      user("u1", "Why does the redis pool time out?", { promptId: "p1" }) +
        assistant("a1", "m1", [{ type: "thinking", thinking: "secret musings about zebras" }]) +
        assistant("a2", "m1", [text("Let me read the pool config.")]) +
        assistant("a3", "m1", [toolUse("t1", "Read", { file_path: "/src/pool.ts" })]) +
        toolResult("r1", "t1", "export const POOL_SIZE = 4; // too small"),
    );
    const r = await update();
    expect(r.errors).toEqual([]);
    const all = rows(db);
    expect(all.map((x) => x.role)).toEqual(["user", "assistant"]);
    expect(all[1]!.text).toBe("Let me read the pool config.");
    expect(all[1]!.tools).toBe("Read");
    expect(all[1]!.paths).toBe("/src/pool.ts");
    expect(all[1]!.results).toContain("POOL_SIZE");
    for (const x of all) {
      expect(x.turn_uuid).toBe("u1");
      expect(x.prompt_id).toBe("p1");
      expect(x.text).not.toContain("zebras");
    }
    expect(find(db, "zebras")).toEqual([]);
  });

  test("incremental: an appended turn is read alone; unchanged files cost a stat", async () => {
    const { slug, db, update } = setup();
    const f = join(slug, "S1.jsonl");
    writeFileSync(f, user("u1", "first question about parsers") + assistant("a1", "m1", [text("parsers answer")]));
    await update();
    const before = statSync(f).size;
    const add = user("u2", "second question about lexers") + assistant("a2", "m2", [text("lexers answer")]);
    appendFileSync(f, add);
    const r = await update();
    expect(r.read).toBe(1);
    expect(r.bytes).toBe(Buffer.byteLength(add));
    expect(statSync(f).size).toBe(before + r.bytes);
    expect(rows(db).map((x) => x.turn_uuid)).toEqual(["u1", "u1", "u2", "u2"]);
    const again = await update();
    expect(again.read).toBe(0);
    expect(again.messages).toBe(0);
  });

  test("a message continued and a tool result arriving in a later read update the same row", async () => {
    const { slug, db, update } = setup();
    const f = join(slug, "S1.jsonl");
    writeFileSync(f, user("u1", "fix the flaky test") + assistant("a1", "m1", [text("Running it.")]) + assistant("a2", "m1", [toolUse("t9", "Bash", { command: "bun test flaky" })]));
    await update();
    appendFileSync(f, toolResult("r1", "t9", "1 failed: TimeoutError in flaky.test.ts"));
    await update();
    const all = rows(db);
    expect(all.length).toBe(2);
    expect(all[1]!.results).toContain("TimeoutError");
    expect(find(db, "TimeoutError").length).toBe(1);
  });

  test("a truncated last line is not consumed until it is complete", async () => {
    const { slug, db, update } = setup();
    const f = join(slug, "S1.jsonl");
    const line = user("u2", "complete me about websockets");
    writeFileSync(f, user("u1", "hello about sockets") + line.slice(0, 40));
    await update();
    expect(rows(db).length).toBe(1);
    appendFileSync(f, line.slice(40));
    await update();
    expect(rows(db).map((x) => x.text)).toEqual(["hello about sockets", "complete me about websockets"]);
  });

  test("a file that shrank or was replaced (new inode) is re-read from scratch", async () => {
    const { slug, db, update } = setup();
    const f = join(slug, "S1.jsonl");
    writeFileSync(f, user("u1", "alpha topic") + user("u2", "beta topic") + assistant("a", "m", [text("ok")]));
    await update();
    writeFileSync(f, user("u3", "gamma topic"));
    const r = await update();
    expect(r.reread).toBe(1);
    expect(rows(db).map((x) => x.text)).toEqual(["gamma topic"]);
    // Same size, another inode.
    const other = join(slug, "tmp.part");
    writeFileSync(other, user("u4", "delta topic"));
    renameSync(other, f);
    const r2 = await update();
    expect(r2.read).toBe(1);
    expect(rows(db).map((x) => x.text)).toEqual(["delta topic"]);
    expect(find(db, "gamma")).toEqual([]);
  });

  test("a deleted transcript keeps its rows, marked archived with the time it disappeared", async () => {
    const { slug, db, update } = setup();
    writeFileSync(join(slug, "S1.jsonl"), user("u1", "keep this"));
    writeFileSync(join(slug, "S2.jsonl"), user("v1", "drop that", { sessionId: "S2" }));
    await update();
    expect(find(db, "drop")[0]!.archivedAt).toBeUndefined();
    rmSync(join(slug, "S2.jsonl"));
    const before = Date.now();
    const r = await update();
    expect(r.archived).toBe(1);
    expect(rows(db).map((x) => x.text)).toEqual(["keep this", "drop that"]);
    const hit = find(db, "drop")[0]!;
    expect(hit.archivedAt).toBeGreaterThanOrEqual(before);
    // Archived once: later updates leave it alone.
    expect((await update({ full: true })).archived).toBe(0);
    // Back on disk: read again, no longer archived.
    writeFileSync(join(slug, "S2.jsonl"), user("v1", "drop that again", { sessionId: "S2" }));
    expect((await update()).full).toBe(false);
    expect(find(db, "again")[0]!.archivedAt).toBeUndefined();
  });

  test("secrets are redacted before they enter the index", async () => {
    const { slug, db, update } = setup();
    const key = "sk-ant-api03-" + "A1b2C3d4".repeat(5);
    writeFileSync(join(slug, "S1.jsonl"), user("u1", `use ANTHROPIC key ${key} and <private>my diary</private> now`) + assistant("a", "m", [toolUse("t", "Bash", { command: `export GITHUB_TOKEN=ghp_${"x1".repeat(20)}` })]));
    await update();
    const dump = JSON.stringify(rows(db));
    expect(dump).not.toContain(key);
    expect(dump).not.toContain("my diary");
    expect(dump).not.toContain("ghp_x1");
    expect(dump).toContain("[REDACTED:anthropic-key]");
    expect(find(db, "A1b2C3d4A1b2C3d4")).toEqual([]);
  });

  test("webhooks and control characters never enter the index; an index written before they were taken out is rebuilt", async () => {
    const { dir, slug, db, update } = setup();
    const hook = "https://hooks.slack.com/services/T0ABCDEF1/B0GHIJKL2/" + "aZ3kQ9mX7pL2".repeat(2);
    writeFileSync(join(slug, "S1.jsonl"), user("u1", `post the \x1b[31mrelease\x1b[0m note\0 to ${hook}`) + assistant("a", "m", [text("Posted the walrus release note.")]));
    await update();
    const clean = JSON.stringify(rows(db));
    expect(clean).toContain("post the release note  to https://hooks.slack.com/services/[REDACTED:slack-webhook]");
    expect(clean).not.toContain("aZ3kQ9mX7pL2");
    // What an older version wrote: the webhook and the escape sequence in the row, at schema 2.
    db.run("UPDATE messages SET text = ? WHERE role = 'user'", [`post the \x1b[31mrelease\x1b[0m note to ${hook}`]);
    db.run("PRAGMA user_version = 2");
    db.close();
    const again = openTranscriptDb(join(dir, "t.sqlite"));
    expect(rows(again)).toEqual([]);
    await updateTranscriptIndex(again, { sources: [claudeIndex(join(dir, "projects"))] });
    expect(JSON.stringify(rows(again))).toBe(clean);
    again.close();
  });

  test("injected context, system reminders, attachments, api-request lines, meta and local commands never enter the index", async () => {
    const { slug, db, update } = setup();
    cpSync(join(FIXTURES, "injected.jsonl"), join(slug, "injected.jsonl"));
    cpSync(join(FIXTURES, "commands.jsonl"), join(slug, "commands.jsonl"));
    writeFileSync(
      join(slug, "S1.jsonl"),
      user("u1", "real question about caching") +
        JSON.stringify({ type: "api-request-blob", body: "# Recent memory (memsearch) blobword" }) +
        "\n" +
        JSON.stringify({ type: "api-request-shape", system: "SYSTEMPROMPTWORD" }) +
        "\n" +
        JSON.stringify({ type: "attachment", attachment: { type: "hook_additional_context", content: ["[memsearch] Memories from earlier sessions attachword"] }, ...base("x1") }) +
        "\n" +
        user("m1", "metaword caveat", { isMeta: true }) +
        assistant("a1", "m9", [text("answer <system-reminder>reminderword</system-reminder> done")]),
    );
    const r = await update();
    expect(r.errors).toEqual([]);
    const dump = JSON.stringify(rows(db));
    for (const w of ["blobword", "SYSTEMPROMPTWORD", "attachword", "metaword", "reminderword", "Recent memory (memsearch)", "[memsearch]", "<!-- session:", "system-reminder", "local-command"]) expect(dump).not.toContain(w);
    for (const w of ["blobword", "attachword", "metaword", "reminderword"]) expect(find(db, w)).toEqual([]);
    // The /mcp local command is no turn; the /review command Claude acted on is.
    const texts = rows(db).filter((x) => x.role === "user").map((x) => x.text);
    expect(texts.some((t) => t.startsWith("/mcp"))).toBe(false);
    expect(texts.some((t) => t.startsWith("/review"))).toBe(true);
  });

  test("subagent files are indexed with their own turns; sidechain lines of the main file are not", async () => {
    const { slug, db, update } = setup();
    cpSync(join(FIXTURES, "session-sub.jsonl"), join(slug, "session-sub.jsonl"));
    cpSync(join(FIXTURES, "session-sub"), join(slug, "session-sub"), { recursive: true });
    const r = await update();
    expect(r.errors).toEqual([]);
    const files = db.query("SELECT f.path, count(m.id) AS n FROM files f LEFT JOIN messages m ON m.file_id = f.id GROUP BY f.id").all() as { path: string; n: number }[];
    const sub = files.find((x) => basename(x.path) === "agent-abc1234.jsonl");
    expect(sub).toBeDefined();
    expect(sub!.n).toBeGreaterThan(0);
  });

  test("every real transcript in the fixtures indexes without error", async () => {
    const { projects, db, update } = setup();
    for (const src of ["claude-code-log", "episodic-memory", "spotter"]) cpSync(join(FIXTURES, src), join(projects, `-${src}`), { recursive: true });
    const r = await update();
    expect(r.errors).toEqual([]);
    expect(r.files).toBe(realTranscripts().length);
    expect(r.read).toBe(r.files);
    const perFile = db.query("SELECT f.path, count(m.id) AS n FROM files f LEFT JOIN messages m ON m.file_id = f.id GROUP BY f.id").all() as { path: string; n: number }[];
    // Files with conversation in them all gave rows (medium-conversation holds only snapshots and a summary).
    for (const x of perFile) if (!x.path.endsWith("medium-conversation.jsonl")) expect(x.n).toBeGreaterThan(0);
    const again = await update();
    expect(again.read).toBe(0);
  });

  test("project identity: the git top level of the cwd (worktrees included), else the cwd", async () => {
    const { slug, projects, db, update } = setup();
    const repo = join(tmp, `repo-${n}`);
    mkdirSync(join(repo, ".git", "worktrees", "wt"), { recursive: true });
    writeFileSync(join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n");
    const wt = join(tmp, `wt-${n}`);
    mkdirSync(join(wt, "sub"), { recursive: true });
    writeFileSync(join(wt, ".git"), `gitdir: ${join(repo, ".git", "worktrees", "wt")}\n`);
    mkdirSync(join(projects, "-wt"), { recursive: true });
    writeFileSync(join(slug, "A.jsonl"), JSON.stringify({ type: "user", message: { role: "user", content: "from the main repo" }, ...base("a1", "A", repo) }) + "\n");
    writeFileSync(join(projects, "-wt", "B.jsonl"), JSON.stringify({ type: "user", message: { role: "user", content: "from the worktree" }, ...base("b1", "B", join(wt, "sub")) }) + "\n");
    await update();
    expect(new Set(rows(db).map((x) => x.project))).toEqual(new Set([repo]));
  });
});

describe("freshness: hot files, changed folders, full scans", () => {
  const DAY = 86_400_000;
  /** Set the mtime of each path (files and folders) `ago` ms in the past. */
  const age = (ago: number, ...paths: string[]) => {
    const t = new Date(Date.now() - ago);
    for (const p of paths) utimesSync(p, t, t);
  };
  /** A projects folder whose transcripts and folders all went quiet a day ago, indexed. */
  async function quietSetup() {
    const s = setup();
    const cold = join(s.slug, "OLD.jsonl");
    const hot = join(s.slug, "HOT.jsonl");
    const sess = join(s.slug, "OLD");
    const subs = join(sess, "subagents");
    mkdirSync(subs, { recursive: true });
    writeFileSync(cold, user("o1", "an old question about parquet", { sessionId: "OLD" }));
    writeFileSync(join(subs, "agent-old.jsonl"), user("o2", "an old subagent about avro", { sessionId: "OLD", isSidechain: true }));
    writeFileSync(hot, user("h1", "a running session about protobuf", { sessionId: "HOT" }));
    age(DAY, cold, join(subs, "agent-old.jsonl"), subs, sess, s.slug, s.projects);
    age(60_000, hot); // the session in progress: written a minute ago
    age(DAY, s.slug); // writing HOT.jsonl touched the folder
    const first = await s.update();
    expect(first.full).toBe(true);
    expect(first.firstBuild).toBe(true);
    expect(rows(s.db).length).toBe(3);
    // Nothing changed: the next update is not a full scan, reads nothing, stats only the hot file.
    const quiet = await s.update();
    expect(quiet.full).toBe(false);
    expect(quiet.read).toBe(0);
    expect(quiet.files).toBe(1);
    return { ...s, cold, hot, sess, subs };
  }

  test("an append to a hot file is read by the very next update", async () => {
    const { db, hot, update } = await quietSetup();
    appendFileSync(hot, user("h2", "and now about flatbuffers", { sessionId: "HOT" }));
    const r = await update();
    expect(r.full).toBe(false);
    expect(r.read).toBe(1);
    expect(find(db, "flatbuffers").length).toBe(1);
  });

  test("a new transcript is found by the next update: in the project folder, in a new session's subagents, in a known subagents folder", async () => {
    const { db, slug, projects, subs, update } = await quietSetup();
    writeFileSync(join(slug, "NEW.jsonl"), user("n1", "a new session about thrift", { sessionId: "NEW" }));
    mkdirSync(join(slug, "NEW2", "subagents"), { recursive: true });
    writeFileSync(join(slug, "NEW2", "subagents", "agent-a1.jsonl"), user("n2", "a new subagent about capnproto", { sessionId: "NEW2", isSidechain: true }));
    mkdirSync(join(projects, "-home-dev-other"));
    writeFileSync(join(projects, "-home-dev-other", "X.jsonl"), user("n3", "another project about msgpack", { sessionId: "X" }));
    const r = await update();
    expect(r.full).toBe(false);
    expect(r.read).toBe(3);
    for (const w of ["thrift", "capnproto", "msgpack"]) expect(find(db, w).length).toBe(1);
    // The old session's subagents folder went quiet a day ago: a new file in it changes its mtime,
    // but a cold folder is only looked at by the full scan (a session resumed after hours).
    writeFileSync(join(subs, "agent-new.jsonl"), user("n4", "a resumed subagent about bson", { sessionId: "OLD", isSidechain: true }));
    expect((await update()).read).toBe(0);
    const full = await update({ full: true });
    expect(full.full).toBe(true);
    expect(full.read).toBe(1);
    expect(find(db, "bson").length).toBe(1);
  });

  test("a cold file appended to is read at the latest by the next full scan", async () => {
    const { db, dir, projects, cold, update } = await quietSetup();
    appendFileSync(cold, user("o3", "a resumed question about orc", { sessionId: "OLD" }));
    age(DAY - 60_000, cold); // still cold: its mtime stays far outside HOT_MS
    expect(DAY - 60_000).toBeGreaterThan(HOT_MS);
    const quick = await update();
    expect(quick.full).toBe(false);
    expect(find(db, "orc")).toEqual([]);
    // The last full scan is now older than FULL_SCAN_MS: the next update is one.
    const last = lastFullScan(db, projects)!;
    expect(last).toBeGreaterThan(Date.now() - 60_000);
    setLastFullScan(db, projects, Date.now() - FULL_SCAN_MS - 1_000);
    const full = await update();
    expect(full.full).toBe(true);
    expect(full.read).toBe(1);
    expect(find(db, "orc").length).toBe(1);
    expect(lastFullScan(db, projects)!).toBeGreaterThan(last - 1);
    // A new process (the keeper opens the database per update) sees the same.
    db.close();
    const again = openTranscriptDb(join(dir, "t.sqlite"));
    expect((await updateTranscriptIndex(again, { sources: [claudeIndex(projects)] })).full).toBe(false);
    again.close();
  });

  test("a deleted file is archived at the next full scan, or at the next update when its folder changed", async () => {
    const { db, slug, cold, subs, update } = await quietSetup();
    // Deleting changes the folder's mtime: the next update lists it and archives the rows.
    rmSync(cold);
    const r = await update();
    expect(r.archived).toBe(1);
    expect(find(db, "parquet")[0]!.archivedAt).toBeNumber();
    // A folder whose mtime says nothing (set back, as a copy tool might): the full scan finds it gone.
    rmSync(join(subs, "agent-old.jsonl"));
    age(DAY, subs, slug);
    expect((await update()).archived).toBe(0);
    expect(find(db, "avro")[0]!.archivedAt).toBeUndefined();
    const full = await update({ full: true });
    expect(full.archived).toBe(1);
    expect(find(db, "avro")[0]!.archivedAt).toBeNumber();
  });

  test("a removed session folder and project folder archive their transcripts at the next update", async () => {
    const { db, slug, sess, update } = await quietSetup();
    rmSync(sess, { recursive: true });
    expect((await update()).archived).toBe(1);
    expect(find(db, "avro")[0]!.archivedAt).toBeNumber();
    rmSync(slug, { recursive: true });
    expect((await update()).archived).toBe(2);
    expect(find(db, "protobuf")[0]!.archivedAt).toBeNumber();
  });
});

describe("search", () => {
  test("a content match outranks a path-only match", async () => {
    const { slug, db, update } = setup();
    writeFileSync(
      join(slug, "S1.jsonl"),
      user("u1", "look at the code") +
        assistant("a1", "m1", [toolUse("t1", "Read", { file_path: "/src/tokenizer.ts" })]) +
        user("u2", "the tokenizer drops accents, fix it") +
        assistant("a2", "m2", [text("ok")]),
    );
    await update();
    const hits = find(db, "tokenizer");
    expect(hits.length).toBe(2);
    expect(hits[0]!.turnUuid).toBe("u2");
    expect(hits[1]!.paths).toEqual(["/src/tokenizer.ts"]);
  });

  test("projects are isolated unless asked; --since filters by time", async () => {
    const { slug, projects, db, update } = setup();
    mkdirSync(join(projects, "-other"), { recursive: true });
    writeFileSync(join(slug, "S1.jsonl"), JSON.stringify({ type: "user", message: { role: "user", content: "kafka consumer lag" }, ...base("u1", "S1", "/p/one"), timestamp: "2026-01-01T10:00:00Z" }) + "\n");
    writeFileSync(join(projects, "-other", "S2.jsonl"), JSON.stringify({ type: "user", message: { role: "user", content: "kafka partitions" }, ...base("u2", "S2", "/p/two"), timestamp: "2026-02-01T10:00:00Z" }) + "\n");
    await update();
    expect(find(db, "kafka", "/p/one").map((h) => h.turnUuid)).toEqual(["u1"]);
    expect(find(db, "kafka", "/p/two").map((h) => h.turnUuid)).toEqual(["u2"]);
    expect(find(db, "kafka").length).toBe(2);
    expect(find(db, "kafka", undefined, Date.parse("2026-01-15T00:00:00Z")).map((h) => h.turnUuid)).toEqual(["u2"]);
  });

  test("queries: compound words become phrases, stop words are dropped, CJK is searchable", async () => {
    expect(matchExpression("what about index-heal.ts")).toBe('"index heal ts"');
    expect(matchExpression("the")).toBe('"the"');
    expect(matchExpression("  ")).toBeUndefined();
    const { slug, db, update } = setup();
    writeFileSync(join(slug, "S1.jsonl"), user("u1", "我们决定使用连接池来解决超时问题") + user("u2", "snake_case_name and index-heal.ts"));
    await update();
    expect(find(db, "连接池").map((h) => h.turnUuid)).toEqual(["u1"]);
    expect(find(db, "index-heal.ts").map((h) => h.turnUuid)).toEqual(["u2"]);
    expect(find(db, "case").map((h) => h.turnUuid)).toEqual(["u2"]);
  });

  test("--since: durations and dates; anything else is a usage error", () => {
    const now = Date.parse("2026-03-10T12:00:00Z");
    expect(parseSince("12h", now)).toBe(now - 12 * 3600_000);
    expect(parseSince("3d", now)).toBe(now - 3 * 86400_000);
    expect(parseSince("1w", now)).toBe(now - 7 * 86400_000);
    expect(parseSince("2026-11-01", now)).toBe(new Date(2026, 10, 1).getTime());
    for (const bad of ["3x", "yesterday", "2026-13-01", "", "-1d"]) expect(() => parseSince(bad, now)).toThrow(UsageError);
  });
});

describe("merge", () => {
  const hit = (turnUuid: string, score: number, promptId?: string) => ({
    rowid: 1,
    project: "/p",
    agent: "claude",
    session: "S1",
    turnUuid,
    ...(promptId ? { promptId } : {}),
    uuid: turnUuid + "-m",
    ts: Date.parse("2026-03-01T10:00:00Z"),
    role: "assistant" as const,
    path: "/t/S1.jsonl",
    tools: [],
    paths: [],
    snippet: "s",
    score,
  });
  const note = (hash: string, turn?: string): RecallNote => ({
    chunkHash: hash,
    source: "/p/.memsearch/memory/2026-03-01.md",
    heading: "10:00",
    startLine: 3,
    endLine: 6,
    snippet: "note",
    score: 0.8,
    ...(turn ? { anchor: { session: "S1", turn, transcript: "/t/S1.jsonl" } } : {}),
  });

  test("a note and the messages of its turn are one result, ranked above either alone", () => {
    const out = mergeRankings([note("aaaa", "T2"), note("bbbb")], [hit("T1", 9), hit("T2", 8), hit("T2", 7)]);
    expect(out.length).toBe(3);
    expect(out[0]!.turn).toBe("T2");
    expect(out[0]!.from).toEqual(["note", "transcript"]);
    expect(out[0]!.note!.chunkHash).toBe("aaaa");
    expect(out[0]!.transcript!.matches).toBe(2);
    expect(out.filter((r) => r.turn === "T2").length).toBe(1);
  });

  test("a note anchored by prompt id joins its turn too", () => {
    const out = mergeRankings([note("cccc", "P7")], [hit("T7", 5, "P7")]);
    expect(out.length).toBe(1);
    expect(out[0]!.from).toEqual(["note", "transcript"]);
  });

  test("a note whose turn was not among the hits keeps its transcript from the anchor", () => {
    const out = mergeRankings([note("dddd", "T9")], []);
    expect(out[0]!.anchorTranscript).toEqual({ path: "/t/S1.jsonl", turn: "T9" });
  });
});
