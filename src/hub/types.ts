/**
 * The Memory Hub's API shapes, shared by the server (data.ts, api.ts) and the page (client/).
 * Types only: the page imports this file with `import type`, which the transpiler drops.
 */
import type { CostRow } from "../memory/prices.ts";

export interface ProjectCard {
  id: string;
  name: string;
  path: string;
  /** The project folder is still there. */
  exists: boolean;
  /** The project the hub was started in. */
  current: boolean;
  notes: number;
  chunks: number;
  /** Local `YYYY-MM-DD HH:MM` of the newest note. */
  lastNote: string | null;
  /** ISO: the later of the newest note and the last session start the registry saw. */
  lastActive: string | null;
  /** Why this project's memory could not be read, when it could not. */
  problem: string | null;
}

export interface OllamaStatus {
  model: string;
  host: string | null;
  /** null: embeddings are off (provider none). */
  ok: boolean | null;
  detail: string;
}

/** Claude Code's curated memory of the project the hub was started in: what memsearch indexes of it. */
export interface CuratedCard {
  project: string;
  /** Claude Code's memory folder for the project, and what chose it. */
  memoryFolder: { dir: string; from: string; exists: boolean; enabled: boolean };
  files: { index: number; path: string; kind: "memory" | "CLAUDE.md" | "CLAUDE.local.md"; fromRepository: boolean; bytes: number }[];
  /** autoMemoryDirectory values not followed, and why. */
  ignored: string[];
}

/** One curated file, redacted, as the page shows it. */
export interface CuratedView {
  path: string;
  kind: CuratedCard["files"][number]["kind"];
  fromRepository: boolean;
  content: string;
}

export interface Overview {
  scope: "project" | "all";
  version: string;
  /** The server's local day, `YYYY-MM-DD`: note days are local days. */
  today: string;
  totals: {
    notes: number;
    /** The same figures as `memsearch stats` (summed over the projects shown). */
    chunks: number;
    files: number;
    vectors: number;
    indexBytes: number;
    projects: number;
    /** Projects in the registry (~/.memsearch/projects.json). */
    knownProjects: number;
    activeDays: number;
    /** Notes per active day, one decimal. */
    avgPerDay: number;
    /** Notes by who wrote them: an agent's name (`claude`, `codex`…), or `you` (`memsearch remember`, a section written by hand). */
    byAgent: Record<string, number>;
  };
  embedding: OllamaStatus[];
  /** Notes per local day, `YYYY-MM-DD` → count. */
  days: Record<string, number>;
  projects: ProjectCard[];
  /** The current project's curated files (null when it has none and no memory folder). */
  curated: CuratedCard | null;
}

export interface NoteItem {
  project: string;
  file: string;
  day: string;
  time: string;
  line: number;
  heading: string;
  bullets: string[];
  session: string | null;
  /** The agent the turn was with (`claude` for notes whose anchor names none). */
  agent: string;
}

export interface TimelinePage {
  project: ProjectCard;
  total: number;
  offset: number;
  notes: NoteItem[];
}

/** One day's notes over the projects in view (a heatmap or bar click), and the active days around it. */
export interface DayPage {
  /** With every project in view, each group is named even when it is the only one. */
  scope: "project" | "all";
  date: string;
  total: number;
  /** A project's notes past the display limit are counted in its `total`, not sent. */
  groups: { project: string; projectName: string; total: number; notes: NoteItem[] }[];
  /** The nearest days with notes before and after, for stepping through them. */
  previous: string | null;
  next: string | null;
}

export interface SearchHit {
  /** Notes are opened by chunk; a conversation-only hit by its transcript turn. */
  project: string | null;
  projectName: string | null;
  score: number;
  /** `YYYY-MM-DD HH:MM` when known. */
  date: string | null;
  /** Where it was found: notes, Claude Code's curated memory (opened like a note by its chunk), the conversations' messages table, their session table (plans, summaries, todos, first prompts). */
  from: ("note" | "curated" | "transcript" | "session")[];
  note: { chunk: string; source: string; line: number; heading: string; snippet: string } | null;
  /** The turn to open; `matched`: a message of it matched the query, and `snippet` is that message's (else the snippet is the session content's, or empty). */
  transcript: { path: string; turn: string; role: string; snippet: string; matched: boolean } | null;
  /** The agent the turn was with (`claude`, `codex`…). */
  agent: string;
}

export interface SearchPage {
  query: string;
  mode: "notes" | "recall";
  scope: "project" | "all";
  /** hybrid when vectors took part in ranking the notes, else bm25. */
  ranking: "hybrid" | "bm25" | null;
  warnings: string[];
  hits: SearchHit[];
}

