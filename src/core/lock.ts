import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { StorageError } from "./errors.ts";
import { withFileLock } from "../memory/journal.ts";

/**
 * Every writer of one project's index (CLI index, Stop hooks, the watch process) holds this
 * lock for its load → change → save cycle, so concurrent writers never drop each other's work.
 * A long embedding run may hold it for minutes; a dead holder's lock is broken at once.
 */
export function withIndexLock<T>(indexDir: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  try {
    mkdirSync(indexDir, { recursive: true });
  } catch (e) {
    throw new StorageError(`cannot create the index folder ${indexDir}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  return withFileLock(join(indexDir, "index.lock"), fn, { timeoutMs, staleMs: 30 * 60_000 });
}
