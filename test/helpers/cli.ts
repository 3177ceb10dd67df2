import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dir, "../..");
export const BIN = process.env.MEMSEARCH_BIN ?? join(REPO, "dist", "memsearch");

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the compiled binary the way a user (or Claude Code) would: a fresh process. */
export async function run(args: string[], opts: { cwd: string; env?: Record<string, string | undefined>; stdin?: string; timeoutMs?: number }): Promise<RunResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...opts.env })) if (v !== undefined) env[k] = v;
  const proc = Bun.spawn([BIN, ...args], {
    cwd: opts.cwd,
    env,
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(9), opts.timeoutMs ?? 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** A temporary git project holding a copy of the sample memory, with its own HOME. */
export function tempProject(): { root: string; home: string; memory: string; env: Record<string, string | undefined> } {
  const root = mkdtempSync(join(tmpdir(), "ms-proj-"));
  mkdirSync(join(root, ".git"));
  const memory = join(root, ".memsearch", "memory");
  cpSync(join(REPO, "sample", "memory"), memory, { recursive: true });
  const home = mkdtempSync(join(tmpdir(), "ms-home-"));
  return { root, home, memory, env: { HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), OLLAMA_HOST: "http://127.0.0.1:9", MEMSEARCH_DIR: undefined, CLAUDE_PROJECT_DIR: undefined } };
}
