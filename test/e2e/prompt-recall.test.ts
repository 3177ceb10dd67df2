/**
 * The prompt hook and the conversation index, through the compiled binary (MEMSEARCH_BIN or
 * dist/memsearch). `hooks.recall = "inject"` gives notes through the gate and never raw
 * conversation turns (a turn passes no gate of its own: issue 30); `"synthesize"`, when notes
 * pass, has the (fake) claude write a few lines from them and the conversation turns behind the
 * prompt, and falls back to the notes plainly when it is slow or fails. A temp HOME holds
 * `~/.claude/projects/-proj/` with the real spotter transcripts, their cwd rewritten to the temp
 * project, and a session whose prompts carry our own injected context.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { REPO, run, tempProject } from "../helpers/cli.ts";
import { fakeClaudeCalls, processAlive, writeFakeClaude } from "../helpers/fake-claude.ts";

const FIX = join(REPO, "test/fixtures/transcripts");
// A session of the project whose prompts carry what our hooks injected earlier: a word only found there must never come back.
const SESSION = "5e55a000-0000-4000-8000-00000000c0de";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A temp project whose HOME holds `~/.claude/projects/-proj/` (the real spotter transcripts and
 * our own session), and a fake claude on PATH. `indexed`: the notes index and the conversation
 * index built as a user would (`index`, then `recall`).
 */
