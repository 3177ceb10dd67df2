/**
 * `memsearch install opencode`: one file, memsearch's plugin (plugin.ts), in OpenCode's global
 * plugins folder (`$XDG_CONFIG_HOME/opencode/plugins/memsearch.js`), which OpenCode loads by
 * itself. `opencode.json` and the user's own plugins are never touched; a `memsearch.js` that is
 * not ours (no mark on its first line) is refused, never replaced; `--uninstall` removes only ours.
 */
import { existsSync, lstatSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { InputError } from "../../core/errors.ts";
import { errCode, readOwnText } from "../../core/fsutil.ts";
import type { InstallOptions, InstallPlan, WiredState } from "../types.ts";
import { PLUGIN_MARK, pluginSource } from "./plugin.ts";

/** OpenCode's config folder (the XDG rule it follows). */
export function opencodeConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), ".config");
  return join(xdg, "opencode");
}

/** OpenCode's data folder, where its database lives. */
export function opencodeDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(env.HOME || homedir(), ".local", "share");
  return join(xdg, "opencode");
}

export function pluginPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(opencodeConfigDir(env), "plugins", "memsearch.js");
}

/** The plugin file as it is: undefined when absent; a link or a file not ours is refused by the caller. */
function readPlugin(path: string): { text?: string; link?: boolean } {
  try {
    if (lstatSync(path).isSymbolicLink()) return { link: true };
  } catch (e) {
    if (errCode(e) === "ENOENT") return {};
  }
  try {
    return { text: readOwnText(path) };
  } catch (e) {
    throw new InputError(`cannot read ${path} (${errCode(e) ?? String(e)})`);
  }
}

const ours = (text: string) => text.startsWith(PLUGIN_MARK);

export function planOpencodeInstall(opts: InstallOptions & { uninstall?: boolean }): InstallPlan {
  const path = pluginPath(opts.env);
  const { text, link } = readPlugin(path);
  if (link) throw new InputError(`${path} is a symbolic link, not memsearch's plugin; memsearch writes only a plain file there (remove the link, then run this again)`);
  if (text !== undefined && !ours(text)) throw new InputError(`${path} is not memsearch's plugin (a file of yours?); memsearch leaves it alone: move it, then run this again`);
  if (opts.uninstall) {
    return text === undefined
      ? { agent: "opencode", changes: [], notes: [`memsearch is not wired into OpenCode (${path})`] }
      : { agent: "opencode", changes: [{ path, before: text }], notes: [`${opts.dryRun ? "would remove" : "removed"} memsearch's plugin from OpenCode (${path})`] };
  }
  const after = pluginSource(opts.exe);
  if (text === after) return { agent: "opencode", changes: [], notes: [`memsearch is already wired into OpenCode (${path})`] };
  return { agent: "opencode", changes: [{ path, before: text, after }], notes: [`${opts.dryRun ? "would wire" : "wired"} memsearch's plugin into OpenCode (${opencodeConfigDir(opts.env)}): prompts, recall and capture through memsearch's hooks`] };
}

export function opencodeWired(opts: InstallOptions): WiredState {
  const path = pluginPath(opts.env);
  let r;
  try {
    r = readPlugin(path);
  } catch (e) {
    return { wired: false, detail: (e as Error).message };
  }
  if (r.link) return { wired: false, detail: `${path} is a symbolic link, not memsearch's plugin` };
  if (r.text === undefined) return { wired: false, detail: `no memsearch plugin in ${path}` };
  if (!ours(r.text)) return { wired: false, detail: `${path} is not memsearch's plugin` };
  const m = /^const EXE = (\[.*\]);$/m.exec(r.text);
  let exe: unknown;
  try {
    exe = m ? JSON.parse(m[1]!) : undefined;
  } catch {}
  const bin = Array.isArray(exe) && typeof exe[0] === "string" ? exe[0] : undefined;
  if (!bin || !existsSync(bin)) return { wired: false, detail: `the plugin in ${path} runs ${bin ?? "nothing"}, which is not there (memsearch install opencode)` };
  return { wired: true, detail: `plugin in ${path}` };
}
