import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** Where one project's memory lives. */
export interface ProjectPaths {
  /** The project root: git top level (shared by worktrees), else CLAUDE_PROJECT_DIR, else cwd. */
  root: string;
  /** The `.memsearch` folder (MEMSEARCH_DIR overrides). */
  dataDir: string;
  /** Daily markdown files: the source of truth. */
  memoryDir: string;
  /** Derived index files. */
  indexDir: string;
}

/**
 * The main worktree's top level for `start`, or undefined outside git.
 * Read from the filesystem rather than by spawning git: this runs in every hook.
 */
export function gitTopLevel(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    const dotGit = join(dir, ".git");
    let st;
    try {
      st = statSync(dotGit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) return dir;
    if (st?.isFile()) return mainWorktreeOf(dir, dotGit) ?? dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** A linked worktree's `.git` file points at `<common>/worktrees/<name>`; the memory belongs to `<common>`'s repository. */
function mainWorktreeOf(dir: string, dotGitFile: string): string | undefined {
  try {
    const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGitFile, "utf8"));
    if (!m) return undefined;
    const gitdir = resolve(dir, m[1]!.trim());
    const commondirFile = join(gitdir, "commondir");
    if (!existsSync(commondirFile)) return undefined; // a submodule: its own project
    const common = resolve(gitdir, readFileSync(commondirFile, "utf8").trim());
    return dirname(common);
  } catch {
    return undefined;
  }
}

export function resolveProjectRoot(cwd = process.cwd(), env = process.env): string {
  return gitTopLevel(cwd) ?? (env.CLAUDE_PROJECT_DIR ? resolve(env.CLAUDE_PROJECT_DIR) : resolve(cwd));
}

export function resolveProject(cwd = process.cwd(), env = process.env): ProjectPaths {
  const root = resolveProjectRoot(cwd, env);
  const override = env.MEMSEARCH_DIR;
  const dataDir = override ? (isAbsolute(override) ? override : resolve(cwd, override)) : join(root, ".memsearch");
  return { root, dataDir, memoryDir: join(dataDir, "memory"), indexDir: join(dataDir, "index") };
}

/** `~/.memsearch`, overridable so tests never touch the real home. */
export function userDir(env = process.env): string {
  if (env.MEMSEARCH_HOME) return resolve(env.MEMSEARCH_HOME);
  const home = env.HOME ?? env.USERPROFILE ?? homedir();
  return join(home, ".memsearch");
}
