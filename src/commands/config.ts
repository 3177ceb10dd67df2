import { existsSync } from "node:fs";
import { CONFIG_KEYS, globalConfigPath, ignoredLine, isConfigKey, projectConfigPath, projectMaySet, readConfigFile, toToml, writeConfigKey, type ConfigKey, type ConfigValue, type IgnoredKey } from "../core/config.ts";
import { loadContext } from "../core/context.ts";
import { UsageError } from "../core/errors.ts";
import { atomicWrite } from "../core/fsutil.ts";
import { resolveProjectRoot } from "../core/project.ts";
import { jsonFlag } from "./common.ts";
import { command, flags, group } from "./declare.ts";
import { notice, print, printJson } from "./output.ts";

const scopeFlag = flags({
  project: { type: "boolean", default: false, describe: "Use the project's .memsearch.toml instead of ~/.memsearch/config.toml" },
});

function target(project: boolean): { path: string; scope: "global" | "project" } {
  return project ? { path: projectConfigPath(resolveProjectRoot()), scope: "project" } : { path: globalConfigPath(), scope: "global" };
}

function show(v: unknown): string {
  if (Array.isArray(v)) return JSON.stringify(v);
  return String(v);
}

const init = command({
  command: "init",
  describe: "Write a config file with every key at its default",
  flags: { ...jsonFlag, ...scopeFlag, force: { type: "boolean", default: false, describe: "Overwrite an existing file" } },
  run: (a) => {
    const { path, scope } = target(a.project);
    if (existsSync(path) && !a.force) throw new UsageError(`${path} already exists (use --force to overwrite)`);
    const vals: Partial<Record<string, ConfigValue>> = {};
    for (const k of Object.keys(CONFIG_KEYS) as ConfigKey[]) {
      if (scope === "project" && !projectMaySet(k, CONFIG_KEYS[k].default as ConfigValue)) continue;
      vals[k] = CONFIG_KEYS[k].default as ConfigValue;
    }
    atomicWrite(path, `# memsearch configuration (${scope}). See 'memsearch config list --resolved'.\n` + toToml(vals));
    if (a.jsonOutput) return printJson({ wrote: path, scope });
    print(`Wrote ${path}`);
  },
});

const get = command({
  command: "get <key>",
  describe: "Print the resolved value of one key",
  flags: { ...jsonFlag, key: { positional: true, type: "string", demandOption: true } },
  run: (a) => {
    if (!isConfigKey(a.key)) throw new UsageError(`unknown config key "${a.key}" (see 'memsearch config list --resolved')`);
    const ctx = loadContext();
    if (a.jsonOutput) return printJson({ key: a.key, value: ctx.config[a.key], ...ctx.resolved.sources[a.key] });
    print(show(ctx.config[a.key]));
  },
});

const set = command({
  command: "set <key> <value>",
  describe: "Set a key in the global (or --project) config file",
  flags: {
    key: { positional: true, type: "string", demandOption: true },
    value: { positional: true, type: "string", demandOption: true },
    ...scopeFlag,
    ...jsonFlag,
  },
  run: (a) => {
    const { path, scope } = target(a.project);
    const v = writeConfigKey(path, scope, a.key, a.value);
    if (a.jsonOutput) return printJson({ key: a.key, value: v, path, scope });
    print(`Set ${a.key} = ${show(v)} in ${path}`);
  },
});

const list = command({
  command: "list",
  describe: "Show configuration: resolved (default, with each value's source), --global or --project",
  flags: {
    ...jsonFlag,
    resolved: { type: "boolean", describe: "All layers merged, with where each value came from (default)" },
    global: { type: "boolean", describe: "Only ~/.memsearch/config.toml" },
    project: { type: "boolean", describe: "Only the project's .memsearch.toml" },
  },
  run: (a) => {
    if (a.global || (a.project && !a.resolved)) {
      const { path, scope } = target(!!a.project);
      const ignored: IgnoredKey[] = [];
      const vals = readConfigFile(path, scope, ignored);
      if (a.jsonOutput) return print(JSON.stringify(vals));
      print([`# ${scope === "global" ? "Global" : "Project"} (${path})`, ...ignoredComment(ignored, path), Object.keys(vals).length ? toToml(vals) : "(empty)"].join("\n"));
      return;
    }
    const ctx = loadContext();
    const { ignored } = ctx.resolved;
    if (a.jsonOutput) {
      const out: Record<string, { value: unknown; source: string; detail?: string }> = {};
      for (const k of Object.keys(ctx.config) as ConfigKey[]) out[k] = { value: ctx.config[k], ...ctx.resolved.sources[k] };
      // Said on stderr: the JSON keeps the shape scripts read.
      const line = ignoredLine(ignored, ctx.resolved.files.project);
      if (line) notice(`memsearch: ${line}`);
      return printJson(out);
    }
    // TOML, each value annotated with the layer it came from.
    const lines = ["# Resolved (all sources merged)", ...ignoredComment(ignored, ctx.resolved.files.project)];
    let section = "";
    for (const k of Object.keys(ctx.config) as ConfigKey[]) {
      const [sec, name] = [k.slice(0, k.indexOf(".")), k.slice(k.indexOf(".") + 1)];
      if (sec !== section) {
        lines.push("", `[${sec}]`);
        section = sec;
      }
      const src = ctx.resolved.sources[k];
      const value = toToml({ [k]: ctx.config[k] }).split("\n")[1]!.slice(name.length + 3);
      lines.push(`${name} = ${value}  # ${src.source}${src.detail && src.source !== "default" ? `: ${src.detail}` : ""}`);
    }
    print(lines.join("\n"));
  },
});

/** The project file's machine-wide keys, as a TOML comment. */
function ignoredComment(ignored: IgnoredKey[], path: string): string[] {
  const line = ignoredLine(ignored, path);
  return line ? [`# ${line}`] : [];
}

export const configCommand = group({
  command: "config",
  describe: "Read and write configuration (init, get, set, list)",
  subcommands: [init, get, set, list],
  demand: "Give a config subcommand: init, get, set or list",
});
