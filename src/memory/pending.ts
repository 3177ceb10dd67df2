/**
 * The write-ahead queue of turns, `.memsearch/pending/`. Claude Code may kill a hook at any moment
 * (`claude -p` ends async hooks at teardown) and writes its transcript late, so what the hooks saw
 * is put on disk first, in milliseconds, and the slow part (waiting for the transcript, the
 * summariser) works from these files in a process of its own:
 *
 *   prompts/<session>--<prompt>.json   the prompt as UserPromptSubmit saw it (redacted)
 *   <session>--<prompt>.json           a finished turn as Stop saw it, waiting for its note
 *
 * A turn file is deleted only after its note is in the journal. Everything written here is
 * redacted first: these files live in the project like the notes.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { dataFiles } from "../core/project.ts";
import { atomicWrite, isRegularFile, mtimeOf, readTextQuiet, safeName } from "../core/fsutil.ts";
import { isAlive } from "../core/processes.ts";
import { clip } from "../core/text.ts";
import { sanitize } from "../core/redact.ts";

/** A turn as the drainer settled it: once written, every retry writes the same note anchor. */
export interface ResolvedTurn {
  turnUuid: string;
  /** Where the turn came from: the transcript, or only what the hooks saw (the transcript lagged). */
  source: "transcript" | "hooks";
  userText: string;
  assistantTexts: string[];
  /** Tool calls by name and one-line input (the extract names tools and files from them). */
  tools: { name: string; input: string }[];
  /** The turn rendered for a summariser, redacted. */
  text: string;
}

export interface PendingTurn {
  sessionId: string;
  /** The agent the turn was with (its adapter's name); absent in entries queued before agents were named: Claude Code. */
  agent?: string;
  promptId?: string;
  /** UserPromptSubmit's `source` when a person did not type the prompt (`loop_wakeup`…): the note says so. */
  promptSource?: string;
  transcriptPath?: string;
  /** When Stop fired (ISO): the note's day and time. */
  stoppedAt: string;
  prompt?: string;
  lastAssistantMessage?: string;
  resolved?: ResolvedTurn;
}

export interface PromptRecord {
  sessionId: string;
  promptId: string;
  prompt: string;
  at: string;
  /** UserPromptSubmit's `source` (absent: older Claude Code). */
  source?: string;
}

/** Longest prompt or message kept: a note needs the gist, and a pasted log must not fill the disk. */
const TEXT_LIMIT = 20_000;
const ID_LIMIT = 200;
const SOURCE_LIMIT = 60;
/** A prompt whose turn never stopped (interrupted, killed) is forgotten after this. */
const PROMPT_TTL_MS = 7 * 24 * 3600_000;

export function pendingDir(dataDir: string): string {
  return dataFiles(dataDir).pendingDir;
}

/** A summariser may take minutes, so the drainer's lock is judged by its holder's identity, not its age. */
export const DRAIN_LOCK_STALE_MS = 6 * 3600_000;

/** Held by the one drainer at work on the project's queue. */
export function drainLockFile(dataDir: string): string {
  return dataFiles(dataDir).drainLock;
}

function promptsDir(dataDir: string): string {
  return dataFiles(dataDir).pendingPromptsDir;
}

function keyOf(sessionId: string, promptId: string): string {
  return `${safeName(sessionId)}--${safeName(promptId)}`;
}

export const redactText = (s: string | undefined): string | undefined => (s === undefined ? undefined : clip(sanitize(s), TEXT_LIMIT));

/** An agent's name as written on a note's anchor (core/anchor.ts); anything else is dropped. */
const agentName = (v: unknown): string | undefined => (typeof v === "string" && /^[a-z][a-z0-9-]{0,31}$/.test(v) ? v : undefined);
const str = (v: unknown, max = TEXT_LIMIT): string | undefined => (typeof v === "string" && v.length > 0 ? v.slice(0, max) : undefined);
const strList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
const toolList = (v: unknown): { name: string; input: string }[] =>
  Array.isArray(v) ? v.filter((t) => t && typeof t.name === "string" && typeof t.input === "string").map((t) => ({ name: t.name as string, input: t.input as string })) : [];

// ---------------------------------------------------------------------------------------------
// Prompts (UserPromptSubmit)

export function recordPrompt(dataDir: string, rec: PromptRecord): void {
  atomicWrite(promptFile(dataDir, rec.sessionId, rec.promptId), JSON.stringify({ ...rec, prompt: redactText(rec.prompt) }));
}

/**
 * The prompt of a turn. It stays in the prompt folder until the turn's note is written
 * (`forgetPrompt`): Claude Code may run Stop twice for one turn, and each Stop's queue entry must
 * carry the prompt, whichever of them the drainer reads.
 */
export function readPrompt(dataDir: string, sessionId: string, promptId: string): string | undefined {
  return readPromptRecord(dataDir, sessionId, promptId)?.prompt;
}

/** The prompt of a turn and its source, as UserPromptSubmit recorded them (undefined: none recorded). */
export function readPromptRecord(dataDir: string, sessionId: string, promptId: string): { prompt?: string; source?: string } | undefined {
  const text = readTextQuiet(promptFile(dataDir, sessionId, promptId));
  if (text === undefined) return undefined;
  try {
    const o = JSON.parse(text);
    return { prompt: str(o?.prompt), source: str(o?.source, SOURCE_LIMIT) };
  } catch {
    return undefined;
  }
}

