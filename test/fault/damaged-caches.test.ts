/**
 * Fault injection: a damaged conversation index (`~/.memsearch/transcripts.sqlite`, issue 20
 * defect 5). Every kind of damage — random bytes, a file cut in half, a header stub, damaged
 * pages, tables of another shape, an empty folder — met by `recall` and by the prompt hook in
 * synthesize mode (inject never opens it): each heals it with exactly one notice and answers; the
 * next command says nothing. A folder holding files is never removed: recall says so in one line and answers from
 * the notes. Two recalls meeting the same damage at once heal it once between them.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA_VERSION } from "../../src/conversations/db.ts";
import { faultKit, ms, stderrLines, tracked, type Project } from "./helpers.ts";

const kit = faultKit("damaged-caches");

const SESSION = "5d1c7a2e-3f4b-4c6d-9e8f-0a1b2c3d4e5f";
const FACT = "the quokka ledger reconciles every night at 03:17 against the vendor feed";
const QUERY = "quokka ledger reconciles";
const healedLine = /^memsearch: the conversation index .*transcripts\.sqlite was damaged \(.+\); removed it/;

interface Setup {
  p: Project;
  env: Record<string, string | undefined>;
  db: string;
  recall(extra?: string[]): ReturnType<typeof ms>;
}

/** A project with one conversation holding the fact (in its own HOME's Claude Code folder). */
function setup(): Setup {
  const p = kit.project();
  const dir = join(p.home, ".claude", "projects", "-proj");
  mkdirSync(dir, { recursive: true });
  const line = (o: Record<string, unknown>) => JSON.stringify({ sessionId: SESSION, cwd: p.root, isSidechain: false, ...o }) + "\n";
  writeFileSync(
    join(dir, `${SESSION}.jsonl`),
    line({ type: "user", uuid: "u-1", timestamp: "2026-11-20T09:10:00Z", message: { role: "user", content: "when does the ledger job run?" } }) +
      line({ type: "assistant", uuid: "a-1", timestamp: "2026-11-20T09:11:00Z", message: { id: "m1", role: "assistant", content: [{ type: "text", text: `It runs nightly: ${FACT}.` }] } }),
  );
  const env = { ...p.env, CLAUDE_CONFIG_DIR: undefined, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1", TZ: "UTC" };
  const db = join(p.home, ".memsearch", "transcripts.sqlite");
  return { p, env, db, recall: (extra = []) => ms(["recall", QUERY, "--raw", ...extra], { cwd: p.root, env, hangMs: 60_000 }) };
}

/** A healthy index first (built by a recall), for the kinds of damage that start from one. */
async function built(s: Setup): Promise<Buffer> {
  const r = await s.recall(["--source", "transcripts"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("quokka");
  // Everything in the main file, so the damage below is all there is.
  const db = new Database(s.db);
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return readFileSync(s.db);
}

function clearSidecars(path: string): void {
  for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
}

type Damage = (s: Setup) => Promise<void>;

const DAMAGES: Record<string, Damage> = {
  "random bytes": async (s) => {
    const rng = kit.rngFor("random bytes");
    mkdirSync(join(s.p.home, ".memsearch"), { recursive: true });
    writeFileSync(s.db, rng.bytes(rng.int(4096, 12288)));
  },
  "cut in half": async (s) => {
    const good = await built(s);
    clearSidecars(s.db);
    writeFileSync(s.db, good.subarray(0, good.length >> 1));
  },
  "a 100-byte stub": async (s) => {
    const good = await built(s);
    clearSidecars(s.db);
    writeFileSync(s.db, good.subarray(0, 100));
  },
  "damaged pages past the first": async (s) => {
    const good = Buffer.from(await built(s));
    clearSidecars(s.db);
    const pageSize = good.readUInt16BE(16);
    for (let i = pageSize; i < good.length; i++) if (i % pageSize >= 8) good[i] = (i * 7919) & 0xff;
    writeFileSync(s.db, good);
  },
  "tables of another shape": async (s) => {
    mkdirSync(join(s.p.home, ".memsearch"), { recursive: true });
    const db = new Database(s.db, { create: true });
    db.run("CREATE TABLE messages (x TEXT)");
    db.run("CREATE TABLE files (y TEXT)");
    // The current version: an older one is rebuilt as outdated, not healed as damaged.
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.close();
  },
  "an empty folder": async (s) => {
    mkdirSync(s.db, { recursive: true });
  },
};

// Tried by `recall` and by the prompt hook: the figure for docs/RELIABILITY.md.
kit.set("damage-kinds", Object.keys(DAMAGES).length);

describe("a damaged conversation index heals with one notice", () => {
  for (const [kind, damage] of Object.entries(DAMAGES)) {
    test(
      `recall: ${kind}`,
      tracked(kit, async () => {
        const s = setup();
        await damage(s);
        const r = await s.recall(["--source", "transcripts"]);
        expect(r.hung).toBe(false);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain("quokka");
        const lines = stderrLines(r.stderr);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(healedLine);
        expect(statSync(s.db).isFile()).toBe(true);
        // Healed for good: the next recall answers without a word.
        const again = await s.recall(["--source", "transcripts"]);
        expect(again.code).toBe(0);
        expect(again.stdout).toContain("quokka");
        expect(stderrLines(again.stderr)).toEqual([]);
        kit.count("recall-healed");
      }),
      120_000,
    );

    test(
      `prompt hook: ${kind}`,
      tracked(kit, async () => {
        const s = setup();
        expect((await ms(["index"], { cwd: s.p.root, env: s.env })).code).toBe(0);
        await damage(s);
        const input = JSON.stringify({ session_id: SESSION, prompt_id: "p-1", hook_event_name: "UserPromptSubmit", cwd: s.p.root, prompt: "what did we decide about the redis connection pool?" });
        // Inject never opens the conversation index: the damage is left for the next reader.
        const before = existsSync(s.db) && statSync(s.db).isFile() ? readFileSync(s.db) : undefined;
        const plain = await ms(["hook", "user-prompt-submit"], { cwd: s.p.root, env: { ...s.env, MEMSEARCH_HOOKS_RECALL: "inject" }, stdin: input, hangMs: 15_000 });
        expect(plain.code).toBe(0);
        expect(JSON.parse(plain.stdout).systemMessage).toBeUndefined();
        if (before) expect(readFileSync(s.db)).toEqual(before);
        // Synthesize reads it for the model (here no model: the notes plainly) and heals it, said once.
        const h = await ms(["hook", "user-prompt-submit"], { cwd: s.p.root, env: { ...s.env, MEMSEARCH_HOOKS_RECALL: "synthesize", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" }, stdin: input.replace(SESSION, "other-session"), hangMs: 15_000 });
        expect(h.hung).toBe(false);
        expect(h.code).toBe(0);
        const out = JSON.parse(h.stdout);
        expect(out.hookSpecificOutput.additionalContext).toStartWith("[memsearch] Memories from earlier sessions");
        expect(out.systemMessage).toMatch(healedLine);
        // The damaged file is gone; an index stands in its place and the next recall fills it silently.
        expect(statSync(s.db).isFile()).toBe(true);
        const r = await s.recall(["--source", "transcripts"]);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain("quokka");
        expect(stderrLines(r.stderr).filter((l) => healedLine.test(l))).toEqual([]);
        kit.count("hook-healed");
      }),
      120_000,
    );
  }

  test(
    "two recalls meeting the same damage at once heal it once between them",
    tracked(kit, async () => {
      const s = setup();
      await DAMAGES["random bytes"]!(s);
      const [a, b] = await Promise.all([s.recall(["--source", "transcripts"]), s.recall(["--source", "transcripts"])]);
      for (const r of [a, b]) {
        expect(r.code).toBe(0);
        expect(r.stdout).toContain("quokka");
      }
      const notices = [...stderrLines(a.stderr), ...stderrLines(b.stderr)].filter((l) => healedLine.test(l));
      expect(notices).toHaveLength(1);
      expect(existsSync(`${s.db}.lock`)).toBe(false);
    }),
    120_000,
  );
});

describe("a folder holding files where the index belongs is never removed", () => {
  test(
    "recall says so in one line and answers from the notes; asked for conversations only, it fails with that line",
    tracked(kit, async () => {
      const s = setup();
      mkdirSync(s.db, { recursive: true });
      writeFileSync(join(s.db, "mine.txt"), "the user's own file\n");
      const r = await s.recall(["--source", "all"]);
      // The sample notes answer "redis"; the conversation index is not touched.
      const notes = await ms(["recall", "redis connection pool", "--raw"], { cwd: s.p.root, env: s.env, hangMs: 60_000 });
      for (const x of [r, notes]) {
        expect(x.code).toBe(0);
        // (The first one also builds the notes' index, and says so.)
        const lines = stderrLines(x.stderr).filter((l) => /transcripts\.sqlite/.test(l));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^memsearch: conversations not searched: .*transcripts\.sqlite is a folder, not the conversation index; move it elsewhere/);
      }
      expect(notes.stdout).toContain("Note:");
      const only = await s.recall(["--source", "transcripts"]);
      expect(only.code).toBe(1);
      const lines = stderrLines(only.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/transcripts\.sqlite is a folder, not the conversation index/);
      expect(readFileSync(join(s.db, "mine.txt"), "utf8")).toBe("the user's own file\n");
    }),
    120_000,
  );
});
