import { UsageError } from "../core/errors.ts";
import { closeSync, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import { debugEnabled, debugLogDir } from "../hooks/runtime.ts";
import { loadContext } from "../core/context.ts";
import { dataFiles } from "../core/project.ts";
import { readInjections, type InjectionRecord } from "../memory/injections.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { print, printJson } from "./output.ts";

const MAX_DEBUG_LINES = 5_000;

const HOW_TO = [
  "Turn it on for the hooks: start Claude Code with MEMSEARCH_DEBUG=1 in its environment",
  '(`MEMSEARCH_DEBUG=1 claude`, or "env": {"MEMSEARCH_DEBUG": "1"} in ~/.claude/settings.json);',
  "remove it (or set it to 0) to turn it off. The log holds prompts and replies, redacted like the notes.",
];

export const debugCommand = command({
  command: "debug",
  describe: "Show the last lines of the hooks' debug log and how to turn the log on",
  flags: {
    ...jsonFlag,
    lines: { type: "number", default: 40, describe: `Lines to show, 1 to ${MAX_DEBUG_LINES}` },
    injections: { type: "boolean", default: false, describe: "Show the prompt hook's last decisions in this project instead (what it considered, injected, and why)" },
  },
  run: (a) => {
    if (!Number.isInteger(a.lines) || a.lines < 1 || a.lines > MAX_DEBUG_LINES) throw new UsageError(`--lines must be a whole number between 1 and ${MAX_DEBUG_LINES}`);
    if (a.injections) return showInjections(a.lines, a.jsonOutput);
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

/** The last `n` records of the project's injection log (src/memory/injections.ts), one line each. */
function showInjections(n: number, json: boolean): void {
  const ctx = loadContext();
  const log = dataFiles(ctx.project.dataDir).injectionLog;
  const records = readInjections(ctx.project.dataDir).filter((r) => !r.event).slice(-n);
  if (json) return printJson({ log, records });
  if (!records.length) return print(`No prompt hook decision recorded yet in ${log}.`);
  print([`Last ${records.length} decision${records.length === 1 ? "" : "s"} of the prompt hook (${log}):`, ...records.map(injectionLine)].join("\n"));
}

function injectionLine(r: InjectionRecord): string {
  const who = `${r.session ?? "?"}/${r.prompt ?? "?"}${r.source ? ` (${r.source})` : ""}`;
  const what = r.considered.map((c) => {
    const marks = [c.fromRepository ? "repository" : "", c.instructionLike ? "instruction-like" : ""].filter(Boolean).join(", ");
    return `${c.kind} ${c.id.slice(0, 12)} ${c.score.toFixed(2)} ${c.outcome}${marks ? ` [${marks}]` : ""}`;
  });
  return `${r.at} ${who} ${r.mode}: ${r.decision}, ${r.chars} chars (${r.reason})${what.length ? `\n    ${what.join("\n    ")}` : ""}`;
}

// The log is read only here: the hooks write it and never read it back.

interface DebugTail {
  dir: string;
  /** Log files, newest first. */
  files: string[];
  /** The last lines across the newest files, oldest first. */
  lines: string[];
}

/** How much of each log file is read from its end: the last lines are all that is shown. */
const TAIL_BYTES = 1 << 20;

/** The last `n` lines the hooks logged (the newest files first, then older ones until `n`). */
function tailDebugLog(n: number, env = process.env): DebugTail {
  const dir = debugLogDir(env);
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((f) => /^hooks-\d{4}-\d{2}-\d{2}\.log$/.test(f)).sort().reverse();
  } catch {}
  const files = names.map((f) => join(dir, f));
  let lines: string[] = [];
  for (const f of files) {
    if (lines.length >= n) break;
    lines = [...tailLines(f, n - lines.length), ...lines];
  }
  return { dir, files, lines };
}

function tailLines(file: string, n: number): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const size = fstatSync(fd).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    let lines = buf.toString("utf8").split("\n");
    // A read that starts mid-file starts mid-line.
    if (len < size) lines = lines.slice(1);
    if (lines[lines.length - 1] === "") lines.pop();
    return n > 0 ? lines.slice(-n) : [];
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
