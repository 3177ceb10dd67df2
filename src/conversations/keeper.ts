/**
 * The watch process's share of the conversation index: an update every interval, one at a time,
 * the database opened per update so no lock or file handle is held between them. A damaged index
 * is rebuilt by the update that meets it, and said once through `onNotice`.
 */
import { oneLine } from "../core/errors.ts";
import { transcriptDbPath, transcriptHealLine, withTranscriptIndex } from "./db.ts";
import { updateTranscriptIndex, type UpdateOptions } from "./ingest.ts";

/** `sources`: every agent's transcripts, as their adapters give them (agents/registry.ts transcriptSources). */
export function keepTranscriptsIndexed(everyMs: number, sources: UpdateOptions["sources"], onError: (message: string) => void, onNotice: (line: string) => void = () => {}, archiveDays = 0): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const { healed } = await withTranscriptIndex(transcriptDbPath(), {}, (db) => updateTranscriptIndex(db, { sources, archiveDays }));
      if (healed) onNotice(transcriptHealLine(healed));
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
