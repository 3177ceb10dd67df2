/**
 * Running the real Codex CLI (`@openai/codex` 0.169.0, pinned in scripts/agents/) offline, as
 * real-claude.ts does for Claude Code: its native binary exec'd directly (no Node launcher), a temp
 * HOME and CODEX_HOME, a `responses` provider at the local mock (responses-mock.ts), and the flags
 * that leave no traffic but the loopback one (plugins and analytics off).
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { harnessEnv, runAgent, tempHome, type AgentRun } from "./real-agent.ts";
import { AGENTS_HINT, agentModules } from "./agents.ts";

export const REPO = resolve(import.meta.dir, "../..");
const TRIPLE = process.arch === "arm64" ? "aarch64-unknown-linux-musl" : "x86_64-unknown-linux-musl";
export const CODEX_BIN = process.env.MEMSEARCH_REAL_CODEX ?? join(agentModules(), `@openai/codex-${process.platform}-${process.arch}`, "vendor", TRIPLE, "bin", "codex");

export function assertRealCodex(): void {
  if (!existsSync(CODEX_BIN)) throw new Error(`the real Codex CLI is not installed at ${CODEX_BIN}: ${AGENTS_HINT}`);
}

/** A temp HOME whose `.codex/config.toml` sends the model's requests to the mock. */
export function makeCodexHome(apiUrl: string): { home: string; codexHome: string } {
  const home = tempHome("rcx-home-");
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, "config.toml"),
    `# a user's own settings, which install must keep byte for byte
model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "${apiUrl}"
wire_api = "responses"
env_key = "MOCK_KEY"
`,
  );
  return { home, codexHome };
}

// Variables of the surrounding session that must not reach the client under test.
const DROP = /^(OPENAI_|CODEX_|ANTHROPIC_|CLAUDE|MEMSEARCH_|OTEL_)|^(NODE_OPTIONS|DEBUG)$/;

export function codexEnv(opts: { home: string; codexHome: string; runId: string; env?: Record<string, string | undefined> }): Record<string, string> {
  return harnessEnv(DROP, { HOME: opts.home, CODEX_HOME: opts.codexHome, MOCK_KEY: "offline-test-key", MEMSEARCH_HARNESS_RUN: opts.runId, OLLAMA_HOST: "http://127.0.0.1:9" }, opts.env);
}

export type ExecResult = AgentRun;

/** `codex exec "<prompt>"` in `cwd`, stdin closed (exec waits on an open one). */
export async function codexExec(prompt: string, opts: { cwd: string; env: Record<string, string>; bypassTrust?: boolean; timeoutMs?: number }): Promise<ExecResult> {
  const args = [CODEX_BIN, "exec", "--skip-git-repo-check", "--disable", "plugins", "--disable", "remote_plugin", "-c", "analytics.enabled=false", "-s", "danger-full-access"];
  if (opts.bypassTrust) args.push("--dangerously-bypass-hook-trust");
  return runAgent([...args, prompt], { cwd: opts.cwd, env: opts.env, timeoutMs: opts.timeoutMs ?? 60_000 });
}

/** Every rollout Codex wrote under a CODEX_HOME, oldest first. */
export function rollouts(codexHome: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^rollout-.*\.jsonl$/.test(e.name)) out.push(p);
    }
  };
  if (existsSync(join(codexHome, "sessions"))) walk(join(codexHome, "sessions"));
  return out.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs || a.localeCompare(b));
}

/** The hooks Codex reported running, from its stderr (`hook: Stop Completed`). */
export function hooksRan(stderr: string): string[] {
  return [...stderr.matchAll(/^hook: (\w+) Completed/gm)].map((m) => m[1]!);
}
