import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeClaudeCalls, writeFakeClaude } from "../helpers/fake-claude.ts";
import { REPO, run, tempProject } from "../helpers/cli.ts";

/**
 * A Claude Code session driven through the compiled binary: start, prompts in both recall modes,
 * two concurrent Stop hooks of two sessions, drill-down, end. Each test plays the part of the
 * session it is about, in a project of its own.
 */
describe("a whole session through the hooks", () => {
  const transcriptA = join(REPO, "test/fixtures/transcripts/spotter/tool_heavy.jsonl");
  const transcriptB = join(REPO, "test/fixtures/transcripts/spotter/short.jsonl");
  const watchPids: number[] = [];
  afterAll(() => {
    for (const pid of watchPids) try { process.kill(pid, "SIGKILL"); } catch {}
  });

  /** A project, a fake claude that logs its calls, and the hooks; every hook must exit 0 with one JSON object. */
  function session() {
    const p = tempProject();
    const bin = mkdtempSync(join(tmpdir(), "ms-fakebin-"));
    writeFakeClaude(bin);
    const log = mkdtempSync(join(tmpdir(), "ms-claude-log-"));
    const env = { ...p.env, PATH: `${bin}:${process.env.PATH}`, FAKE_CLAUDE_LOG: log, MEMSEARCH_DEBUG: "1" };
    const hook = async (event: string, input: unknown, extra: Record<string, string> = {}) => {
      const r = await run(["hook", event], { cwd: p.root, env: { ...env, ...extra }, stdin: typeof input === "string" ? input : JSON.stringify(input) });
      expect({ event, code: r.code }).toEqual({ event, code: 0 });
      return { ...r, json: JSON.parse(r.stdout) };
    };
    const watchPid = () => JSON.parse(readFileSync(join(p.root, ".memsearch", "watch.pid"), "utf8")).pid as number;
    /** SessionStart of sess-a, and the watch process it starts. */
    const start = async () => {
      const r = await hook("session-start", { session_id: "sess-a", cwd: p.root, source: "startup", transcript_path: transcriptA });
      for (let i = 0; i < 100 && !existsSync(join(p.root, ".memsearch", "watch.pid")); i++) await Bun.sleep(50);
      if (existsSync(join(p.root, ".memsearch", "watch.pid"))) watchPids.push(watchPid());
      return r;
    };
    /** Stop of sess-a (and of sess-b), notes written by the drainer with the fake claude's summary. */
    const stopBoth = () =>
      Promise.all([
        // One drainer may write both notes: the fake claude names each turn's own request.
        hook("stop", { session_id: "sess-a", cwd: p.root, transcript_path: transcriptA, stop_hook_active: false }, { FAKE_CLAUDE_MODE: "echo" }),
        hook("stop", { session_id: "sess-b", cwd: p.root, transcript_path: transcriptB, stop_hook_active: false }, { FAKE_CLAUDE_MODE: "echo" }),
      ]);
    return { p, log, env, hook, start, stopBoth, watchPid };
  }

  test("session-start: status line, recent memory, watch process started", async () => {
    const { p, hook, start, watchPid } = session();
    const r = await start();
    expect(r.json.systemMessage).toMatch(/^\[memsearch v\d+\.\d+\.\d+\] embedding: ollama\/nomic-embed-text unavailable \| memory: /);
    expect(r.json.systemMessage).toContain("ollama serve");
    const ctx: string = r.json.hookSpecificOutput.additionalContext;
    expect(r.json.hookSpecificOutput.hookEventName).toBe("SessionStart");
    // The newest sessions first, each with its turns whole.
    expect(ctx).toContain("\n### 2026-11-21 10:05–11:20 · a session, 2 turns (from the repository)\n");
    expect(ctx.indexOf("### 2026-11-21 16:40")).toBeLessThan(ctx.indexOf("### 2026-11-21 10:05"));
    // The sample notes were not written on this machine: quoted, and labelled as from the repository.
    expect(ctx).toContain('\n- 10:05: (from the repository) "User asked to move deployment from Heroku to Fly.io."\n');
    // The newest session is given whole, every bullet quoted.
    expect(ctx).toContain('  - (from the repository) "Claude Code 在 `src/i18n/zh.json` 中添加了 12 条翻译，并修复了货币格式。"');
    expect(ctx).not.toContain("\\n");
    expect(ctx.length).toBeLessThan(10_000);
    const pid = watchPid();
    expect(pid).toBeGreaterThan(0);
    // A second start (resume) must not start a second watch process.
    await hook("session-start", { session_id: "sess-a", cwd: p.root, source: "resume" });
    expect(watchPid()).toBe(pid);
  });

  test("user-prompt-submit: trivial prompts get {}, hint and inject modes answer", async () => {
    const { p, hook, start } = session();
    await start();
    expect((await hook("user-prompt-submit", { prompt: "ok", cwd: p.root })).json).toEqual({});
    expect((await hook("user-prompt-submit", { prompt: "/memsearch:status", cwd: p.root })).json).toEqual({});
    const hint = await hook("user-prompt-submit", { prompt: "what did we decide about the redis pool?", cwd: p.root }, { MEMSEARCH_HOOKS_RECALL: "hint" });
    expect(hint.json.hookSpecificOutput.additionalContext).toStartWith("[memsearch] Memory available");
    // Wait for the watch process's first index, then inject.
    let inject: Awaited<ReturnType<typeof hook>> | undefined;
    for (let i = 0; i < 40; i++) {
      inject = await hook("user-prompt-submit", { prompt: "what did we decide about the redis connection pool?", cwd: p.root });
      if (inject.json.hookSpecificOutput) break;
      await Bun.sleep(100);
    }
    const text: string = inject!.json.hookSpecificOutput.additionalContext;
    expect(text).toContain("Redis connection pool");
    expect(text).toMatch(/memsearch expand [0-9a-f]{16}/);
    expect(text.split("\n").length).toBeLessThanOrEqual(4);
  });

  test("two concurrent Stop hooks of two sessions lose nothing", async () => {
    const { p, log, hook, start, stopBoth } = session();
    await start();
    const [a, b] = await stopBoth();
    expect(a.json).toEqual({});
    expect(b.json).toEqual({});
    // The notes are written by the drainer the hooks start, a moment later.
    expect(await drained(p.root)).toBe(true);
    const day = new Date();
    const file = join(p.memory, `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, "0")}-${String(day.getDate()).padStart(2, "0")}.md`);
    const md = readFileSync(file, "utf8");
    expect(md.match(/^## Session \d\d:\d\d$/gm)?.length).toBe(2);
    expect(md.match(/^### \d\d:\d\d$/gm)?.length).toBe(2);
    expect(md).toContain(`<!-- session:sess-a turn:`);
    expect(md).toContain(`transcript:${transcriptA} -->`);
    const notes = md.split(/^### /m).slice(1);
    expect(notes.find((n) => n.includes("session:sess-a"))).toContain("- Summary of: scrolling back in xterm.js still does not work");
    expect(notes.find((n) => n.includes("session:sess-b"))).toContain("- Summary of: mix phx.server doesnt seem to start");
    // The summariser ran as `claude -p --model haiku` with our hooks disabled inside it.
    const calls = fakeClaudeCalls(log);
    expect(calls.length).toBe(2);
    for (const c of calls) {
      expect(c.argv).toEqual(expect.arrayContaining(["-p", "--model", "haiku", "--no-session-persistence"]));
      expect(c.env.MEMSEARCH_DISABLE).toBe("1");
      expect(c.stdin).toContain("[User]");
    }
    // A retried Stop for the same turn writes nothing new.
    await hook("stop", { session_id: "sess-b", cwd: p.root, transcript_path: transcriptB }, { FAKE_CLAUDE_MODE: "ok", FAKE_CLAUDE_REPLY: "- again" });
    expect(await drained(p.root)).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(md);
  });

  test("search finds the new notes; expand and transcript drill down from them", async () => {
    const { p, env, start, stopBoth } = session();
    await start();
    await stopBoth();
    expect(await drained(p.root)).toBe(true);
    let hits: { chunk_hash: string; content: string }[] = [];
    for (let i = 0; i < 60 && !hits.length; i++) {
      hits = JSON.parse((await run(["search", "xterm.js scrolling", "-j"], { cwd: p.root, env })).stdout);
      if (!hits.length) await Bun.sleep(100);
    }
    expect(hits[0]!.content).toContain("scrolling back in xterm.js");
    const x = JSON.parse((await run(["expand", hits[0]!.chunk_hash, "-j"], { cwd: p.root, env })).stdout);
    expect(x.anchor.session).toBe("sess-a");
    expect(x.anchor.transcript).toBe(transcriptA);
    // The hooks were handed a fixture of the repository, not a file under Claude Code's projects folder.
    const t = await run(["transcript", x.anchor.transcript, "--turn", x.anchor.turn, "-j", "--any-file"], { cwd: p.root, env });
    expect(t.code).toBe(0);
    const turns = JSON.parse(t.stdout);
    expect(JSON.stringify(turns)).toContain(x.anchor.turn);
  });

  test("session-end stops the watch process", async () => {
    const { p, hook, start, watchPid } = session();
    await start();
    const pid = watchPid();
    const r = await hook("session-end", { session_id: "sess-a", cwd: p.root, reason: "prompt_input_exit" });
    expect(r.json).toEqual({});
    await Bun.sleep(200);
    let alive = true;
    try {
      process.kill(pid, 0);
      alive = !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      alive = false;
    }
    expect(alive).toBe(false);
    expect(existsSync(join(p.root, ".memsearch", "watch.pid"))).toBe(false);
  });
});

/** True once the project's turn queue is empty and no drainer holds it (within 30 s). */
async function drained(root: string): Promise<boolean> {
  const dir = join(root, ".memsearch", "pending");
  for (let i = 0; i < 300; i++) {
    const names = existsSync(dir) ? readdirSync(dir) : [];
    if (!names.some((n) => n.endsWith(".json") || n === ".drain.lock")) return true;
    await Bun.sleep(100);
  }
  return false;
}

/** Live `memsearch watch` processes whose working directory is `root` (Linux /proc). */
function watchProcessesIn(root: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const state = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (cmd.includes("watch") && readlinkSync(`/proc/${pid}/cwd`) === root && !/^\d+ \(.*\) Z/.test(state)) out.push(Number(pid));
    } catch {}
  }
  return out;
}

describe("concurrent session starts", () => {
  test("five sessions starting at once leave exactly one watch process, and the last end stops it", async () => {
    const p = tempProject();
    const starts = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => run(["hook", "session-start"], { cwd: p.root, env: p.env, stdin: JSON.stringify({ session_id: `s${i}`, cwd: p.root }) })),
    );
    for (const s of starts) expect(s.code).toBe(0);
    await Bun.sleep(1_500);
    const pids = watchProcessesIn(p.root);
    try {
      expect(pids.length).toBe(1);
      expect(JSON.parse(readFileSync(join(p.root, ".memsearch", "watch.pid"), "utf8")).pid).toBe(pids[0]);
      // Only one of them started a watch process: no loser truncated the winner's log.
      const log = readFileSync(join(p.root, ".memsearch", "watch.log"), "utf8");
      expect(log).toContain("Watching 1 path(s)");
      expect(log).not.toContain("already running");
      // Sessions whose Claude Code process is gone do not keep the watch process alive.
      writeFileSync(join(p.root, ".memsearch", "sessions", "dead"), JSON.stringify({ pid: 999_999_999 }));
      for (const i of [1, 2, 3, 4]) await run(["hook", "session-end"], { cwd: p.root, env: p.env, stdin: JSON.stringify({ session_id: `s${i}`, cwd: p.root }) });
      // s5 is still registered under this (live) test process, so the watch process stays.
      expect(watchProcessesIn(p.root).length).toBe(1);
      const end = await run(["hook", "session-end"], { cwd: p.root, env: p.env, stdin: JSON.stringify({ session_id: "s5", cwd: p.root }) });
      expect(end.stdout.trim()).toBe("{}");
      await Bun.sleep(200);
      expect(watchProcessesIn(p.root)).toEqual([]);
    } finally {
      for (const pid of watchProcessesIn(p.root)) process.kill(pid, "SIGKILL");
    }
  }, 30_000);
});

describe("a turn is never lost", () => {
  test("a drainer killed mid-summary leaves its turn queued; the next session's start writes it, once", async () => {
    const p = tempProject();
    const bin = mkdtempSync(join(tmpdir(), "ms-fakebin-"));
    writeFakeClaude(bin);
    const log = mkdtempSync(join(tmpdir(), "ms-claude-log-"));
    const env = { ...p.env, PATH: `${bin}:${process.env.PATH}`, FAKE_CLAUDE_LOG: log, MEMSEARCH_NO_WATCH: "1" };
    const input = { session_id: "sess-k", cwd: p.root, prompt_id: "prompt-k", transcript_path: join(p.root, "none.jsonl") };
    await run(["hook", "user-prompt-submit"], { cwd: p.root, env, stdin: JSON.stringify({ ...input, prompt: "why does the okapi job time out?" }) });
    const stop = await run(["hook", "stop"], { cwd: p.root, env: { ...env, FAKE_CLAUDE_MODE: "slow" }, stdin: JSON.stringify({ ...input, last_assistant_message: "The okapi job waits on a lock." }) });
    expect(stop.stdout.trim()).toBe("{}");
    // The drainer is waiting for the (slow) summariser: kill it and what it started.
    const lock = join(p.root, ".memsearch", "pending", ".drain.lock");
    for (let i = 0; i < 300 && fakeClaudeCalls(log).length === 0; i++) await Bun.sleep(50);
    const drainer = Number(readFileSync(lock, "utf8").split(" ")[0]);
    process.kill(drainer, "SIGKILL");
    for (const c of fakeClaudeCalls(log)) {
      for (const pid of [c.pid, c.childPid]) if (pid) try { process.kill(pid, "SIGKILL"); } catch {}
    }
    await Bun.sleep(200);
    const queued = readdirSync(join(p.root, ".memsearch", "pending")).filter((n) => n.endsWith(".json"));
    expect(queued).toHaveLength(1);
    const journal = () =>
      readdirSync(p.memory)
        .filter((n) => /^\d{4}-\d{2}-\d{2}\.md$/.test(n))
        .map((n) => readFileSync(join(p.memory, n), "utf8"))
        .join("\n");
    expect(journal()).not.toContain("turn:prompt-k ");
    // The next session starts: its hook finds the queue and starts a drainer, which finishes the turn.
    const start = await run(["hook", "session-start"], { cwd: p.root, env: { ...env, FAKE_CLAUDE_MODE: "echo" }, stdin: JSON.stringify({ session_id: "sess-next", cwd: p.root }) });
    expect(start.code).toBe(0);
    expect(await drained(p.root)).toBe(true);
    const noted = journal();
    expect(noted.match(/turn:prompt-k /g)).toHaveLength(1);
    expect(noted).toContain("- Summary of: why does the okapi job time out?");
    // Another start finds nothing left to do.
    await run(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "sess-next2", cwd: p.root }) });
    expect(await drained(p.root)).toBe(true);
    expect(journal()).toBe(noted);
  }, 60_000);
});

