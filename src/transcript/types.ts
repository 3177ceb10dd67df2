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

/** One of an agent's transcripts as its listing gives it: what changes when it does. */
export interface TranscriptStamp {
  /** Its file, or the name that stands for it (an OpenCode session: `<database>#<session id>`). */
  path: string;
  size: number;
  /** ms since epoch. */
  mtime: number;
  /** The session it holds, when the listing knows it without reading it (Claude Code names a file after its session). */
  session?: string;
  /** A finer stamp than size and time, when the agent's files have one (a file's inode besides). */
  stamp?: string;
}

/**
 * An agent's transcripts as the conversation index reads them when they may change anywhere (a
 * Gemini CLI chat is rewritten in place, an OpenCode session lives in a database), given by its
 * adapter (src/agents/): every one on this machine, and each read whole into turns (redacted), with
 * the folder its session ran in (the project, by the rule every agent shares). An agent whose
 * transcripts are only appended to gives the index its own source (conversations/ingest.ts:
 * AppendedSource).
 */
export interface TranscriptSource {
  agent: string;
  /** Throws (or rejects) when the listing cannot be taken (so nothing is taken for gone); empty when the agent keeps none here. */
  list(): TranscriptStamp[] | Promise<TranscriptStamp[]>;
  /** A stamp that changes whenever any of its transcripts may have (one database for all: its files' stat); unchanged, the listing is skipped. */
  version?(): string;
  read(path: string): Promise<{ sessionId?: string; cwd?: string; turns: Turn[] }>;
}

/** A transcript's turns as listed, for `import` and the turn accounting. */
export interface TurnList {
  path: string;
  sessionId: string;
  /**
   * Each turn's ids, time, prompt and the facts turn-kind.ts judges it by; the rest of what it
   * holds may be left out of a listing (`ProjectTranscripts.readTurns` reads it).
   */
  turns: Turn[];
  /** A subagent's transcript: its work is a tool call of its parent session's turn, never a session of its own. */
  subagent?: boolean;
  /** Slash commands nobody answered (never turns). */
  unanswered: number;
}

/**
 * An agent's transcripts of one project, given by its adapter (src/agents/registry.ts:
 * projectTranscripts), for `import`, the turn accounting and the hub: each with its listing's
 * stamp (an OpenCode session is no file to stat), how its turns are listed and read, and how a
 * summariser reads a turn.
 */
export interface ProjectTranscripts {
  agent: string;
  /** As people call it: `Codex CLI`. */
  label: string;
  /** Where its transcripts were looked for, when that is one folder (said when there are none). */
  folder?: string;
  files: TranscriptStamp[];
  /**
   * A transcript's turns, listed. Throws the typed errors of a reader: EmptyTranscriptError (a file
   * that holds nothing yet, not worth a word), UnrecognisedFormatError (not this agent's format).
   */
  listTurns(path: string): Promise<TurnList>;
  /** Turns `from..to` of a listing with all they hold, every text redacted, tool outputs clipped as for a summariser. */
  readTurns(list: TurnList, from: number, to: number): Promise<Turn[]>;
  render(t: Turn): string;
  /** Whether a transcript of this agent is still anywhere on the machine (a cache forgets the rest); true for all when the listing failed. */
  exists(path: string): boolean;
  /** Why the agent's transcripts could not be listed (then `files` is empty). */
  problem?: string;
  /** Entries named like its transcripts that are not files it reads (links out, FIFOs), never opened, with why. */
  skipped?: { path: string; reason: string }[];
  /** Its transcripts of other projects seen (never read). */
  otherProjects?: number;
}

/** What the hooks saw of a turn: Stop's `prompt_id` and `last_assistant_message`, UserPromptSubmit's prompt. */
export interface TurnQuery {
  promptId?: string;
  /** The prompt as recorded (redacted the same way as `redact`). */
  prompt?: string;
  /** Likewise redacted. */
  lastAssistantMessage?: string;
  /** Applied to the transcript's texts before comparing them with the recorded ones. */
  redact?: (text: string) => string;
  /**
   * When the stop hook ran (ISO): for an agent whose hooks name the turn by neither id nor prompt
   * (Copilot CLI), the turn is the last one begun before it, whatever the session did since.
   */
  stoppedAt?: string;
}

export interface FoundTurn {
  turn: LastTurn;
  /** The transcript already holds the turn's final message (else it lags and may still grow). */
  complete: boolean;
}
