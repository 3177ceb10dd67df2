/**
 * The Memory Hub's API shapes, shared by the server (data.ts, api.ts) and the page (client/).
 * Types only: the page imports this file with `import type`, which the transpiler drops.
 */

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
  };
  embedding: OllamaStatus[];
  /** Notes per local day, `YYYY-MM-DD` → count. */
  days: Record<string, number>;
  projects: ProjectCard[];
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
  /** Where it was found: notes, the conversations' messages table, their session table (plans, summaries, todos, first prompts). */
  from: ("note" | "transcript" | "session")[];
  note: { chunk: string; source: string; line: number; heading: string; snippet: string } | null;
  transcript: { path: string; turn: string; role: string; snippet: string } | null;
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
  uuid: string;
  timestamp: string | null;
  user: string;
  items: ({ kind: "assistant"; text: string } | { kind: "tool"; tool: TurnToolView } | { kind: "user"; text: string } | { kind: "compaction" })[];
}
