/**
 * `memsearch install claude`: the plugin through Claude Code's own plugin manager, with one binary
 * on disk. memsearch writes three things of its own under `~/.memsearch` (MEMSEARCH_HOME):
 *
 *   bin/memsearch                     a link to the installed binary (the one running install)
 *   plugin/                           the plugin, from the copy the binary carries (plugin-files.ts);
 *                                     its bin/memsearch is a script that runs the link above
 *   .claude-plugin/marketplace.json   a local marketplace naming ./plugin
 *
 * then runs `claude plugin marketplace add ~/.memsearch` and `claude plugin install
 * memsearch@memsearch` (or names them, when `claude` is not on PATH). Claude Code reads a
 * directory marketplace's plugin from its folder, and its hooks run the link: an upgrade of the
 * binary reaches every hook from the next event, and re-running install refreshes the plugin.
 * `--uninstall` runs the two removals and takes out exactly those files. Claude Code's own files
 * are edited only by Claude Code.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import pkg from "../../../package.json" with { type: "json" };
import { InputError } from "../../core/errors.ts";
import { parseJson } from "../../core/json-file.ts";
import { userDir } from "../../core/project.ts";
import { shellQuote } from "../codex/install.ts";
import type { FileChange, InstallOptions, InstallPlan, PlannedCommand } from "../types.ts";
import { pluginFiles } from "./plugin-files.ts";

export const PLUGIN_ID = "memsearch@memsearch";
export const MARKETPLACE = "memsearch";

/** The files memsearch keeps for Claude Code, all under the user folder. */
export function claudeInstallPaths(env: NodeJS.ProcessEnv = process.env) {
  const dir = userDir(env);
  return { marketplace: dir, plugin: join(dir, "plugin"), manifest: join(dir, ".claude-plugin", "marketplace.json"), link: join(dir, "bin", "memsearch") };
}

/** `claude` on the PATH of `env`, or undefined. */
export function claudeOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return Bun.which("claude", { PATH: env.PATH ?? "" }) ?? undefined;
}

