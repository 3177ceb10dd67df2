import { lstatSync } from "node:fs";
import { resolve } from "node:path";
import { InputError, NotFoundError } from "../core/errors.ts";
import { ForeignTranscriptError } from "../transcript/claude-files.ts";
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

/** The transcripts among `paths` that `check` lets through for the project at `root`. */
export function passing(paths: string[], check: (path: string, root: string, o: { env?: NodeJS.ProcessEnv }) => void, root: string, env: NodeJS.ProcessEnv): string[] {
  return paths.filter((p) => {
    try {
      check(p, root, { env });
      return true;
    } catch {
      return false;
    }
  });
}
