/**
 * What every agent's transcripts share on disk: they are bytes memsearch did not write, so only
 * regular files are ever opened (a FIFO named like a transcript would block an open for ever) and
 * a link counts only when it stays inside its agent's folder; and which project a session belongs
 * to, from the working directory it recorded. Each agent's own layout is its adapter's
 * (src/agents/<name>/files.ts).
 */
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { InputError, NotFoundError } from "../core/errors.ts";
import { errCode } from "../core/fsutil.ts";
import { gitTopLevel, realOr } from "../core/project.ts";

/** A transcript path refused because it is not one of this project's (`anotherProject`: it is some other project's). */
export class ForeignTranscriptError extends InputError {
  constructor(
    message: string,
    readonly anotherProject = false,
  ) {
    super(message);
  }
}

/** The file exists but holds nothing yet (an agent creates it before writing to it). */
export class EmptyTranscriptError extends InputError {
  constructor(path: string) {
    super(`transcript is empty: ${path}`);
  }
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
