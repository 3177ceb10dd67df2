/** The agents' own curated memory of the project the hub was started in (read, never written). */
import { closeSync, fstatSync, readFileSync, statSync } from "node:fs";
import { NotFoundError } from "../core/errors.ts";
import { isDirectory } from "../core/fsutil.ts";
import { openRegularFile } from "../transcript/files.ts";
import { curatedFiles, curatedFromRepository } from "../agents/curated.ts";
import type { CuratedCard, CuratedView } from "./types.ts";
import { NOTE_CHARS, redact, type HubProjects } from "./projects.ts";

/**
 * Claude Code's curated files of the project the hub was started in, found the way the watch
 * process and `memsearch index` find them (read, never written). Null when there is nothing.
 */
export function curatedCard(hub: HubProjects): CuratedCard | null {
  const p = hub.current();
  const found = curatedFiles(p.root, { env: hub.env });
  const m = found.memory;
  const exists = isDirectory(m.dir);
  if (!found.files.length && !exists) return null;
  return {
    project: p.id,
    memoryFolder: { dir: m.dir, from: m.from, exists, enabled: m.enabled },
    files: found.files.map((f, index) => ({ index, path: f.path, kind: f.kind, fromRepository: curatedFromRepository(f.path), bytes: sizeOf(f.path) })),
    ignored: m.ignored.map((i) => redact(`${i.file}: autoMemoryDirectory ${JSON.stringify(i.value)} ignored: ${i.why}`, 500)),
  };
}

/** One curated file of the list above, by its place in it: a request never names a path to read. */
export function curatedFileOf(hub: HubProjects, id: string, index: number): CuratedView {
  const p = hub.project(id);
  if (!p.current) throw new NotFoundError("curated files are shown for the project the hub was started in");
  const f = curatedFiles(p.root, { env: hub.env }).files[index];
  if (!f) throw new NotFoundError(`no curated file ${index} in ${p.name}`);
  const text = readCurated(f.path);
  if (text === undefined) throw new NotFoundError(`${f.path} could not be read`);
  return { path: f.path, kind: f.kind, fromRepository: curatedFromRepository(f.path), content: redact(text, NOTE_CHARS) };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** A curated file's text: a regular file only (opened without waiting), at most a few megabytes read. */
function readCurated(path: string): string | undefined {
  let fd: number;
  try {
    fd = openRegularFile(path);
  } catch {
    return undefined;
  }
  try {
    if (fstatSync(fd).size > 4 * 1024 * 1024) return undefined;
    return readFileSync(fd, "utf8");
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
