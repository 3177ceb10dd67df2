import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, type Dirent } from "node:fs";
import { atomicWrite, fileStamp } from "./fsutil.ts";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { UnsafeDataError } from "./errors.ts";
import { clip } from "./text.ts";

/** Where one project's memory lives. */
export interface ProjectPaths extends DataFiles {
  /** The project root: git top level (shared by worktrees), else CLAUDE_PROJECT_DIR, else cwd. */
  root: string;
}

/**
 * Every file and folder memsearch keeps under a project's `.memsearch` folder, named once.
 * Code that only knows the data folder (a hook, the watch process) gets the same names from
 * `dataFiles(dataDir)`.
 */
export interface DataFiles {
  /** The `.memsearch` folder (MEMSEARCH_DIR overrides). */
  dataDir: string;
  /** Daily markdown files: the source of truth. */
  memoryDir: string;
  /** Derived index files. */
  indexDir: string;
  /** The index itself (format: src/index/format.ts). */
  indexFile: string;
  /** The running watch process: pid, socket, start time, version (JSON). */
  watchPid: string;
  /** The watch process's stdout and stderr, when a hook started it. */
  watchLog: string;
  /** Held while a watch process claims the project or decides to leave it. */
  watchLock: string;
  /** O_EXCL marker of a hook starting a watch process; holds its pid once spawned. */
  watchStarting: string;
  /** The last problem a background hook met, for the next SessionStart status line. */
  hookProblems: string;
  /** One file per live Claude Code session of the project. */
  sessionsDir: string;
  /** Turns waiting for their note (write-ahead queue). */
  pendingDir: string;
  /** Prompts UserPromptSubmit recorded, by session and prompt id. */
  pendingPromptsDir: string;
  /** Held by the one drainer at work on the queue. */
  drainLock: string;
  /** Every decision of the prompt hook, one JSON line each (schema: src/memory/injections.ts). */
  injectionLog: string;
  /** The log's previous part, once the log outgrew its size. */
  injectionLogOld: string;
  /** Turns the user forgot (`memsearch forget`): never written again by the drainer or import (JSON, schema: src/memory/forget.ts). */
  forgotten: string;
  /** Held while the forgotten list changes. */
  forgottenLock: string;
  /** Every model call memsearch made, one JSON line each (schema: src/memory/ledger.ts). */
  modelLedger: string;
  /** The ledger's previous part, once it outgrew its size. */
  modelLedgerOld: string;
}

export function dataFiles(dataDir: string): DataFiles {
  const indexDir = join(dataDir, "index");
  const pendingDir = join(dataDir, "pending");
  return {
    dataDir,
    memoryDir: join(dataDir, "memory"),
    indexDir,
    indexFile: join(indexDir, INDEX_FILE),
    watchPid: join(dataDir, "watch.pid"),
    watchLog: join(dataDir, "watch.log"),
    watchLock: join(dataDir, "watch.lock"),
    watchStarting: join(dataDir, "watch.starting"),
    hookProblems: join(dataDir, "hook-problems.json"),
    sessionsDir: join(dataDir, "sessions"),
    pendingDir,
    pendingPromptsDir: join(pendingDir, "prompts"),
    drainLock: join(pendingDir, ".drain.lock"),
    injectionLog: join(dataDir, "injections.jsonl"),
    injectionLogOld: join(dataDir, "injections.1.jsonl"),
    forgotten: join(dataDir, "forgotten.json"),
    forgottenLock: join(dataDir, ".forgotten.lock"),
    modelLedger: join(dataDir, "model-calls.jsonl"),
    modelLedgerOld: join(dataDir, "model-calls.1.jsonl"),
  };
}

/**
 * What the data folder's `.gitignore` holds: the notes are plain markdown a team may keep in git;
 * everything else is machine state that holds prompts (the index, the prompt queue, the injection
 * log, the sessions, the logs, the model-call ledger) and must not be committed. The file itself
 * is kept, so a clone brings it along.
 */
export const DATA_GITIGNORE = `# Written by memsearch when it made this folder: only the notes (memory/) belong in git.
# The rest is this machine's state (index, prompt queue, injection log, sessions, logs,
# model-call ledger), which holds prompts. Delete this file to choose for yourself.
*
!.gitignore
!memory/
!memory/**
memory/.*
`;

/**
 * Make the data folder (and `sub`, a folder inside it) before a first write. When memsearch makes
 * the data folder itself, it writes its `.gitignore` (DATA_GITIGNORE) in the same step; a folder
 * that was there already is left as its owner keeps it. Every writer that may be the first in a
 * project comes through here (the journal, the index lock, the prompt queue, the session files,
 * the logs), so no read ever makes the folder and no write makes it without the file.
 */
export function makeDataDir(dataDir: string, sub?: string): void {
  const made = mkdirSync(dataDir, { recursive: true });
  if (made !== undefined) atomicWrite(join(dataDir, ".gitignore"), DATA_GITIGNORE);
  if (sub !== undefined) mkdirSync(sub, { recursive: true });
}

/**
 * Inside the index folder: the index file (its base: src/index/format.ts), the manifest of the
 * segments after it (src/index/segments.ts), and the lock beside them.
 */
export const INDEX_FILE = "index.bin";
export const MANIFEST_FILE = "manifest.json";
export const INDEX_LOCK = "index.lock";

