/**
 * The hub's API in-process (the compiled binary and the page are driven by test/e2e/hub.test.ts):
 * parameters are checked, data comes from the same core functions as the CLI's, and no secret
 * leaves it, from a note or from a transcript.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { loadContext } from "../../src/core/context.ts";
import { peekIndex } from "../../src/index/format.ts";
import { appendTurnNote } from "../../src/memory/journal.ts";
import { handleApi } from "../../src/hub/api.ts";
import { HubData } from "../../src/hub/data.ts";
import type { DayPage, NoteView, Overview, SearchPage, TimelinePage, TurnsView, TurnView } from "../../src/hub/types.ts";
import { accountedSession, SESSION as SESSION_ACC } from "../helpers/accounted-session.ts";
import { REPO } from "../helpers/cli.ts";
import { appendTurn } from "../fault/transcript.ts";

const root = mkdtempSync(join(tmpdir(), "ms-hub-api-"));
mkdirSync(join(root, ".git"));
const memory = join(root, ".memsearch", "memory");
cpSync(join(REPO, "sample", "memory"), memory, { recursive: true });
const home = process.env.HOME!;
const env = { ...process.env };

// A conversation of this project where Claude Code keeps them, with secrets in the prompt and a tool output.
const SESSION = "9d0c2b7e-1111-4a2b-8c3d-4e5f6a7b8c9d";
const transcript = join(home, ".claude", "projects", "-hub-api-project", `${SESSION}.jsonl`);
const ANTHROPIC = `sk-ant-api03-${"K".repeat(64)}`;
const AWS = "AKIAQWERTYUIOPASDFGH";
const HAND_PLANTED = `ghp_${"Z".repeat(36)}`;

const get = async <T>(data: HubData, path: string, params: Record<string, string | number> = {}): Promise<{ status: number; body: T }> => {
  const q = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const r = await handleApi(data, path, q);
  return { status: r.status, body: (await r.json()) as T };
};

let data: HubData;
let projectId: string;

beforeAll(async () => {
  mkdirSync(join(transcript, ".."), { recursive: true });
  appendTurn(
    transcript,
    { sessionId: SESSION, uuid: "7a1e0c55-0001-4000-8000-000000000001", promptId: "p-1", prompt: `Configure the billing webhook with ${ANTHROPIC}`, command: "cat .env", output: `AWS_ACCESS_KEY_ID=${AWS}\nWEBHOOK=on`, reply: "The billing webhook now verifies signatures.", cwd: root },
    "all",
  );
  await appendTurnNote({ memoryDir: memory, sessionId: SESSION, turnUuid: "7a1e0c55-0001-4000-8000-000000000001", transcriptPath: transcript, bullets: ["User asked to configure the billing webhook", "Claude Code made it verify signatures"], now: new Date(2026, 10, 22, 10, 15) });
  // A secret typed into a note by hand, after the journal's own redaction, with escape sequences and a NUL.
  appendFileSync(join(memory, "2026-11-22.md"), `### 10:40\n<!-- session:${SESSION} turn:hand transcript:- -->\n- the deploy \x1b[1mtoken\x1b[0m is\0${HAND_PLANTED}\n`);
  // An older turn written after the day's newer ones, as `memsearch import` does.
  appendFileSync(join(memory, "2026-11-20.md"), `\n### 07:00\n<!-- session:early turn:e1 transcript:- -->\n- imported early note\n`);
  // Enough notes on one day to need a second page.
  for (let i = 0; i < 45; i++) {
    await appendTurnNote({ memoryDir: memory, sessionId: "bulk", turnUuid: `bulk-${i}`, transcriptPath: "-", bullets: [`bulk note number ${i}`], now: new Date(2026, 10, 10, 8, i) });
  }
  data = HubData.open({ allProjects: false, cwd: root, env });
  projectId = (await data.overview()).projects[0]!.id;
});

describe("parameters are checked before anything is read", () => {
  const bad: [string, Record<string, string | number>, number, RegExp][] = [
    ["/api/timeline", {}, 400, /project is required/],
    ["/api/timeline", { project: "../../etc" }, 400, /project id/],
    ["/api/timeline", { project: "0123456789ab" }, 404, /no project/],
    ["/api/timeline", { project: "PROJECT", offset: -1 }, 400, /offset/],
    ["/api/timeline", { project: "PROJECT", limit: 1000 }, 400, /limit must be between 1 and 200/],
    ["/api/timeline", { project: "PROJECT", limit: "1e3" }, 400, /whole number/],
    ["/api/search", {}, 400, /q is required/],
    ["/api/search", { q: "   " }, 400, /q is required/],
    ["/api/search", { q: "x".repeat(501) }, 400, /longer than 500/],
    ["/api/search", { q: "redis", mode: "everything" }, 400, /mode must be/],
    ["/api/note", { project: "PROJECT", chunk: "zz" }, 400, /chunk hash/],
    ["/api/note", { project: "PROJECT", file: "../../../etc/passwd", line: 1 }, 400, /daily file/],
    ["/api/note", { project: "PROJECT", file: "2026-11-20.md", line: 0 }, 400, /line must be between/],
    ["/api/note", { project: "PROJECT", file: "2026-11-20.md", line: 2 }, 404, /no note at/],
    ["/api/note", { project: "PROJECT", chunk: "0000000000000000" }, 404, /not found/i],
    ["/api/transcript", { path: "/etc/passwd", turn: "x" }, 400, /\.jsonl/],
    ["/api/day", {}, 400, /date is required/],
    ["/api/day", { date: "2026-13-01" }, 400, /a day \(YYYY-MM-DD\)/],
    ["/api/day", { date: "../2026-11-20" }, 400, /a day/],
    ["/api/nothing", {}, 404, /no such endpoint/],
  ];
  for (const [path, params, status, message] of bad) {
    test(`${path} ${JSON.stringify(params).slice(0, 60)} → ${status}`, async () => {
      const p = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v === "PROJECT" ? projectId : v]));
      const r = await get<{ error: string }>(data, path, p);
      expect(r.status).toBe(status);
      expect(r.body.error).toMatch(message);
    });
  }

  test("a parameter given twice is refused", async () => {
    const r = await handleApi(data, "/api/search", new URLSearchParams("q=a&q=b"));
    expect(r.status).toBe(400);
  });

  test("a transcript the hub did not point to is never read, even when it exists", async () => {
    // A hub of its own: another test's note view may have pointed this one's at the transcript.
    const fresh = HubData.open({ allProjects: false, cwd: root, env });
    const r = await get<{ error: string }>(fresh, "/api/transcript", { path: transcript, turn: "7a1e0c55" });
    expect(r.status).toBe(404);
    expect(r.body.error).toContain("unknown transcript");
  });
});

describe("data", () => {
  test("the overview counts notes by day and reports what `memsearch stats` reports", async () => {
    // Searching builds the index, as the CLI's search does.
    expect((await get(data, "/api/search", { q: "redis" })).status).toBe(200);
    const o = (await get<Overview>(data, "/api/overview")).body;
    const head = peekIndex(loadContext({}, root).project.indexDir)!;
    expect(o.totals).toMatchObject({ chunks: head.chunks, files: head.files, vectors: head.vectors, indexBytes: head.bytes, projects: 1 });
    expect(o.totals.notes).toBe(6 + 1 + 1 + 1 + 45);
    expect(o.days).toEqual({ "2026-11-20": 4, "2026-11-21": 3, "2026-11-22": 2, "2026-11-10": 45 });
    expect(o.totals.activeDays).toBe(4);
    expect(o.totals.avgPerDay).toBe(13.5);
    expect(o.embedding[0]).toMatchObject({ model: "nomic-embed-text", ok: false });
    expect(o.projects[0]).toMatchObject({ id: projectId, current: true, exists: true, notes: 54, lastNote: "2026-11-22 10:40" });
  });

  test("the timeline pages through the notes, newest first", async () => {
    const first = (await get<TimelinePage>(data, "/api/timeline", { project: projectId, limit: 10 })).body;
    expect(first.total).toBe(54);
    expect(first.notes.map((n) => `${n.day} ${n.time}`)).toEqual([
      "2026-11-22 10:40",
      "2026-11-22 10:15",
      "2026-11-21 16:40",
      "2026-11-21 11:20",
      "2026-11-21 10:05",
      "2026-11-20 14:30",
      "2026-11-20 09:47",
      "2026-11-20 09:12",
      // Written last, but the oldest of its day.
      "2026-11-20 07:00",
      "2026-11-10 08:44",
    ]);
    const last = (await get<TimelinePage>(data, "/api/timeline", { project: projectId, offset: 51, limit: 10 })).body;
    expect(last.notes.map((n) => n.bullets[0])).toEqual(["bulk note number 2", "bulk note number 1", "bulk note number 0"]);
  });

  test("a day: its notes newest first, the active days around it, nothing from other days", async () => {
    const d = (await get<DayPage>(data, "/api/day", { date: "2026-11-20" })).body;
    expect(d).toMatchObject({ date: "2026-11-20", total: 4, previous: "2026-11-10", next: "2026-11-21" });
    expect(d.groups.map((g) => g.project)).toEqual([projectId]);
    expect(d.groups[0]!.notes.map((n) => n.time)).toEqual(["14:30", "09:47", "09:12", "07:00"]);
    expect(d.groups[0]!.notes.every((n) => n.day === "2026-11-20" && n.file === "2026-11-20.md")).toBe(true);
    const newest = (await get<DayPage>(data, "/api/day", { date: "2026-11-22" })).body;
    expect(newest).toMatchObject({ total: 2, previous: "2026-11-21", next: null });
    expect(JSON.stringify(newest)).not.toContain(HAND_PLANTED);
    const quiet = (await get<DayPage>(data, "/api/day", { date: "2026-11-15" })).body;
    expect(quiet).toEqual({ scope: "project", date: "2026-11-15", total: 0, groups: [], previous: "2026-11-10", next: "2026-11-20" });
  });

  test("notes and search results are redacted again on the way out", async () => {
    const page = (await get<TimelinePage>(data, "/api/timeline", { project: projectId, limit: 1 })).body;
    expect(page.notes[0]!.bullets[0]).toBe("the deploy token is [REDACTED:github-token]");
    const note = (await get<NoteView>(data, "/api/note", { project: projectId, file: "2026-11-22.md", line: page.notes[0]!.line })).body;
    expect(note.content).toContain("[REDACTED:github-token]");
    // Nor a control character: the hand-planted escape sequences and NUL are gone from every answer.
    for (const body of [page, note]) expect(JSON.stringify(body)).not.toMatch(/\\u00(?:0[0-8bcef]|1[0-9a-f]|7f|[89][0-9a-f])/);
    const hits = (await get<SearchPage>(data, "/api/search", { q: "deploy token" })).body;
    expect(hits.hits.length).toBeGreaterThan(0);
    expect(JSON.stringify(hits)).not.toContain(HAND_PLANTED);
  });

  test("a note opens its section and its original turn, with the transcript's secrets redacted", async () => {
    const hits = (await get<SearchPage>(data, "/api/search", { q: "billing webhook" })).body;
    const hit = hits.hits[0]!;
    expect(hit).toMatchObject({ project: projectId, from: ["note"], date: "2026-11-22 10:15" });
    expect(hit.note!.source).toEndWith("2026-11-22.md");
    const note = (await get<NoteView>(data, "/api/note", { project: projectId, chunk: hit.note!.chunk })).body;
    expect(note.content).toContain("- User asked to configure the billing webhook");
    expect(note.anchor).toEqual({ session: SESSION, turn: "7a1e0c55-0001-4000-8000-000000000001", transcript });
    expect(note.transcriptAvailable).toBe(true);
    const r = await get<TurnView>(data, "/api/transcript", { project: projectId, chunk: hit.note!.chunk });
    expect(r.status).toBe(200);
    const turn = r.body;
    expect(turn).toMatchObject({ session: SESSION, turnCount: 1, position: 0, uuid: "7a1e0c55-0001-4000-8000-000000000001" });
    expect(turn.user).toBe("Configure the billing webhook with [REDACTED:anthropic-key]");
    const text = JSON.stringify(turn);
    for (const secret of [ANTHROPIC, AWS]) expect(text).not.toContain(secret);
    expect(text).toContain("[REDACTED:aws-key]");
    expect(turn.items).toContainEqual({ kind: "assistant", text: "The billing webhook now verifies signatures." });
  });

  test("a planted note's anchor to a .jsonl outside Claude Code's folder, or to another project's transcript, is refused (403)", async () => {
    // Both files are real transcripts, the first one even recorded in this project's folder.
    const evil = join(mkdtempSync(join(tmpdir(), "ms-hub-evil-")), "evil.jsonl");
    const other = mkdtempSync(join(tmpdir(), "ms-hub-other-"));
    mkdirSync(join(other, ".git"));
    const theirs = join(home, ".claude", "projects", "-hub-api-other", "theirs.jsonl");
    mkdirSync(join(theirs, ".."), { recursive: true });
    const spec = { sessionId: "evil-session", uuid: "e0000000-0000-4000-8000-000000000001", promptId: "pe", prompt: "the other project's secret plan", command: "ls", output: "x", reply: "ok" };
    appendTurn(evil, { ...spec, cwd: root }, "all");
    appendTurn(theirs, { ...spec, cwd: other }, "all");
    const day = "2026-11-05.md";
    writeFileSync(
      join(memory, day),
      `### 09:00\n<!-- session:evil-session turn:${spec.uuid} transcript:${evil} -->\n- planted one\n\n### 09:30\n<!-- session:evil-session turn:${spec.uuid} transcript:${theirs} -->\n- planted two\n`,
    );
    for (const [line, path, why] of [
      [1, evil, /refused: .*evil\.jsonl is not a Claude Code transcript/],
      [5, theirs, /refused: .*theirs\.jsonl is another project's transcript/],
    ] as const) {
      const note = await get<NoteView>(data, "/api/note", { project: projectId, file: day, line });
      expect(note.status).toBe(200);
      expect(note.body.anchor?.transcript).toBe(path);
      expect(note.body.transcriptAvailable).toBe(false);
      const r = await get<{ error: string }>(data, "/api/transcript", { project: projectId, file: day, line });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatch(why);
      expect(JSON.stringify(r.body)).not.toContain("secret plan");
    }
    rmSync(join(memory, day));
  });

  test("notes + conversations (recall --raw) finds the conversation too, and then may open it", async () => {
    const page = (await get<SearchPage>(data, "/api/search", { q: "billing webhook signatures", mode: "recall" })).body;
    const both = page.hits.find((h) => h.from.includes("transcript"))!;
    expect(both).toBeDefined();
    expect(both.transcript!.path).toBe(transcript);
    expect(JSON.stringify(page)).not.toContain(ANTHROPIC);
    const r = await get<TurnView>(data, "/api/transcript", { path: both.transcript!.path, turn: both.transcript!.turn });
    expect(r.status).toBe(200);
    expect(r.body.user).toContain("[REDACTED:anthropic-key]");
  });

  test("another agent's turn: a Codex note opens its rollout's turn, and a search of the conversations finds the rollout, named codex, and opens it", async () => {
    const rollout = join(home, ".codex", "sessions", "2026", "11", "26", "rollout-2026-11-26T11-17-51-01a2178f.jsonl");
    mkdirSync(join(rollout, ".."), { recursive: true });
    writeFileSync(rollout, readFileSync(join(REPO, "test", "fixtures", "codex", "paginated-0.169.jsonl"), "utf8").replaceAll("/tmp/h12-cx/proj", root));
    const turn = "01a2178f-35dc-78c0-987f-b6c79cdadb6a";
    await appendTurnNote({ memoryDir: memory, sessionId: "01a2178f-3555-7e81-b21c-8e2abc92c752", turnUuid: turn, transcriptPath: rollout, agent: "codex", bullets: ["User asked which scheduler runs the nightly jobs"], now: new Date(2026, 10, 23, 9, 0) });
    const day = "2026-11-23.md";
    const line = readFileSync(join(memory, day), "utf8").split("\n").findIndex((l) => l.startsWith("### 09:00")) + 1;
    const view = (await get<NoteView>(data, "/api/note", { project: projectId, file: day, line })).body;
    expect(view.anchor).toMatchObject({ transcript: rollout, turn });
    expect(view.transcriptAvailable).toBe(true);
    const opened = await get<TurnView>(data, "/api/transcript", { project: projectId, file: day, line });
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ path: rollout, uuid: turn, user: "Remind me which scheduler runs the nightly jobs please" });
    expect(opened.body.items).toContainEqual({ kind: "assistant", text: "We picked the Zanzibar scheduler for the nightly jobs." });
    const page = (await get<SearchPage>(data, "/api/search", { q: "Zanzibar scheduler", mode: "recall" })).body;
    const hit = page.hits.find((h) => h.transcript?.path === rollout)!;
    expect(hit.agent).toBe("codex");
    const r = await get<TurnView>(data, "/api/transcript", { path: rollout, turn: hit.transcript!.turn });
    expect(r.status).toBe(200);
    expect(r.body.uuid).toBe(turn);
    // Memory memsearch gave Codex at the start of that session is in the rollout, not in the conversations.
    const injected = (await get<SearchPage>(data, "/api/search", { q: "Recent memory quoted from notes", mode: "recall" })).body;
    expect(injected.hits.some((h) => h.transcript?.path === rollout)).toBe(false);
    rmSync(join(memory, day));
  });

  test("a damaged conversation index is rebuilt by the search that meets it, said once in its warnings", async () => {
    const db = join(process.env.MEMSEARCH_HOME!, "transcripts.sqlite");
    for (const suffix of ["-wal", "-shm"]) rmSync(db + suffix, { force: true });
    writeFileSync(db, Buffer.alloc(8192, 0x42));
    const page = (await get<SearchPage>(data, "/api/search", { q: "billing webhook signatures", mode: "recall" })).body;
    expect(page.warnings.filter((w) => w.includes("conversation index"))).toEqual([`memsearch: the conversation index ${db} was damaged (not an SQLite database); removed it and rebuilt it from the transcripts`]);
    expect(page.hits.some((h) => h.from.includes("transcript"))).toBe(true);
    const again = (await get<SearchPage>(data, "/api/search", { q: "billing webhook signatures", mode: "recall" })).body;
    expect(again.warnings.filter((w) => w.includes("conversation index"))).toEqual([]);
  });

  test("a project whose memory is gone still answers, with zeros", async () => {
    const empty = mkdtempSync(join(tmpdir(), "ms-hub-empty-"));
    mkdirSync(join(empty, ".git"));
    writeFileSync(join(empty, "README"), "no memory here");
    const d = HubData.open({ allProjects: false, cwd: empty, env });
    const o = (await get<Overview>(d, "/api/overview")).body;
    expect(o.totals).toMatchObject({ notes: 0, chunks: 0, activeDays: 0, avgPerDay: 0 });
    const s = (await get<SearchPage>(d, "/api/search", { q: "anything" })).body;
    expect(s.hits).toEqual([]);
  });

  test("a day of more notes than a page shows: the newest are sent, all are counted", async () => {
    const busy = mkdtempSync(join(tmpdir(), "ms-hub-busy-"));
    mkdirSync(join(busy, ".git"));
    mkdirSync(join(busy, ".memsearch", "memory"), { recursive: true });
    let text = "# 2026-10-05\n\n## Session 00:00\n\n";
    for (let i = 0; i < 520; i++) text += `### ${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}\n- imported turn ${i}\n\n`;
    writeFileSync(join(busy, ".memsearch", "memory", "2026-10-05.md"), text);
    const d = (await get<DayPage>(HubData.open({ allProjects: false, cwd: busy, env }), "/api/day", { date: "2026-10-05" })).body;
    expect(d.total).toBe(520);
    expect(d.groups[0]!.notes).toHaveLength(500);
    expect(d.groups[0]!.notes[0]!.bullets).toEqual(["imported turn 519"]);
    expect(d.groups[0]!.notes.at(-1)!.bullets).toEqual(["imported turn 20"]);
  });
});

/** A project of its own: `notes` maps daily file names to their text. */
function ownProject(prefix: string, notes: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, ".memsearch", "memory"), { recursive: true });
  for (const [name, text] of Object.entries(notes)) writeFileSync(join(dir, ".memsearch", "memory", name), text);
  return dir;
}

