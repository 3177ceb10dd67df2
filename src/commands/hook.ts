import type { CommandModule } from "yargs";
import { HOOK_EVENTS, runHookEvent } from "../hooks/events.ts";

/** Documents `hook <event>` in --help; cli.ts normally runs hooks without going through yargs. */
export const hookCommand: CommandModule<{}, { event: string }> = {
  command: "hook <event>",
  describe: "Run a Claude Code hook (reads the hook JSON on stdin; always exits 0 with JSON)",
  builder: (y) => y.positional("event", { type: "string", choices: Object.keys(HOOK_EVENTS), demandOption: true }) as never,
  handler: (a: { event: string }) => runHookEvent(a.event),
};
