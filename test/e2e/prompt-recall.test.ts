/**
 * The prompt hook and the conversation index (issue 10), through the compiled binary
 * (MEMSEARCH_BIN or dist/memsearch): `hooks.recall = "inject"` adds past conversation turns when
 * no note is relevant enough, `"synthesize"` has the (fake) claude write a few lines from notes and
 * turns and falls back to plain injection when it is slow or fails. A temp HOME holds
 * `~/.claude/projects/-proj/` with the real spotter transcripts, their cwd rewritten to the temp
 * project, and a session whose prompts carry our own injected context.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
      line({ type: "assistant", uuid: "a-inj-1", timestamp: "2026-03-01T10:06:30Z", message: { id: "m-inj-1", role: "assistant", content: [{ type: "text", text: "Raised the zebrawidget pool size in config/widgets.toml." }] } }),
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

  test("inject: a transcript hit when no note matches, dated, with its drill-down", async () => {
    const { p, slug, hook, dbFile, base } = await conversationProject({ indexed: false });
    // The notes index and the conversation index, built as a user would.
    expect((await run(["index"], { cwd: p.root, env: base })).code).toBe(0);
    expect((await run(["recall", "--raw", "anything"], { cwd: p.root, env: base, timeoutMs: 60_000 })).code).toBe(0);
    expect(existsSync(dbFile)).toBe(true);
    const r = await hook(XTERM);
    expect(r.ctx).toStartWith("[memsearch] Earlier conversations of this project");
    expect(r.ctx).toContain(`2026-02-10 22:59, user · memsearch transcript ${join(slug, "tool_heavy.jsonl")} --turn ${XTERM_TURN} · "scrolling back in xterm.js still does not work`);
    expect(r.ctx!.split("\n").length).toBeLessThanOrEqual(4);
    // The drill-down works.
    const t = await run(["transcript", join(slug, "tool_heavy.jsonl"), "--turn", XTERM_TURN, "-c", "0"], { cwd: p.root, env: base });
    expect(t.code).toBe(0);
    expect(t.stdout).toContain("scrolling back in xterm.js");
  });

  test("inject: a prompt a note answers gets the notes, not conversations", async () => {
    const { hook } = await conversationProject({ indexed: true });
    const r = await hook("what did we decide about the redis connection pool?");
    expect(r.ctx).toStartWith("[memsearch] Memories from earlier sessions");
    expect(r.ctx).not.toContain("Earlier conversations");
  });

  test("our own injected context never comes back", async () => {
    const { p, hook, base } = await conversationProject({ indexed: true });
    const only = await hook("quokkaflux gateway tuning again please");
    expect(only.json).toEqual({});
    const mixed = await hook("how did we tune the zebrawidget quokkaflux gateway?");
    expect(mixed.ctx).toContain("--turn turn-inj-1");
    expect(mixed.ctx).not.toContain("quokkaflux");
    const raw = await run(["recall", "--raw", "-j", "quokkaflux"], { cwd: p.root, env: base });
    expect(JSON.parse(raw.stdout).results).toEqual([]);
  });

  test("the hook reads the index as it is: a new turn shows once the index is updated (watch or recall)", async () => {
    const { p, own, line, hook, base } = await conversationProject({ indexed: true });
    appendFileSync(
      own,
      line({ type: "user", uuid: "turn-new-1", timestamp: "2026-03-02T09:00:00Z", message: { role: "user", content: "why is the wombatquasar exporter dropping frames?" } }) +
        line({ type: "assistant", uuid: "a-new-1", timestamp: "2026-03-02T09:00:30Z", message: { id: "m-new-1", role: "assistant", content: [{ type: "text", text: "The wombatquasar exporter buffer was too small." }] } }),
    );
    const prompt = "wombatquasar exporter dropping frames again";
    expect((await hook(prompt)).json).toEqual({});
    expect((await run(["recall", "--raw", "wombatquasar"], { cwd: p.root, env: base })).code).toBe(0);
    expect((await hook(prompt)).ctx).toContain("--turn turn-new-1");
  });

  test("synthesize: the fake claude's lines with their sources; claude runs with our hooks disabled", async () => {
    const { slug, log, hook } = await conversationProject({ indexed: true });
    const reply = "- Scrolling broke because the outer page caught the wheel events [2026-02-10 22:59, result 1]";
    const r = await hook(XTERM, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_REPLY: reply });
    expect(r.ctx).toStartWith("[memsearch] From earlier sessions of this project (haiku's summary of");
    expect(r.ctx).toContain(reply);
    expect(r.ctx).toContain(`[result 1] 2026-02-10 22:59: memsearch transcript ${join(slug, "tool_heavy.jsonl")} --turn ${XTERM_TURN}`);
    const calls = fakeClaudeCalls(log);
    expect(calls.length).toBe(1);
    expect(calls[0]!.env.MEMSEARCH_DISABLE).toBe("1");
    expect(calls[0]!.argv).toContain("haiku");
    expect(calls[0]!.stdin).toContain(`Question: ${XTERM}`);
    expect(calls[0]!.stdin).toContain(XTERM_TURN);
  });

  test("synthesize: notes and conversations go to the model together", async () => {
    const { log, hook } = await conversationProject({ indexed: true });
    const r = await hook("what did we decide about the redis connection pool?", { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_REPLY: "- Pool raised [result 1]" });
    expect(r.ctx).toContain("- Pool raised [result 1]");
    expect(r.ctx).toMatch(/memsearch expand [0-9a-f]{16}/);
    expect(fakeClaudeCalls(log)[0]!.stdin).toContain("Note: ");
  });

  test("synthesize: the model says nothing helps → nothing injected, on record; what it was shown is not held back next time", async () => {
    const { p, hook } = await conversationProject({ indexed: true });
    const r = await hook(XTERM, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_REPLY: "NOTHING RELEVANT." });
    expect(r.json).toEqual({});
    const [rec] = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(rec).toMatchObject({ mode: "synthesize", decision: "nothing", reason: "the model found nothing relevant", chars: 0 });
    expect(rec.considered.find((c: { id: string }) => c.id === XTERM_TURN).outcome).toBe("not-given");
    expect((await hook(XTERM)).ctx).toContain(`--turn ${XTERM_TURN}`);
  });

  test("synthesize: a slow model → plain injection inside the budget, the model's process gone", async () => {
    const { log, hook } = await conversationProject({ indexed: true });
    const r = await hook(XTERM, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_MODE: "slow" });
    expect(r.ctx).toStartWith("[memsearch] Earlier conversations of this project");
    expect(r.ctx).toContain(`--turn ${XTERM_TURN}`);
    const calls = fakeClaudeCalls(log);
    expect(calls.length).toBe(1);
    expect(processAlive(calls[0]!.pid)).toBe(false);
    if (calls[0]!.childPid) expect(processAlive(calls[0]!.childPid)).toBe(false);
  }, 60_000);

  test("synthesize: a failing, missing or unconfigured model → plain injection", async () => {
    const { hook } = await conversationProject({ indexed: true });
    const failing = await hook(XTERM, { MEMSEARCH_HOOKS_RECALL: "synthesize", FAKE_CLAUDE_MODE: "fail" });
    expect(failing.ctx).toStartWith("[memsearch] Earlier conversations of this project");
    // Another session each time: a session is not given the same turn twice.
    const missing = await hook(XTERM, { MEMSEARCH_HOOKS_RECALL: "synthesize", PATH: "/usr/bin:/bin" }, "s-other");
    expect(missing.ctx).toStartWith("[memsearch] Earlier conversations of this project");
    const extract = await hook("what did we decide about the redis connection pool?", { MEMSEARCH_HOOKS_RECALL: "synthesize", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" }, "s-third");
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

  test("a conversation index of another schema version is left alone: nothing", async () => {
    const { dbFile, hook } = await conversationProject({ indexed: true });
    const other = mkdtempSync(join(tmpdir(), "ms-home-other-"));
    try {
      mkdirSync(join(other, ".memsearch"), { recursive: true });
      const { Database } = await import("bun:sqlite");
      const db = new Database(join(other, ".memsearch", basename(dbFile)), { create: true });
      db.run("PRAGMA user_version = 999");
      db.close();
      const r = await hook(XTERM, { MEMSEARCH_HOME: join(other, ".memsearch") });
      expect(r.json).toEqual({});
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
