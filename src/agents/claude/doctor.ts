/**
 * Claude Code's plugin for `memsearch doctor`: installed and enabled in Claude Code, with hooks
 * that will find a binary (more than `wired` says: which binary the hooks run).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { parseJson } from "../../core/json-file.ts";
import type { DoctorCheck } from "../types.ts";
import { linkedBinary } from "./install.ts";

/** Claude Code's settings and a plugin's manifest: the keys doctor reads, checked; the rest is Claude Code's. */
const SettingsShape = v.looseObject({ enabledPlugins: v.optional(v.record(v.string(), v.unknown())) });
const ManifestShape = v.looseObject({ name: v.string() });

/** A JSON file of Claude Code's, read as it is (the user's own, links included), or undefined. */
function claudeFile<S extends v.GenericSchema>(path: string, schema: S): v.InferOutput<S> | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  const r = parseJson(text, schema);
  return "value" in r ? r.value : undefined;
}

/** Is the plugin installed and enabled in Claude Code, with hooks that will find a binary? */
export function pluginCheck(env: NodeJS.ProcessEnv): DoctorCheck {
  const home = env.HOME ?? homedir();
  const settingsPath = join(home, ".claude", "settings.json");
  const settings = claudeFile(settingsPath, SettingsShape);
  const plugins = settings?.enabledPlugins ?? {};
  const enabled = Object.keys(plugins).find((k) => k.startsWith("memsearch@") && plugins[k]);
  const roots = [join(home, ".claude", "plugins", "cache"), join(home, ".memsearch")];
  const installed = roots.flatMap((r) => findPluginDirs(r, 3));
  if (!enabled) {
    return {
      name: "plugin",
      status: "warn",
      detail: installed.length ? `plugin files at ${installed[0]} but not enabled in ${settingsPath}` : "the Claude Code plugin is not installed",
      fix: "memsearch install claude",
    };
  }
  // The plugin's bin/memsearch runs the binary `install claude` linked; a plugin staged with a
  // copy of the binary (claude --plugin-dir dist/plugin) runs that copy.
  const linked = linkedBinary(env);
  if (linked) return { name: "plugin", status: "ok", detail: `${enabled} enabled; its hooks run ${linked}` };
  const withBin = installed.find((d) => isExecutable(join(d, "bin", "memsearch")) && !isScript(join(d, "bin", "memsearch")));
  if (withBin) return { name: "plugin", status: "ok", detail: `${enabled} enabled, binary in ${join(withBin, "bin")}` };
  if (onPath("memsearch", env)) return { name: "plugin", status: "ok", detail: `${enabled} enabled, binary from PATH` };
  return { name: "plugin", status: "fail", detail: `${enabled} is enabled but its hooks find no memsearch binary`, fix: "memsearch install claude (links the binary the hooks run)" };
}

function findPluginDirs(root: string, depth: number): string[] {
  if (depth < 0 || !existsSync(root)) return [];
  if (existsSync(join(root, ".claude-plugin", "plugin.json"))) {
    if (claudeFile(join(root, ".claude-plugin", "plugin.json"), ManifestShape)?.name === "memsearch") return [root];
  }
  let out: string[] = [];
  try {
    for (const e of readdirSync(root, { withFileTypes: true })) if (e.isDirectory()) out = out.concat(findPluginDirs(join(root, e.name), depth - 1));
  } catch {}
  return out;
}

function isScript(p: string): boolean {
  try {
    return readFileSync(p).subarray(0, 2).toString() === "#!";
  } catch {
    return false;
  }
}

function isExecutable(p: string): boolean {
  try {
    return (statSync(p).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? "").split(process.platform === "win32" ? ";" : ":").some((d) => d && isExecutable(join(d, name)));
}
