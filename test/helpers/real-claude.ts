/**
 * Runs the real Claude Code CLI (2.1.328, from the agents' cache: scripts/agents.ts) against the local Messages API
 * stand-in of ./anthropic-mock.ts, with an isolated temporary HOME, never the real one.
 *
 *   runPrint(opts)          `claude -p` (prompt on stdin) → exit code, stdout, stderr, duration
 *   startInteractive(opts)  a session in a pseudo-terminal (Bun's built-in PTY): submit prompts,
 *                           wait for replies, `/exit`, wait for the end
 *   hookTimings(debugFile)  the hook timings Claude Code itself wrote to its debug log
 *
 * Every process started here carries MEMSEARCH_HARNESS_RUN=<id> in its environment, inherited by
 * hooks and anything they spawn, so `leftovers(id)` / `killLeftovers(id)` find survivors even after
 * they were re-parented to init.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import type { MockApi, MockRequest } from "./anthropic-mock.ts";
import { AGENTS_HINT, agentModules } from "./agents.ts";

export const REPO = resolve(import.meta.dir, "../..");
// The platform package's native binary: the wrapper's bin/claude.exe is only a stub until its
// postinstall copies the binary over it, and npm may be set to skip install scripts.
const NATIVE = join(agentModules(), "@anthropic-ai", `claude-code-${process.platform}-${process.arch}`, "claude");
export const CLAUDE_BIN = process.env.MEMSEARCH_REAL_CLAUDE ?? (existsSync(NATIVE) ? NATIVE : join(agentModules(), ".bin", "claude"));
export const DEFAULT_API_KEY = "sk-ant-api03-memsearch-offline-test-key-0123456789abcdefghij";

/** The real client is pinned in scripts/agents/ (the test command installs it): its absence fails the tests that need it. */
export function assertRealClaude(): void {
  if (!existsSync(CLAUDE_BIN)) throw new Error(`no Claude Code CLI at ${CLAUDE_BIN}: ${AGENTS_HINT}`);
}

// ---------------------------------------------------------------------------------------------
// Home and environment

export interface HomeOptions {
  /** Project directories to mark as trusted (the trust dialog is skipped for them). */
  projectDirs?: string[];
  apiKey?: string;
  /** Use this directory instead of a new temp dir. */
  home?: string;
  /** Written as ~/.claude/settings.json (user settings, e.g. { env: {...}, hooks: {...} }); none by default. */
  settings?: Record<string, unknown>;
}

/**
 * A temporary HOME with `~/.claude.json` pre-seeded so that onboarding, the API-key question and the
 * trust dialog are all skipped. Returns the HOME path.
 */
export function makeClaudeHome(opts: HomeOptions = {}): string {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "rc-home-"));
  if (resolve(home) === resolve(userInfo().homedir)) throw new Error(`refusing to use the real home ${home}`);
  mkdirSync(join(home, ".claude"), { recursive: true });
  const key = opts.apiKey ?? DEFAULT_API_KEY;
  const projects: Record<string, unknown> = {};
  for (const dir of opts.projectDirs ?? []) {
    projects[dir] = { allowedTools: [], hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, projectOnboardingSeenCount: 1 };
  }
  const file = join(home, ".claude.json");
  let existing: Record<string, any> = {};
  if (existsSync(file)) {
    try {
      existing = JSON.parse(readFileSync(file, "utf8"));
    } catch {}
  }
  const config = {
    ...existing,
    hasCompletedOnboarding: true,
    lastOnboardingVersion: "2.1.328",
    customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
    projects: { ...(existing.projects ?? {}), ...projects },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  if (opts.settings) writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify(opts.settings, null, 2));
  return home;
}

/** Marks one more project directory as trusted in an existing home. */
export function trustProject(home: string, projectDir: string): void {
  makeClaudeHome({ home, projectDirs: [projectDir] });
}

// Variables of the surrounding session that must not reach the client under test.
const DROP = /^(ANTHROPIC_|CLAUDE|MEMSEARCH_|OTEL_|AWS_|GOOGLE_|VERTEX_|BEDROCK_)|^(NODE_OPTIONS|DEBUG)$/;

