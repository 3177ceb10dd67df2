import { adapterOf, AGENT_NAMES } from "../agents/registry.ts";
import { DEFAULT_AGENT } from "../core/anchor.ts";
import { debugLog, PROMPT_HOOK_BUDGET_MS, runHook, type HookInput, type HookOutput } from "./runtime.ts";
import { writeErr, writeOut } from "../core/stdio.ts";

type Handler = (input: HookInput) => Promise<HookOutput>;

/**
 * Each event's handler, loaded on demand (a prompt hook must not pay for loading the indexer
 * and the summariser), and its budget, kept under the timeout hooks.json gives it.
 */
export const HOOK_EVENTS: Record<string, { load: () => Promise<Handler>; budgetMs: number }> = {
  "session-start": { load: () => import("./session-start.ts").then((m) => m.sessionStart), budgetMs: 8_000 },
  "user-prompt-submit": { load: () => import("./user-prompt-submit.ts").then((m) => m.userPromptSubmit), budgetMs: PROMPT_HOOK_BUDGET_MS },
  stop: { load: () => import("./stop.ts").then((m) => m.stop), budgetMs: 4_000 },
  "session-end": { load: () => import("./session-end.ts").then((m) => m.sessionEnd), budgetMs: 1_300 },
  // Not a Claude Code event: the detached process the other hooks start to write queued turns.
  drain: { load: () => import("./drain.ts").then((m) => m.drain), budgetMs: 30 * 60_000 },
};

/**
 * `hook <event> [--agent <name>]` as an agent's settings call it, read without yargs (it runs on
 * every prompt). Whatever else is on the line (a flag of a newer plugin, a stray argument) is
 * named in `ignored` and the hook still runs: a hook that exits non-zero blocks the user's prompt
 * in Claude Code, and one that does not run loses the turn.
 */
export function hookArgs(args: readonly string[]): { event: string; agent?: string; ignored: string[] } {
  let event: string | undefined;
  let agent: string | undefined;
  const ignored: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // A value that is empty or another flag names no agent: the default agent's hook runs.
    const value = a === "--agent" ? args[i + 1] : a.startsWith("--agent=") ? a.slice("--agent=".length) : undefined;
    if (value !== undefined && value !== "" && !value.startsWith("-")) {
      agent = value;
      if (a === "--agent") i++;
    } else if (event === undefined && !a.startsWith("-")) event = a;
    else ignored.push(a);
  }
  return { event: event ?? "", agent, ignored };
}

/**
 * Run one hook and leave: a stray handle (a socket, a timer) must not keep the agent waiting.
 * `agent` names the adapter that reads the input and writes the output (the default agent's, core/anchor.ts, unless named).
 */
export async function runHookEvent(event: string, agentName = DEFAULT_AGENT, ignored: readonly string[] = []): Promise<never> {
  if (ignored.length && event) {
    const what = `ignored ${ignored.map((x) => JSON.stringify(x)).join(", ")}`;
    writeErr(`Warning: hook ${event}: ${what}\n`);
    debugLog(event, what);
  }
  const e = HOOK_EVENTS[event];
  const agent = adapterOf(agentName);
  if (!e || !agent) {
    // The agent only reads stdout; an unknown event or agent still answers with valid JSON.
    const what = !e ? `hook event "${event}" (one of ${Object.keys(HOOK_EVENTS).join(", ")})` : `agent "${agentName}" (one of ${AGENT_NAMES.join(", ")})`;
    writeErr(`Error: unknown ${what}\n`);
    writeOut("{}\n");
    process.exit(0);
  }
  await runHook(event, e.budgetMs, async (input) => (await e.load())(input), agent);
  process.exit(0);
}
