/**
 * What the conversation index's bench (transcripts.ts) measured, as its report (report.ts) reads
 * it: a module of its own, so the report does not import the bench that prints it.
 */
import type { Measurement } from "./proc.ts";

export interface TranscriptIndexResult {
  messages: number;
  files: number;
  jsonlBytes: number;
  dbBytes: number;
  copies: number;
  buildMs: number;
  buildMessagesPerSec: number;
  rows: Measurement[];
  /** Why a row could not be measured (the sqlite3 shell missing, …). */
  problems: string[];
}
