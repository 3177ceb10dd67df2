import { runHook } from "./runtime.ts";
import { sessionEnd } from "./session-end.ts";
import { sessionStart } from "./session-start.ts";
import { stop } from "./stop.ts";
import { userPromptSubmit } from "./user-prompt-submit.ts";

/** Each event's handler and its budget, kept under the timeout hooks.json gives it. */
export const HOOK_EVENTS = {
  "session-start": { run: sessionStart, budgetMs: 8_000 },
  "user-prompt-submit": { run: userPromptSubmit, budgetMs: 4_500 },
  stop: { run: stop, budgetMs: 115_000 },
  "session-end": { run: sessionEnd, budgetMs: 1_300 },
} as const;

export type HookEvent = keyof typeof HOOK_EVENTS;

/** Run one hook and leave: a stray handle (a socket, a timer) must not keep Claude Code waiting. */
export async function runHookEvent(event: string): Promise<never> {
  const e = HOOK_EVENTS[event as HookEvent];
  if (!e) {
    // Claude Code only reads stdout; an unknown event still answers with valid JSON.
    process.stderr.write(`Error: unknown hook event "${event}" (one of ${Object.keys(HOOK_EVENTS).join(", ")})\n`);
    process.stdout.write("{}\n");
    process.exit(0);
  }
  await runHook(event, e.budgetMs, e.run);
  await new Promise((r) => process.stdout.write("", r));
  process.exit(0);
}