describe("nothing the page shows skips redaction or breaks the page", () => {
  test("a secret in a note's heading is redacted in the note view and in notes + conversations", async () => {
    const dir = ownProject("ms-hub-heading-", { "2026-11-20.md": `# 2026-11-20\n\n### 08:00 deploy with ${AWS}\n- rolled the canary deploy forward\n` });
    const d = HubData.open({ allProjects: false, cwd: dir, env });
    const id = (await d.overview()).projects[0]!.id;
    const note = (await get<NoteView>(d, "/api/note", { project: id, file: "2026-11-20.md", line: 3 })).body;
    expect(note.heading).toBe("08:00 deploy with [REDACTED:aws-key]");
    for (const mode of ["notes", "recall"]) {
      const page = (await get<SearchPage>(d, "/api/search", { q: "canary deploy", mode })).body;
      expect(page.hits.length).toBeGreaterThan(0);
      expect(JSON.stringify(page)).not.toContain(AWS);
    }
    const byChunk = (await get<SearchPage>(d, "/api/search", { q: "canary deploy" })).body.hits[0]!.note!.chunk;
    expect(JSON.stringify((await get<NoteView>(d, "/api/note", { project: id, chunk: byChunk })).body)).not.toContain(AWS);
  });

  test("an embedding host the embedder refuses is the card's problem: the overview still answers, redacted", async () => {
    const dir = ownProject("ms-hub-host-", { "2026-11-20.md": "# 2026-11-20\n\n### 08:00\n- a note\n" });
    const d = HubData.open({ allProjects: false, cwd: dir, env: { ...env, MEMSEARCH_EMBEDDING_HOST: "ftp://bob:hunter2supersecret@example.test" } });
    const r = await get<Overview>(d, "/api/overview");
    expect(r.status).toBe(200);
    expect(r.body.embedding[0]).toMatchObject({ ok: false, host: null });
    expect(r.body.embedding[0]!.detail).toContain("is not an Ollama host");
    expect(JSON.stringify(r.body)).not.toContain("hunter2supersecret");
    expect(r.body.totals.notes).toBe(1);
  });

  test("a project folder deleted while the hub runs is not recreated by a request for one of its notes", async () => {
    const dir = ownProject("ms-hub-gone-", { "2026-11-20.md": "# 2026-11-20\n\n### 08:00\n- a note about kiwis\n" });
    const d = HubData.open({ allProjects: false, cwd: dir, env });
    const id = (await d.overview()).projects[0]!.id;
    const chunk = (await get<SearchPage>(d, "/api/search", { q: "kiwis" })).body.hits[0]!.note!.chunk;
    rmSync(dir, { recursive: true, force: true });
    for (const path of ["/api/note", "/api/transcript"]) {
      const r = await get<{ error: string }>(d, path, { project: id, chunk });
      expect(r.status).toBe(404);
    }
    expect(existsSync(dir)).toBe(false);
  });

  test("a file named like a day that is no day is not a daily file: no day, no link to it", async () => {
    const note = (day: string) => `# ${day}\n\n### 08:00\n- a note of ${day}\n`;
    const dir = ownProject("ms-hub-baddate-", { "2026-11-20.md": note("2026-11-20"), "2026-11-99.md": note("2026-11-99"), "2026-02-30.md": note("2026-02-30") });
    const d = HubData.open({ allProjects: false, cwd: dir, env });
    expect(Object.keys((await get<Overview>(d, "/api/overview")).body.days)).toEqual(["2026-11-20"]);
    expect((await get<DayPage>(d, "/api/day", { date: "2026-11-20" })).body).toMatchObject({ total: 1, previous: null, next: null });
    expect((await get<{ error: string }>(d, "/api/day", { date: "2026-02-30" })).status).toBe(400);
    expect((await get<{ error: string }>(d, "/api/note", { project: "0123456789ab", file: "2026-11-99.md", line: 3 })).status).toBe(400);
  });

  test("with every project in view, a busy project's day does not hide another's, and each says its own count", async () => {
    let busy = "# 2026-10-05\n\n";
    for (let i = 0; i < 520; i++) busy += `### ${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}\n- alpha turn ${i}\n\n`;
    const alpha = ownProject("ms-hub-alpha-", { "2026-10-05.md": busy });
    const beta = ownProject("ms-hub-beta-", { "2026-10-05.md": "# 2026-10-05\n\n### 09:00\n- beta one\n\n### 10:00\n- beta two\n" });
    const home = mkdtempSync(join(tmpdir(), "ms-hub-home-"));
    const at = new Date().toISOString();
    const entry = (path: string) => ({ path, name: path.split("/").pop(), dataDir: join(path, ".memsearch"), firstSeen: at, lastSeen: at });
    mkdirSync(join(home, ".memsearch"), { recursive: true });
    writeFileSync(join(home, ".memsearch", "projects.json"), JSON.stringify({ version: 1, projects: [entry(alpha), entry(beta)] }));
    const d = HubData.open({ allProjects: true, cwd: alpha, env: { ...env, HOME: home, MEMSEARCH_HOME: undefined } });
    const day = (await get<DayPage>(d, "/api/day", { date: "2026-10-05" })).body;
    expect(day.total).toBe(522);
    expect(day.groups.map((g) => [g.projectName, g.total, g.notes.length])).toEqual([
      [basename(alpha), 520, 500],
      [basename(beta), 2, 2],
    ]);
  });
});

