import { HOOK_EVENTS, runHookEvent } from "../hooks/events.ts";
import { command } from "./declare.ts";

/** Documents `hook <event>` in --help; cli.ts normally runs hooks without going through yargs. */
export const hookCommand = command({
  command: "hook <event>",
  describe: "Run a Claude Code hook (reads the hook JSON on stdin; always exits 0 with JSON)",
  flags: { event: { positional: true, type: "string", choices: Object.keys(HOOK_EVENTS), demandOption: true } },
  run: (a) => runHookEvent(a.event),
});
