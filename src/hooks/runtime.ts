import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { oneLine } from "../core/errors.ts";
import { userDir } from "../core/project.ts";
import { clip } from "../core/text.ts";
import { isAlive, readWatchInfo } from "../core/warm.ts";

/** The JSON Claude Code sends every hook on stdin (fields we use; all optional: never trust it). */
export interface HookInput {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  hook_event_name?: string;
  source?: string;
  prompt?: string;
  stop_hook_active?: boolean;
  last_assistant_message?: string;
  reason?: string;
}

export interface HookOutput {
  systemMessage?: string;
  hookSpecificOutput?: { hookEventName: string; additionalContext?: string };
}

/** Claude Code caps injected text at 10,000 characters; stay under with room to spare. */
export const CONTEXT_LIMIT = 9_500;
const STDIN_LIMIT = 16 * 1024 * 1024;

/** Read stdin as JSON; empty, garbage, huge or a never-closing stdin all give {}. */
export async function readHookInput(timeoutMs = 2_000): Promise<{ input: HookInput; problem?: string }> {
  if (process.stdin.isTTY) return { input: {}, problem: "no hook input on stdin" };
  const chunks: Buffer[] = [];
  let size = 0;
  const done = new Promise<void>((resolve) => {
    process.stdin.on("data", (d: Buffer) => {
      size += d.length;
      if (size <= STDIN_LIMIT) chunks.push(d);
    });
    process.stdin.on("end", () => resolve());
    process.stdin.on("error", () => resolve());
  });
  const timedOut = await Promise.race([done.then(() => false), Bun.sleep(timeoutMs).then(() => true)]);
  process.stdin.pause();
  if (size > STDIN_LIMIT) return { input: {}, problem: `hook input larger than ${STDIN_LIMIT} bytes` };
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (!text) return { input: {}, problem: timedOut ? "hook input did not arrive in time" : "empty hook input" };
  try {
    const v = JSON.parse(text);
    if (v && typeof v === "object" && !Array.isArray(v)) return { input: v as HookInput };
    return { input: {}, problem: "hook input is not a JSON object" };
  } catch {
    return { input: {}, problem: "hook input is not valid JSON" };
  }
}

/** MEMSEARCH_DEBUG=1 → one line per step in ~/.memsearch/logs/hooks-YYYY-MM-DD.log. */
export function debugLog(event: string, what: string, data?: unknown): void {
  if (!process.env.MEMSEARCH_DEBUG || process.env.MEMSEARCH_DEBUG === "0") return;
  try {
    const dir = join(userDir(), "logs");
    mkdirSync(dir, { recursive: true });
    const day = new Date().toISOString().slice(0, 10);
    const payload = data === undefined ? "" : " " + clip(typeof data === "string" ? data : JSON.stringify(data), 4000);
    appendFileSync(join(dir, `hooks-${day}.log`), `${new Date().toISOString()} [${process.pid}] ${event} ${what}${payload}\n`);
  } catch {
    // A log that cannot be written must not break the hook.
  }
}

/**
 * Run a hook: whatever happens (exception, hang past the budget) print exactly one JSON
 * object and exit 0, so Claude Code never shows a hook error.
 */
export async function runHook(event: string, budgetMs: number, body: (input: HookInput) => Promise<HookOutput>): Promise<void> {
  let written = false;
  const emit = (out: HookOutput, why: string) => {
    if (written) return;
    written = true;
    debugLog(event, `output (${why})`, out);
    process.stdout.write(JSON.stringify(out) + "\n");
  };
  const timer = setTimeout(() => {
    emit({}, "budget exceeded");
    process.exit(0);
  }, budgetMs);
  try {
    if (process.env.MEMSEARCH_DISABLE === "1") {
      emit({}, "MEMSEARCH_DISABLE=1");
      return;
    }
    const { input, problem } = await readHookInput(Math.min(2_000, budgetMs / 2));
    debugLog(event, "input", problem ? { problem } : input);
    const out = await body(input);
    emit(out, "ok");
  } catch (e) {
    debugLog(event, "error", oneLine(e));
    emit({}, "error");
  } finally {
    clearTimeout(timer);
  }
}

/** How to run this same program again (compiled binary, or bun + script in development). */
export function selfCommand(): string[] {
  const exe = process.execPath;
  return /(^|[\\/])bun(\.exe)?$/.test(exe) && process.argv[1] ? [exe, process.argv[1]] : [exe];
}

/** Start `memsearch watch` for the project as a detached process, unless one runs already. */
export function startWatch(dataDir: string, cwd: string): { started: boolean; pid?: number } {
  if (process.env.MEMSEARCH_NO_WATCH === "1") return { started: false };
  const running = readWatchInfo(dataDir);
  if (running) return { started: false, pid: running.pid };
  mkdirSync(dataDir, { recursive: true });
  const log = openSync(join(dataDir, "watch.log"), "w");
  const [cmd, ...args] = selfCommand();
  const child = spawn(cmd!, [...args, "watch"], {
    cwd,
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...process.env, MEMSEARCH_DIR: dataDir, MEMSEARCH_DEBUG: process.env.MEMSEARCH_DEBUG ?? "" },
  });
  child.unref();
  return { started: true, pid: child.pid };
}

// ---------------------------------------------------------------------------------------------
// Sessions of a project, so SessionEnd stops the watch process only when the last one leaves.

function sessionsDir(dataDir: string): string {
  return join(dataDir, "sessions");
}

const safeId = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 100) || "unknown";

/** The Claude Code process that ran this hook (our parent, since the hook command execs us). */
export function claudePid(): number {
  return process.ppid;
}

export function registerSession(dataDir: string, sessionId: string): void {
  mkdirSync(sessionsDir(dataDir), { recursive: true });
  writeFileSync(join(sessionsDir(dataDir), safeId(sessionId)), JSON.stringify({ pid: claudePid(), at: new Date().toISOString() }));
}

/** Remove this session; return how many other sessions of the project are still alive. */
export function unregisterSession(dataDir: string, sessionId: string): number {
  const dir = sessionsDir(dataDir);
  rmSync(join(dir, safeId(sessionId)), { force: true });
  let live = 0;
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {}
  for (const n of names) {
    try {
      const { pid } = JSON.parse(readFileSync(join(dir, n), "utf8"));
      if (isAlive(pid)) live++;
      else rmSync(join(dir, n), { force: true });
    } catch {
      rmSync(join(dir, n), { force: true });
    }
  }
  return live;
}

// ---------------------------------------------------------------------------------------------
// Problems a background hook met, shown in the next SessionStart status line.

function problemsFile(dataDir: string): string {
  return join(dataDir, "hook-problems.json");
}

export function recordProblem(dataDir: string, message: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(problemsFile(dataDir), JSON.stringify({ at: new Date().toISOString(), message: oneLine(message) }));
  } catch {}
}

export function takeProblem(dataDir: string): string | undefined {
  try {
    const { message } = JSON.parse(readFileSync(problemsFile(dataDir), "utf8"));
    rmSync(problemsFile(dataDir), { force: true });
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}
