import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeProcess, isWrapper, processStartTime } from "../../src/core/processes.ts";
import { isSessionAlive, liveSessions, registerSession, sessionsDir, touchSession, unregisterSession } from "../../src/watch/sessions.ts";

const posix = process.platform !== "win32";
/** Start times are known on Linux (/proc) and macOS (ps); elsewhere a record counts by PID alone. */
const startTimes = processStartTime(process.pid) !== undefined;
const processesModule = join(import.meta.dir, "../../src/core/processes.ts");

describe("the Claude Code process of a hook", () => {
  test("shells and exec wrappers are skipped, anything else is not", () => {
    for (const c of ["sh", "bash", "-bash", "/bin/zsh", "dash", "env", "/usr/bin/env", "BASH"]) expect(isWrapper(c)).toBe(true);
    for (const c of ["claude", "node", "bun", "memsearch", "shellcheck"]) expect(isWrapper(c)).toBe(false);
  });

  test.if(posix)("a hook run under two `sh -c` names the process above the shells, with its start time", async () => {
    const script = join(mkdtempSync(join(tmpdir(), "ms-sessions-")), "who.ts");
    writeFileSync(script, `import { claudeProcess } from ${JSON.stringify(processesModule)};\nprocess.stdout.write(JSON.stringify(claudeProcess()));\n`);
    // `; :` keeps each shell from exec'ing its command: the hook's parent is a shell, as under Claude Code.
    const p = Bun.spawn(["sh", "-c", `sh -c '"$0" "$1"; :' "$0" "$1"; :`, process.execPath, script], { stdout: "pipe", stderr: "inherit" });
    const who = JSON.parse(await new Response(p.stdout).text());
    expect(await p.exited).toBe(0);
    expect(who).toEqual({ pid: process.pid, startTime: processStartTime(process.pid) });
  });

  test.if(posix)("the test runner itself (not a shell) is taken as is", () => {
    expect(processStartTime(process.pid)).toMatch(/^\d+$/);
    expect(claudeProcess().pid).toBeGreaterThan(0);
  });
});

describe("session files", () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), "ms-sessions-data-"));

  test("a live PID with another start time is dead; without a start time it counts by PID", () => {
    const start = processStartTime(process.pid);
    expect(isSessionAlive({ pid: process.pid, startTime: start })).toBe(true);
    if (start) expect(isSessionAlive({ pid: process.pid, startTime: start + "0" })).toBe(false);
    expect(isSessionAlive({ pid: process.pid })).toBe(true);
    expect(isSessionAlive({ pid: 999_999_999 })).toBe(false);
  });

  test("liveSessions counts live ones and removes dead and broken files, but not records being written", () => {
    const d = dataDir();
    registerSession(d, "live", { pid: process.pid, startTime: processStartTime(process.pid) });
    registerSession(d, "dead", { pid: 999_999_999 });
    registerSession(d, "reused", { pid: process.pid, startTime: "1" });
    writeFileSync(join(sessionsDir(d), "broken"), "{not json");
    writeFileSync(join(sessionsDir(d), ".abc-1.tmp"), "");
    expect(liveSessions(d)).toBe(startTimes ? 1 : 2);
    expect(existsSync(join(sessionsDir(d), "live"))).toBe(true);
    expect(existsSync(join(sessionsDir(d), "dead"))).toBe(false);
    expect(existsSync(join(sessionsDir(d), "broken"))).toBe(false);
    expect(existsSync(join(sessionsDir(d), ".abc-1.tmp"))).toBe(true);
    expect(unregisterSession(d, "live")).toBe(startTimes ? 0 : 1);
    expect(liveSessions(join(d, "nowhere"))).toBe(0);
  });

  test("touchSession refreshes a record, and re-registers a missing or pre-start-time one", () => {
    const d = dataDir();
    const file = join(sessionsDir(d), "s");
    touchSession(d, "s");
    const first = JSON.parse(readFileSync(file, "utf8"));
    expect(first.pid).toBe(claudeProcess().pid);
    mkdirSync(sessionsDir(d), { recursive: true });
    writeFileSync(file, JSON.stringify({ pid: 4242, startTime: "7", at: "2020-01-01T00:00:00.000Z" }));
    touchSession(d, "s");
    const refreshed = JSON.parse(readFileSync(file, "utf8"));
    expect(refreshed).toMatchObject({ pid: 4242, startTime: "7" });
    expect(refreshed.at).not.toBe("2020-01-01T00:00:00.000Z");
    if (posix) {
      writeFileSync(file, JSON.stringify({ pid: 4242, at: "2020-01-01T00:00:00.000Z" }));
      touchSession(d, "s");
      expect(JSON.parse(readFileSync(file, "utf8")).pid).toBe(claudeProcess().pid);
    }
  });

  test("odd session ids stay inside the sessions folder and are not taken for temp files", () => {
    const d = dataDir();
    registerSession(d, "../../etc/passwd", { pid: process.pid });
    registerSession(d, ".hidden", { pid: process.pid });
    expect(liveSessions(d)).toBe(2);
  });
});