/** Once the turn's note is written (or there was nothing to write). */
export function forgetPrompt(dataDir: string, sessionId: string, promptId: string): void {
  rmSync(promptFile(dataDir, sessionId, promptId), { force: true });
}

function promptFile(dataDir: string, sessionId: string, promptId: string): string {
  return join(promptsDir(dataDir), `${keyOf(sessionId, promptId)}.json`);
}

/** Prompts whose turn never reached Stop, past their time. */
export function sweepPrompts(dataDir: string, now = Date.now()): number {
  let removed = 0;
  for (const name of listNames(promptsDir(dataDir))) {
    const file = join(promptsDir(dataDir), name);
    if (now - mtimeOf(file) > PROMPT_TTL_MS) {
      rmSync(file, { force: true });
      removed++;
    }
  }
  return removed;
}

/** How old a half-written temp file of the queue may get before it counts as a killed writer's. */
export const TEMP_STALE_MS = 10 * 60_000;

/**
 * Temp files of writes that never finished (`<file>.tmp-<pid>-<random>`, see atomicWrite): a
 * writer killed between writing and renaming leaves one, which nothing would ever read or
 * remove. A file is left alone while its writer may still be at work: its PID alive and the file
 * younger than TEMP_STALE_MS (a write takes milliseconds).
 */
export function sweepTempFiles(dataDir: string, now = Date.now()): number {
  let removed = 0;
  for (const dir of [pendingDir(dataDir), promptsDir(dataDir)]) {
    for (const name of listNames(dir)) {
      if (!name.includes(".tmp-")) continue;
      const file = join(dir, name);
      // Without a PID in its name (another writer's naming), its age alone says.
      const pid = Number(/\.tmp-(\d+)-/.exec(name)?.[1]);
      const writing = now - mtimeOf(file) < TEMP_STALE_MS && (!Number.isInteger(pid) || isAlive(pid));
      if (writing || !isRegularFile(file)) continue;
      rmSync(file, { force: true });
      removed++;
    }
  }
  return removed;
}

// ---------------------------------------------------------------------------------------------
// Turns (Stop → drainer)

/** Write a turn to the queue and return its file. A Stop fired twice for one prompt updates the entry. */
export function enqueueTurn(dataDir: string, turn: PendingTurn): string {
  const promptId = turn.promptId ?? `t${createHash("sha256").update(`${turn.stoppedAt}\n${turn.lastAssistantMessage ?? ""}`).digest("hex").slice(0, 16)}`;
  const file = join(pendingDir(dataDir), `${keyOf(turn.sessionId, promptId)}.json`);
  const clean: PendingTurn = {
    ...turn,
    prompt: redactText(turn.prompt),
    lastAssistantMessage: redactText(turn.lastAssistantMessage),
  };
  atomicWrite(file, JSON.stringify(clean));
  return file;
}

/** Save what the drainer settled before the slow step, so a retry after a crash writes the same anchor. */
export function saveResolved(file: string, turn: PendingTurn, resolved: ResolvedTurn): void {
  atomicWrite(file, JSON.stringify({ ...turn, resolved }));
}

/** The queued turns, oldest first. */
export function listPending(dataDir: string): string[] {
  const dir = pendingDir(dataDir);
  const files = listNames(dir)
    .filter((n) => n.endsWith(".json"))
    .map((n) => join(dir, n));
  const at = new Map(files.map((f) => [f, mtimeOf(f)]));
  return files.sort((a, b) => at.get(a)! - at.get(b)! || a.localeCompare(b));
}

export function hasPending(dataDir: string): boolean {
  return listNames(pendingDir(dataDir)).some((n) => n.endsWith(".json"));
}

/** A queued turn, checked field by field (the file may be damaged or hand-edited); undefined if unusable. */
export function readPending(file: string): PendingTurn | undefined {
  const text = readTextQuiet(file);
  if (text === undefined) return undefined;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!o || typeof o !== "object") return undefined;
  const sessionId = str(o.sessionId, ID_LIMIT);
  const stoppedAt = str(o.stoppedAt, 64);
  if (!sessionId || !stoppedAt || Number.isNaN(Date.parse(stoppedAt))) return undefined;
  const turn: PendingTurn = {
    sessionId,
    stoppedAt,
    agent: agentName(o.agent),
    promptId: str(o.promptId, ID_LIMIT),
    promptSource: str(o.promptSource, SOURCE_LIMIT),
    transcriptPath: str(o.transcriptPath, 4096),
    prompt: str(o.prompt),
    lastAssistantMessage: str(o.lastAssistantMessage),
  };
  const r = o.resolved as Record<string, unknown> | undefined;
  if (r && typeof r === "object") {
    const turnUuid = str(r.turnUuid, ID_LIMIT);
    const text = str(r.text, 1_000_000);
    if (turnUuid && text !== undefined && (r.source === "transcript" || r.source === "hooks")) {
      turn.resolved = {
        turnUuid,
        source: r.source,
        userText: str(r.userText) ?? "",
        assistantTexts: strList(r.assistantTexts),
        tools: toolList(r.tools),
        text,
      };
    }
  }
  return turn;
}

export function removePending(file: string): void {
  rmSync(file, { force: true });
}

/** A file that cannot be read as a turn is set aside, not deleted: a person may want to look. */
export function setAside(file: string): void {
  const dir = join(dirname(file), "damaged");
  try {
    mkdirSync(dir, { recursive: true });
    renameSync(file, join(dir, basename(file)));
  } catch {
    rmSync(file, { force: true });
  }
}

function listNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
