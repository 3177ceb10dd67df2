/**
 * Where Claude Code keeps its own folders: its config folder (`$CLAUDE_CONFIG_DIR`, else
 * `~/.claude`), the slug it names a project's folder with, and the project's memory folder
 * (`autoMemoryDirectory` resolved as Claude Code resolves it: from managed, local
 * (`.claude/settings.local.json`) or user settings, in that order, never from the project's shared
 * `.claude/settings.json`; `~/` expanded, anything not absolute refused; else
 * `<config dir>/projects/<slug of the main worktree's root>/memory`). One refusal of our own: a
 * local setting pointing outside the project is ignored, since a cloned repository could ship
 * that file to make memsearch read another project's memory.
 *
 * The one module below src/agents/ that knows an agent's folders, for the two parts that need them
 * before any adapter is loaded: the index's places on every load (core/places.ts: a chunk is
 * served only from this project's places, Claude Code's memory folder among them) and a note's
 * provenance on every search (memory/seen.ts: a session whose transcript is in Claude Code's
 * projects folder ran on this machine). What is in those folders, and reading them, is the
 * adapter's (src/agents/claude/files.ts, memory.ts); test/unit/agent-names.test.ts keeps it so.
 */
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, normalize, resolve } from "node:path";
import * as v from "valibot";
import { parseJson, readJson } from "./json-file.ts";
import { isInside, realOr } from "./project.ts";

/** `$CLAUDE_CONFIG_DIR`, else `~/.claude`: Claude Code's own folder (settings, projects). */
export function claudeConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.CLAUDE_CONFIG_DIR ? resolve(env.CLAUDE_CONFIG_DIR) : join(homeOf(env), ".claude");
}

/** `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`: where Claude Code keeps its transcripts. */
export function claudeProjectsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(claudeConfigDir(env), "projects");
}

/** The user's home as the environment says (tests set HOME to a temp folder). */
export function homeOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME ?? env.USERPROFILE ?? homedir();
}

/** The folder name Claude Code gives a working directory: every non-alphanumeric character becomes `-`. */
export function projectSlug(dir: string): string {
  return dir.replace(/[^A-Za-z0-9]/g, "-");
}

export type MemoryFolderFrom = "default" | "managed settings" | "local settings" | "user settings";

export interface MemoryFolder {
  /** Where Claude Code keeps this project's memory (it may not exist yet). */
  dir: string;
  from: MemoryFolderFrom;
  /** The settings file that chose it, when one did. */
  settingsFile?: string;
  /** `autoMemoryDirectory` values not followed, and why. */
  ignored: { file: string; value: string; why: string }[];
  /** Claude Code's auto memory is on for this project (off: its files are still read, if any). */
  enabled: boolean;
}

const Settings = v.looseObject({ autoMemoryDirectory: v.optional(v.unknown()), autoMemoryEnabled: v.optional(v.unknown()) });
type SettingsValue = v.InferOutput<typeof Settings>;

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** Claude Code's managed settings file (default: the platform's). */
  managedSettings?: string;
}

export function managedSettingsPath(platform = process.platform): string {
  if (platform === "darwin") return "/Library/Application Support/ClaudeCode/managed-settings.json";
  if (platform === "win32") return "C:\\Program Files\\ClaudeCode\\managed-settings.json";
  return "/etc/claude-code/managed-settings.json";
}

/** The user's own settings files may be links (a dotfiles folder): they are read through them. */
function userSettings(path: string): SettingsValue | undefined {
  let text: string;
  try {
    if (!statSync(path).isFile()) return undefined;
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  const r = parseJson(text, Settings);
  return "value" in r ? r.value : undefined;
}

/** A path setting as Claude Code takes it: `~/` expanded, then absolute or nothing. */
function settingPath(raw: unknown, env: NodeJS.ProcessEnv): { path: string } | { why: string } | undefined {
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (typeof raw !== "string") return { why: "not a string" };
  if (raw.includes("\0")) return { why: "holds a NUL byte" };
  let p = raw;
  if (p === "~" || p.startsWith("~/")) p = join(homeOf(env), p.slice(2));
  if (!isAbsolute(p)) return { why: "not an absolute path (Claude Code ignores it too)" };
  const n = normalize(p).replace(/[\\/]+$/, "");
  if (n.length < 2) return { why: "the file system root" };
  return { path: n };
}

/** Where Claude Code keeps the memory of the project at `root` (its main worktree's top level). */
export function resolveMemoryFolder(root: string, o: ResolveOptions = {}): MemoryFolder {
  const env = o.env ?? process.env;
  const config = claudeConfigDir(env);
  const managedFile = o.managedSettings ?? managedSettingsPath();
  const localFile = join(root, ".claude", "settings.local.json");
  const userFile = join(config, "settings.json");
  // The project's local settings come with the folder: never through a link.
  const local = readJson(localFile, Settings);
  const sources: [MemoryFolderFrom, string, SettingsValue | undefined][] = [
    ["managed settings", managedFile, userSettings(managedFile)],
    ["local settings", localFile, "value" in local ? local.value : undefined],
    ["user settings", userFile, userSettings(userFile)],
  ];
  const ignored: MemoryFolder["ignored"] = [];
  let enabled = !["1", "true", "yes", "on"].includes((env.CLAUDE_CODE_DISABLE_AUTO_MEMORY ?? "").toLowerCase());
  let enabledSet = env.CLAUDE_CODE_DISABLE_AUTO_MEMORY !== undefined && env.CLAUDE_CODE_DISABLE_AUTO_MEMORY !== "";
  let chosen: Omit<MemoryFolder, "ignored" | "enabled"> | undefined;
  for (const [from, file, s] of sources) {
    if (!enabledSet && typeof s?.autoMemoryEnabled === "boolean") {
      enabled = s.autoMemoryEnabled;
      enabledSet = true;
    }
    if (chosen || !s) continue;
    const p = settingPath(s.autoMemoryDirectory, env);
    if (!p) continue;
    const value = String(s.autoMemoryDirectory);
    if ("why" in p) {
      ignored.push({ file, value, why: p.why });
      continue;
    }
    if (from === "local settings" && !isInside(realOr(p.path), realOr(root)) && realOr(p.path) !== realOr(root)) {
      ignored.push({ file, value, why: "outside the project (a setting that comes with the folder cannot send memsearch elsewhere; set it in your user settings)" });
      continue;
    }
    chosen = { dir: p.path, from, settingsFile: file };
  }
  // The project's shared settings are not a source (a cloned repository writes them): say so when set.
  const shared = readJson(join(root, ".claude", "settings.json"), Settings);
  if ("value" in shared && shared.value.autoMemoryDirectory !== undefined) {
    ignored.push({ file: join(root, ".claude", "settings.json"), value: String(shared.value.autoMemoryDirectory), why: "project settings are not read for it (nor by Claude Code)" });
  }
  return { ...(chosen ?? { dir: defaultMemoryFolder(root, config), from: "default" as const }), ignored, enabled };
}

/** `<config>/projects/<slug>/memory`; the slug of the real root when that folder exists, else of the root as given. */
function defaultMemoryFolder(root: string, config: string): string {
  const projects = join(config, "projects");
  const real = realOr(root);
  const candidates = [...new Set([projectSlug(real), projectSlug(resolve(root))])].map((s) => join(projects, s, "memory"));
  return candidates.find((d) => isDir(d)) ?? candidates[0]!;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