/** Changes whenever a writer saved the index: a new base or a new manifest (a long-lived reader reloads on it). */
export function indexStamp(indexDir: string): string {
  return `${fileStamp(join(indexDir, INDEX_FILE))}|${fileStamp(join(indexDir, MANIFEST_FILE))}`;
}

type EntryKind = "folder" | "file" | "link" | "special";

function kindOf(e: Dirent, dir: string): EntryKind {
  if (e.isSymbolicLink()) return "link";
  if (e.isDirectory()) return "folder";
  if (e.isFile()) return "file";
  // Some file systems do not say the type in the listing: ask.
  try {
    const st = lstatSync(join(dir, e.name));
    return st.isSymbolicLink() ? "link" : st.isDirectory() ? "folder" : st.isFile() ? "file" : "special";
  } catch {
    return "special";
  }
}

/**
 * Refuse a data folder that a cloned repository could use to make memsearch read or write
 * elsewhere, or hang: the folder or anything in it a symbolic link or a special file (FIFO,
 * socket, device), or (unless the user chose the folder with MEMSEARCH_DIR) a folder whose real
 * path is not inside the project. A regular file where a folder belongs, or the reverse, stays in
 * the project: it is left to the code that meets it (the index heals, a write says it failed).
 * Run before anything reads or writes under the folder; one that does not exist yet passes.
 * Throws UnsafeDataError naming the first offender.
 */
export function checkDataFolder(paths: ProjectPaths, opts: { chosen: boolean }): void {
  const { root, dataDir } = paths;
  // Names come from the repository: quoted, so no control character reaches a terminal or status line.
  const refuse = (path: string, why: string, fix = "remove it") => {
    const shown = opts.chosen ? path : relative(root, path);
    return new UnsafeDataError(`memory is off for ${root}: ${JSON.stringify(clip(shown, 120))} ${why}; nothing was read or written (${fix})`);
  };
  const LINK = "is a symbolic link, which could make memsearch read or write outside the project";
  const SPECIAL = "is a special file (FIFO, socket or device), which memsearch never makes";
  const ownFolder = opts.chosen ? "remove it" : "remove it, or set MEMSEARCH_DIR to a folder of your own";
  let top;
  try {
    top = lstatSync(dataDir);
  } catch {
    return; // absent (made when first needed) or not ours to look at: the write itself will say
  }
  if (top.isSymbolicLink()) throw refuse(dataDir, LINK, ownFolder);
  if (top.isFile()) return; // in the project, and no folder: every write says so
  if (!top.isDirectory()) throw refuse(dataDir, SPECIAL, ownFolder);
  if (!opts.chosen && !isInside(realOr(dataDir), realOr(root))) throw refuse(dataDir, "is not inside the project", ownFolder);
  const stack = [dataDir];
  while (stack.length) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable: whatever needs it fails on its own
    }
    for (const e of entries) {
      // Every command walks the folder (a day's notes a file): a path is joined only when needed.
      const kind = kindOf(e, dir);
      if (kind === "file") continue;
      const full = join(dir, e.name);
      if (kind === "link") throw refuse(full, LINK);
      if (kind === "special") throw refuse(full, SPECIAL);
      stack.push(full);
    }
  }
}

/** The path with links resolved, or as given (made absolute) when it cannot be resolved. */
export function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** Strictly below `dir` (both absolute and normalised). */
export function isInside(p: string, dir: string): boolean {
  return p.startsWith(dir.endsWith(sep) ? dir : dir + sep);
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
  return { root, ...dataFiles(dataDir) };
}

/**
 * Every file and folder memsearch keeps for the user, across projects, under `~/.memsearch`,
 * named once (the project's own files are `DataFiles`).
 */
export interface UserFiles {
  /** `~/.memsearch` (MEMSEARCH_HOME overrides). */
  dir: string;
  /** The machine-wide settings. */
  config: string;
  /** Every project a SessionStart has seen (memory/projects.ts). */
  projects: string;
  /** The conversation index (conversations/db.ts). */
  conversations: string;
  /** The hooks' debug log, redacted. */
  logsDir: string;
  /** Each running Memory Hub's record and launch page. */
  hubDir: string;
  /** The sessions this machine wrote notes for: our notes, told from a cloned repository's (memory/seen.ts). */
  sessionsSeen: string;
  /** What each transcript holds for the turn accounting, by the transcript's stamp (memory/accounting.ts). */
  turnsCache: string;
  /** Paths outside a project the user indexed for it, by project (core/places.ts): a repository cannot add to them. */
  namedPaths: string;
  /** The key that marks the lines this machine writes to a log kept in a project (core/machine-mark.ts). */
  machineKey: string;
}

export function userFiles(env = process.env): UserFiles {
  const dir = userDir(env);
  return {
    dir,
    config: join(dir, "config.toml"),
    projects: join(dir, "projects.json"),
    conversations: join(dir, "transcripts.sqlite"),
    logsDir: join(dir, "logs"),
    hubDir: join(dir, "hub"),
    sessionsSeen: join(dir, "sessions-seen.txt"),
    turnsCache: join(dir, "turns-cache.json"),
    namedPaths: join(dir, "named-paths.json"),
    machineKey: join(dir, "machine.key"),
  };
}

/** `~/.memsearch`, overridable so tests never touch the real home. */
export function userDir(env = process.env): string {
  if (env.MEMSEARCH_HOME) return resolve(env.MEMSEARCH_HOME);
  const home = env.HOME ?? env.USERPROFILE ?? homedir();
  return join(home, ".memsearch");
}

