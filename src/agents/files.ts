import { closeSync, fstatSync, lstatSync, readFileSync, readSync } from "node:fs";
import { resolve } from "node:path";
import { InputError, NotFoundError } from "../core/errors.ts";
import { openOwnFile } from "../core/fsutil.ts";
import { ForeignTranscriptError } from "../transcript/files.ts";
import type { TranscriptStamp } from "../transcript/types.ts";

/** The absolute path of the transcript `path` names; throws unless it is a `.jsonl` file's. */
export function transcriptPath(path: string): string {
  const abs = resolve(path);
  if (!abs.endsWith(".jsonl")) throw new InputError(`not a transcript (.jsonl): ${path}`);
  return abs;
}

/** Throws unless the transcript at `abs` (named `path`) is a plain file: a link could point anywhere. */
export function requirePlainTranscript(abs: string, path: string): void {
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    throw new NotFoundError(`transcript not found: ${path}`);
  }
  if (!st.isFile()) throw new ForeignTranscriptError(`refused: ${path} is not a plain file`);
}

/**
 * The first line of a transcript as JSON, from its first `headBytes` (where the agent writes what
 * session it is: its folder, its project); undefined when that line is not JSON. Opened as our own
 * files are: never through a link, never a FIFO.
 */
export function firstJsonLine(path: string, headBytes: number): unknown {
  const buf = Buffer.alloc(headBytes);
  const fd = openOwnFile(path, "read");
  let n: number;
  try {
    n = readSync(fd, buf, 0, headBytes, 0);
  } finally {
    closeSync(fd);
  }
  try {
    return JSON.parse(buf.subarray(0, n).toString("utf8").split("\n")[0] ?? "");
  } catch {
    return undefined;
  }
}

/** The plain files among `paths`, with what changes when they do (a link, a folder or a FIFO is left out). */
export function fileStamps(paths: string[]): TranscriptStamp[] {
  const out: TranscriptStamp[] = [];
  for (const path of paths) {
    try {
      const st = lstatSync(path);
      if (st.isFile()) out.push({ path, size: st.size, mtime: st.mtimeMs });
    } catch {}
  }
  return out;
}

/**
 * A project's transcripts with their stamps: those among `listed` (a listing just made) that `check`
 * lets through, or, without it, among every one `all` names, stamped then.
 */
export function projectStamps(listed: TranscriptStamp[] | undefined, all: () => string[], check: Parameters<typeof passing>[1], root: string, env: NodeJS.ProcessEnv = process.env): TranscriptStamp[] {
  if (!listed) return fileStamps(passing(all(), check, root, env));
  const mine = new Set(passing(listed.map((s) => s.path), check, root, env));
  return listed.filter((s) => mine.has(s.path));
}

/** The transcripts among `paths` that `check` lets through for the project at `root`. */
function passing(paths: string[], check: (path: string, root: string, o: { env?: NodeJS.ProcessEnv }) => void, root: string, env: NodeJS.ProcessEnv): string[] {
  return paths.filter((p) => {
    try {
      check(p, root, { env });
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The most of another agent's transcript read at once: its readers take a file whole (a Gemini CLI
 * chat is rewritten in place, a Codex rollout's turns are found from its end), so a bigger one is
 * refused before it is read rather than held in the memory of the drainer or the watch process.
 */
export const TRANSCRIPT_READ_MAX = 256 * 1024 * 1024;

/** A transcript's text, read whole, never through a link; one over `max` bytes is refused with one line. */
export function readTranscriptText(path: string, max = TRANSCRIPT_READ_MAX): string {
  const fd = openOwnFile(path, "read");
  try {
    const size = fstatSync(fd).size;
    if (size > max) throw new InputError(`${path} is ${Math.ceil(size / 1048576)} MiB, over the ${Math.floor(max / 1048576)} MiB memsearch reads of one transcript`);
    return readFileSync(fd).toString("utf8");
  } finally {
    closeSync(fd);
  }
}
