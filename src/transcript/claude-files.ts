/**
 * Where Claude Code keeps its transcripts and which project each belongs to: the one place that
 * knows `~/.claude/projects/<slug>/<session>.jsonl` (and `<session>/subagents/agent-<id>.jsonl`),
 * `$CLAUDE_CONFIG_DIR`, the slug of a folder, and the project of a recorded cwd.
 *
 * Everything below the projects folder is bytes memsearch did not write: only regular files are
 * ever opened (a FIFO named `*.jsonl` would block an open for ever), and a transcript named by a
 * note's anchor is followed only when it is one of this project's.
 */
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { InputError, NotFoundError } from "../core/errors.ts";
import { errCode } from "../core/fsutil.ts";
import { gitTopLevel, realOr } from "../core/project.ts";
import { claudeConfigDir, projectSlug } from "../core/claude-home.ts";

/** A transcript path refused because it is not one of this project's (`anotherProject`: it is some other project's). */
export class ForeignTranscriptError extends InputError {
  constructor(
    message: string,
    readonly anotherProject = false,
  ) {
    super(message);
  }
}

export { claudeConfigDir, homeOf, projectSlug } from "../core/claude-home.ts";

/** `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`. */
export function claudeProjectsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(claudeConfigDir(env), "projects");
}

/** `agent-<id>.jsonl` inside a `subagents/` folder. */
export function isSubagentPath(path: string): boolean {
  return /(^|[\\/])subagents[\\/]agent-[^\\/]+\.jsonl$/.test(path);
}

/** The folder holding a session's subagent files. */
export function subagentDir(sessionPath: string): string {
  return join(dirname(sessionPath), basename(sessionPath).replace(/\.jsonl$/i, ""), "subagents");
}

/** The `<slug>` folder a transcript is filed under (a subagent file sits three levels below it). */
export function slugDirOf(path: string): string {
  return isSubagentPath(path) ? dirname(dirname(dirname(path))) : dirname(path);
}

/** What a path is when it is not a regular file, for a one-line message. */
function kindOf(st: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isDirectory()) return "a directory";
  if (st.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

/**
 * Open `path` for reading only if it is a regular file; the descriptor, else a typed error. The
 * open never waits: O_NONBLOCK makes opening a FIFO return at once (it changes nothing for a
 * regular file), and the check is made on the descriptor itself, so a file swapped after a stat
 * cannot slip through.
 */
export function openRegularFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = errCode(e);
    if (code === "ENOENT" || code === "ENOTDIR") throw new NotFoundError(`transcript not found: ${path}`);
    if (code === "EISDIR") throw new InputError(`transcript path is a directory, not a .jsonl file: ${path}`);
    throw new InputError(`cannot read transcript: ${path} (${code ?? (e as Error).message})`);
  }
  const st = fstatSync(fd);
  if (st.isFile()) return fd;
  closeSync(fd);
  if (st.isDirectory()) throw new InputError(`transcript path is a directory, not a .jsonl file: ${path}`);
  throw new InputError(`transcript is not a regular file (${kindOf(st)}): ${path}`);
}

export interface Listed {
  /** Regular `*.jsonl` files, sorted. */
  files: string[];
  /** `*.jsonl` entries that are not regular files inside the folder (never opened), with what they are. */
  skipped: { path: string; reason: string }[];
}

/**
 * The transcripts directly in `dir`: regular `*.jsonl` files only. A symbolic link is followed
 * only to a regular file inside `within` (the projects folder); FIFOs, sockets, devices, folders
 * and links leading out are reported, never opened. An unreadable folder lists nothing.
 */
export function listTranscripts(dir: string, within: string = dir): Listed {
  const out: Listed = { files: [], skipped: [] };
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const path = join(dir, name);
    const why = notRegularTranscript(path, within);
    if (why === undefined) out.files.push(path);
    else if (why) out.skipped.push({ path, reason: why });
  }
  return out;
}

/**
 * Why `path` is not a regular file inside `within`; undefined when it is, "" when it vanished
 * (nothing to report). Never opens the file.
 */
export function notRegularTranscript(path: string, within: string): string | undefined {
  return notRegularInside(path, within, "out of Claude Code's projects folder");
}

/**
 * Why `path` is not read: undefined when it is a regular file (or a link to one inside `within`),
 * "" when it vanished, else a few words (`outside` says where a link out of `within` leads).
 * Never opens the file.
 */
export function notRegularInside(path: string, within: string, outside: string): string | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return "";
  }
  if (st.isFile()) return undefined;
  if (!st.isSymbolicLink()) return kindOf(st);
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    return "a broken symbolic link";
  }
  if (!isInside(target, realOr(within))) return `a symbolic link ${outside}`;
  try {
    const t = lstatSync(target);
    return t.isFile() ? undefined : `a symbolic link to ${kindOf(t)}`;
  } catch {
    return "";
  }
}


/** Strictly below `dir` (`relative` gives `..`-led or absolute paths for anything else). */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * What a working directory that names no folder is taken for (a relative one, `"."` in a Codex
 * rollout or an OpenCode session): no project. It is no path, so it matches none.
 */
export const NO_PROJECT = "(no project: the session's working directory is not an absolute path)";

/**
 * Identity of a recorded working directory: its main worktree's git top level (every worktree of
 * a repository is one project), else the directory itself; a directory that no longer exists is
 * its own identity (never attributed to whatever repository encloses its old place). A relative
 * one is NO_PROJECT: resolved, it would name wherever memsearch happens to run.
 */
