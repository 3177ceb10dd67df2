import { lstatSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { AGENT_NAMES, agentNamed } from "../agents/registry.ts";
import type { FileChange } from "../agents/types.ts";
import { errCode, rewriteKeeping, storageError } from "../core/fsutil.ts";
import { InputError } from "../core/errors.ts";
import { selfCommand } from "../hooks/runtime.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { print, printJson } from "./output.ts";

/**
 * `memsearch install <agent>`: wire memsearch into the agent's own configuration, merging with
 * what is there (idempotent: a second run changes nothing). `--dry-run` shows the change,
 * `--uninstall` removes exactly what install added.
 */
export const installCommand = command({
  command: "install <agent>",
  describe: "Wire memsearch's hooks into a coding agent's configuration (codex, gemini, opencode, copilot; claude through its plugin)",
  flags: {
    ...jsonFlag,
    agent: { positional: true, type: "string", choices: AGENT_NAMES, demandOption: true },
    "dry-run": { type: "boolean", default: false, describe: "Show the change, write nothing" },
    uninstall: { type: "boolean", default: false, describe: "Remove what install added" },
  },
  run: (a) => {
    const agent = agentNamed(a.agent);
    const plan = agent.planInstall({ exe: selfCommand(), uninstall: a.uninstall });
    if (!a.dryRun) {
      // Every file checked before any is written: a refusal leaves all of them as they were.
      for (const c of plan.changes) writable(c.path);
      for (const c of plan.changes) apply(c);
    }
    if (a.jsonOutput) return printJson({ agent: plan.agent, dry_run: a.dryRun, changes: plan.changes.map((c) => ({ path: c.path, action: action(c) })), notes: plan.notes });
    const out = [...plan.notes];
    for (const c of plan.changes) out.push(a.dryRun ? diff(c) : `${action(c)} ${c.path}`);
    if (a.dryRun && plan.changes.length) out.push("(dry run: nothing written)");
    print(out.join("\n"));
  },
});

const action = (c: FileChange) => (c.before === undefined ? "created" : c.after === undefined ? "removed" : "updated");

/** A file its owner made read-only is left as it is: the rename would replace it all the same. */
function writable(path: string): void {
  let mode: number;
  try {
    mode = lstatSync(path).mode;
  } catch (e) {
    if (errCode(e) === "ENOENT") return;
    throw storageError(path, e);
  }
  if ((mode & 0o200) === 0) throw new InputError(`${path} is read-only (mode ${(mode & 0o777).toString(8).padStart(4, "0")}): memsearch leaves it as it is; make it writable (chmod u+w), then run this again`);
}

function apply(c: FileChange): void {
  try {
    if (c.after === undefined) rmSync(c.path, { force: true });
    else {
      mkdirSync(dirname(c.path), { recursive: true });
      // The agent's own file: its mode and owner stay (a 0600 config.toml holding tokens stays 0600).
      rewriteKeeping(c.path, c.after);
    }
  } catch (e) {
    throw storageError(c.path, e);
  }
}

/** The changed lines, between what both versions share at the start and at the end. */
function diff(c: FileChange): string {
  const a = c.before === undefined ? [] : c.before.split("\n");
  const b = c.after === undefined ? [] : c.after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const lines = [`--- ${c.path} (${action(c)})`];
  for (const l of a.slice(head, a.length - tail)) lines.push(`- ${l}`);
  for (const l of b.slice(head, b.length - tail)) lines.push(`+ ${l}`);
  return lines.join("\n");
}
