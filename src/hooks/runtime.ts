import pkg from "../../package.json" with { type: "json" };
import { spawn } from "node:child_process";
import * as v from "valibot";
import { agentOrDefault } from "../agents/registry.ts";
import type { AgentAdapter, NeutralHookInput, NeutralHookOutput } from "../agents/types.ts";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { oneLine, UnsafeDataError } from "../core/errors.ts";
import { readJson } from "../core/json-file.ts";
import { dataFiles, makeDataDir, userFiles } from "../core/project.ts";
import { clip } from "../core/text.ts";
import { isTerminal, readStdin, writeOut } from "../core/stdio.ts";
import { sanitize } from "../core/redact.ts";
import { readWatchInfo } from "../watch/client.ts";
import { appendOwnFile, atomicWrite, freshFile } from "../core/fsutil.ts";
import { claimStart, markStarting, releaseStart } from "../watch/starting.ts";

/** The neutral hook input (agents/types.ts): each agent's adapter reads its own JSON into it. */
export type HookInput = NeutralHookInput;

/** Keep only fields of the expected type and size (Claude Code's input, unless another agent's adapter is given). */
export function parseHookInput(raw: Record<string, unknown>, agent: AgentAdapter = agentOrDefault()): HookInput {
  return agent.parseHookInput(raw);
}

/** The session's folder: the input's `cwd` when it is an existing folder (a hook never creates one), else ours. */
export function hookCwd(input: HookInput): string {
  if (input.cwd) {
    try {
      if (statSync(input.cwd).isDirectory()) return input.cwd;
    } catch {}
  }
  return process.cwd();
}

export type HookOutput = NeutralHookOutput;

/** UserPromptSubmit's budget (hooks.json gives it 5 s); the synthesize mode gives its model what is left of it. */
export const PROMPT_HOOK_BUDGET_MS = 4_500;

/** Claude Code caps injected text at 10,000 characters; stay under with room to spare. */
export const CONTEXT_LIMIT = 9_500;
const STDIN_LIMIT = 16 * 1024 * 1024;

/** Read stdin as JSON; empty, garbage, huge or a never-closing stdin all give {}. */
export async function readHookInput(timeoutMs = 2_000, agent: AgentAdapter = agentOrDefault()): Promise<{ input: HookInput; problem?: string }> {
  const none = { agent: agent.name };
  if (isTerminal(0)) return { input: none, problem: "no hook input on stdin" };
  const { bytes, tooLarge, timedOut } = await readStdin(STDIN_LIMIT, timeoutMs);
  if (tooLarge) return { input: none, problem: `hook input larger than ${STDIN_LIMIT} bytes` };
  const text = new TextDecoder().decode(bytes).trim();
  if (!text) return { input: none, problem: timedOut ? "hook input did not arrive in time" : "empty hook input" };
  try {
    const v = JSON.parse(text);
    if (v && typeof v === "object" && !Array.isArray(v)) return { input: parseHookInput(v, agent) };
    return { input: none, problem: "hook input is not a JSON object" };
  } catch {
    return { input: none, problem: "hook input is not valid JSON" };
  }
}

/** Where debugLog writes: one file a day (UTC), `hooks-YYYY-MM-DD.log`. */
export function debugLogDir(env = process.env): string {
  return userFiles(env).logsDir;
}

export function debugEnabled(env = process.env): boolean {
  return !!env.MEMSEARCH_DEBUG && env.MEMSEARCH_DEBUG !== "0";
}

/** MEMSEARCH_DEBUG=1 → one line per step in ~/.memsearch/logs/hooks-YYYY-MM-DD.log. */
export function debugLog(event: string, what: string, data?: unknown): void {
  if (!debugEnabled()) return;
  try {
    const dir = debugLogDir();
    mkdirSync(dir, { recursive: true });
    const day = new Date().toISOString().slice(0, 10);
    // The log holds prompts and replies: it gets the same redaction as the notes.
    const text = typeof data === "string" ? sanitize(data) : JSON.stringify(data, (_k, v) => (typeof v === "string" ? sanitize(v) : v));
    const payload = data === undefined ? "" : " " + clip(text, 4000);
    appendOwnFile(join(dir, `hooks-${day}.log`), `${new Date().toISOString()} [${process.pid}] ${event} ${what}${payload}\n`);
  } catch {
    // A log that cannot be written must not break the hook.
  }
}

