import { HOOK_EVENTS, runHookEvent } from "../hooks/events.ts";
import { command } from "./declare.ts";
import { AGENT_NAMES } from "../agents/registry.ts";
import { DEFAULT_AGENT } from "../core/anchor.ts";

/** Documents `hook <event>` in --help; cli.ts normally runs hooks without going through yargs. */
export const hookCommand = command({
  command: "hook <event>",
  describe: "Run an agent's hook (reads the hook JSON on stdin; always exits 0 with JSON)",
  flags: {
    event: { positional: true, type: "string", choices: Object.keys(HOOK_EVENTS), demandOption: true },
    agent: { type: "string", choices: AGENT_NAMES, default: DEFAULT_AGENT, describe: "The agent whose hook this is (its input and output format)" },
  },
  run: (a) => runHookEvent(a.event, a.agent),
});