async function conversationProject(opts: { indexed: boolean }) {
  const p = tempProject();
  const slug = join(p.home, ".claude", "projects", "-proj");
  mkdirSync(slug, { recursive: true });
  // The real transcripts, as if written in the temp project.
  for (const name of readdirSync(join(FIX, "spotter")).filter((f) => f.endsWith(".jsonl"))) {
    writeFileSync(join(slug, name), readFileSync(join(FIX, "spotter", name), "utf8").replace(/"cwd":"[^"]*"/g, `"cwd":${JSON.stringify(p.root)}`));
  }
  const own = join(slug, `${SESSION}.jsonl`);
  const line = (o: Record<string, unknown>) => JSON.stringify({ sessionId: SESSION, cwd: p.root, isSidechain: false, ...o }) + "\n";
  writeFileSync(
    own,
    line({ type: "attachment", uuid: "att-1", timestamp: "2026-03-01T10:05:50Z", attachment: { type: "hook_additional_context", hookEvent: "UserPromptSubmit", content: ["[memsearch] Memories from earlier sessions that may be relevant:\n- quokkaflux gateway tuning"] } }) +
      line({
        type: "user",
        uuid: "turn-inj-1",
        timestamp: "2026-03-01T10:06:00Z",
        message: {
          role: "user",
          content:
            "Tune the zebrawidget settings\n\n[memsearch] Earlier conversations of this project that may be relevant (no note matched; the command after each opens the turn):\n- 2026-02-01 10:00, user: quokkaflux gateway tuning → memsearch transcript /x.jsonl --turn abc\n\n<system-reminder>\nUserPromptSubmit hook additional context: quokkaflux gateway\n</system-reminder>",
        },
      }) +
      line({ type: "assistant", uuid: "a-inj-1", timestamp: "2026-03-01T10:06:30Z", message: { id: "m-inj-1", role: "assistant", content: [{ type: "text", text: "Raised the zebrawidget pool size in config/widgets.toml." }] } }) +
      // The conversation behind a note of the sample memory (the Redis pool): what synthesize shows the model beside the note.
      line({ type: "user", uuid: "turn-redis-1", timestamp: "2026-03-01T11:00:00Z", message: { role: "user", content: "what did we decide about the redis connection pool size?" } }) +
      line({ type: "assistant", uuid: "a-redis-1", timestamp: "2026-03-01T11:00:30Z", message: { id: "m-redis-1", role: "assistant", content: [{ type: "text", text: "We kept the redis connection pool at 32 with a 250 ms acquire timeout." }] } }),
  );
  const bin = mkdtempSync(join(tmpdir(), "ms-prompt-recall-bin-"));
  writeFakeClaude(bin);
  dirs.push(p.root, p.home, bin);
  const log = join(bin, "log");
  const dbFile = join(p.home, ".memsearch", "transcripts.sqlite");
  const base = { ...p.env, TZ: "UTC", MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1", CLAUDE_CONFIG_DIR: undefined, PATH: `${bin}:/usr/bin:/bin`, FAKE_CLAUDE_LOG: log };

  /** The hook, with a hang detector far above its 4.5 s budget (a hang fails the test, a slow run does not). */
  const hook = async (prompt: string, env: Record<string, string | undefined> = {}, session = "s-now") => {
    const r = await run(["hook", "user-prompt-submit"], { cwd: p.root, env: { ...base, ...env }, stdin: JSON.stringify({ session_id: session, prompt, cwd: p.root }), timeoutMs: 30_000 });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    const ctx: string | undefined = json.hookSpecificOutput?.additionalContext;
    if (ctx !== undefined) {
      expect(ctx.length).toBeLessThan(10_000);
      // One paragraph under our marker: the transcript index and the note writer drop it whole.
      expect(ctx.startsWith("[memsearch]")).toBe(true);
      expect(ctx).not.toMatch(/\n\s*\n/);
    }
    return { ...r, json, ctx };
  };

  if (opts.indexed) {
    const index = await run(["index"], { cwd: p.root, env: base });
    if (index.code !== 0) throw new Error(`index failed: ${index.stderr}`);
    const recall = await run(["recall", "--raw", "anything"], { cwd: p.root, env: base, timeoutMs: 60_000 });
    if (recall.code !== 0 || !existsSync(dbFile)) throw new Error(`recall did not build the conversation index: ${recall.stderr}`);
  }
  return { p, slug, own, line, log, dbFile, base, hook };
}

const XTERM = "why does scrolling back in xterm.js not work?";
const XTERM_TURN = "f643538d-cf06-4b9a-9bb0-9ae5c26ea07a";

describe("the prompt hook with the conversation index", () => {
  test("no conversation index yet: nothing, and the hook creates none (it never ingests)", async () => {
    const { hook, dbFile } = await conversationProject({ indexed: false });
    const r = await hook(XTERM);
    expect(r.json).toEqual({});
    expect(existsSync(dbFile)).toBe(false);
  });

  test("inject: a prompt no note answers gets nothing, though a past conversation holds its words", async () => {
    const { p, hook, dbFile, base } = await conversationProject({ indexed: true });
    expect(existsSync(dbFile)).toBe(true);
    // The conversation holds it (recall finds it)…
    const raw = await run(["recall", "--raw", "-j", XTERM], { cwd: p.root, env: base });
    expect(JSON.parse(raw.stdout).results.some((r: { turn?: string }) => r.turn === XTERM_TURN)).toBe(true);
    // …but a raw message passes no gate: the hook gives nothing and considers no turn.
    const r = await hook(XTERM);
    expect(r.json).toEqual({});
    const [rec] = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(rec).toMatchObject({ decision: "nothing", reason: "nothing through the gate" });
    expect(rec.considered.filter((c: { kind: string }) => c.kind === "turn")).toEqual([]);
  });

  test("inject: a prompt a note answers gets the notes, not conversations", async () => {
    const { hook } = await conversationProject({ indexed: true });
    const r = await hook("what did we decide about the redis connection pool?");
    expect(r.ctx).toStartWith("[memsearch] Memories from earlier sessions");
    expect(r.ctx).not.toContain("--turn");
  });

  test("our own injected context never comes back into the conversation index", async () => {
    const { p, base } = await conversationProject({ indexed: true });
    const zebra = await run(["recall", "--raw", "-j", "zebrawidget"], { cwd: p.root, env: base });
    const hit = JSON.parse(zebra.stdout).results.find((r: { turn?: string }) => r.turn === "turn-inj-1");
    expect(hit).toBeDefined();
    expect(JSON.stringify(hit)).not.toContain("quokkaflux");
    const raw = await run(["recall", "--raw", "-j", "quokkaflux"], { cwd: p.root, env: base });
    expect(JSON.parse(raw.stdout).results).toEqual([]);
  });

  const REDIS = "what did we decide about the redis connection pool?";

  test("synthesize: the fake claude's lines with their sources, from the notes and the conversation behind them; claude runs with our hooks disabled", async () => {
    const { log, hook, own } = await conversationProject({ indexed: true });
    const reply = "- The pool was raised to 32 with a 250 ms acquire timeout [result 1]";
    const r = await hook(REDIS, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_REPLY: reply });
    expect(r.ctx).toStartWith("[memsearch] From earlier sessions of this project (haiku's summary of");
    expect(r.ctx).toContain(reply);
    expect(r.ctx).toMatch(/memsearch expand [0-9a-f]{16}/);
    const calls = fakeClaudeCalls(log);
    expect(calls.length).toBe(1);
    expect(calls[0]!.env.MEMSEARCH_DISABLE).toBe("1");
    expect(calls[0]!.argv).toContain("haiku");
    expect(calls[0]!.stdin).toContain(`Question: ${REDIS}`);
    expect(calls[0]!.stdin).toContain("Note: ");
    expect(calls[0]!.stdin).toContain(`conversation ${own} turn turn-redis-1`);
  });

  test("synthesize: no note through the gate → no model call and nothing, whatever the conversations hold", async () => {
    const { log, hook } = await conversationProject({ indexed: true });
    expect((await hook(XTERM, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_REPLY: "- anything [result 1]" })).json).toEqual({});
    expect(fakeClaudeCalls(log).length).toBe(0);
  });

  test("synthesize: the model says nothing helps → nothing injected, on record; what it was shown is not held back next time", async () => {
    const { p, hook } = await conversationProject({ indexed: true });
    const r = await hook(REDIS, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_REPLY: "NOTHING RELEVANT." });
    expect(r.json).toEqual({});
    const [rec] = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(rec).toMatchObject({ mode: "synthesize", decision: "nothing", reason: "the model found nothing relevant", chars: 0 });
    expect(rec.considered.find((c: { id: string }) => c.id === "turn-redis-1").outcome).toBe("not-given");
    expect(rec.considered.filter((c: { kind: string; outcome: string }) => c.kind === "note" && c.outcome === "not-given").length).toBeGreaterThan(0);
    expect((await hook(REDIS)).ctx).toStartWith("[memsearch] Memories from earlier sessions");
  });

  test("synthesize: a slow model → the notes plainly inside the budget, the model's process gone, the turns not given", async () => {
    const { p, log, hook } = await conversationProject({ indexed: true });
    const r = await hook(REDIS, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_MODE: "slow" });
    expect(r.ctx).toStartWith("[memsearch] Memories from earlier sessions");
    expect(r.ctx).not.toContain("--turn");
    const calls = fakeClaudeCalls(log);
    expect(calls.length).toBe(1);
    expect(processAlive(calls[0]!.pid)).toBe(false);
    if (calls[0]!.childPid) expect(processAlive(calls[0]!.childPid)).toBe(false);
    const [rec] = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(rec.considered.find((c: { id: string }) => c.id === "turn-redis-1").outcome).toBe("not-given");
  }, 60_000);

  test("synthesize: a failing, missing or unconfigured model → the notes plainly", async () => {
    const { hook } = await conversationProject({ indexed: true });
    const failing = await hook(REDIS, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_MODE: "fail" });
    expect(failing.ctx).toStartWith("[memsearch] Memories from earlier sessions");
    // Another session each time: a session is not given the same note twice.
    const missing = await hook(REDIS, { MEMSEARCH_HOOKS_RECALL: "synthesize", PATH: "/usr/bin:/bin" }, "s-other");
    expect(missing.ctx).toStartWith("[memsearch] Memories from earlier sessions");
    const extract = await hook(REDIS, { MEMSEARCH_HOOKS_RECALL: "synthesize", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" }, "s-third");
    expect(extract.ctx).toStartWith("[memsearch] Memories from earlier sessions");
  });

  test("trivial prompts get nothing in every mode, and no model is asked", async () => {
    const { log, hook } = await conversationProject({ indexed: true });
    for (const mode of ["inject", "synthesize", "hint", "off"]) {
      for (const prompt of ["ok", "thanks!", "/memsearch:status", "yes"]) {
        expect((await hook(prompt, { MEMSEARCH_HOOKS_RECALL: mode })).json).toEqual({});
      }
    }
    expect(fakeClaudeCalls(log).length).toBe(0);
  });

  test("a conversation index of another schema version is left alone", async () => {
    const { dbFile, hook } = await conversationProject({ indexed: true });
    const other = mkdtempSync(join(tmpdir(), "ms-home-other-"));
    try {
      mkdirSync(join(other, ".memsearch"), { recursive: true });
      const { Database } = await import("bun:sqlite");
      const db = new Database(join(other, ".memsearch", basename(dbFile)), { create: true });
      db.run("PRAGMA user_version = 999");
      db.close();
      const before = readFileSync(join(other, ".memsearch", basename(dbFile)));
      const r = await hook(REDIS, { MEMSEARCH_HOME: join(other, ".memsearch"), MEMSEARCH_HOOKS_RECALL: "synthesize", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" });
      expect(r.ctx).toStartWith("[memsearch] Memories from earlier sessions");
      expect(readFileSync(join(other, ".memsearch", basename(dbFile)))).toEqual(before);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
