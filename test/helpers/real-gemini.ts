/**
 * Running the real Gemini CLI (`@google/gemini-cli` 0.61.0, pinned in scripts/agents/) offline, as
 * real-codex.ts does for Codex: its JS bundle under the Node that runs the suite, a temp HOME and
 * GEMINI_CLI_HOME, the model at the local mock (gemini-mock.ts, GOOGLE_GEMINI_BASE_URL), and
 * user settings that turn off what would reach the network (usage statistics, auto-update) and
 * the folder-trust prompt.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { runAgent, tempHome, withOverrides, type AgentRun } from "./real-agent.ts";
import { codexEnv } from "./real-codex.ts";
import { AGENTS_HINT, agentModules } from "./agents.ts";

export const REPO = resolve(import.meta.dir, "../..");
export const GEMINI_JS = process.env.MEMSEARCH_REAL_GEMINI ?? join(agentModules(), "@google", "gemini-cli", "bundle", "gemini.js");
export const GEMINI_MODEL = "gemini-2.5-flash";

export function assertRealGemini(): void {
  if (!existsSync(GEMINI_JS)) throw new Error(`the real Gemini CLI is not installed at ${GEMINI_JS}: ${AGENTS_HINT}`);
  if (!Bun.which("node")) throw new Error("the real Gemini CLI runs under Node (≥ 20): no node on PATH");
}

/** A user's own settings, which install must keep. */
export const USER_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false },
  ui: { theme: "GitHub" },
};

/**
 * A temp HOME whose `.gemini/settings.json` holds USER_SETTINGS, and Gemini CLI's telemetry
 * written to a local file (`telemetry`; no exporter, no traffic), where it logs each hook call.
 */
export function makeGeminiHome(): { home: string; geminiHome: string; telemetry: string } {
  const home = tempHome("rgm-home-");
  const geminiHome = join(home, ".gemini");
  mkdirSync(geminiHome, { recursive: true });
  const telemetry = join(home, "telemetry.log");
  const settings = { ...USER_SETTINGS, telemetry: { enabled: true, target: "local", outfile: telemetry, logPrompts: false } };
  writeFileSync(join(geminiHome, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
  return { home, geminiHome, telemetry };
}

export interface HookCall {
  event: string;
  name: string;
  ok: boolean;
  durationMs: number;
}

/** The hook calls Gemini CLI logged in its telemetry file (`Hook call BeforeAgent.memsearch succeeded in 61ms`). */
export function hookCalls(telemetry: string): HookCall[] {
  const text = existsSync(telemetry) ? readFileSync(telemetry, "utf8") : "";
  return [...text.matchAll(/"_body": "Hook call (\w+)\.([^ "]+) (succeeded|failed) in (\d+)ms"/g)].map((m) => ({ event: m[1]!, name: m[2]!, ok: m[3] === "succeeded", durationMs: Number(m[4]) }));
}

/** Codex's harness environment (the surrounding session's variables dropped, the run id, no Ollama), with Gemini CLI's own. */
export function geminiEnv(opts: { home: string; apiUrl: string; runId: string; env?: Record<string, string | undefined> }): Record<string, string> {
  const env = codexEnv({ home: opts.home, codexHome: join(opts.home, ".codex"), runId: opts.runId, env: { CODEX_HOME: undefined, MOCK_KEY: undefined } });
  for (const k of Object.keys(env)) if (/^(GEMINI_|GOOGLE_)/.test(k)) delete env[k];
  Object.assign(env, { GEMINI_CLI_HOME: opts.home, GEMINI_API_KEY: "offline-test-key", GOOGLE_GEMINI_BASE_URL: opts.apiUrl, NO_COLOR: "1" });
  return withOverrides(env, opts.env);
}

/** `gemini -p "<prompt>" --yolo` in `cwd`, stdin closed. */
export async function geminiRun(prompt: string, opts: { cwd: string; env: Record<string, string>; resume?: boolean; timeoutMs?: number }): Promise<AgentRun> {
  const args = ["node", GEMINI_JS, "-m", GEMINI_MODEL, ...(opts.resume ? ["--resume", "latest"] : []), "-p", prompt, "--yolo"];
  return runAgent(args, { cwd: opts.cwd, env: opts.env, timeoutMs: opts.timeoutMs ?? 60_000 });
}

/** Every chat Gemini CLI wrote under a gemini home (`tmp/<project>/chats/*.jsonl`), oldest first. */
export function chats(geminiHome: string): string[] {
  const tmp = join(geminiHome, "tmp");
  if (!existsSync(tmp)) return [];
  const out = readdirSync(tmp).flatMap((slot) => {
    const dir = join(tmp, slot, "chats");
    return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".jsonl")).map((n) => join(dir, n)) : [];
  });
  return out.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs || a.localeCompare(b));
}
