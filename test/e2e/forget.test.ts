/**
 * `memsearch forget` through the compiled binary: a forgotten turn leaves the markdown and the
 * index, and stays gone after a rebuild, an import of the transcript that holds it and a re-queued
 * Stop of that turn; `--dry-run`, `--list` and `--undo` do what they say.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempProject, type Project } from "../helpers/cli.ts";

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const SESSION = "5e551011-0000-4000-8000-000000000001";
const base = (cwd: string) => ({ parentUuid: null, isSidechain: false, userType: "external", cwd, sessionId: SESSION, version: "2.1.40" });

/** A two-turn session of the project, in the temp HOME's ~/.claude/projects, written long ago. */
function withTranscript(p: Project): string {
  const dir = join(p.home, ".claude", "projects", p.root.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${SESSION}.jsonl`);
  const b = base(p.root);
  const lines = [
    { ...b, type: "user", uuid: "turn-redis-1", promptId: "prompt-redis-1", timestamp: "2026-03-02T10:00:00Z", message: { role: "user", content: "Why does the redis pool run out of connections under load?" } },
    { ...b, type: "assistant", uuid: "a-redis-1", timestamp: "2026-03-02T10:00:05Z", message: { id: "m1", role: "assistant", content: [{ type: "text", text: "The redis pool had maxclients 16; raised it to 64." }] } },
    { ...b, type: "user", uuid: "turn-kafka-2", promptId: "prompt-kafka-2", timestamp: "2026-03-02T10:10:00Z", message: { role: "user", content: "Set the kafka retention to seven days." } },
    { ...b, type: "assistant", uuid: "a-kafka-2", timestamp: "2026-03-02T10:10:05Z", message: { id: "m2", role: "assistant", content: [{ type: "text", text: "Kafka retention is now 168 hours." }] } },
  ];
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const old = new Date("2026-03-02T12:00:00Z");
  utimesSync(file, old, old);
  return file;
}

function project() {
  const p = tempProject({ notes: "none" });
  cleanup.push(p.root, p.home);
  const transcript = withTranscript(p);
  return { p, transcript };
}

const memoryText = (p: Project) =>
  existsSync(p.memory)
    ? readdirSync(p.memory)
        .filter((f) => f.endsWith(".md"))
        .map((f) => readFileSync(join(p.memory, f), "utf8"))
        .join("\n")
    : "";

async function hits(p: Project, query: string): Promise<{ chunk_hash: string; content: string }[]> {
  const r = await p.ms(["search", query, "-j"]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe("memsearch forget", () => {
  test("by chunk hash: gone from the markdown and the index, and stays gone after index --force, import and a re-queued Stop", async () => {
    const { p, transcript } = project();
    expect((await p.ms(["import"])).code).toBe(0);
    expect(memoryText(p)).toContain("redis pool");
    expect((await p.ms(["index"])).code).toBe(0);
    const [hit] = await hits(p, "redis pool connections");
    expect(hit!.content).toContain("redis");

    const dry = await p.ms(["forget", hit!.chunk_hash, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("Would forget turn turn-redis-1: 1 note removed");
    expect(memoryText(p)).toContain("redis pool");
    expect(existsSync(join(p.root, ".memsearch", "forgotten.json"))).toBe(false);

    const r = await p.ms(["forget", hit!.chunk_hash]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Forgot turn turn-redis-1: removed 1 note");
    const md = memoryText(p);
    expect(md).not.toContain("redis");
    expect(md).toContain("kafka retention");
    expect(md).not.toContain("turn:turn-redis-1");
    expect(await hits(p, "redis pool connections")).toEqual([]);

    // A rebuild reads the markdown: nothing to bring back.
    expect((await p.ms(["index", "--force"])).code).toBe(0);
    expect(await hits(p, "redis pool connections")).toEqual([]);

    // An import over the transcript that still holds the turn leaves it out, and says so.
    const imp = await p.ms(["import"]);
    expect(imp.code).toBe(0);
    expect(imp.stdout).toContain("Imported 0 turns");
    expect(imp.stderr).toContain("1 forgotten turn left out");
    expect(memoryText(p)).not.toContain("redis");
    const named = await p.ms(["import", transcript, "-j"]);
    expect(JSON.parse(named.stdout)).toMatchObject({ written: 0, forgotten: 1 });

    // The Stop of that turn, queued again (a retried hook): the drainer takes it off the queue unwritten.
    const input = { session_id: SESSION, prompt_id: "prompt-redis-1", cwd: p.root, transcript_path: transcript, last_assistant_message: "The redis pool had maxclients 16; raised it to 64." };
    expect((await p.ms(["hook", "stop"], { MEMSEARCH_NO_WATCH: "1" }, JSON.stringify(input))).code).toBe(0);
    const pending = join(p.root, ".memsearch", "pending");
    const queued = () => (existsSync(pending) ? readdirSync(pending).filter((f) => f.endsWith(".json")).length : 0);
    for (let i = 0; i < 300 && queued() > 0; i++) await Bun.sleep(100);
    expect(queued()).toBe(0);
    expect(memoryText(p)).not.toContain("redis");
    expect((await p.ms(["index"])).code).toBe(0);
    expect(await hits(p, "redis pool connections")).toEqual([]);
  }, 120_000);

  test("by turn id; --list shows it; --undo lets import write it again", async () => {
    const { p } = project();
    expect((await p.ms(["import"])).code).toBe(0);
    const r = await p.ms(["forget", "turn-kafka-2"]);
    expect(r.code).toBe(0);
    expect(memoryText(p)).not.toContain("kafka");
    expect(memoryText(p)).toContain("redis pool");

    const list = await p.ms(["forget", "--list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("1 forgotten turn");
    expect(list.stdout).toContain("turn-kafka-2");
    expect(list.stdout).toContain("kafka retention");
    const listed = JSON.parse((await p.ms(["forget", "--list", "-j"])).stdout);
    expect(listed.forgotten).toMatchObject([{ turn: "turn-kafka-2", session: SESSION }]);

    // Forgetting it again: already done, nothing left.
    const again = await p.ms(["forget", "turn-kafka-2"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already forgotten");

    const undo = await p.ms(["forget", "--undo", "turn-kafka-2"]);
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain("no longer forgotten");
    expect((await p.ms(["forget", "--list"])).stdout).toContain("No forgotten turns.");
    const imp = await p.ms(["import"]);
    expect(imp.stdout).toContain("Imported 1 turn");
    expect(memoryText(p)).toContain("kafka retention");
  }, 120_000);

  test("mistakes get one line and a non-zero exit, and change nothing", async () => {
    const { p } = project();
    expect((await p.ms(["import"])).code).toBe(0);
    const before = memoryText(p);
    const cases: [string[], string][] = [
      [["forget"], "give one of"],
      [["forget", "no-such-turn"], "no note holds turn no-such-turn"],
      [["forget", "--undo", "no-such-turn"], "turn no-such-turn is not forgotten"],
      [["forget", "turn-kafka-2", "--list"], "give one of"],
    ];
    for (const [args, msg] of cases) {
      const r = await p.ms(args);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(msg);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    // A damaged list is refused, not overwritten.
    writeFileSync(join(p.root, ".memsearch", "forgotten.json"), "{ not json");
    const bad = await p.ms(["forget", "turn-kafka-2"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("forgotten.json is damaged");
    expect(readFileSync(join(p.root, ".memsearch", "forgotten.json"), "utf8")).toBe("{ not json");
    expect(memoryText(p)).toBe(before);
    // And import will not run over it (it would write forgotten turns back).
    const imp = await p.ms(["import"]);
    expect(imp.code).not.toBe(0);
    expect(imp.stderr).toContain("fix or remove it before importing");
  }, 120_000);

  test("a forgotten note brought back by a checkout stays out of the index, with a word; --undo lets the next index take it (issue 31)", async () => {
    const p = tempProject();
    cleanup.push(p.root, p.home);
    const env = { MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };
    expect((await p.ms(["index"], env)).code).toBe(0);
    const day = join(p.memory, "2026-11-21.md");
    const committed = readFileSync(day, "utf8");
    const turn = "2c3d4e5f-5555-4a6b-8c1d-2e3f4a5b6c7d";
    const f = await p.ms(["forget", turn], env);
    expect(f.code).toBe(0);
    expect(readFileSync(day, "utf8")).not.toContain("internal_port");
    // `git checkout` of the committed file: the note is back in the markdown.
    writeFileSync(day, committed);
    const i = await p.ms(["index"], env);
    expect(i.code).toBe(0);
    expect(i.stderr).toContain(`1 forgotten note is back in ${day}`);
    const found = JSON.parse((await p.ms(["search", "internal_port health checks", "-j"], env)).stdout) as { content: string }[];
    expect(found.filter((h) => h.content.includes("internal_port"))).toEqual([]);
    // The other notes of that file are still found.
    expect((JSON.parse((await p.ms(["search", "Heroku Fly.io", "-j"], env)).stdout) as { content: string }[]).some((h) => h.content.includes("Heroku"))).toBe(true);

    expect((await p.ms(["forget", "--undo", turn], env)).code).toBe(0);
    const again = await p.ms(["index"], env);
    expect(again.stderr).not.toContain("forgotten note");
    const back = JSON.parse((await p.ms(["search", "internal_port health checks", "-j"], env)).stdout) as { content: string }[];
    expect(back.some((h) => h.content.includes("internal_port"))).toBe(true);
  }, 60_000);
});

describe("a note named by what cannot move (issue 31)", () => {
  test("by a chunk hash taken before the file changed: the chunk's own note goes, never the one now at its line", async () => {
    const { p } = project();
    expect((await p.ms(["import"])).code).toBe(0);
    expect((await p.ms(["index"])).code).toBe(0);
    const [redis] = await hits(p, "redis pool connections");
    // A hand edit above it (the index is not told): the lines move.
    const [file] = readdirSync(p.memory).filter((f) => f.endsWith(".md"));
    const path = join(p.memory, file!);
    writeFileSync(path, readFileSync(path, "utf8").replace(/\n## Session/, "\n### 08:00\n- a hand-written note\n- about the deploy\n- on three lines\n\n## Session"));
    const r = await p.ms(["forget", redis!.chunk_hash]);
    expect(r.code).toBe(0);
    expect(memoryText(p)).not.toContain("redis");
    expect(memoryText(p)).toContain("kafka retention");
    expect(memoryText(p)).toContain("a hand-written note");
  }, 60_000);

  test("by a chunk hash whose note was edited since: one line, exit 1, nothing changed", async () => {
    const { p } = project();
    expect((await p.ms(["import"])).code).toBe(0);
    expect((await p.ms(["index"])).code).toBe(0);
    const [redis] = await hits(p, "redis pool connections");
    const [file] = readdirSync(p.memory).filter((f) => f.endsWith(".md"));
    const path = join(p.memory, file!);
    writeFileSync(path, readFileSync(path, "utf8").replace(/redis pool/g, "valkey pool"));
    const before = memoryText(p);
    const r = await p.ms(["forget", redis!.chunk_hash]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("is no longer in");
    expect(memoryText(p)).toBe(before);
    expect(existsSync(join(p.root, ".memsearch", "forgotten.json"))).toBe(false);
  }, 60_000);
});

describe("Codex turns without a turn id, in three sessions of one day (issue 31)", () => {
  /** Three older-layout rollouts (no turn_id: turns named line-N) of the project, one subject each. */
  function rollouts(p: Project, agents: Record<string, string>) {
    const day = join(agents.CODEX_HOME!, "sessions", "2025", "09", "01");
    mkdirSync(day, { recursive: true });
    const legacy = readFileSync(join(import.meta.dir, "..", "fixtures", "codex", "legacy.jsonl"), "utf8");
    for (const [i, word] of ["alpha", "bravo", "charlie"].entries()) {
      const text = legacy.replaceAll('"/home/u/proj"', JSON.stringify(p.root)).replaceAll("00000000leg1", `00000000leg${i + 1}`).replaceAll("ledger export", `${word} export`);
      const path = join(day, `rollout-2025-09-01T10-0${i}-00-0198aa00-1111-7000-8000-00000000leg${i + 1}.jsonl`);
      writeFileSync(path, text);
      const old = new Date("2025-09-01T12:00:00Z");
      utimesSync(path, old, old);
    }
  }

  test("import writes all three; doctor asks for no import; forgetting one removes only it and blocks no other session's turn", async () => {
    const p = tempProject({ notes: "none" });
    cleanup.push(p.root, p.home);
    const agents = { CODEX_HOME: join(p.home, ".codex"), GEMINI_CLI_HOME: p.home, XDG_DATA_HOME: join(p.home, ".local", "share"), XDG_CONFIG_HOME: join(p.home, ".config"), MEMSEARCH_NO_WATCH: "1" };
    rollouts(p, agents);
    const imp = await p.ms(["import", "-j"], agents);
    expect(imp.code).toBe(0);
    expect(JSON.parse(imp.stdout)).toMatchObject({ written: 6 });
    const notes = (word: string) => memoryText(p).split("### ").filter((s) => s.includes(`${word} export`)).length;
    // Two turns each (line ids shared by the three sessions), all written.
    expect(["alpha", "bravo", "charlie"].map(notes)).toEqual([2, 2, 2]);
    const turns = JSON.parse((await p.ms(["doctor", "-j"], agents)).stdout).find((c: { name: string }) => c.name === "turns");
    expect(turns.status).toBe("ok");
    expect(turns.fix).toBeUndefined();
    expect(JSON.parse((await p.ms(["import", "-j"], agents)).stdout)).toMatchObject({ written: 0 });

    expect((await p.ms(["index"], agents)).code).toBe(0);
    const [bravo] = await hits(p, "bravo export cron");
    expect(bravo!.content).toContain("bravo");
    const r = await p.ms(["forget", bravo!.chunk_hash], agents);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("removed 1 note");
    expect(["alpha", "bravo", "charlie"].map(notes)).toEqual([2, 1, 2]);
    // By the id alone, a line id names notes of two sessions still: one line, which says how to name one.
    const ambiguous = await p.ms(["forget", bravo!.content.match(/turn:(line-\d+)/)?.[1] ?? "line-6"], agents);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr.trim().split("\n")).toHaveLength(1);
    expect(ambiguous.stderr).toContain("names notes of 2 sessions");
    // The other sessions' notes are written again once removed by hand; the forgotten one is not.
    for (const f of readdirSync(p.memory)) rmSync(join(p.memory, f));
    const again = JSON.parse((await p.ms(["import", "-j"], agents)).stdout);
    expect(again).toMatchObject({ written: 5, forgotten: 1 });
    expect(["alpha", "bravo", "charlie"].map(notes)).toEqual([2, 1, 2]);
  }, 120_000);
});
