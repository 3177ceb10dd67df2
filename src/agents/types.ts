/**
 * What memsearch needs from each coding agent it serves, one adapter per agent (claude/, codex/,
 * gemini/, opencode/, copilot/):
 * its hook input read into the neutral one, its hook output written in its own shape, its
 * transcripts read into the neutral turn (transcript/types.ts: LastTurn), and its wiring into the
 * agent's own configuration. The core (memory/, index/, recall/, conversations/) never learns
 * agent names: it gets an agent's name as a plain string and the readers the adapter gives.
 */
import * as v from "valibot";
import type { AppendedSource } from "../conversations/ingest.ts";
import type { FoundTurn, LastTurn, ProjectTranscripts, TranscriptStamp, Turn, TurnQuery } from "../transcript/types.ts";

const ID_MAX = 200;
const PATH_MAX = 4096;

/** An id longer than any agent writes is hashed rather than cut (two long ids must stay two ids). */
export const Id = v.pipe(
  v.string(),
  v.minLength(1),
  v.transform((x) => (x.length <= ID_MAX ? x : `${x.slice(0, 40)}-${Bun.hash(x).toString(16)}`)),
);
/** A path of a size and content the OS could take; anything else is dropped, not cut. */
export const Path = v.pipe(v.string(), v.minLength(1), v.maxLength(PATH_MAX), v.check((x) => !x.includes("\0")));

/** A field of the wrong type or size is dropped on its own; the rest of the input still counts. */
export const field = <S extends v.GenericSchema<unknown, unknown>>(s: S) => v.fallback(v.optional(s), undefined);

/** The hook input's fields as Claude Code names them, each checked; another agent's input takes those it sends. */
export const HookFields = v.object({
  session_id: field(Id),
  hook_event_name: field(Id),
  source: field(Id),
  reason: field(Id),
  transcript_path: field(Path),
  cwd: field(Path),
  prompt: field(v.string()),
  last_assistant_message: field(v.string()),
  stop_hook_active: field(v.boolean()),
});

/** The source an agent's hook input carries, kept only at SessionStart (startup, resume, clear): another agent's prompts all count as typed. */
export function sessionStartSource(event: string | undefined, source: string | undefined): { source?: string } {
  return event === "SessionStart" && source ? { source } : {};
}

/** The hook input every handler reads, whichever agent sent it. */
export interface NeutralHookInput {
  /** The adapter's name (`claude`, `codex`): written on notes, chooses the transcript reader. */
  agent: string;
  session_id?: string;
  /** The id shared by a turn's prompt and stop hooks (Claude Code's `prompt_id`, Codex's `turn_id`). */
  prompt_id?: string;
  hook_event_name?: string;
  /** SessionStart: startup/resume/clear; UserPromptSubmit (Claude Code): who sent the prompt. */
  source?: string;
  reason?: string;
  transcript_path?: string;
  cwd?: string;
  prompt?: string;
  last_assistant_message?: string;
  stop_hook_active?: boolean;
  /**
   * When the agent fired the hook (ISO), for an agent that says so and records it in its transcript
   * (Copilot CLI): Stop's time then names the turn there exactly, where no id or prompt does.
   */
  fired_at?: string;
}

/** What a handler answers, in Claude Code's shape; each adapter writes it in its agent's. */
export interface NeutralHookOutput {
  systemMessage?: string;
  hookSpecificOutput?: { hookEventName: string; additionalContext?: string };
}

/** Finds the turn a stop hook fired for in the agent's transcript, as far as the file holds it yet. */
export type TurnFinder = (path: string, q: TurnQuery) => Promise<FoundTurn | undefined>;

/** A change `install` makes to one file: shown by --dry-run, applied otherwise. */
export interface FileChange {
  path: string;
  /** undefined: the file does not exist (before) or is to be removed (after). */
  before?: string;
  after?: string | Uint8Array;
  /** The path becomes a symbolic link to this target (`after` is then unset). */
  link?: string;
  /** The file's permissions when written (0o644 unless said). */
  mode?: number;
  /** A folder of memsearch's own, removed whole (`after` unset). */
  folder?: boolean;
  /** A dry run names the file without its lines (files memsearch owns whole: the plugin's). */
  brief?: boolean;
  /** Its folder was made for it: removed with it when left empty (never an agent's own home). */
  ownFolder?: boolean;
}

/** A command the plan runs (the agent's own CLI: `claude plugin install …`), after the changes, or before them when uninstalling. */
export interface PlannedCommand {
  argv: string[];
  /** Paths that must exist before it runs (the folder it names). */
  needs?: string[];
}

export interface InstallPlan {
  agent: string;
  changes: FileChange[];
  /** One line each: what the plan does (or, on a dry run, would do), for the command's output. */
  notes: string[];
  commands?: PlannedCommand[];
  /** Commands the person must run (the agent's own CLI is not on PATH), one line each. */
  manual?: string[];
}

export interface WiredState {
  /** Every hook memsearch needs is in the agent's configuration (and trusted, where the agent asks for it). */
  wired: boolean;
  detail: string;
}

export interface InstallOptions {
  /** How the hooks run memsearch: the executable (absolute), then any arguments before `hook` (bun + script in development). */
  exe: string[];
  env?: NodeJS.ProcessEnv;
  /** Notes in the conditional ("would wire…"): nothing will be written. */
  dryRun?: boolean;
}