/** The environment for the client: the current one minus Anthropic/Claude variables, plus the test's. */
export function claudeEnv(opts: { apiUrl: string; home: string; apiKey?: string; runId: string; env?: Record<string, string | undefined> }): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !DROP.test(k)) env[k] = v;
  Object.assign(env, {
    HOME: opts.home,
    ANTHROPIC_BASE_URL: opts.apiUrl,
    ANTHROPIC_API_KEY: opts.apiKey ?? DEFAULT_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    // Not ours to write: keep the client's own auto-memory out of the way of what tests inspect.
    CLAUDE_CODE_DISABLE_AUTO_MEMORY: "1",
    MEMSEARCH_HARNESS_RUN: opts.runId,
    // No real Ollama here; anything that forgets to set a host hits a closed port.
    OLLAMA_HOST: process.env.OLLAMA_HOST ?? "http://127.0.0.1:9",
  });
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

// ---------------------------------------------------------------------------------------------
// Processes

/** Pids of running processes whose environment holds MEMSEARCH_HARNESS_RUN=<runId>. */
export function leftovers(runId: string): number[] {
  const needle = `MEMSEARCH_HARNESS_RUN=${runId}\0`;
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "latin1");
      if (!(environ + "\0").includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state !== "Z") out.push(Number(name));
    } catch {}
  }
  return out;
}

/** SIGKILLs every leftover of a run; returns the pids it found. */
export function killLeftovers(runId: string): number[] {
  const pids = leftovers(runId);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  return pids;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {}
  }
}

// ---------------------------------------------------------------------------------------------
// Common options

export interface ClaudeRunOptions {
  /** The mock (or any object with its url). */
  api: Pick<MockApi, "url">;
  /** Working directory; default a new temp dir. It is trusted in the home. */
  projectDir?: string;
  /** `--plugin-dir`; omitted when undefined. */
  pluginDir?: string;
  /** HOME to use (seeded if needed); default a new temp dir. */
  home?: string;
  apiKey?: string;
  /** Extra CLI arguments, e.g. ["--allowedTools", "Bash"] or ["--permission-mode", "bypassPermissions"]. */
  args?: string[];
  /** Extra environment (undefined deletes a variable). */
  env?: Record<string, string | undefined>;
  /** User settings written to <home>/.claude/settings.json. */
  settings?: Record<string, unknown>;
  /** Debug log path (`--debug-file`); default `<home>/claude-debug.txt`; false: no debug log. */
  debugFile?: string | false;
  /** Hard limit: the process group and every leftover are SIGKILLed after it (-p 90 s, interactive 180 s). */
  timeoutMs?: number;
}

interface Prepared {
  runId: string;
  home: string;
  projectDir: string;
  debugFile?: string;
  cmd: string[];
  env: Record<string, string>;
}

function prepare(opts: ClaudeRunOptions, mode: string[]): Prepared {
  const projectDir = opts.projectDir ?? mkdtempSync(join(tmpdir(), "rc-proj-"));
  const home = makeClaudeHome({ home: opts.home, projectDirs: [projectDir], apiKey: opts.apiKey, settings: opts.settings });
  const runId = crypto.randomUUID();
  const debugFile = opts.debugFile === false ? undefined : (opts.debugFile ?? join(home, "claude-debug.txt"));
  const cmd = [CLAUDE_BIN, ...mode];
  if (opts.pluginDir) cmd.push("--plugin-dir", opts.pluginDir);
  if (debugFile) cmd.push("--debug-file", debugFile);
  cmd.push(...(opts.args ?? []));
  // `claude` on PATH is the real client, for whatever a hook spawns (memsearch's summariser).
  const binDir = join(home, ".rc-bin");
  mkdirSync(binDir, { recursive: true });
  if (!existsSync(join(binDir, "claude"))) symlinkSync(CLAUDE_BIN, join(binDir, "claude"));
  const env = claudeEnv({ apiUrl: opts.api.url, home, apiKey: opts.apiKey, runId, env: { PATH: `${binDir}:${process.env.PATH ?? "/usr/bin:/bin"}`, ...opts.env } });
  return { runId, home, projectDir, debugFile, cmd, env };
}

// ---------------------------------------------------------------------------------------------
// claude -p

export interface PrintOptions extends ClaudeRunOptions {
  /** Sent on stdin (flags such as --allowedTools would swallow a positional prompt). */
  prompt: string;
}

export interface PrintResult {
  exitCode: number | null;
  signalCode: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  pid: number;
  runId: string;
  home: string;
  projectDir: string;
  debugFile?: string;
}