export function marketplaceJson(): string {
  const doc = {
    name: MARKETPLACE,
    owner: { name: "memsearch" },
    description: "memsearch: persistent, searchable, offline memory for Claude Code (written by memsearch install claude)",
    plugins: [{ name: "memsearch", source: "./plugin", description: "Persistent, fully offline memory for Claude Code", version: pkg.version }],
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** What a development run links: a script running the checkout through Bun (a compiled binary is linked as it is). */
const DEV_MARK = "# memsearch (development): runs the checkout's source through Bun";
const devScript = (exe: string[]) => `#!/bin/sh\n${DEV_MARK}\nexec ${exe.map(shellQuote).join(" ")} "$@"\n`;

const ManifestShape = v.looseObject({ name: v.string() });
function isOurs(jsonPath: string): boolean {
  try {
    const r = parseJson(readFileSync(jsonPath, "utf8"), ManifestShape);
    return "value" in r && r.value.name === "memsearch";
  } catch {
    return false;
  }
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** The link (or development script) at `path` as it is: its target, `script`, or why it is not ours. */
function readLink(path: string): { target?: string; script?: string; foreign?: boolean } | undefined {
  const st = lstatOrUndefined(path);
  if (!st) return undefined;
  if (st.isSymbolicLink()) return { target: readlinkSync(path) };
  if (st.isFile() && st.size < 4096) {
    const text = readFileSync(path, "utf8");
    if (text.includes(DEV_MARK)) return { script: text };
  }
  return { foreign: true };
}

function sameBytes(path: string, content: string | Uint8Array, mode: number): boolean {
  const st = lstatOrUndefined(path);
  if (!st?.isFile()) return false;
  const want = typeof content === "string" ? Buffer.from(content) : content;
  if (st.size !== want.byteLength || (st.mode & 0o111) !== (mode & 0o111)) return false;
  return Buffer.from(readFileSync(path)).equals(Buffer.from(want));
}

/** Every file under `dir` (relative, with `/`), links and all, never following one. */
function listTree(dir: string, rel = ""): string[] {
  let out: string[] = [];
  let entries;
  try {
    entries = readdirSync(join(dir, rel), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out = out.concat(listTree(dir, r));
    else out.push(r);
  }
  return out;
}

/** What a file held, for the change's `before`: text when it is small, else a word about it. */
function describe(path: string): string {
  const st = lstatOrUndefined(path);
  if (!st) return "";
  if (st.isSymbolicLink()) return `(a link to ${readlinkSync(path)})`;
  if (st.size > 65536) return `(${st.size} bytes)`;
  return readFileSync(path, "utf8");
}

export function planClaudeInstall(opts: InstallOptions & { uninstall?: boolean }): InstallPlan {
  const env = opts.env ?? process.env;
  const p = claudeInstallPaths(env);
  const claude = claudeOnPath(env);
  const would = (done: string, cond: string) => (opts.dryRun ? cond : done);

  // Refuse, before anything is planned, to write over what memsearch did not make.
  const pluginSt = lstatOrUndefined(p.plugin);
  if (pluginSt && !pluginSt.isDirectory()) throw new InputError(`${p.plugin} is not a folder memsearch made (a ${pluginSt.isSymbolicLink() ? "symbolic link" : "file"}); memsearch leaves it alone: move it, then run this again`);
  if (pluginSt && existsSync(join(p.plugin, ".claude-plugin", "plugin.json")) && !isOurs(join(p.plugin, ".claude-plugin", "plugin.json"))) {
    throw new InputError(`${p.plugin} holds another plugin, not memsearch's; memsearch leaves it alone: move it, then run this again`);
  }
  if (existsSync(p.manifest) && !isOurs(p.manifest)) throw new InputError(`${p.manifest} is another marketplace, not memsearch's; memsearch leaves it alone: move it, then run this again`);
  const link = readLink(p.link);
  if (link?.foreign) throw new InputError(`${p.link} is a file memsearch did not make; memsearch leaves it alone: move it, then run this again`);

  if (opts.uninstall) return planUninstall(p, claude, link, opts, would);

  const changes: FileChange[] = [];
  const notes: string[] = [];
  // The link: to the compiled binary's real path (npm's platform package, install.sh's file), so
  // an upgrade in place is seen at once; a run through Bun gets a script instead.
  if (opts.exe.length === 1) {
    const target = realpathSync(opts.exe[0]!);
    if (link?.target !== target) changes.push({ path: p.link, link: target, before: link ? describe(p.link) : undefined });
  } else {
    const script = devScript(opts.exe);
    if (link?.script !== script) changes.push({ path: p.link, after: script, mode: 0o755, before: link ? describe(p.link) : undefined, brief: true });
  }
  const files = pluginFiles();
  const wanted = new Set(files.map((f) => f.path));
  for (const f of files) {
    const path = join(p.plugin, ...f.path.split("/"));
    if (!sameBytes(path, f.content, f.mode)) changes.push({ path, after: f.content, mode: f.mode, before: existsSync(path) ? describe(path) : undefined, brief: true });
  }
  // Files of an older plugin (a copy of the binary in bin/, a command since removed) go.
  if (pluginSt) for (const rel of listTree(p.plugin)) if (!wanted.has(rel)) changes.push({ path: join(p.plugin, ...rel.split("/")), before: describe(join(p.plugin, ...rel.split("/"))), brief: true });
  const mp = marketplaceJson();
  if (!sameBytes(p.manifest, mp, 0o644)) changes.push({ path: p.manifest, after: mp, before: existsSync(p.manifest) ? describe(p.manifest) : undefined });

  const target = opts.exe.length === 1 ? realpathSync(opts.exe[0]!) : opts.exe.join(" ");
  notes.push(changes.length ? `${would("wrote", "would write")} the Claude Code plugin to ${p.plugin}; its hooks run ${target} (through ${p.link})` : `the Claude Code plugin in ${p.plugin} is current; its hooks run ${target}`);
  const commands: PlannedCommand[] = [
    { argv: ["plugin", "marketplace", "add", p.marketplace], needs: [p.manifest, join(p.plugin, ".claude-plugin", "plugin.json")] },
    { argv: ["plugin", "install", PLUGIN_ID] },
  ];
  if (claude) {
    notes.push(`${would("ran", "would run")}: ${commands.map((c) => `claude ${c.argv.map(shellQuote).join(" ")}`).join(", then ")}`);
    return { agent: "claude", changes, notes, commands: commands.map((c) => ({ ...c, argv: [claude, ...c.argv] })) };
  }
  const manual = commands.map((c) => `claude ${c.argv.map(shellQuote).join(" ")}`);
  notes.push("`claude` is not on PATH: enable the plugin with these two commands (or /plugin inside Claude Code):", ...manual.map((m) => `  ${m}`));
  return { agent: "claude", changes, notes, manual };
}

const Listed = v.array(v.looseObject({ id: v.optional(v.string()), name: v.optional(v.string()), path: v.optional(v.string()) }));

/** A `claude plugin … list --json` answer, checked; undefined when it cannot be read. */
function listJson(claude: string, argv: string[], env: NodeJS.ProcessEnv) {
  const r = Bun.spawnSync([claude, ...argv, "--json"], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 60_000 });
  if (r.exitCode !== 0) return undefined;
  const out = parseJson(r.stdout.toString(), Listed);
  return "value" in out ? out.value : undefined;
}

function planUninstall(p: ReturnType<typeof claudeInstallPaths>, claude: string | undefined, link: ReturnType<typeof readLink>, opts: InstallOptions, would: (d: string, c: string) => string): InstallPlan {
  const env = opts.env ?? process.env;
  const changes: FileChange[] = [];
  const notes: string[] = [];
  const commands: PlannedCommand[] = [];
  if (claude) {
    // Asked first, so a second uninstall runs nothing and fails on nothing.
    const plugins = listJson(claude, ["plugin", "list"], env);
    const markets = listJson(claude, ["plugin", "marketplace", "list"], env);
    if (plugins === undefined || markets === undefined) throw new InputError(`\`claude plugin list --json\` did not answer: remove the plugin yourself (claude plugin uninstall ${PLUGIN_ID}; claude plugin marketplace remove ${MARKETPLACE}), then run this again`);
    if (plugins.some((x) => x.id === PLUGIN_ID)) commands.push({ argv: [claude, "plugin", "uninstall", PLUGIN_ID] });
    if (markets.some((x) => x.name === MARKETPLACE)) commands.push({ argv: [claude, "plugin", "marketplace", "remove", MARKETPLACE] });
    if (commands.length) notes.push(`${would("ran", "would run")}: ${commands.map((c) => `claude ${c.argv.slice(1).join(" ")}`).join(", then ")}`);
  }
  let manual: string[] | undefined;
  if (!claude && pluginEnabled(env)) {
    manual = [`claude plugin uninstall ${PLUGIN_ID}`, `claude plugin marketplace remove ${MARKETPLACE}`];
    notes.push("`claude` is not on PATH: Claude Code still lists the plugin; remove it with:", ...manual.map((m) => `  ${m}`));
  }
  if (link) changes.push({ path: p.link, before: describe(p.link), ownFolder: true });
  if (lstatOrUndefined(p.plugin)?.isDirectory()) changes.push({ path: p.plugin, folder: true, before: "(the plugin folder)" });
  if (existsSync(p.manifest)) changes.push({ path: p.manifest, before: describe(p.manifest), ownFolder: true });
  notes.push(changes.length ? `${would("removed", "would remove")} memsearch's Claude Code plugin from ${p.marketplace}` : `memsearch's Claude Code plugin is not in ${p.marketplace}`);
  return { agent: "claude", changes, notes, commands, ...(manual ? { manual } : {}) };
}

const Settings = v.looseObject({ enabledPlugins: v.optional(v.record(v.string(), v.unknown())) });

/** Claude Code's user settings enable our plugin. */
function pluginEnabled(env: NodeJS.ProcessEnv): boolean {
  try {
    const r = parseJson(readFileSync(join(env.HOME || homedir(), ".claude", "settings.json"), "utf8"), Settings);
    return "value" in r && r.value.enabledPlugins?.[PLUGIN_ID] !== undefined;
  } catch {
    return false;
  }
}

/** The plugin's hooks find a binary: the link resolves to an executable file. */
export function linkedBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { link } = claudeInstallPaths(env);
  try {
    const real = realpathSync(link);
    return statSync(real).isFile() && (statSync(real).mode & 0o111) !== 0 ? real : undefined;
  } catch {
    return undefined;
  }
}