export interface NoteView {
  project: string;
  source: string;
  startLine: number;
  endLine: number;
  heading: string;
  content: string;
  anchor: { session: string; turn: string; transcript: string } | null;
  /** The anchor's transcript is still on disk: its turn can be opened. */
  transcriptAvailable: boolean;
  /** What a forget of this note sends (POST /api/forget): its daily file, the id of the section's text shown, its line; null for a note that is not a daily file's. */
  forget: { file: string; id: string; line: number } | null;
}

export interface TurnToolView {
  name: string;
  input: string;
  output: string | null;
  isError: boolean;
}

export interface TurnView {
  path: string;
  session: string;
  turnCount: number;
  /** 0-based position of this turn in the session. */
  position: number;
  /** The turns before and after it in the session (their uuids), to step through them. */
  previous: string | null;
  next: string | null;
  uuid: string;
  timestamp: string | null;
  user: string;
  items: ({ kind: "assistant"; text: string } | { kind: "tool"; tool: TurnToolView } | { kind: "user"; text: string } | { kind: "compaction" })[];
}

/** Every turn of a project's sessions accounted for (`/api/turns`; src/memory/accounting.ts). */
export interface TurnCounts {
  /** Turns the transcript holds. */
  turns: number;
  noted: number;
  queued: number;
  running: number;
  missing: number;
  /** Not turns to capture, by why: `local-command`, `no-reply`, `trivial`. */
  notTurns: Record<string, number>;
}

export interface TurnsView {
  projects: (TurnCounts & {
    project: string;
    projectName: string;
    /** Noted, queued, running and missing together. */
    toCapture: number;
    since: string | null;
    /** `1,204 of 1,204 turns since … have a note`, as `memsearch doctor` says it. */
    line: string;
    sessions: (TurnCounts & { agent: string; sessionId: string; first: string | null; last: string | null })[];
    /** Turns with neither a note nor a place in the queue, oldest first (prompt redacted). */
    missingTurns: { agent: string; sessionId: string; turn: string; at: string; prompt: string }[];
    problem: string | null;
  })[];
  /** Local days holding a turn without a note, over the projects in view: day → count. */
  missingDays: Record<string, number>;
}

/** A forget through the page (POST /api/forget): what left the markdown. */
export interface ForgetDone {
  project: string;
  /** The turn put on the forgotten list; null for a section without an anchor (removed only). */
  turn: string | null;
  removed: number;
  alreadyForgotten: boolean;
  /** What `memsearch forget --undo` can do: let import write the turn again, put the note of your own back, or nothing. */
  undo: "import" | "restore" | "none";
}

/** One memory the prompt hook injected. */
export interface InjectedMemory {
  kind: "note" | "turn";
  /** A note's chunk hash (`memsearch expand <id>`) or a conversation turn's uuid. */
  id: string;
  score: number;
  date: string | null;
  fromRepository: boolean;
  instructionLike: boolean;
}

/** One prompt of a session, and what the prompt hook did with it (the injection log). */
export interface PromptReceived {
  at: string;
  promptId: string | null;
  /** UserPromptSubmit's source; null: typed by a person (or an older Claude Code). */
  source: string | null;
  /** The prompt's first words, from the session's transcript, redacted; null when the transcript does not have it. */
  firstWords: string | null;
  decision: "injected" | "hint" | "nothing" | "skipped";
  /** What happened, in words: "injected 2 memories", "nothing: best candidate below the gate", "skipped: not typed by a person"… */
  verdict: string;
  reason: string;
  mode: string;
  chars: number;
  injected: InjectedMemory[];
  /** The best score among the memories considered, when any was. */
  bestScore: number | null;
  considered: number;
}

export interface SessionReceived {
  session: string;
  first: string;
  last: string;
  prompts: PromptReceived[];
  injectedChars: number;
}

/** What each prompt received, per session, newest session first. */
export interface SessionsPage {
  project: string;
  projectName: string;
  /** Sessions in the log; the newest `sessions.length` are sent. */
  total: number;
  sessions: SessionReceived[];
}

/** One day's or month's model calls, added up (memory/prices.ts), without the split by purpose. */
export type CostRowView = Omit<CostRow, "purposes"> & {
  /** `$0.0123`, `unknown`, `$0.01 + 2 unpriced`. */
  shown: string;
  /** What `claude -p` reported its calls cost (`reportedCalls` of them), `$0.0123`; "" when none reported it. */
  reportedShown: string;
};

/** What the memory cost, over the projects in view. */
export interface CostsPage {
  pricesAsOf: string;
  total: CostRowView;
  months: CostRowView[];
  days: CostRowView[];
}
