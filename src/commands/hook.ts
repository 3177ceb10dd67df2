import type { CommandModule } from "yargs";
import { runHook } from "../hooks/runtime.ts";
import { sessionEnd } from "../hooks/session-end.ts";
import { sessionStart } from "../hooks/session-start.ts";
import { stop } from "../hooks/stop.ts";
import { userPromptSubmit } from "../hooks/user-prompt-submit.ts";

/** Each event's handler and its budget, kept under the timeout hooks.json gives it. */
const EVENTS = {
  "session-start": { run: sessionStart, budgetMs: 8_000 },
  "user-prompt-submit": { run: userPromptSubmit, budgetMs: 4_500 },
  stop: { run: stop, budgetMs: 115_000 },
  "session-end": { run: sessionEnd, budgetMs: 1_300 },
} as const;

export const hookCommand: CommandModule<{}, { event: string }> = {
  command: "hook <event>",
  describe: "Run a Claude Code hook (reads the hook JSON on stdin; always exits 0 with JSON)",
  builder: (y) => y.positional("event", { type: "string", choices: Object.keys(EVENTS), demandOption: true }) as never,
  handler: async (a: { event: string }) => {
    const e = EVENTS[a.event as keyof typeof EVENTS];
    await runHook(a.event, e.budgetMs, e.run);
    // Leave at once: a stray handle (a socket, a timer) must not keep Claude Code waiting.
    await new Promise((r) => process.stdout.write("", r));
    process.exit(0);
  },
};