/**
 * Run a hook: whatever happens (exception, hang past the budget) print exactly one JSON
 * object and exit 0, so Claude Code never shows a hook error.
 */
export async function runHook(event: string, budgetMs: number, body: (input: HookInput) => Promise<HookOutput>, agent: AgentAdapter = agentOrDefault()): Promise<void> {
  let written = false;
  const emit = (out: HookOutput, why: string) => {
    if (written) return;
    written = true;
    const shaped = agent.formatOutput(out);
    debugLog(event, `output (${why})`, shaped);
    try {
      writeOut(JSON.stringify(shaped) + "\n");
    } catch (e) {
      // A stdout that fails (EIO, a full disk) has nobody left to tell: the exit stays 0.
      debugLog(event, "output failed", oneLine(e));
    }
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
    const { input, problem } = await readHookInput(Math.min(2_000, budgetMs / 2), agent);
    debugLog(event, "input", problem ? { problem } : input);
    const out = await body(input);
    emit(out, "ok");
  } catch (e) {
    debugLog(event, "error", oneLine(e));
    emit(e instanceof UnsafeDataError && NOTICE_EVENTS.has(event) ? { systemMessage: unsafeDataNotice(e) } : {}, "error");
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The events that tell the user when the data folder is refused: the session's status line, and
 * each turn that is not remembered. The prompt hook stays quiet (it would say it twice a turn).
 */
const NOTICE_EVENTS = new Set(["session-start", "stop"]);

/** The one status-line notice of a refused data folder. */
export function unsafeDataNotice(e: UnsafeDataError): string {
  return `[memsearch v${pkg.version}] WARNING: ${oneLine(e)}`;
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
  makeDataDir(dataDir);
  // A watch process takes a moment to claim the project: hooks of several sessions starting
  // together leave the start to the first (and its log to it, untruncated).
  const files = dataFiles(dataDir);
  const starting = claimStart(files.watchStarting);
  if (!starting.claimed) return { started: false, pid: starting.pid };
  let child;
  try {
    const log = freshFile(files.watchLog);
    const [cmd, ...args] = selfCommand();
    child = spawn(cmd!, [...args, "watch"], {
      cwd,
      detached: true,
      stdio: ["ignore", log, log],
      // MEMSEARCH_WATCH_OWNER=hooks: this watch exits by itself once no Claude Code session of the project is alive.
      env: { ...process.env, MEMSEARCH_DIR: dataDir, MEMSEARCH_DEBUG: process.env.MEMSEARCH_DEBUG ?? "", MEMSEARCH_WATCH_OWNER: "hooks" },
    });
    child.unref();
  } catch (e) {
    releaseStart(files.watchStarting);
    throw e;
  }
  if (child.pid === undefined) releaseStart(files.watchStarting);
  else markStarting(files.watchStarting, child.pid);
  return { started: true, pid: child.pid };
}

// ---------------------------------------------------------------------------------------------
// Problems a background hook met, shown in the next SessionStart status line.

function problemsFile(dataDir: string): string {
  return dataFiles(dataDir).hookProblems;
}

export function recordProblem(dataDir: string, message: string): void {
  try {
    makeDataDir(dataDir);
    atomicWrite(problemsFile(dataDir), JSON.stringify({ at: new Date().toISOString(), message: oneLine(message) }));
  } catch {}
}

const ProblemShape = v.object({ message: v.string() });

export function takeProblem(dataDir: string): string | undefined {
  const r = readJson(problemsFile(dataDir), ProblemShape);
  if ("missing" in r) return undefined;
  try {
    rmSync(problemsFile(dataDir), { force: true });
  } catch {}
  return "value" in r ? r.value.message : undefined;
}
