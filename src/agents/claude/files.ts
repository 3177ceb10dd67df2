/**
 * Where Claude Code keeps its transcripts and which project each belongs to: the one place that
 * knows `~/.claude/projects/<slug>/<session>.jsonl` (and `<session>/subagents/agent-<id>.jsonl`),
 * `$CLAUDE_CONFIG_DIR`, the slug of a folder, and the project of a recorded cwd.
 *
 * Everything below the projects folder is bytes memsearch did not write: only regular files are
 * ever opened (a FIFO named `*.jsonl` would block an open for ever), and a transcript named by a
 * note's anchor is followed only when it is one of this project's.
 */
import { closeSync, readdirSync, readSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { InputError, NotFoundError } from "../../core/errors.ts";
import { errCode } from "../../core/fsutil.ts";
import { realOr } from "../../core/project.ts";
import { claudeProjectsDir, projectSlug } from "../../core/claude-home.ts";
import { ForeignTranscriptError, isInside, notRegularInside, openRegularFile, projectOfCwd, sameProject } from "../../transcript/files.ts";

export { claudeProjectsDir, projectSlug };

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
