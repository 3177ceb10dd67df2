/**
 * Claude Code's curated memory of a project (layer 1): its memory folder (`MEMORY.md` and topic
 * files, written by Claude and its background extraction) and the project's `CLAUDE.md` files
 * (root, nested, `.claude/CLAUDE.md`, and `CLAUDE.local.md`). memsearch indexes them as their own
 * source; it never writes them.
 *
 * Where the memory folder lies is resolved in core/claude-home.ts (the index's places need it too).
 *
 * Everything here is bytes memsearch did not write: only regular files are returned, a link only
 * when it leads to a regular file inside the same place (the project, or the memory folder), and
 * the walk of the project is bounded.
 */
import { readdirSync, statSync, type Dirent } from "node:fs";
import { basename, join } from "node:path";
import { resolveMemoryFolder, type MemoryFolder, type ResolveOptions } from "../../core/claude-home.ts";
import { notRegularInside } from "../../transcript/files.ts";
import { realOr } from "../../core/project.ts";
import { lexists } from "../../core/fsutil.ts";

export { managedSettingsPath, resolveMemoryFolder, type MemoryFolder, type MemoryFolderFrom, type ResolveOptions } from "../../core/claude-home.ts";

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
  if (lexists(dotClaude)) {
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

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function list(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return []; // unreadable or vanished: nothing from it
  }
}



/**
 * Whether a curated file's text was written on this machine (Claude Code's memory folder, a
 * `CLAUDE.local.md`, which git leaves out) or came with the repository (`CLAUDE.md` is committed).
 */
export function curatedFromRepository(source: string): boolean {
  return basename(source) === "CLAUDE.md";
}
