import { fchmodSync, lstatSync, mkdirSync, renameSync, rmdirSync, rmSync, symlinkSync } from "node:fs";
import { dirname, sep } from "node:path";
import { AGENT_NAMES, agentNamed } from "../agents/registry.ts";
import type { FileChange, InstallPlan } from "../agents/types.ts";
import { InputError } from "../core/errors.ts";
import { atomicWrite, errCode, rewriteKeeping, storageError } from "../core/fsutil.ts";
import { oneLine } from "../core/text.ts";
import { selfCommand } from "../hooks/runtime.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { print, printJson } from "./output.ts";

/**
 * `memsearch install <agent>`: wire memsearch into the agent's own configuration, merging with
 * what is there (idempotent: a second run changes nothing). `--dry-run` shows the change,
 * `--uninstall` removes exactly what install added. An agent that is not set up on this machine
 * is refused before anything is written.
 */
export const installCommand = command({
  command: "install <agent>",
  describe: "Wire memsearch into a coding agent (claude: its plugin, through Claude Code's plugin manager; codex, gemini, opencode, copilot: their hooks)",
  flags: {
    ...jsonFlag,
    agent: { positional: true, type: "string", choices: AGENT_NAMES, demandOption: true },
    "dry-run": { type: "boolean", default: false, describe: "Show the change, write nothing" },
    uninstall: { type: "boolean", default: false, describe: "Remove what install added" },
  },
  run: async (a) => {
    const agent = agentNamed(a.agent);
    if (!a.uninstall && !agent.present()) {
      throw new InputError(`${agent.label} is not set up on this machine: nothing was written (install it and run it once, then run this again)`);
    }
    const plan = await agent.planInstall({ exe: selfCommand(), uninstall: a.uninstall, dryRun: a.dryRun });
    const lines = applyPlan(plan, { dryRun: a.dryRun, uninstall: a.uninstall });
    if (a.jsonOutput) return printJson({ agent: plan.agent, dry_run: a.dryRun, changes: plan.changes.map((c) => ({ path: c.path, action: action(c) })), commands: (plan.commands ?? []).map((c) => c.argv), notes: plan.notes });
    const dry = a.dryRun && (plan.changes.length || plan.commands?.length) ? ["(dry run: nothing written)"] : [];
    print([...lines, ...plan.notes, ...dry].join("\n"));
  },
});

export const action = (c: FileChange) => (c.before === undefined ? "created" : c.after === undefined && c.link === undefined ? "removed" : "updated");
const WOULD = { created: "would create", updated: "would update", removed: "would remove" } as const;

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

/**
 * Carry out a plan (or, on a dry run, say what it would do): an uninstall runs the agent's own
 * commands before its files go, an install after they are written. Returns the lines to show;
 * throws a one-line error when a command fails (what was written stays).
 */
export function applyPlan(plan: InstallPlan, o: { dryRun: boolean; uninstall: boolean }): string[] {
  const lines: string[] = [];
  // Every file checked before any is written or any command runs: a refusal leaves all of them as they were.
  if (!o.dryRun) for (const c of plan.changes) writable(c.path);
  const files = () => {
    const said: string[] = [];
    for (const c of plan.changes) {
      if (o.dryRun) said.push(c.brief || c.folder || c.link !== undefined || c.after === undefined ? `${WOULD[action(c)]} ${c.path}${c.link ? ` (a link to ${c.link})` : ""}` : diff(c));
      else {
        apply(c, o.uninstall);
        said.push(`${action(c)} ${c.path}${c.link ? ` (a link to ${c.link})` : ""}`);
      }
    }
    lines.push(...collapse(plan.changes, said, o.dryRun));
  };
  const commands = () => {
    for (const cmd of plan.commands ?? []) {
      if (o.dryRun) continue; // the plan's notes already say what would run
      for (const need of cmd.needs ?? []) {
        try {
          lstatSync(need);
        } catch {
          throw new InputError(`${need} is missing, so \`${cmd.argv.slice(1).join(" ")}\` would fail: nothing was run`);
        }
      }
      const r = Bun.spawnSync(cmd.argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 120_000 });
      if (r.exitCode !== 0) {
        const why = oneLine((r.stderr.toString() || r.stdout.toString()).trim() || `exit code ${r.exitCode}`);
        throw new InputError(`\`claude ${cmd.argv.slice(1).join(" ")}\` failed: ${why}`);
      }
    }
  };
  if (o.uninstall) {
    commands();
    files();
  } else {
    files();
    commands();
  }
  return lines;
}

/** A run of files memsearch owns whole (the plugin's) said in one line: "created 16 files in …/plugin". */
function collapse(changes: FileChange[], said: string[], dryRun: boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < changes.length; ) {
    const c = changes[i]!;
    let j = i;
    while (j < changes.length && changes[j]!.brief && changes[j]!.link === undefined && action(changes[j]!) === action(c)) j++;
    if (j - i < 3) {
      out.push(said[i]!);
      i++;
      continue;
    }
    let dir = dirname(c.path);
    for (const x of changes.slice(i, j)) while (!x.path.startsWith(dir + sep)) dir = dirname(dir);
    out.push(`${dryRun ? WOULD[action(c)] : action(c)} ${j - i} files in ${dir}`);
    i = j;
  }
  return out;
}

function apply(c: FileChange, uninstall: boolean): void {
  try {
    if (c.folder) rmSync(c.path, { recursive: true, force: true });
    else if (c.link !== undefined) {
      // A new link under a temporary name, renamed over the old: a hook never finds none.
      mkdirSync(dirname(c.path), { recursive: true });
      const tmp = `${c.path}.tmp-${process.pid}`;
      rmSync(tmp, { force: true });
      symlinkSync(c.link, tmp);
      renameSync(tmp, c.path);
    } else if (c.after === undefined) rmSync(c.path, { force: true });
    else {
      mkdirSync(dirname(c.path), { recursive: true });
      const mode = c.mode;
      // memsearch's own file gets the mode its plan names; the agent's own file keeps its mode and
      // owner (a 0600 config.toml holding tokens stays 0600).
      if (mode !== undefined) atomicWrite(c.path, c.after, (fd) => fchmodSync(fd, mode));
      else rewriteKeeping(c.path, c.after);
    }
  } catch (e) {
    throw storageError(c.path, e);
  }
  // A folder install made for this file alone goes with it when nothing else is left in it.
  if (uninstall && c.ownFolder && c.after === undefined && c.link === undefined) {
    try {
      rmdirSync(dirname(c.path));
    } catch {}
  }
}

/** The changed lines, between what both versions share at the start and at the end. */
function diff(c: FileChange): string {
  const text = (x: string | Uint8Array | undefined) => (x === undefined ? [] : (typeof x === "string" ? x : new TextDecoder().decode(x)).split("\n"));
  const a = text(c.before);
  const b = text(c.after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const lines = [`--- ${c.path} (${WOULD[action(c)]})`];
  for (const l of a.slice(head, a.length - tail)) lines.push(`- ${l}`);
  for (const l of b.slice(head, b.length - tail)) lines.push(`+ ${l}`);
  return lines.join("\n");
}
