import { PROMPT_HOOK_BUDGET_MS, runHook, type HookInput, type HookOutput } from "./runtime.ts";

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

/** Run one hook and leave: a stray handle (a socket, a timer) must not keep Claude Code waiting. */
export async function runHookEvent(event: string): Promise<never> {
  const e = HOOK_EVENTS[event];
  if (!e) {
    // Claude Code only reads stdout; an unknown event still answers with valid JSON.
    process.stderr.write(`Error: unknown hook event "${event}" (one of ${Object.keys(HOOK_EVENTS).join(", ")})\n`);
    process.stdout.write("{}\n");
    process.exit(0);
  }
  await runHook(event, e.budgetMs, async (input) => (await e.load())(input));
  await new Promise((r) => process.stdout.write("", r));
  process.exit(0);
}