export interface AgentAdapter {
  name: string;
  /** As people call it: `Claude Code`, `Codex CLI`. */
  label: string;
  /** The hook JSON on stdin, each field checked, into the neutral input. */
  parseHookInput(raw: Record<string, unknown>): NeutralHookInput;
  /** The handler's answer as this agent reads it. */
  formatOutput(out: NeutralHookOutput): Record<string, unknown>;
  findStoppedTurn: TurnFinder;
  /** The changes that wire (or, `uninstall`, unwire) memsearch into the agent's configuration. */
  planInstall(opts: InstallOptions & { uninstall?: boolean }): InstallPlan | Promise<InstallPlan>;
  wired(opts: InstallOptions): WiredState;
  /** The agent has been set up on this machine (its own home folder exists). */
  present(env?: NodeJS.ProcessEnv): boolean;
  /** Its transcripts: for `memsearch transcript`, `import`, the turn accounting, the hub and the conversation index. */
  transcripts: AgentTranscripts;
  /** Its own check for `doctor`, when a look at its wiring says more than `wired` (Claude Code's plugin, and the binary its hooks run). */
  doctorCheck?(env: NodeJS.ProcessEnv): Promise<DoctorCheck>;
}

/** One line of `memsearch doctor`. */
export interface DoctorCheck {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
}

/** A transcript's turns around one, for `memsearch transcript --turn`. */
export interface TurnsAround {
  sessionId: string;
  /** Position of the turn asked for among all the transcript's turns; undefined when no turn is it (then `turns` is empty). */
  target?: number;
  turnCount: number;
  /** Every turn's id, in order. */
  ids: string[];
  /** The turns shown, the first at position `from`. */
  from: number;
  turns: Turn[];
}

/** A transcript listed for `memsearch transcript`, by a reader that indexes it (its turns' contents left out). */
export interface TranscriptListing {
  path: string;
  sessionId: string;
  subagent: boolean;
  turns: Turn[];
  compactions: number;
  /** The files of its subagents, each its own transcript. */
  subagents: { agentId: string; path: string; compaction: boolean; size: number }[];
}

export interface AgentTranscripts {
  /** Whether a path is one of its transcripts (by where it is, never by reading it). */
  claims(path: string, env?: NodeJS.ProcessEnv): boolean;
  /** Throws ForeignTranscriptError unless `path` is one of the project's transcripts (any project's with `anyProject`). */
  check(path: string, root: string, o: { env?: NodeJS.ProcessEnv; anyProject?: boolean }): void;
  /** Its turns, redacted, and the folder its session ran in. */
  read(path: string, env?: NodeJS.ProcessEnv): Promise<{ sessionId?: string; cwd?: string; turns: Turn[] }>;
  /** A turn labelled for a summariser (`import` writes its note from it). */
  render(t: Turn): string;
  /**
   * This project's transcripts (for `import`), with when each last changed (an OpenCode session is
   * no file to stat). `listed`: what `list` just gave, to pick from instead of listing again.
   */
  projectFiles(root: string, env?: NodeJS.ProcessEnv, listed?: TranscriptStamp[]): TranscriptStamp[];
  /** Every one on this machine, for the conversation index (throws when it cannot be listed). */
  list(env?: NodeJS.ProcessEnv): TranscriptStamp[];
  /** Changes whenever any of them may have; when it has not, the conversation index skips the listing. */
  version?(env?: NodeJS.ProcessEnv): string;
  /**
   * The same listing and reads on a thread of their own, for a process that answers requests
   * meanwhile (the hub, the watch process): an agent whose transcripts are a database may make
   * them slow, and they must never hold up an answer (OpenCode).
   */
  offThread?: {
    list(env: NodeJS.ProcessEnv): Promise<TranscriptStamp[]>;
    projectFiles(root: string, env: NodeJS.ProcessEnv): Promise<TranscriptStamp[]>;
    read(path: string, env: NodeJS.ProcessEnv): Promise<{ sessionId?: string; cwd?: string; turns: Turn[] }>;
  };
  /**
   * Transcripts only ever appended to, and long (Claude Code's): the conversation index reads each
   * from where it stopped (`source`), and `import` and the accounting list a transcript's turns
   * before reading the few they need (`project`, `named`), instead of reading each whole.
   */
  source?(env: NodeJS.ProcessEnv): AppendedSource;
  project?(root: string, env: NodeJS.ProcessEnv, o?: { warn?: (msg: string) => void }): ProjectTranscripts;
  /** Files (or folders of them) a person named to `import`; throws NotFoundError for one that does not exist. */
  named?(paths: string[]): Promise<ProjectTranscripts>;
  /** `memsearch transcript`'s detailed views, from a reader that indexes a transcript and reads turns by range. */
  views?: {
    listing(path: string): Promise<TranscriptListing>;
    around(path: string, id: string, context: number, o: { maxOutput: number }): Promise<TurnsAround>;
    /** The last turn labelled for a summariser (what the Stop hook reads), completed with the hook's message when the file lags. */
    lastTurn(path: string, lastAssistantMessage?: string): Promise<LastTurn | undefined>;
  };
  /** The prompt id of a turn of one of the project's transcripts (a forgotten turn's other name), when the transcript records one. */
  promptIdOf?(transcript: string, turn: string, root: string, env?: NodeJS.ProcessEnv): Promise<string | undefined>;
  /** A session's first request, from the head of its transcript only (SessionStart names the last session by it). */
  firstPrompt?(path: string): Promise<string | undefined>;
}
