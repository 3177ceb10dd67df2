import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

export const REPO = resolve(import.meta.dir, "../..");
export const BIN = process.env.MEMSEARCH_BIN ?? join(REPO, "dist", "memsearch");

/** What a run of a process gave; the fault suite (test/fault/helpers.ts) reads `hung` and `ms` too. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Killed at its time limit. */
  hung: boolean;
  ms: number;
}

type Env = Record<string, string | undefined>;

/** An environment for Bun.spawn over this process's own: `undefined` means "unset", which spawn itself does not understand. */
export function spawnEnv(...layers: Env[]): Record<string, string> {
  return exactEnv(Object.assign({}, process.env, ...layers) as Env);
}

/** The environment as given, and nothing of this process's: its unset (`undefined`) keys left out. */
export function exactEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** Run a command in a fresh process, stdout and stderr collected as text; SIGKILL after `timeoutMs` (then `hung`). */
export async function runProcess(cmd: string[], opts: { cwd: string; env: Record<string, string>; stdin?: string | Uint8Array; timeoutMs: number }): Promise<RunResult> {
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "ignore" : typeof opts.stdin === "string" ? new TextEncoder().encode(opts.stdin) : opts.stdin,
    stdout: "pipe",
    stderr: "pipe",
  });
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    proc.kill(9);
  }, opts.timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr, hung, ms: performance.now() - t0 };
}

/** Run the compiled binary the way a user (or Claude Code) would: a fresh process, `env` over this process's own. */
export function run(args: string[], opts: { cwd: string; env?: Env; stdin?: string; timeoutMs?: number }): Promise<RunResult> {
  return runProcess([BIN, ...args], { cwd: opts.cwd, env: spawnEnv(opts.env ?? {}), stdin: opts.stdin, timeoutMs: opts.timeoutMs ?? 30_000 });
}

/**
 * What keeps a run of the binary off the user's own files and services: its own HOME (and so its
 * own ~/.memsearch), no Ollama, no data folder or project named by the environment.
 */
export function isolatedEnv(home: string): Env {
  return { HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), OLLAMA_HOST: "http://127.0.0.1:9", MEMSEARCH_DIR: undefined, CLAUDE_PROJECT_DIR: undefined };
}

/** The sample memory (6 chunks in 2 files) copied into `memory`. */
export function copySampleMemory(memory: string): void {
  cpSync(join(REPO, "sample", "memory"), memory, { recursive: true });
}

export interface Project {
  root: string;
  home: string;
  memory: string;
  env: Env;
  /** The binary in the project, with `extra` over the project's environment. */
  ms(args: string[], extra?: Env, stdin?: string): Promise<RunResult>;
}

export interface ProjectOptions {
  /**
   * What `.memsearch/memory` holds: the sample memory (default: 6 chunks in 2 files), nothing (no
   * folder at all), or these files (name → content).
   */
  notes?: "sample" | "none" | Record<string, string | Uint8Array>;
  /** Over the project's own environment, for every `ms` call. */
  env?: Env;
}

/**
 * A temporary git project with its own HOME (and so its own ~/.memsearch), never the user's:
 * every test builds the one it needs, so none depends on another having run.
 */
export function tempProject(opts: ProjectOptions = {}): Project {
  const root = mkdtempSync(join(tmpdir(), "ms-proj-"));
  mkdirSync(join(root, ".git"));
  const memory = join(root, ".memsearch", "memory");
  const notes = opts.notes ?? "sample";
  if (notes === "sample") copySampleMemory(memory);
  else if (notes !== "none") {
    mkdirSync(memory, { recursive: true });
    for (const [name, content] of Object.entries(notes)) {
      mkdirSync(dirname(join(memory, name)), { recursive: true });
      writeFileSync(join(memory, name), content);
    }
  }
  const home = mkdtempSync(join(tmpdir(), "ms-home-"));
  const env: Env = { ...isolatedEnv(home), ...opts.env };
  return { root, home, memory, env, ms: (args, extra = {}, stdin) => run(args, { cwd: root, env: { ...env, ...extra }, stdin }) };
}

/** A temp project whose memory is already indexed (keyword search only unless `env` names an Ollama). */
export async function indexedProject(opts: ProjectOptions = {}): Promise<Project> {
  const p = tempProject(opts);
  const r = await p.ms(["index"]);
  if (r.code !== 0) throw new Error(`index of a new temp project failed (${r.code}): ${r.stderr}`);
  return p;
}

/** The two daily files of the sample memory, concatenated: to prove a command left them alone. */
export const sampleSnapshot = (memory: string) => ["2026-11-20.md", "2026-11-21.md"].map((f) => readFileSync(join(memory, f), "utf8")).join("\n");

/**
 * `memsearch watch` in the project, resolved once it has claimed the project (its pid file names
 * it); stopped with SIGKILL by `stop()` unless it already exited.
 */
export async function startWatch(p: Project, extra: Env = {}): Promise<{ proc: Bun.Subprocess<"ignore", "pipe", "pipe">; stop(): Promise<void> }> {
  const proc = Bun.spawn([BIN, "watch"], { cwd: p.root, env: spawnEnv(p.env, extra), stdout: "pipe", stderr: "pipe" });
  const pidFile = join(p.root, ".memsearch", "watch.pid");
  const claimed = () => {
    try {
      return existsSync(pidFile) && JSON.parse(readFileSync(pidFile, "utf8")).pid === proc.pid;
    } catch {
      return false; // written as we read it
    }
  };
  for (let i = 0; i < 150 && !claimed() && proc.exitCode === null; i++) await Bun.sleep(50);
  const stop = async () => {
    if (proc.exitCode === null) proc.kill(9);
    await proc.exited;
  };
  if (!claimed()) {
    await stop();
    throw new Error(`memsearch watch did not claim ${p.root}: ${await new Response(proc.stderr).text()}`);
  }
  return { proc, stop };
}
