/**
 * Keeps the conversation index in step with every agent's transcripts, each agent's given by its
 * adapter (agents/registry.ts: transcriptSources): this part never learns agent names. Two kinds
 * of source: an agent whose transcripts are files only ever appended to reads each from where the
 * last read stopped, into the rows of rows.ts, and keeps its own listing (`AppendedSource`:
 * Claude Code's); any other is listed, and a transcript whose listing changed is read again whole
 * and its rows replaced (others.ts). A transcript gone from its listing keeps its rows, marked
 * archived, until `archiveDays` prunes them. Never prints.
 */
import type { Database } from "bun:sqlite";
import type { TranscriptSource } from "../transcript/types.ts";
import { updateOtherTranscripts } from "./others.ts";
import { deleteFileRows, inWrite } from "./rows.ts";

export interface UpdateProgress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
}

export interface UpdateOptions {
  /** Every agent's transcripts, each source given by its adapter (agents/registry.ts transcriptSources). */
  sources: readonly IndexSource[];
  /** Called after each file read, at most every `progressEveryMs`. */
  onProgress?: (p: UpdateProgress) => void;
  progressEveryMs?: number;
  /** Stat every file and list every folder, whenever the last full scan was (see HOT_MS). */
  full?: boolean;
  /**
   * Archived conversations (transcripts deleted from disk) whose last activity is older than this
   * many days are dropped; 0 or undefined keeps them all (`conversations.archive_days`).
   */
  archiveDays?: number;
}

export interface UpdateReport {
  /** Transcript files stat'ed: all of them in a full scan, the hot and new ones otherwise. */
  files: number;
  /** A full scan (every file stat'ed, every folder listed) rather than the hot files and changed folders. */
  full: boolean;
  /** Files read (new, grown, re-read). */
  read: number;
  /** Files re-read from the start (shrunk or replaced). */
  reread: number;
  /** Files gone from disk whose rows were kept as archived by this update. */
  archived: number;
  /** Archived files dropped for their age (`archiveDays`). */
  pruned: number;
  /** Message rows added or updated. */
  messages: number;
  bytes: number;
  ms: number;
  /** The index held nothing before this update. */
  firstBuild: boolean;
  errors: { path: string; message: string }[];
}

/** What an appended source is asked to do by one update. */
export interface AppendedUpdate {
  now: number;
  /** Every file stat'ed and every folder listed, whatever the source would do otherwise. */
  full: boolean;
  /** The index held nothing before this update. */
  firstBuild: boolean;
  onProgress?: (p: UpdateProgress) => void;
  progressEveryMs?: number;
}

/**
 * An agent whose transcripts are files only ever appended to (Claude Code's JSONL): its adapter
 * reads each from where the last read stopped and writes the rows (rows.ts) itself, counting what
 * it did in `report` (`full`: whether it looked at every file).
 */
export interface AppendedSource {
  agent: string;
  update(db: Database, report: UpdateReport, o: AppendedUpdate): Promise<void>;
}

export type IndexSource = TranscriptSource | AppendedSource;

const isAppended = (s: IndexSource): s is AppendedSource => "update" in s;

/** Bring the index up to date with every source's transcripts. */
export async function updateTranscriptIndex(db: Database, opts: UpdateOptions): Promise<UpdateReport> {
  const t0 = performance.now();
  const now = Date.now();
  const firstBuild = db.query("SELECT 1 AS x FROM files LIMIT 1").get() === null;
  const report: UpdateReport = { files: 0, full: opts.full === true || firstBuild, read: 0, reread: 0, archived: 0, pruned: 0, messages: 0, bytes: 0, ms: 0, firstBuild, errors: [] };
  const reread: TranscriptSource[] = [];
  for (const source of opts.sources) {
    if (isAppended(source)) await source.update(db, report, { now, full: opts.full === true, firstBuild, onProgress: opts.onProgress, progressEveryMs: opts.progressEveryMs });
    else reread.push(source);
  }
  if (reread.length) await updateOtherTranscripts(db, reread, report, now);
  if (opts.archiveDays && opts.archiveDays > 0) report.pruned = pruneArchive(db, now - opts.archiveDays * 86_400_000);
  report.ms = performance.now() - t0;
  return report;
}

/** Drop the archived files whose last activity (their mtime when last read) is before `beforeMs`; returns how many. */
export function pruneArchive(db: Database, beforeMs: number): number {
  const old = db.query("SELECT id FROM files WHERE gone_at IS NOT NULL AND +mtime < ?").all(beforeMs) as { id: unknown }[];
  if (!old.length) return 0;
  return inWrite(db, () => {
    const del = db.query("DELETE FROM files WHERE id = ?");
    for (const r of old) {
      deleteFileRows(db, Number(r.id));
      del.run(Number(r.id));
    }
    return old.length;
  });
}

