import { UsageError } from "../core/errors.ts";
import { debugEnabled, tailDebugLog } from "../hooks/runtime.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { print, printJson } from "./output.ts";

export const MAX_DEBUG_LINES = 5_000;

const HOW_TO = [
  "Turn it on for the hooks: start Claude Code with MEMSEARCH_DEBUG=1 in its environment",
  '(`MEMSEARCH_DEBUG=1 claude`, or "env": {"MEMSEARCH_DEBUG": "1"} in ~/.claude/settings.json);',
  "remove it (or set it to 0) to turn it off. The log holds prompts and replies, redacted like the notes.",
];

export const debugCommand = command({
  command: "debug",
  describe: "Show the last lines of the hooks' debug log and how to turn the log on",
  flags: { ...jsonFlag, lines: { alias: "n", type: "number", default: 40, describe: `Lines to show, 1 to ${MAX_DEBUG_LINES}` } },
  run: (a) => {
    if (!Number.isInteger(a.lines) || a.lines < 1 || a.lines > MAX_DEBUG_LINES) throw new UsageError(`--lines must be a whole number between 1 and ${MAX_DEBUG_LINES}`);
    // The hooks run with Claude Code's environment, which a Bash tool call (the slash command) shares.
    const on = debugEnabled();
    const tail = tailDebugLog(a.lines);
    if (a.jsonOutput) return printJson({ enabled: on, log_dir: tail.dir, files: tail.files, lines: tail.lines });
    const head = [`Debug log: ${on ? "on" : "off"} in this environment (MEMSEARCH_DEBUG${on ? `=${process.env.MEMSEARCH_DEBUG}` : " is not set"}); logs in ${tail.dir}`];
    if (!on) head.push(...HOW_TO);
    if (!tail.lines.length) return print([...head, "", "No hook has logged anything yet."].join("\n"));
    print([...head, "", `Last ${tail.lines.length} line${tail.lines.length === 1 ? "" : "s"} (newest file: ${tail.files[0]}):`, ...tail.lines].join("\n"));
  },
});