/**
 * `claude -p [--plugin-dir] [--debug-file] [...args]` with the prompt on stdin, cwd = projectDir,
 * in its own process group (killed with SIGKILL on timeout, default 90 s).
 */
export async function runPrint(opts: PrintOptions): Promise<PrintResult> {
  const p = prepare(opts, ["-p"]);
  const started = performance.now();
  const proc = Bun.spawn(p.cmd, {
    cwd: p.projectDir,
    env: p.env,
    stdin: new TextEncoder().encode(opts.prompt),
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(proc.pid, "SIGKILL");
    killLeftovers(p.runId);
  }, opts.timeoutMs ?? 90_000);
  try {
    const out = new Response(proc.stdout).text();
    const err = new Response(proc.stderr).text();
    await proc.exited;
    // A descendant that kept the client's stdout open must not hang the test.
    const late = (p: Promise<string>) => Promise.race([p, Bun.sleep(2_000).then(() => "")]);
    const [stdout, stderr] = await Promise.all([late(out), late(err)]);
    return {
      exitCode: proc.exitCode,
      signalCode: proc.signalCode === null ? null : String(proc.signalCode),
      stdout,
      stderr,
      durationMs: Math.round(performance.now() - started),
      timedOut,
      pid: proc.pid,
      runId: p.runId,
      home: p.home,
      projectDir: p.projectDir,
      debugFile: p.debugFile,
    };
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Interactive, in a pseudo-terminal

/** Terminal output as one stream of text: cursor moves become spaces or newlines, escapes go. */
export function stripAnsi(raw: string): string {
  return Bun.stripANSI(
    raw
      .replace(/\x1b\[(\d*)C/g, (_, n) => " ".repeat(Math.min(Number(n || 1), 4)))
      .replace(/\x1b\[\d*G/g, " ")
      .replace(/\x1b\[\d*(?:;\d*)?[Hf]/g, "\n")
      .replace(/\x1b\[\d*[ABEF]/g, "\n"),
  ).replace(/\r/g, "");
}

/**
 * A minimal terminal emulator, enough for Claude Code's Ink renderer: printable text, CR/LF/BS/TAB,
 * CSI cursor moves (A B C D E F G H f d), erases (J K), scrolling, save/restore, the alternate
 * screen; colours, modes and OSC strings are ignored. `lines()` is what a person would see.
 */
export class VirtualScreen {
  private grid: string[][];
  private r = 0;
  private c = 0;
  private saved: [number, number] = [0, 0];
  private pending = "";
  private mainGrid?: string[][];
  private mainCursor: [number, number] = [0, 0];
  /** The alternate screen as it was when the program left it (Claude Code leaves it at exit). */
  lastAlt?: string[];
  /** Lines scrolled off the top (only when output scrolls the main screen). */
  readonly scrollback: string[] = [];
  constructor(
    readonly cols: number,
    readonly rows: number,
  ) {
    this.grid = this.blank();
  }
  private blank(): string[][] {
    return Array.from({ length: this.rows }, () => Array<string>(this.cols).fill(" "));
  }
  private lineDown(): void {
    if (this.r < this.rows - 1) this.r++;
    else {
      this.scrollback.push(this.grid.shift()!.join("").trimEnd());
      this.grid.push(Array<string>(this.cols).fill(" "));
    }
  }
  private clampR(): void {
    this.r = Math.max(0, Math.min(this.rows - 1, this.r));
    this.c = Math.max(0, Math.min(this.cols - 1, this.c));
  }
  feed(data: string): void {
    const s = this.pending + data;
    this.pending = "";
    let i = 0;
    while (i < s.length) {
      const ch = s[i]!;
      if (ch === "\x1b") {
        const rest = s.slice(i);
        let m: RegExpExecArray | null;
        if ((m = /^\x1b\[([?>=!<]?)([\d;:]*)([ -\/]*)([@-~])/.exec(rest))) {
          this.csi(m[1]!, m[2]!, m[4]!);
          i += m[0].length;
        } else if ((m = /^\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\)/.exec(rest))) {
          i += m[0].length;
        } else if (/^\x1b(?:\[[\d;:?>=!<]*[ -\/]*|[\]PX^_][\s\S]*)?$/.test(rest)) {
          this.pending = rest; // incomplete: wait for more
          return;
        } else {
          const k = rest[1];
          if (k === "7") this.saved = [this.r, this.c];
          else if (k === "8") [this.r, this.c] = this.saved;
          else if (k === "M") this.r = Math.max(0, this.r - 1);
          else if (k === "c") {
            this.grid = this.blank();
            this.r = this.c = 0;
          }
          i += /^\x1b[()#%][\s\S]/.test(rest) ? 3 : 2;
        }
        continue;
      }
      const code = ch.codePointAt(0)!;
      const char = String.fromCodePoint(code);
      i += char.length;
      if (ch === "\r") this.c = 0;
      else if (ch === "\n") this.lineDown();
      else if (ch === "\b") this.c = Math.max(0, this.c - 1);
      else if (ch === "\t") this.c = Math.min(this.cols - 1, (Math.floor(this.c / 8) + 1) * 8);
      else if (code < 0x20 || code === 0x7f) continue;
      else {
        const w = Bun.stringWidth(char);
        if (w === 0) continue;
        if (this.c + w > this.cols) {
          this.c = 0;
          this.lineDown();
        }
        this.grid[this.r]![this.c] = char;
        if (w === 2 && this.c + 1 < this.cols) this.grid[this.r]![this.c + 1] = "";
        this.c += w;
      }
    }
  }
  private csi(priv: string, params: string, final: string): void {
    const ps = params.split(/[;:]/).map((x) => (x === "" ? NaN : Number(x)));
    const n = (k = 0, d = 1) => (Number.isNaN(ps[k]!) || ps[k] === undefined ? d : ps[k]!);
    if (priv === "?") {
      if ((final === "h" || final === "l") && [47, 1047, 1049].includes(n(0, 0))) {
        if (final === "h" && !this.mainGrid) {
          this.mainGrid = this.grid;
          this.mainCursor = [this.r, this.c];
          this.grid = this.blank();
        } else if (final === "l" && this.mainGrid) {
          this.lastAlt = this.lines();
          this.grid = this.mainGrid;
          [this.r, this.c] = this.mainCursor;
          this.mainGrid = undefined;
        }
      }
      return;
    }
    if (priv) return;
    switch (final) {
      case "A": this.r -= n(); break;
      case "B": case "e": this.r += n(); break;
      case "C": case "a": this.c += n(); break;
      case "D": this.c -= n(); break;
      case "E": this.r += n(); this.c = 0; break;
      case "F": this.r -= n(); this.c = 0; break;
      case "G": case "`": this.c = n() - 1; break;
      case "d": this.r = n() - 1; break;
      case "H": case "f": this.r = n(0) - 1; this.c = n(1) - 1; break;
      case "J": {
        const mode = n(0, 0);
        if (mode === 2 || mode === 3) this.grid = this.blank();
        else if (mode === 0) {
          this.grid[this.r]!.fill(" ", this.c);
          for (let r = this.r + 1; r < this.rows; r++) this.grid[r]!.fill(" ");
        } else {
          for (let r = 0; r < this.r; r++) this.grid[r]!.fill(" ");
          this.grid[this.r]!.fill(" ", 0, this.c + 1);
        }
        break;
      }
      case "K": {
        const mode = n(0, 0);
        const row = this.grid[this.r]!;
        if (mode === 0) row.fill(" ", this.c);
        else if (mode === 1) row.fill(" ", 0, this.c + 1);
        else row.fill(" ");
        break;
      }
      case "S": for (let k = 0; k < n(); k++) { this.grid.shift(); this.grid.push(Array<string>(this.cols).fill(" ")); } break;
      case "T": for (let k = 0; k < n(); k++) { this.grid.pop(); this.grid.unshift(Array<string>(this.cols).fill(" ")); } break;
      case "s": this.saved = [this.r, this.c]; break;
      case "u": [this.r, this.c] = this.saved; break;
      default: return;
    }
    this.clampR();
  }
  /** The visible lines, right-trimmed. */
  lines(): string[] {
    return this.grid.map((row) => row.join("").trimEnd());
  }
  /** The visible screen as text. */
  text(): string {
    return this.lines().join("\n");
  }
}

export interface InteractiveOptions extends ClaudeRunOptions {
  /** The mock itself: turn waits use its record of answered requests. */
  api: MockApi;
  cols?: number;
  rows?: number;
}

export interface InteractiveSession {
  pid: number;
  runId: string;
  home: string;
  projectDir: string;
  debugFile?: string;
  /** Everything the client wrote to the terminal, raw. */
  raw(): string;
  /** The same without ANSI escapes, as one stream (see stripAnsi). */
  text(): string;
  /**
   * What the terminal shows now (see VirtualScreen). Claude Code draws in the alternate screen and
   * leaves it at exit; after that this is the alternate screen as it was last shown.
   */
  screen(): string;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number>;
  /** Writes bytes to the terminal as they are (e.g. "\x1b" for Escape). */
  write(data: string): void;
  /**
   * Waits until `pattern` is on the screen now, or in the (ANSI-stripped) output written after
   * `since` (a raw-output offset, default 0).
   */
  waitForText(pattern: string | RegExp, opts?: { timeoutMs?: number; since?: number }): Promise<void>;
  /** Waits until the terminal has been quiet for `quietMs` (default 400). */
  settle(quietMs?: number, timeoutMs?: number): Promise<void>;
  /** Waits until the prompt box is ready for input (startup done). */
  ready(timeoutMs?: number): Promise<void>;
  /** Types `text` and presses Enter. */
  submit(text: string): Promise<void>;
  /**
   * Submits a prompt and waits until the mock has answered this turn's final (end_turn) main-model
   * request, `expectText` (if given) is shown, the turn's "· done" footer was drawn (best effort, 5 s)
   * and the screen settled; returns that request.
   */
  ask(prompt: string, opts?: { timeoutMs?: number; expectText?: string | RegExp }): Promise<MockRequest>;
  /** Types /exit + Enter and waits for the process to end (SIGKILL of its group on timeout). */
  exit(timeoutMs?: number): Promise<{ exitCode: number | null; signalCode: string | null; durationMs: number; timedOut: boolean }>;
  /** SIGKILLs the process group and every leftover of the run. */
  kill(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `claude` in a pseudo-terminal in projectDir; call `ready()` before typing. */
export function startInteractive(opts: InteractiveOptions): InteractiveSession {
  const p = prepare(opts, []);
  const decoder = new TextDecoder();
  let raw = "";
  let lastData = Date.now();
  const cols = opts.cols ?? 120;
  const rows = opts.rows ?? 40;
  const vt = new VirtualScreen(cols, rows);
  const started = performance.now();
  const proc = Bun.spawn(p.cmd, {
    cwd: p.projectDir,
    env: { ...p.env, TERM: "xterm-256color" },
    terminal: {
      cols,
      rows,
      data(_term, chunk) {
        const s = decoder.decode(chunk, { stream: true });
        raw += s;
        vt.feed(s);
        lastData = Date.now();
      },
    },
  });
  const term = proc.terminal!;
  let ended = false;
  const exited = proc.exited.then((code) => {
    ended = true;
    return code;
  });
  const guard = setTimeout(() => session.kill(), opts.timeoutMs ?? 180_000);
  exited.finally(() => clearTimeout(guard));

  const session: InteractiveSession = {
    pid: proc.pid,
    runId: p.runId,
    home: p.home,
    projectDir: p.projectDir,
    debugFile: p.debugFile,
    raw: () => raw,
    text: () => stripAnsi(raw),
    screen: () => (ended && vt.lastAlt ? vt.lastAlt.join("\n") : vt.text()),
    exited,
    write(data) {
      if (!term.closed) term.write(data);
    },
    async waitForText(pattern, o = {}) {
      const deadline = Date.now() + (o.timeoutMs ?? 30_000);
      const test = (s: string) => (typeof pattern === "string" ? s.includes(pattern) : pattern.test(s));
      const seen = () => {
        const lines = vt.lines();
        return test(lines.join("\n")) || test(lines.map((l) => l.trim()).join(" ")) || test(stripAnsi(raw.slice(o.since ?? 0)));
      };
      while (!seen()) {
        if (ended) throw new Error(`claude ended before showing ${pattern}; screen:\n${vt.text()}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; screen:\n${vt.text()}`);
        await sleep(50);
      }
    },
    async settle(quietMs = 400, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() - lastData < quietMs && Date.now() < deadline && !ended) await sleep(50);
    },
    async ready(timeoutMs = 30_000) {
      // The prompt box's footer; then let the first paint finish.
      await session.waitForText(/❯|for shortcuts|shift\+tab to cycle/, { timeoutMs });
      await session.settle(300);
    },
    async submit(text) {
      // Typed in pieces, as a person would, so the input is not taken for a paste.
      for (const piece of text.match(/.{1,8}/gsu) ?? []) {
        session.write(piece);
        await sleep(15);
      }
      await sleep(150);
      session.write("\r");
    },
    async ask(prompt, o = {}) {
      const before = opts.api.finishedTurns().length;
      const asked = opts.api.main().length;
      const since = raw.length;
      await session.submit(prompt);
      // On a loaded machine the client may still be taking in the typed text when Enter comes, and
      // drop it: a prompt still in the input box with no request after a while gets Enter again,
      // as a person would press it again. Never more than twice, and never once a request came.
      const typed = prompt.slice(0, 24);
      for (let again = 0; again < 2; again++) {
        const deadline = Date.now() + 8_000;
        while (opts.api.main().length === asked && Date.now() < deadline && !ended) await sleep(100);
        if (opts.api.main().length > asked || ended) break;
        if (!vt.lines().some((l) => l.includes("❯") && l.includes(typed))) break;
        session.write("\r");
      }
      const req = await opts.api.waitForTurns(before + 1, o.timeoutMs ?? 60_000);
      if (o.expectText) await session.waitForText(o.expectText, { since, timeoutMs: o.timeoutMs ?? 30_000 });
      // 2.1.328 ends a turn's output with "✻ <Verb> for 0s · done 10:53 AM"; best effort.
      await session.waitForText(/· done \d/, { since, timeoutMs: 5_000 }).catch(() => {});
      await session.settle(300);
      return req;
    },
    async exit(timeoutMs = 30_000) {
      if (!ended) await session.submit("/exit");
      let timedOut: boolean = false;
      const timer = setTimeout(() => {
        timedOut = true;
        session.kill();
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
      if (!term.closed) term.close();
      return { exitCode: proc.exitCode, signalCode: proc.signalCode === null ? null : String(proc.signalCode), durationMs: Math.round(performance.now() - started), timedOut };
    },
    kill() {
      killGroup(proc.pid, "SIGKILL");
      killLeftovers(p.runId);
      if (!term.closed) term.close();
    },
  };
  return session;
}

// ---------------------------------------------------------------------------------------------
// The client's debug log

export interface HookTiming {
  /** ISO timestamp of the log line. */
  at: string;
  /** SessionStart, UserPromptSubmit, Stop, SessionEnd, … */
  event: string;
  /** The matcher part after the colon (startup, other, …), if any. */
  matcherValue?: string;
  command: string;
  /** finished | backgrounded | failed-to-start | timed-out | async-finished | async-cancelled | error | completed (SessionEnd: no duration logged) */
  outcome: string;
  status?: number;
  /** Milliseconds as Claude Code logged them; undefined where it logs none. */
  durationMs?: number;
  line: string;
}

/**
 * Hook timings from a Claude Code 2.1.328 debug log (`--debug-file`). Forms it writes:
 *   Hooks: SessionStart:startup [cmd] (plugin p@inline) finished with status 0 (102ms)
 *   Hooks: UserPromptSubmit [cmd] (plugin p@inline) failed to start (2ms)
 *   Hooks: Stop [cmd] (plugin p@inline) moved to the background (2ms)
 *   Hooks: Registering async hook async_hook_<pid> (Stop) with timeout 120000ms
 *   Hooks: Found sync response from async_hook_<pid>: {…}     → outcome "async-finished", duration
 *                                                               measured from the registration line
 *   Hook Stop (Stop) cancelled:                               → outcome "async-cancelled", likewise
 *   SessionEnd:other [cmd] completed with status 0            (no duration logged)
 */
export function hookTimings(debugFileOrText: string): HookTiming[] {
  const text = existsSync(debugFileOrText) ? readFileSync(debugFileOrText, "utf8") : debugFileOrText;
  const out: HookTiming[] = [];
  const pendingAsync = new Map<string, { event: string; at: string; command: string }>();
  let lastBackgrounded: { event: string; command: string } | undefined;
  const ms = (a: string, b: string) => Date.parse(b) - Date.parse(a);
  for (const line of text.split("\n")) {
    const at = line.slice(0, 24);
    let m = /\] Hooks: ([A-Za-z]+)(?::(\S+))? \[(.*)\] \(plugin [^)]*\) (finished with status (-?\d+)|moved to the background|failed to start|timed out[^(]*|[^(]+?) \((\d+)ms\)$/.exec(line);
    if (m) {
      const o = m[4]!;
      const outcome = o.startsWith("finished") ? "finished" : o.startsWith("moved") ? "backgrounded" : o.startsWith("failed") ? "failed-to-start" : o.startsWith("timed out") ? "timed-out" : o;
      out.push({ at, event: m[1]!, matcherValue: m[2], command: m[3]!, outcome, status: m[5] !== undefined ? Number(m[5]) : undefined, durationMs: Number(m[6]), line });
      if (outcome === "backgrounded") lastBackgrounded = { event: m[1]!, command: m[3]! };
      continue;
    }
    m = /\] Hooks: Registering async hook (\S+) \((\w+)\)/.exec(line);
    if (m) {
      pendingAsync.set(m[1]!, { event: m[2]!, at, command: "" });
      continue;
    }
    m = /\] Hooks: Found sync response from (\S+?):/.exec(line);
    if (m && pendingAsync.has(m[1]!)) {
      const p = pendingAsync.get(m[1]!)!;
      pendingAsync.delete(m[1]!);
      out.push({ at, event: p.event, command: m[1]!, outcome: "async-finished", durationMs: ms(p.at, at), line });
      continue;
    }
    m = /\] Hook (\w+) \(\w+\) cancelled/.exec(line);
    if (m) {
      const entry = [...pendingAsync.entries()].find(([, p]) => p.event === m![1]);
      if (entry) pendingAsync.delete(entry[0]);
      out.push({ at, event: m[1]!, command: entry?.[0] ?? lastBackgrounded?.command ?? "", outcome: "async-cancelled", durationMs: entry ? ms(entry[1].at, at) : undefined, line });
      continue;
    }
    m = /\] Hook (\w+)(?::(\S+))? \(\w+\) error: status code (-?\d+)/.exec(line);
    if (m) {
      const entry = [...pendingAsync.entries()].find(([, p]) => p.event === m![1]);
      if (entry) pendingAsync.delete(entry[0]);
      out.push({ at, event: m[1]!, matcherValue: m[2], command: entry?.[0] ?? "", outcome: "error", status: Number(m[3]), durationMs: entry ? ms(entry[1].at, at) : undefined, line });
      continue;
    }
    m = /\] ([A-Za-z]+)(?::(\S+))? \[(.*)\] completed with status (-?\d+)/.exec(line);
    if (m) out.push({ at, event: m[1]!, matcherValue: m[2], command: m[3]!, outcome: "completed", status: Number(m[4]), line });
  }
  return out;
}

/** The session transcript(s) the client wrote under `home` (for the given project dir, if given). */
export function transcriptFiles(home: string, projectDir?: string): string[] {
  const root = join(home, ".claude", "projects");
  if (!existsSync(root)) return [];
  const dirs = projectDir ? [projectDir.replace(/[^A-Za-z0-9]/g, "-")] : readdirSync(root);
  const out: string[] = [];
  for (const d of dirs) {
    const dir = join(root, d);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.endsWith(".jsonl")) out.push(join(dir, f));
  }
  return out;
}

/** Parsed lines of a transcript file. */
export function readTranscript(path: string): any[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return { type: "<unparsable>", raw: l };
      }
    });
}

/**
 * Hook results the client recorded in the transcript as attachments (`hook_success`,
 * `hook_non_blocking_error`, …, with `durationMs`; 2.1.328 writes them for SessionStart only) and
 * the `additionalContext` it stored (`hook_additional_context`).
 */
export function transcriptHookRecords(path: string): { type: string; hookEvent: string; hookName?: string; durationMs?: number; exitCode?: number; content?: unknown }[] {
  return readTranscript(path)
    .filter((l) => l.type === "attachment" && typeof l.attachment?.type === "string" && l.attachment.type.startsWith("hook_"))
    .map((l) => ({
      type: l.attachment.type,
      hookEvent: l.attachment.hookEvent,
      hookName: l.attachment.hookName,
      durationMs: l.attachment.durationMs,
      exitCode: l.attachment.exitCode,
      content: l.attachment.content,
    }));
}
