import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, run, tempProject } from "../helpers/cli.ts";

/**
 * Issue 9: no orphan watch processes, and no early stop. A watch process started by a hook
 * lives as long as a Claude Code session of its project does, even when Claude Code is killed
 * and SessionEnd never runs; one session's end does not stop it while another session is open.
 * Claude Code is played by dummy processes that run the hooks under `sh -c`, as it does.
 */

const LIVENESS_MS = 250;

/** Alive and not a zombie (Linux /proc). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Field 22 of /proc/<pid>/stat: the process start time in clock ticks since boot. */
function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (what()) return true;
    if (Date.now() > end) return false;
    await Bun.sleep(50);
  }
}

/** Live `memsearch watch` processes whose working directory is `root`. */
function watchProcessesIn(root: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (cmd.includes("watch") && readlinkSync(`/proc/${pid}/cwd`) === root && alive(Number(pid))) out.push(Number(pid));
    } catch {}
  }
  return out;
}

function envOf(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...extra })) if (v !== undefined) env[k] = v;
  return env;
}

/**
 * A stand-in for the `claude` process (a bun process, so not a shell): runs the SessionStart
 * hook the way Claude Code runs hook commands, under `sh -c` (`shells` deep), prints the hook's
 * output, then stays until killed. The trailing `; :` keeps the shell from exec'ing the hook,
 * so the hook's parent is a shell that exits right after it.
 */
const DUMMY_CLAUDE = `
const [bin, input, shells] = process.argv.slice(2);
const args = shells === "2"
  ? ["sh", "-c", "sh -c '\\"$0\\" hook session-start; :' \\"$0\\"; :", bin]
  : ["sh", "-c", '"$0" hook session-start; :', bin];
const p = Bun.spawn(args, { stdin: new TextEncoder().encode(input), stdout: "pipe", stderr: "inherit" });
const out = await new Response(p.stdout).text();
await p.exited;
process.stdout.write(out.trim() + "\\n");
setInterval(() => {}, 1 << 30);
`;
const scripts = mkdtempSync(join(tmpdir(), "ms-dummy-claude-"));
const dummyScript = join(scripts, "claude.ts");
writeFileSync(dummyScript, DUMMY_CLAUDE);

const spawned: { kill(sig?: number): void }[] = [];
afterAll(() => {
  for (const p of spawned) try { p.kill(9); } catch {}
});

/** Start a dummy Claude Code session; resolves with it and its SessionStart output. */
async function dummySession(root: string, env: Record<string, string>, sessionId: string, shells: 1 | 2) {
  const proc = Bun.spawn([process.execPath, dummyScript, BIN, JSON.stringify({ session_id: sessionId, cwd: root, source: "startup" }), String(shells)], {
    cwd: root,
    env,
    stdout: "pipe",
    stderr: "inherit",
  });
  spawned.push(proc);
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { proc, output: JSON.parse(text.trim()) as { systemMessage?: string } };
}

describe("a hook-started watch process follows the Claude Code sessions", () => {
  test("one session's end leaves it to the other; killing the other (no SessionEnd) makes it exit by itself", async () => {
    const p = tempProject();
    const env = envOf({ ...p.env, MEMSEARCH_WATCH_LIVENESS_MS: String(LIVENESS_MS) });
    const dataDir = join(p.root, ".memsearch");
    try {
      const a = await dummySession(p.root, env, "sess-a", 1);
      expect(a.output.systemMessage).toContain("[memsearch v");
      const b = await dummySession(p.root, env, "sess-b", 2);
      expect(b.output.systemMessage).toContain("[memsearch v");

      // Each session is recorded as its Claude Code process (not the shell the hook ran under), with its start time.
      const rec = (id: string) => JSON.parse(readFileSync(join(dataDir, "sessions", id), "utf8"));
      expect(rec("sess-a")).toMatchObject({ pid: a.proc.pid, startTime: startTime(a.proc.pid) });
      expect(rec("sess-b")).toMatchObject({ pid: b.proc.pid, startTime: startTime(b.proc.pid) });

      expect(await until(() => existsSync(join(dataDir, "watch.pid")), 5_000)).toBe(true);
      const info = JSON.parse(readFileSync(join(dataDir, "watch.pid"), "utf8")) as { pid: number; socket: string };
      expect(watchProcessesIn(p.root)).toEqual([info.pid]);

      // Session A ends normally: B still uses the watch process.
      const end = await run(["hook", "session-end"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "sess-a", cwd: p.root, reason: "prompt_input_exit" }) });
      expect(end.stdout.trim()).toBe("{}");
      await Bun.sleep(8 * LIVENESS_MS); // well past the grace period and two checks
      expect(alive(info.pid)).toBe(true);
      expect(existsSync(join(dataDir, "watch.pid"))).toBe(true);
      expect(existsSync(join(dataDir, "sessions", "sess-a"))).toBe(false);

      // Claude Code of session B is killed: no SessionEnd. The watch process leaves by itself.
      b.proc.kill(9);
      await b.proc.exited;
      expect(await until(() => !alive(info.pid), 20 * LIVENESS_MS)).toBe(true);
      expect(existsSync(join(dataDir, "watch.pid"))).toBe(false);
      expect(existsSync(info.socket)).toBe(false);
      expect(existsSync(join(dataDir, "sessions", "sess-b"))).toBe(false); // the dead session's file is removed
      expect(readFileSync(join(dataDir, "watch.log"), "utf8")).toContain("Stopping watcher: no live Claude Code session uses this project any more.");
      // It saved the index on the way out.
      const search = await run(["search", "redis pool", "-j"], { cwd: p.root, env: { ...env, MEMSEARCH_NO_WATCH: "1" } });
      expect(JSON.parse(search.stdout).length).toBeGreaterThan(0);
    } finally {
      for (const pid of watchProcessesIn(p.root)) process.kill(pid, "SIGKILL");
    }
  }, 60_000);
});

