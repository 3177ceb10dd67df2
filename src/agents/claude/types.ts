/**
 * What Claude Code's transcript reader gives beside the neutral turns (transcript/types.ts): a
 * session file's compactions, summaries, what it skipped, and its subagents' files.
 */
import type { Turn } from "../../transcript/types.ts";

export interface Compaction {
  uuid?: string;
  timestamp?: string;
  trigger?: string;
  preTokens?: number;
  /** Text of the `isCompactSummary` user entry that follows the boundary. */
  summary?: string;
}

/** A `summary` entry whose leafUuid points into the same file (others are cross-session noise). */
export interface SessionSummary {
  summary: string;
  leafUuid: string;
}

/** What the reader saw and skipped. Nothing here is fatal. */
export interface ReadStats {
  lines: number;
  /** Non-blank lines that are not one JSON object (truncated, garbage, bare values). */
  malformed: number;
  /** Lines longer than the reader's limit, skipped without parsing. */
  oversized: number;
  /** Lines skipped by type (progress, file-history-snapshot, …), including unknown types. */
  skipped: Record<string, number>;
  /** Entries of a `type` the reader does not know. */
  unknownTypes: number;
  /** Content blocks of a kind the reader does not know. */
  unknownBlocks: number;
  /** Sidechain lines left out of a main session file. */
  sidechain: number;
  /** isMeta user entries (command caveats, skill bodies…). */
  meta: number;
  /** Attachment entries (hook output, injected context) left out. */
  attachments: number;
  /** tool_result blocks with no matching tool_use. */
  orphanResults: number;
  /** `summary` entries whose leafUuid is not in the file. */
  untrustedSummaries: number;
}

export interface Transcript {
  path: string;
  sessionId: string;
  /** True for a subagent file (all lines are sidechain lines): they are read as the main thread. */
  subagent: boolean;
  turns: Turn[];
  compactions: Compaction[];
  summaries: SessionSummary[];
  stats: ReadStats;
  /** File size in bytes. */
  size: number;
}

export interface SubagentFile {
  /** `a2898e3`, `acompact-e1f845`… */
  agentId: string;
  path: string;
  /** Compaction agents (`agent-acompact-*`) summarise the conversation rather than do work. */
  compaction: boolean;
  size: number;
}

