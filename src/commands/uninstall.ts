import { rmSync } from "node:fs";
import { AGENTS } from "../agents/registry.ts";
import { InputError } from "../core/errors.ts";
import { storageError } from "../core/fsutil.ts";
import { userDir } from "../core/project.ts";
import { installation, NPM_PACKAGE } from "../core/self.ts";
import { oneLine } from "../core/text.ts";
import { selfCommand } from "../hooks/runtime.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { applyPlan } from "./install.ts";
import { print, printJson } from "./output.ts";

/**
 * `memsearch uninstall`: memsearch off this machine, in the order that leaves nothing dangling:
 * every agent's wiring (`install <agent> --uninstall` for each: Claude Code's plugin through its
 * own CLI, the others' hooks), then `~/.memsearch` when `--purge` asks for it, then the binary,
 * the way it was installed (npm's package through npm, a file by removing it). Project memory
 * (each project's `.memsearch/`) is never touched.
 */
export const uninstallCommand = command({
  command: "uninstall",
  describe: "Remove memsearch from this machine: every agent's hooks, the Claude Code plugin and the binary (--purge: ~/.memsearch too); project memory is kept",
  flags: {
    ...jsonFlag,
    "dry-run": { type: "boolean", default: false, describe: "Say what would be removed, remove nothing" },
    purge: { type: "boolean", default: false, describe: "Also remove ~/.memsearch: settings, the conversation index, the projects registry, logs (project memory is kept)" },
  },
  run: async (a) => {
    const dry = a.dryRun;
    const lines: string[] = [];
    const problems: string[] = [];
    for (const agent of Object.values(AGENTS)) {
      try {
        const plan = await agent.planInstall({ exe: selfCommand(), uninstall: true, dryRun: dry });
        if (!plan.changes.length && !plan.commands?.length && !plan.manual) continue;
        lines.push(...applyPlan(plan, { dryRun: dry, uninstall: true }), ...plan.notes);
      } catch (e) {
        problems.push(`${agent.label}: ${oneLine(e)}`);
      }
    }
    const home = userDir();
    if (a.purge) {
      if (!dry) {
        try {
          rmSync(home, { recursive: true, force: true });
        } catch (e) {
          problems.push(oneLine(storageError(home, e)));
        }
      }
      lines.push(`${dry ? "would remove" : "removed"} ${home} (settings, the conversation index, the projects registry, logs)`);
    } else lines.push(`kept ${home} (settings, the conversation index, logs): memsearch uninstall --purge removes it`);
    lines.push(...removeBinary(dry, problems));
    lines.push("project memory (each project's .memsearch/) is kept");
    if (a.jsonOutput) printJson({ dry_run: dry, purge: a.purge, lines, problems });
    else print([...lines, ...(dry ? ["(dry run: nothing removed)"] : [])].join("\n"));
    if (problems.length) throw new InputError(`not everything could be removed: ${problems.join("; ")}`);
  },
});

/** The running binary, removed the way it came. */
function removeBinary(dry: boolean, problems: string[]): string[] {
  const self = installation();
  const would = (done: string) => (dry ? `would ${done.replace(/^removed/, "remove").replace(/^ran/, "run")}` : done);
  switch (self.kind) {
    case "source":
      return [`running from a source checkout (${self.command.join(" ")}): no binary to remove`];
    case "npm-local":
      return [`memsearch is a dependency of ${self.project}: remove it there with npm uninstall ${NPM_PACKAGE}`];
    case "npm-global": {
      const argv = ["uninstall", "-g", "--prefix", self.prefix, ...self.packages];
      const npm = Bun.which("npm");
      if (!npm) return [`npm is not on PATH: remove the binary with npm ${argv.join(" ")}`];
      if (!dry) {
        const r = Bun.spawnSync([npm, ...argv], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 120_000 });
        if (r.exitCode !== 0) {
          problems.push(`npm ${argv.join(" ")} failed: ${oneLine(r.stderr.toString().trim() || `exit code ${r.exitCode}`)}`);
          return [];
        }
      }
      return [would(`ran npm ${argv.join(" ")} (the binary ${self.binary} and its launcher)`)];
    }
    case "file":
      if (!dry) {
        try {
          rmSync(self.binary, { force: true });
        } catch (e) {
          problems.push(oneLine(storageError(self.binary, e)));
          return [];
        }
      }
      return [would(`removed ${self.binary}`)];
  }
}