describe("a reused PID is not a live session", () => {
  /** A live process whose PID stands for a Claude Code process that died and whose PID was reused. */
  const writeReused = (dataDir: string) => {
    const sleeper = Bun.spawn(["sleep", "600"], { stdout: "ignore" });
    spawned.push(sleeper);
    mkdirSync(join(dataDir, "sessions"), { recursive: true });
    writeFileSync(join(dataDir, "sessions", "reused"), JSON.stringify({ pid: sleeper.pid, startTime: String(Number(startTime(sleeper.pid)) - 1000), at: new Date().toISOString() }));
    return sleeper;
  };

  test("a hook-started watch process whose only session has a live PID with another start time exits, and removes that session", async () => {
    const p = tempProject();
    const dataDir = join(p.root, ".memsearch");
    const sleeper = writeReused(dataDir);
    const env = envOf({ ...p.env, MEMSEARCH_WATCH_LIVENESS_MS: String(LIVENESS_MS), MEMSEARCH_WATCH_OWNER: "hooks" });
    const w = Bun.spawn([BIN, "watch"], { cwd: p.root, env, stdout: "ignore", stderr: "ignore" });
    spawned.push(w);
    expect(await until(() => existsSync(join(dataDir, "watch.pid")), 5_000)).toBe(true);
    const exited = await Promise.race([w.exited.then(() => true), Bun.sleep(20 * LIVENESS_MS).then(() => false)]);
    expect(exited).toBe(true);
    expect(w.exitCode).toBe(0);
    expect(alive(sleeper.pid)).toBe(true);
    expect(existsSync(join(dataDir, "sessions", "reused"))).toBe(false);
    expect(existsSync(join(dataDir, "watch.pid"))).toBe(false);
  }, 30_000);

  test("SessionEnd does not count it as another open session", async () => {
    const p = tempProject();
    const dataDir = join(p.root, ".memsearch");
    writeReused(dataDir);
    // Started by hand, so only SessionEnd can stop it.
    const w = Bun.spawn([BIN, "watch"], { cwd: p.root, env: envOf({ ...p.env, MEMSEARCH_WATCH_OWNER: undefined }), stdout: "ignore", stderr: "ignore" });
    spawned.push(w);
    expect(await until(() => existsSync(join(dataDir, "watch.pid")), 5_000)).toBe(true);
    const end = await run(["hook", "session-end"], { cwd: p.root, env: p.env, stdin: JSON.stringify({ session_id: "mine", cwd: p.root }) });
    expect(end.stdout.trim()).toBe("{}");
    const exited = await Promise.race([w.exited.then(() => true), Bun.sleep(5_000).then(() => false)]);
    expect(exited).toBe(true);
    expect(existsSync(join(dataDir, "sessions", "reused"))).toBe(false);
  }, 30_000);
});

describe("a watch process started by hand", () => {
  test("does not exit by itself without sessions, where a hook-started one does", async () => {
    const byHand = tempProject();
    const byHook = tempProject();
    const hand = Bun.spawn([BIN, "watch"], { cwd: byHand.root, env: envOf({ ...byHand.env, MEMSEARCH_WATCH_LIVENESS_MS: String(LIVENESS_MS), MEMSEARCH_WATCH_OWNER: undefined }), stdout: "ignore", stderr: "ignore" });
    const hook = Bun.spawn([BIN, "watch"], { cwd: byHook.root, env: envOf({ ...byHook.env, MEMSEARCH_WATCH_LIVENESS_MS: String(LIVENESS_MS), MEMSEARCH_WATCH_OWNER: "hooks" }), stdout: "ignore", stderr: "ignore" });
    spawned.push(hand, hook);
    const hookExited = await Promise.race([hook.exited.then(() => true), Bun.sleep(20 * LIVENESS_MS).then(() => false)]);
    expect(hookExited).toBe(true);
    await Bun.sleep(4 * LIVENESS_MS);
    expect(hand.exitCode).toBeNull();
    expect(alive(hand.pid)).toBe(true);
    const info = JSON.parse(readFileSync(join(byHand.root, ".memsearch", "watch.pid"), "utf8"));
    expect(info.pid).toBe(hand.pid);
    hand.kill("SIGTERM");
    expect(await hand.exited).toBe(0);
  }, 30_000);
});
