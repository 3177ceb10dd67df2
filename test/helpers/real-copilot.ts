/**
 * Running the real GitHub Copilot CLI (1.0.102: its Linux x64 binary package,
 * `@github/copilot-linux-x64`, pinned in scripts/agents/) offline, as real-codex.ts does for Codex:
 * its native binary exec'd directly (no Node launcher), a temp HOME and COPILOT_HOME, a BYOK
 * provider at the local Chat Completions mock (chat-mock.ts: no GitHub sign-in), and
 * COPILOT_OFFLINE, which skips every other network access.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { harnessEnv, runAgent, tempHome, type AgentRun } from "./real-agent.ts";
import { AGENTS_HINT, agentModules } from "./agents.ts";

export const REPO = resolve(import.meta.dir, "../..");
export const COPILOT_BIN = process.env.MEMSEARCH_REAL_COPILOT ?? join(agentModules(), "@github", `copilot-${process.platform}-${process.arch}`, "copilot");

export function assertRealCopilot(): void {
  if (!existsSync(COPILOT_BIN)) throw new Error(`the real Copilot CLI is not installed at ${COPILOT_BIN}: ${AGENTS_HINT}`);
}

export interface CopilotHome {
  home: string;
  copilotHome: string;
}

export function makeCopilotHome(): CopilotHome {
  const home = tempHome("rcp-home-");
  return { home, copilotHome: join(home, ".copilot") };
}

// Variables of the surrounding session that must not reach the client under test (a GitHub token would sign it in).
const DROP = /^(OPENAI_|COPILOT_|GH_|GITHUB_|CODEX_|ANTHROPIC_|CLAUDE|MEMSEARCH_|OTEL_|XDG_)|^(NODE_OPTIONS|DEBUG)$/;

export function copilotEnv(opts: { h: CopilotHome; apiUrl: string; runId: string; env?: Record<string, string | undefined> }): Record<string, string> {
  const set = {
    HOME: opts.h.home,
    COPILOT_HOME: opts.h.copilotHome,
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_BASE_URL: opts.apiUrl,
    COPILOT_PROVIDER_API_KEY: "offline-test-key",
    COPILOT_MODEL: "gpt-4.1",
    COPILOT_AUTO_UPDATE: "false",
    MEMSEARCH_HARNESS_RUN: opts.runId,
    OLLAMA_HOST: "http://127.0.0.1:9",
  };
  return harnessEnv(DROP, set, opts.env);
}

export type PromptResult = AgentRun;

/** `copilot -p "<prompt>" --allow-all-tools -s` in `cwd` (with `resume`, the session of that id goes on). */
export async function copilotPrompt(prompt: string, opts: { cwd: string; env: Record<string, string>; resume?: string; timeoutMs?: number }): Promise<PromptResult> {
  const args = [COPILOT_BIN, ...(opts.resume ? [`--resume=${opts.resume}`] : []), "-p", prompt, "--allow-all-tools", "-s"];
  return runAgent(args, { cwd: opts.cwd, env: opts.env, timeoutMs: opts.timeoutMs ?? 60_000 });
}

/** Every session's events file Copilot wrote under a COPILOT_HOME, oldest first. */
export function sessionFiles(copilotHome: string): string[] {
  const dir = join(copilotHome, "session-state");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((id) => join(dir, id, "events.jsonl"))
    .filter((f) => existsSync(f))
    .sort((a, b) => statSync(a).birthtimeMs - statSync(b).birthtimeMs || a.localeCompare(b));
}

/** Each hook's run as Copilot recorded it (`hook.start` → `hook.end`), in ms, by its hook type. */
export function hookTimings(eventsText: string): { type: string; ms: number; success: boolean }[] {
  const starts = new Map<string, { type: string; at: number }>();
  const out: { type: string; ms: number; success: boolean }[] = [];
  for (const line of eventsText.split("\n")) {
    let o: any;
    try {
      o = JSON.parse(line);
    } catch {
      continue;
    }
    const id = o?.data?.hookInvocationId;
    if (o?.type === "hook.start") starts.set(id, { type: o.data.hookType, at: Date.parse(o.timestamp) });
    else if (o?.type === "hook.end" && starts.has(id)) {
      const s = starts.get(id)!;
      out.push({ type: s.type, ms: Date.parse(o.timestamp) - s.at, success: o.data.success === true });
    }
  }
  return out;
}
