/**
 * Running the real OpenCode CLI (1.18.33: its Linux x64 binary package, `opencode-linux-x64`, an optional dependency pinned in scripts/agents/) offline, as
 * real-codex.ts does for Codex: its native binary exec'd directly, temp HOME and XDG folders, an
 * `@ai-sdk/openai-compatible` provider at the local Chat Completions mock (chat-mock.ts), the
 * switches that leave no traffic but the loopback one, and the prompt on stdin.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { harnessEnv, runAgent, tempHome, type AgentRun } from "./real-agent.ts";
import { AGENTS_HINT, agentModules } from "./agents.ts";

export const REPO = resolve(import.meta.dir, "../..");
export const OPENCODE_BIN = process.env.MEMSEARCH_REAL_OPENCODE ?? join(agentModules(), `opencode-${process.platform}-${process.arch}`, "bin", "opencode");

export function assertRealOpencode(): void {
  if (!existsSync(OPENCODE_BIN)) throw new Error(`the real OpenCode CLI is not installed at ${OPENCODE_BIN}: ${AGENTS_HINT} (opencode-linux-x64 is pinned as an optional dependency: Linux x64 only)`);
}

export interface OpencodeHome {
  home: string;
  config: string;
  data: string;
}

export function makeOpencodeHome(): OpencodeHome {
  const home = tempHome("roc-home-");
  const h = { home, config: join(home, ".config"), data: join(home, ".local", "share") };
  for (const d of [h.config, h.data, join(home, ".cache"), join(home, ".local", "state")]) mkdirSync(d, { recursive: true });
  return h;
}

/** The provider, the model, and no sharing or updates: OpenCode's config given in the environment. */
export function opencodeConfig(apiUrl: string): string {
  return JSON.stringify({
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    model: "mock/mock-model",
    small_model: "mock/mock-model",
    provider: { mock: { npm: "@ai-sdk/openai-compatible", name: "mock", options: { baseURL: apiUrl, apiKey: "offline-test-key" }, models: { "mock-model": { name: "mock-model" } } } },
  });
}

const DROP = /^(OPENAI_|OPENCODE|CODEX_|ANTHROPIC_|CLAUDE|MEMSEARCH_|OTEL_|XDG_)|^(NODE_OPTIONS|DEBUG)$/;

export function opencodeEnv(opts: { h: OpencodeHome; apiUrl: string; runId: string; env?: Record<string, string | undefined> }): Record<string, string> {
  const set = {
    HOME: opts.h.home,
    XDG_CONFIG_HOME: opts.h.config,
    XDG_DATA_HOME: opts.h.data,
    XDG_CACHE_HOME: join(opts.h.home, ".cache"),
    XDG_STATE_HOME: join(opts.h.home, ".local", "state"),
    OPENCODE_CONFIG_CONTENT: opencodeConfig(opts.apiUrl),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    MEMSEARCH_HARNESS_RUN: opts.runId,
    OLLAMA_HOST: "http://127.0.0.1:9",
    // OpenCode installs its plugin package into a fresh config folder at start: refused at once
    // here (a closed port, no retries) instead of retried for a minute or fetched from the network.
    npm_config_registry: "http://127.0.0.1:9/",
    npm_config_fetch_retries: "0",
    npm_config_offline: "true",
  };
  const env = harnessEnv(DROP, set, opts.env);
  // `opencode` on PATH, as for a person who installed it (memsearch install opencode looks for it).
  env.PATH = `${dirname(OPENCODE_BIN)}:${env.PATH ?? "/usr/bin:/bin"}`;
  return env;
}

export type RunResult = AgentRun;

/** `opencode run --format json` in `cwd`, the prompt on stdin (a positional one is stored with quotes). */
export async function opencodeRun(prompt: string, opts: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<RunResult> {
  return runAgent([OPENCODE_BIN, "run", "--format", "json", "--print-logs", "--log-level", "INFO"], { cwd: opts.cwd, env: { ...opts.env, PWD: opts.cwd }, stdin: new TextEncoder().encode(prompt), timeoutMs: opts.timeoutMs ?? 120_000 });
}

export const opencodeDb = (h: OpencodeHome) => join(h.data, "opencode", "opencode.db");
