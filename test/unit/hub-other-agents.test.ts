/**
 * The hub opens other agents' turns as it opens Claude Code's: a Codex rollout of this project (the
 * real 0.169.0 file, its folder set to this project's) found by a search, or named by a note's
 * anchor, opens through the Codex adapter's check and reader; another project's rollout is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { handleApi } from "../../src/hub/api.ts";
import { HubData } from "../../src/hub/data.ts";
import type { NoteView, SearchPage, TurnView } from "../../src/hub/types.ts";
import { appendTurnNote } from "../../src/memory/journal.ts";

const FIX = join(import.meta.dir, "..", "fixtures", "codex", "paginated-0.169.jsonl");
const TURN = "01a2178f-35dc-78c0-987f-b6c79cdadb6a";
const PROMPT = "Remind me which scheduler runs the nightly jobs please";
const SECRET = `sk-ant-api03-${"Q".repeat(40)}`;
const home = mkdtempSync(join(tmpdir(), "ms-hub-others-"));
const root = join(home, "proj");
const memory = join(root, ".memsearch", "memory");
const day = join(home, ".codex", "sessions", "2026", "11", "26");
const rollout = join(day, "rollout-2026-11-26T11-13-11-01a2178f.jsonl");
const theirs = join(day, "rollout-2026-11-26T11-14-00-01a2178f.jsonl");
const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), CODEX_HOME: join(home, ".codex"), OLLAMA_HOST: "http://127.0.0.1:9", MEMSEARCH_EMBEDDING_PROVIDER: "none" };

const get = async <T>(data: HubData, path: string, params: Record<string, string>): Promise<{ status: number; body: T }> => {
  const r = await handleApi(data, path, new URLSearchParams(params));
  return { status: r.status, body: (await r.json()) as T };
};

let data: HubData;
let projectId: string;

beforeAll(async () => {
  mkdirSync(join(root, ".git"), { recursive: true });
  mkdirSync(day, { recursive: true });
  const text = readFileSync(FIX, "utf8").replaceAll(PROMPT, `${PROMPT}, with key ${SECRET}`);
  writeFileSync(rollout, text.replaceAll("/tmp/h12-cx/proj", root));
  writeFileSync(theirs, text.replaceAll("/tmp/h12-cx/proj", "/somewhere/else"));
  await appendTurnNote({ memoryDir: memory, sessionId: "01a2178f-3555-7e81-b21c-8e2abc92c752", turnUuid: TURN, transcriptPath: rollout, agent: "codex", bullets: ["User asked which scheduler runs the nightly jobs"], now: new Date(2026, 10, 26, 11, 13) });
  await appendTurnNote({ memoryDir: memory, sessionId: "01a2178f-3555-7e81-b21c-8e2abc92c752", turnUuid: "planted-turn", transcriptPath: theirs, agent: "codex", bullets: ["a planted note about the cron daemon"], now: new Date(2026, 10, 26, 11, 14) });
  data = HubData.open({ allProjects: false, cwd: root, env });
  projectId = (await data.overview()).projects[0]!.id;
});

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

describe("the hub and other agents' transcripts", () => {
  test("a Codex turn found by a search opens from its rollout, redacted and clipped like Claude Code's", async () => {
    const hits = (await get<SearchPage>(data, "/api/search", { q: "Zanzibar scheduler", mode: "recall" })).body.hits;
    const hit = hits.find((h) => h.transcript?.path === rollout);
    expect(hit).toBeDefined();
    const r = await get<TurnView>(data, "/api/transcript", { path: rollout, turn: hit!.transcript!.turn });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ path: rollout, session: "01a2178f-3555-7e81-b21c-8e2abc92c752", turnCount: 1, position: 0, uuid: TURN, user: `${PROMPT}, with key [REDACTED:anthropic-key]` });
    expect(JSON.stringify(r.body)).not.toContain(SECRET);
    expect(r.body.items).toContainEqual({ kind: "assistant", text: "We picked the Zanzibar scheduler for the nightly jobs." });
  });

  test("a note anchored to this project's rollout opens its turn; one anchored to another project's is refused", async () => {
    // A note's heading is the line before its anchor.
    const lines = readFileSync(join(memory, "2026-11-26.md"), "utf8").split("\n");
    const at = (path: string) => ({ project: projectId, file: "2026-11-26.md", line: String(lines.findIndex((l) => l.includes(`transcript:${path} `))) });
    const note = await get<NoteView>(data, "/api/note", at(rollout));
    expect(note.body.anchor?.transcript).toBe(rollout);
    expect(note.body.transcriptAvailable).toBe(true);
    const r = await get<TurnView>(data, "/api/transcript", at(rollout));
    expect(r.status).toBe(200);
    expect(r.body.uuid).toBe(TURN);
    const planted = await get<NoteView>(data, "/api/note", at(theirs));
    expect(planted.body.anchor?.transcript).toBe(theirs);
    expect(planted.body.transcriptAvailable).toBe(false);
    const refused = await get<{ error: string }>(data, "/api/transcript", at(theirs));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain("another project's rollout");
  });
});