describe("every turn accounted for", () => {
  test("/api/turns: per project and per session the transcript's turns, those with a note, queued and missing, and the days holding a missing turn", async () => {
    const own = mkdtempSync(join(tmpdir(), "ms-hub-turns-"));
    mkdirSync(join(own, ".git"));
    const ownHome = mkdtempSync(join(tmpdir(), "ms-hub-turns-home-"));
    const s = await accountedSession(own, ownHome);
    const d = HubData.open({ allProjects: false, cwd: own, env: { ...env, HOME: ownHome, MEMSEARCH_HOME: join(ownHome, ".memsearch"), CLAUDE_CONFIG_DIR: undefined } });
    const { status, body } = await get<TurnsView>(d, "/api/turns");
    expect(status).toBe(200);
    const p = body.projects[0]!;
    expect(p).toMatchObject({ turns: 5, toCapture: 3, noted: 1, queued: 1, missing: 1, notTurns: { "local-command": 2, "no-reply": 0, trivial: 1 }, since: "2026-02-10T12:00:00.000Z", problem: null });
    expect(p.line).toStartWith("1 of 3 turns since 2026-02-10 have no note");
    expect(p.sessions).toEqual([{ agent: "claude", sessionId: SESSION_ACC, first: "2026-02-10T12:00:00.000Z", last: "2026-02-10T12:10:00.000Z", turns: 5, noted: 1, queued: 1, running: 0, missing: 1, notTurns: { "local-command": 2, "no-reply": 0, trivial: 1 } }]);
    expect(p.missingTurns.map((m) => m.turn)).toEqual([s.missing]);
    expect(body.missingDays).toEqual({ "2026-02-10": 1 });
  });
});
