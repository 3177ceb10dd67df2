/**
 * `memsearch recall` through the compiled binary (MEMSEARCH_BIN or dist/memsearch), with a temp HOME
 * holding a fake `~/.claude/projects/` built from the transcript fixtures plus one session of this
 * project whose turn has a note in the sample memory.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, run, tempProject } from "../helpers/cli.ts";
import { fakeClaudeCalls, writeFakeClaude } from "../helpers/fake-claude.ts";

const FIX = join(REPO, "test/fixtures/transcripts");
// A session of this project: the turn the sample note `09:12` is anchored to, and another one.
const SESSION = "7f3c2a10-5b1e-4c8e-9a61-2d4f8e0b7c11";
const TURN = "0a1b2c3d-1111-4e5f-8a9b-0c1d2e3f4a5b";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A temp project with the sample notes, a fake `~/.claude/projects/` and a fake claude (not on PATH unless asked). */
function recallProject() {
  const p = tempProject();
  const projects = join(p.home, ".claude", "projects");
  for (const src of ["claude-code-log", "episodic-memory", "spotter"]) cpSync(join(FIX, src), join(projects, `-${src}`), { recursive: true });
  const own = join(projects, "-proj", `${SESSION}.jsonl`);
  mkdirSync(join(projects, "-proj"), { recursive: true });
  const line = (o: Record<string, unknown>) => JSON.stringify({ sessionId: SESSION, cwd: p.root, isSidechain: false, ...o }) + "\n";
  writeFileSync(
    own,
    line({ type: "user", uuid: TURN, timestamp: "2026-11-20T09:10:00Z", message: { role: "user", content: "why do checkout requests time out under load? redis pool?" } }) +
      line({ type: "assistant", uuid: "a-1", timestamp: "2026-11-20T09:11:00Z", message: { id: "m1", role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "src/cache/redis.ts" } }] } }) +
      line({ type: "user", uuid: "r-1", timestamp: "2026-11-20T09:11:01Z", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "const POOL = 4" }] } }) +
      line({ type: "assistant", uuid: "a-2", timestamp: "2026-11-20T09:12:00Z", message: { id: "m2", role: "assistant", content: [{ type: "text", text: "The redis connection pool is capped at 4; raising it to 32." }] } }) +
      line({ type: "user", uuid: "u-2", timestamp: "2026-11-20T10:00:00Z", message: { role: "user", content: "zeppelin migration plan" } }),
  );
  const bin = mkdtempSync(join(tmpdir(), "ms-recall-bin-"));
  writeFakeClaude(bin);
  dirs.push(p.root, p.home, bin);
  const base = { ...p.env, TZ: "UTC", MEMSEARCH_EMBEDDING_PROVIDER: "none", CLAUDE_CONFIG_DIR: undefined, PATH: `/usr/bin:/bin` };
  const ms = (args: string[], env: Record<string, string | undefined> = {}) => run(["recall", ...args], { cwd: p.root, env: { ...base, ...env }, timeoutMs: 60_000 });
  return { p, projects, own, bin, log: join(bin, "log"), base, ms };
}

