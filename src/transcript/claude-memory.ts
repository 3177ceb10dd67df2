/**
 * Claude Code's curated memory of a project (layer 1): its memory folder (`MEMORY.md` and topic
 * files, written by Claude and its background extraction) and the project's `CLAUDE.md` files
 * (root, nested, `.claude/CLAUDE.md`, and `CLAUDE.local.md`). memsearch indexes them as their own
 * source; it never writes them.
 *
 * Where the memory folder lies is resolved as Claude Code resolves it: `autoMemoryDirectory` from
 * managed, local (`.claude/settings.local.json`) or user settings, in that order, never from the
 * project's shared `.claude/settings.json`; `~/` expanded, anything not absolute refused; else
 * `<config dir>/projects/<slug of the main worktree's root>/memory`. One refusal of our own: a
 * local setting pointing outside the project is ignored, since a cloned repository could ship
 * that file to make memsearch read another project's memory.
 *
 * Everything here is bytes memsearch did not write: only regular files are returned, a link only
 * when it leads to a regular file inside the same place (the project, or the memory folder), and
 * the walk of the project is bounded.
 */
import { lstatSync, readdirSync, readFileSync, statSync, type Dirent } from "node:fs";
import { basename, isAbsolute, join, normalize, resolve } from "node:path";
import * as v from "valibot";
import { parseJson, readJson } from "../core/json-file.ts";
import { claudeConfigDir, homeOf, isInside, notRegularInside, projectSlug } from "./claude-files.ts";
import { realOr } from "../core/project.ts";

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

export type CuratedKind = "memory" | "CLAUDE.md" | "CLAUDE.local.md";

export interface CuratedFile {
  /** Real path. */
  path: string;
  kind: CuratedKind;
}

export interface CuratedFiles {
  memory: MemoryFolder;
  files: CuratedFile[];
  /** Named like a curated file but not read: links out, special files. */
  skipped: { path: string; reason: string }[];
  /** Folders of the project looked into, and whether the walk stopped at its bound. */
  folders: number;
  truncated: boolean;
  /** The project's folders to watch for CLAUDE.md edits: the root and every folder holding one. */
  watchDirs: string[];
  /** The memory folder and its topic folders, when they exist: any markdown edit there counts. */
  memoryDirs: string[];
}

/** Folders of a project walked for nested CLAUDE.md files at most: a monorepo's walk stays bounded. */
export const MAX_WALK_FOLDERS = 20_000;
/** Folders never entered: dependencies and build output hold other projects' CLAUDE.md files. */
const SKIP_FOLDERS = new Set(["node_modules", "bower_components", "vendor", "target", "dist", "build", "__pycache__"]);
const PROJECT_NAMES = new Set(["CLAUDE.md", "CLAUDE.local.md"]);

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

/**
 * The project's curated files: the memory folder's markdown, and every `CLAUDE.md` /
 * `CLAUDE.local.md` of the project (plus `.claude/CLAUDE.md` at the root). Dot folders,
 * dependencies and build output are not entered; the walk stops after `maxFolders` folders.
 */
export function findCuratedFiles(root: string, o: ResolveOptions & { maxFolders?: number } = {}): CuratedFiles {
  const memory = resolveMemoryFolder(root, o);
  const out: CuratedFiles = { memory, files: [], skipped: [], folders: 0, truncated: false, watchDirs: [], memoryDirs: [] };
  const seen = new Set<string>();
  const watch = new Set<string>();
  const memoryDirs = new Set<string>();
  const add = (full: string, kind: CuratedKind, within: string) => {
    const why = notRegularInside(full, within, "leading out of the project");
    if (why === "") return;
    if (why !== undefined) {
      out.skipped.push({ path: full, reason: why });
      return;
    }
    const real = realOr(full);
    if (seen.has(real)) return;
    seen.add(real);
    out.files.push({ path: real, kind });
  };

  // The memory folder: its markdown, one level of topic folders deep.
  const memReal = realOr(memory.dir);
  if (isDir(memReal)) {
    memoryDirs.add(memReal);
    for (const e of list(memReal)) {
      const full = join(memReal, e.name);
      if (e.name.startsWith(".")) continue;
      if (/\.md$/i.test(e.name)) add(full, "memory", memReal);
      else if (e.isDirectory()) {
        memoryDirs.add(full);
        for (const f of list(full)) if (!f.name.startsWith(".") && /\.md$/i.test(f.name)) add(join(full, f.name), "memory", memReal);
      }
    }
  }

  const rootReal = realOr(root);
  const inProject = (name: string, dir: string) => add(join(dir, name), name === "CLAUDE.local.md" ? "CLAUDE.local.md" : "CLAUDE.md", rootReal);
  const dotClaude = join(rootReal, ".claude", "CLAUDE.md");
  if (exists(dotClaude)) {
    inProject("CLAUDE.md", join(rootReal, ".claude"));
    watch.add(join(rootReal, ".claude"));
  }
  const max = o.maxFolders ?? MAX_WALK_FOLDERS;
  const stack = [rootReal];
  watch.add(rootReal);
  while (stack.length) {
    if (out.folders >= max) {
      out.truncated = true;
      break;
    }
    const dir = stack.pop()!;
    out.folders++;
    for (const e of list(dir)) {
      if (e.name.startsWith(".")) continue;
      if (e.isDirectory()) {
        if (!SKIP_FOLDERS.has(e.name)) stack.push(join(dir, e.name));
      } else if (PROJECT_NAMES.has(e.name)) {
        inProject(e.name, dir);
        watch.add(dir);
      }
    }
  }
  out.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  out.watchDirs = [...watch].sort();
  out.memoryDirs = [...memoryDirs].sort();
  return out;
}

function list(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return []; // unreadable or vanished: nothing from it
  }
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}


/**
 * Whether a curated file's text was written on this machine (Claude Code's memory folder, a
 * `CLAUDE.local.md`, which git leaves out) or came with the repository (`CLAUDE.md` is committed).
 */
export function curatedFromRepository(source: string): boolean {
  return basename(source) === "CLAUDE.md";
}