describe("hooks survive bad input", () => {
  const cases: [string, string][] = [
    ["empty", ""],
    ["garbage", "\u0000\u0001 not json {{{"],
    ["array", "[1,2,3]"],
    ["wrong types", JSON.stringify({ prompt: 42, transcript_path: ["x"], cwd: 7, session_id: {} })],
    ["missing transcript", JSON.stringify({ session_id: "x", transcript_path: "/nonexistent/t.jsonl", prompt: "tell me about the redis pool" })],
    ["10 MB", JSON.stringify({ prompt: "x".repeat(10 * 1024 * 1024) })],
  ];
  for (const event of ["session-start", "user-prompt-submit", "stop", "session-end"]) {
    test(`${event}: exit 0 with valid JSON for every bad input`, async () => {
      const p = tempProject();
      for (const [, stdin] of cases) {
        const r = await run(["hook", event], { cwd: p.root, env: { ...p.env, MEMSEARCH_NO_WATCH: "1" }, stdin });
        expect(r.code).toBe(0);
        expect(typeof JSON.parse(r.stdout)).toBe("object");
      }
    }, 60_000);
  }

  test("a turn that cannot be written is reported in the next status line", async () => {
    const q = tempProject();
    rmSync(q.memory, { recursive: true });
    writeFileSync(q.memory, "a file where the memory folder should be");
    const env = { ...q.env, MEMSEARCH_SUMMARIZER_PROVIDER: "extract", MEMSEARCH_NO_WATCH: "1" };
    const transcript = join(REPO, "test/fixtures/transcripts/spotter/short.jsonl");
    const stop = await run(["hook", "stop"], { cwd: q.root, env, stdin: JSON.stringify({ session_id: "s", cwd: q.root, transcript_path: transcript }) });
    expect(stop.code).toBe(0);
    expect(stop.stdout.trim()).toBe("{}");
    for (let i = 0; i < 100 && !existsSync(join(q.root, ".memsearch", "hook-problems.json")); i++) await Bun.sleep(100);
    // The turn stays queued for when the disk is back.
    expect(readdirSync(join(q.root, ".memsearch", "pending")).filter((n) => n.endsWith(".json"))).toHaveLength(1);
    const start = await run(["hook", "session-start"], { cwd: q.root, env, stdin: JSON.stringify({ session_id: "s2", cwd: q.root }) });
    expect(JSON.parse(start.stdout).systemMessage).toContain("WARNING: a turn could not be written to memory");
  });

  test("MEMSEARCH_DISABLE=1 (the summariser's own process) makes every hook a no-op", async () => {
    const p = tempProject();
    for (const event of ["session-start", "user-prompt-submit", "stop", "session-end"]) {
      const r = await run(["hook", event], { cwd: p.root, env: { ...p.env, MEMSEARCH_DISABLE: "1" }, stdin: JSON.stringify({ prompt: "a real question about redis" }) });
      expect(r.stdout.trim()).toBe("{}");
    }
    expect(existsSync(join(p.root, ".memsearch", "watch.pid"))).toBe(false);
  });
});