describe("memsearch recall", () => {
  test("--raw -j: the note and its turn are one result, with both drill-downs; other projects stay out", async () => {
    const { p, projects, own, base, ms } = recallProject();
    const r = await ms(["redis pool checkout", "--raw", "-j"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("first build of the conversation index");
    const out = JSON.parse(r.stdout);
    expect(out.answer).toBeNull();
    const top = out.results[0];
    // The turn's prompt is also the session's first prompt: the session table finds it too.
    expect(top.from).toEqual(["note", "transcript", "session"]);
    expect(top.session_content.kind).toBe("first_prompt");
    expect(top.turn).toBe(TURN);
    expect(top.note.chunk_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(top.expand).toBe(`memsearch expand ${top.note.chunk_hash}`);
    expect(top.transcript.path).toBe(own);
    expect(top.transcript.paths).toContain("src/cache/redis.ts");
    expect(top.open).toBe(`memsearch transcript ${own} --turn ${TURN}`);
    expect(out.results.filter((x: { turn: string }) => x.turn === TURN).length).toBe(1);
    for (const x of out.results) if (x.from.includes("transcript")) expect(x.transcript.path.startsWith(join(projects, "-proj"))).toBe(true);
    // The drill-down works.
    const t = await run(["transcript", own, "--turn", TURN, "-c", "0"], { cwd: p.root, env: base });
    expect(t.code).toBe(0);
    expect(t.stdout).toContain("raising it to 32");
  });

  test("--all-projects reaches the other projects' conversations; --source narrows", async () => {
    const { ms } = recallProject();
    const here = JSON.parse((await ms(["compaction", "--raw", "-j"])).stdout);
    expect(here.results.filter((x: { from: string[] }) => x.from.includes("transcript")).length).toBe(0);
    const all = JSON.parse((await ms(["compaction", "--raw", "-j", "--all-projects"])).stdout);
    expect(all.results.some((x: { transcript: { path: string } | null }) => x.transcript?.path.includes("-spotter"))).toBe(true);
    const notes = JSON.parse((await ms(["redis pool", "--raw", "-j", "--source", "notes"])).stdout);
    expect(notes.transcripts.searched).toBe(false);
    expect(notes.results.every((x: { from: string[] }) => x.from.join() === "note")).toBe(true);
    const tx = JSON.parse((await ms(["redis pool", "--raw", "-j", "--source", "transcripts"])).stdout);
    expect(tx.notes.searched).toBe(false);
    expect(tx.results.every((x: { from: string[] }) => !x.from.includes("note"))).toBe(true);
  });

  test("nothing found says so, exit 0; bad flags are usage errors (exit 2)", async () => {
    const { ms } = recallProject();
    const r = await ms(["xylophonequartz", "--raw"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('Nothing found in notes or transcripts for "xylophonequartz".');
    for (const bad of [["x", "--since", "3x"], ["x", "--limit", "0"], ["x", "--limit", "101"], ["x", "--source", "web"]]) {
      const b = await ms(bad);
      expect(b.code).toBe(2);
      expect(b.stderr.trim().split("\n")).toHaveLength(1);
    }
  });

  test("--since leaves out older notes and messages", async () => {
    const { ms } = recallProject();
    // Found without --since: its absence below is the filter's doing.
    const all = JSON.parse((await ms(["redis pool", "--raw", "-j"])).stdout);
    expect(all.results.some((x: { turn: string }) => x.turn === TURN)).toBe(true);
    const out = JSON.parse((await ms(["redis pool", "--raw", "-j", "--since", "2026-11-21"])).stdout);
    expect(out.results.some((x: { turn: string }) => x.turn === TURN)).toBe(false);
  });

  test("without --raw: the fake claude answers from the results", async () => {
    const { bin, log, ms } = recallProject();
    const r = await ms(["redis pool checkout"], { PATH: `${bin}:/usr/bin:/bin`, FAKE_CLAUDE_LOG: log, FAKE_CLAUDE_REPLY: "Decisions: raise the redis pool to 32 [2026-11-20 09:12, result 1]" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Decisions: raise the redis pool to 32");
    expect(r.stdout).toContain("Sources:");
    const calls = fakeClaudeCalls(log);
    expect(calls.length).toBe(1);
    expect(calls[0]!.argv).toContain("haiku");
    expect(calls[0]!.stdin).toContain("Never invent");
    expect(calls[0]!.stdin).toContain("Question: redis pool checkout");
    expect(calls[0]!.stdin).toContain(TURN);
  });

  test("without --raw and no claude: the raw results and one line saying why", async () => {
    const { ms } = recallProject();
    const r = await ms(["redis pool checkout"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("no model answered (claude not found on PATH)");
    expect(r.stdout).toContain("Recall: ");
    expect(r.stdout).toContain(`--turn ${TURN}`);
  });
});
