/**
 * The watch process's share of the conversation index: an update every interval, one at a time,
 * the database opened per update so no lock or file handle is held between them.
 */
import { oneLine } from "../core/errors.ts";
import { openTranscriptDb } from "./db.ts";
import { updateTranscriptIndex } from "./ingest.ts";

export function keepTranscriptsIndexed(everyMs: number, onError: (message: string) => void): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const db = openTranscriptDb();
      try {
        await updateTranscriptIndex(db);
      } finally {
        db.close();
      }
    } catch (e) {
      onError(oneLine(e));
    } finally {
      running = false;
    }
  };
  const first = setTimeout(tick, 2_000);
  const timer = setInterval(tick, everyMs);
  // Never keeps the process alive on its own.
  first.unref?.();
  timer.unref?.();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