export function projectOfCwd(cwd: string, cache?: Map<string, string>): string {
  if (!isAbsolute(cwd)) return NO_PROJECT;
  const hit = cache?.get(cwd);
  if (hit) return hit;
  const abs = resolve(cwd);
  const id = existsSync(abs) ? (gitTopLevel(abs) ?? abs) : abs;
  cache?.set(cwd, id);
  return id;
}

/** Whether two project identities name the same folder (through symbolic links: `/tmp` → `/private/tmp`). */
export function sameProject(a: string, b: string): boolean {
  if (!isAbsolute(a) || !isAbsolute(b)) return false;
  return a === b || realOr(a) === realOr(b);
}

const CWD_RE = /"cwd"\s*:\s*"((?:[^"\\]|\\.)*)"/;
// The first entries carry the cwd; request records of 40–60 KB may come first, so look a little further.
const CWD_HEAD_BYTES = [64 * 1024, 1024 * 1024];

/** The working directory the session ran in, from the first entry that records one. Regular files only. */
export function transcriptCwd(path: string): string | undefined {
  const fd = openRegularFile(path);
  try {
    for (const size of CWD_HEAD_BYTES) {
      const buf = Buffer.alloc(size);
      const bytesRead = readSync(fd, buf, 0, size, 0);
      const m = CWD_RE.exec(buf.subarray(0, bytesRead).toString("utf8"));
      if (m) {
        try {
          const v: unknown = JSON.parse(`"${m[1]}"`);
          return typeof v === "string" && v ? v : undefined;
        } catch {
          return undefined;
        }
      }
      if (bytesRead < size) return undefined;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Whether the transcript at `path` (a regular file) belongs to the project `root`. */
function belongsTo(path: string, root: string, cache?: Map<string, string>): boolean {
  const cwd = transcriptCwd(path);
  // Nothing recorded: the folder Claude Code files the root's sessions under is the evidence.
  if (!cwd) return basename(slugDirOf(path)) === projectSlug(realOr(root)) || basename(slugDirOf(path)) === projectSlug(resolve(root));
  return sameProject(projectOfCwd(cwd, cache), root);
}

export interface FoundTranscripts {
  /** Where we looked. */
  projectsDir: string;
  /** Session files of this project, sorted. */
  files: string[];
  /** Session files seen that belong to other projects (never imported). */
  otherProjects: number;
  /** Entries named `*.jsonl` that are not regular files (FIFOs, sockets, devices, links out): never opened. */
  skipped: { path: string; reason: string }[];
}

/**
 * Session files of `root` below the projects folder: `<slug>/*.jsonl` whose recorded cwd belongs
 * to the project. Every folder is looked at, not only the root's slug: sessions started in a
 * subdirectory or another worktree live under other slugs. `<session>/subagents/` files are not
 * returned: a subagent's work is a tool call of its parent's turn.
 */
export function findProjectTranscripts(root: string, projectsDir: string, warn: (msg: string) => void = () => {}): FoundTranscripts {
  const ownSlug = projectSlug(realOr(root));
  const found: FoundTranscripts = { projectsDir, files: [], otherProjects: 0, skipped: [] };
  let dirs: string[];
  try {
    dirs = readdirSync(projectsDir).sort();
  } catch {
    return found;
  }
  const cache = new Map<string, string>();
  for (const d of dirs) {
    const listed = listTranscripts(join(projectsDir, d), projectsDir);
    found.skipped.push(...listed.skipped);
    for (const path of listed.files) {
      let mine: boolean;
      try {
        mine = belongsTo(path, root, cache);
      } catch (e) {
        if (d === ownSlug) warn(`skipped ${path}: cannot read it (${errCode(e) ?? (e as Error).message})`);
        continue;
      }
      if (mine) found.files.push(path);
      else found.otherProjects++;
    }
  }
  return found;
}

/**
 * Refuse a transcript path that is not one of `root`'s Claude Code transcripts: outside the
 * projects folder, not a regular file, or recorded in another project's working directory. A
 * note's anchor may come with a cloned repository, so the path it names is checked before it is
 * read. With `anyProject`, any transcript below the projects folder is accepted.
 */
export function checkProjectTranscript(path: string, root: string, o: { env?: NodeJS.ProcessEnv; anyProject?: boolean } = {}): void {
  const projectsDir = claudeProjectsDir(o.env);
  const abs = resolve(path);
  if (!abs.endsWith(".jsonl")) throw new InputError(`not a transcript (.jsonl): ${path}`);
  const real = realOr(abs);
  if (!isInside(real, realOr(projectsDir))) throw new ForeignTranscriptError(`refused: ${path} is not a Claude Code transcript (not under ${projectsDir})`);
  const why = notRegularTranscript(abs, projectsDir);
  if (why === "") throw new NotFoundError(`transcript not found: ${path}`);
  if (why !== undefined) throw new ForeignTranscriptError(`refused: ${path} is ${why}`);
  if (o.anyProject) return;
  if (!belongsTo(real, root)) throw new ForeignTranscriptError(`refused: ${path} is another project's transcript (this project: ${root})`, true);
}

/** `checkProjectTranscript` as a yes or no. */
export function isProjectTranscript(path: string, root: string, o: { env?: NodeJS.ProcessEnv; anyProject?: boolean } = {}): boolean {
  try {
    checkProjectTranscript(path, root, o);
    return true;
  } catch {
    return false;
  }
}
