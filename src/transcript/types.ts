import type { TurnKind } from "./turn-kind.ts";

/** One tool call inside a turn, paired with its result when the transcript has it. */
export interface ToolCall {
  id: string;
  name: string;
  /** One-line summary of the input (command, path, pattern… else compact JSON). */
  input: string;
  /** Tool output, clipped; undefined when no result was found (unpaired). */
  output?: string;
  isError?: boolean;
  /** True when the transcript holds no tool_result for this call (interrupted, lagging, truncated file). */
  unpaired?: boolean;
  /** Length of the full output before clipping. */
  outputChars?: number;
}

/** The last turn of a session, as the Stop hook needs it. */
export interface LastTurn {
  sessionId: string;
  /** uuid of the user entry that opened the turn. */
  turnUuid: string;
  timestamp?: string;
  userText: string;
  /** Assistant texts in order (thinking excluded). */
  assistantTexts: string[];
  tools: ToolCall[];
  /**
   * The turn rendered for a summariser: lines labelled `[User]`, `[Claude Code]`,
   * `[Claude Code calls tool]`, `[Tool output]` / `[Tool error]`, tool output clipped to 1000 chars.
   */
  text: string;
  /** True when `lastAssistantMessage` was appended because the file did not have it yet. */
  usedLastAssistantMessage?: boolean;
  /** Whether the turn is worth a note (turn-kind.ts), when read from a transcript. */
  turnKind?: TurnKind;
}

/** One element of a turn, in file order. */
export type TurnItem =
  | { kind: "assistant"; text: string }
  | { kind: "tool"; call: ToolCall }
  /** A message the user sent while Claude was working (queued), or an interruption. */
  | { kind: "user"; text: string }
  /** Context compaction happened inside this turn (the summary is in `Transcript.compactions`). */
  | { kind: "compaction"; trigger?: string; preTokens?: number };

/**
 * A turn: starts at a real user message (not a tool result, not meta, not a local slash command,
 * not a compaction summary) and runs until the next one.
 */
export interface Turn {
  /** 0-based position among the file's turns. */
  index: number;
  /** uuid of the user entry that opened the turn. */
  uuid: string;
  timestamp?: string;
  /** The `promptId` Claude Code (2.1.196+) writes on the user entry; hooks get the same `prompt_id`. */
  promptId?: string;
  /** `prompt` for typed text, `command` for a slash command Claude acted on (`/name args`). */
  kind: "prompt" | "command";
  /** User text with injected context, system reminders and images (→ placeholders) removed. */
  userText: string;
  /** Assistant texts in order, one per assistant message (lines sharing a message.id merged). */
  assistantTexts: string[];
  tools: ToolCall[];
  /** Everything in order. Empty when the turn comes from an index (`listTurns`). */
  items: TurnItem[];
  /** Number of tool calls (same as tools.length when fully read). */
  toolCount: number;
  /** A model answered (text, thinking or a tool call); Claude Code's own `<synthetic>` lines do not count. */
  replied?: boolean;
  /** 1-based line number of the opening entry. */
  line: number;
  /** Byte range of the turn in the file: [start, end). */
  start: number;
  end: number;
}

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

/** One of another agent's transcripts as its listing gives it: what changes when it does. */
export interface TranscriptStamp {
  /** Its file, or the name that stands for it (an OpenCode session: `<database>#<session id>`). */
  path: string;
  size: number;
  /** ms since epoch. */
  mtime: number;
}

/**
 * Another agent's transcripts as the conversation index reads them, given by its adapter
 * (src/agents/): every one on this machine, and each read whole into turns (redacted), with the
 * folder its session ran in (the project, by the rule every agent shares).
 */
export interface TranscriptSource {
  agent: string;
  /** Throws (or rejects) when the listing cannot be taken (so nothing is taken for gone); empty when the agent keeps none here. */
  list(): TranscriptStamp[] | Promise<TranscriptStamp[]>;
  /** A stamp that changes whenever any of its transcripts may have (one database for all: its files' stat); unchanged, the listing is skipped. */
  version?(): string;
  read(path: string): Promise<{ sessionId?: string; cwd?: string; turns: Turn[] }>;
}

/**
 * Another agent's transcripts of one project, given by its adapter (src/agents/registry.ts:
 * projectTranscripts), for `import` and the turn accounting: each with its listing's stamp (an
 * OpenCode session is no file to stat), its reader, and how a summariser reads a turn.
 */
export interface ProjectTranscripts {
  agent: string;
  /** As people call it: `Codex CLI`. */
  label: string;
  files: TranscriptStamp[];
  read(path: string): Promise<{ sessionId?: string; turns: Turn[] }>;
  render(t: Turn): string;
  /** Whether a transcript of this agent is still anywhere on the machine (a cache forgets the rest); true for all when the listing failed. */
  exists(path: string): boolean;
  /** Why the agent's transcripts could not be listed (then `files` is empty). */
  problem?: string;
}
