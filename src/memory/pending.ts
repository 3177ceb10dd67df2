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
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import * as v from "valibot";
import { dataFiles, makeDataDir, realOr } from "../core/project.ts";
import { atomicWrite, isRegularFile, mtimeOf, safeName } from "../core/fsutil.ts";
import { readJsonFile } from "../core/json-file.ts";
import { isMarkOf, markOf } from "../core/machine-mark.ts";
import { isAlive } from "../core/processes.ts";
import { clip, sha256Hex } from "../core/text.ts";
import { sanitize } from "../core/redact.ts";
import type { TurnKind } from "../transcript/turn-kind.ts";

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
  /** Whether it is worth a note (turn-kind.ts), when the transcript said; a turn that is not work is never saved. */
  kind?: TurnKind;
}

export interface PendingTurn {
  sessionId: string;
  /** The agent the turn was with (its adapter's name); absent in entries queued before agents were named: Claude Code. */
  agent?: string;
  promptId?: string;
  /** UserPromptSubmit's `source` when a person did not type the prompt (`loop_wakeup`…): the note says so. */
  promptSource?: string;
  transcriptPath?: string;
  /**
   * This machine's mark of the data folder and `transcriptPath` (`queuedHere`): the Stop hook of a
   * session on this machine queued the turn, and its agent named the transcript. An entry without
   * it came from elsewhere (a cloned repository, a copied project), and its transcript is read only
   * when it is one of the project's.
   */
  mark?: string;
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

/**
 * The queue's files as they are read back: the project's files, so anything may have been edited
 * into them. A field that is not what it should be is dropped (an optional text) or makes the
 * file unusable (the session and the Stop time, without which no note can be placed).
 */
const Text = (max = TEXT_LIMIT) => v.optional(v.pipe(v.unknown(), v.transform((x) => (typeof x === "string" && x.length > 0 ? x.slice(0, max) : undefined))));
const Required = (max: number) => v.pipe(v.string(), v.minLength(1), v.transform((x) => x.slice(0, max)));
const TextList = v.optional(v.pipe(v.unknown(), v.transform((x) => (Array.isArray(x) ? x.filter((t): t is string => typeof t === "string") : []))), []);
const ToolList = v.optional(
  v.pipe(
    v.unknown(),
    v.transform((x) => (Array.isArray(x) ? x.filter((t) => t && typeof t.name === "string" && typeof t.input === "string").map((t) => ({ name: t.name as string, input: t.input as string })) : [])),
  ),
  [],
);

const ResolvedShape = v.object({
  turnUuid: Required(ID_LIMIT),
  source: v.picklist(["transcript", "hooks"]),
  userText: v.optional(v.pipe(v.unknown(), v.transform((x) => (typeof x === "string" ? x.slice(0, TEXT_LIMIT) : ""))), ""),
  assistantTexts: TextList,
  tools: ToolList,
  text: v.pipe(v.string(), v.minLength(1), v.transform((x) => x.slice(0, 1_000_000))),
});

/** An agent's name as written on a note's anchor (core/anchor.ts); anything else is dropped. */
const AgentName = v.optional(v.pipe(v.unknown(), v.transform((x) => (typeof x === "string" && /^[a-z][a-z0-9-]{0,31}$/.test(x) ? x : undefined))));

const PendingShape = v.object({
  sessionId: Required(ID_LIMIT),
  agent: AgentName,
  stoppedAt: v.pipe(Required(64), v.check((x) => !Number.isNaN(Date.parse(x)))),
  promptId: Text(ID_LIMIT),
  promptSource: Text(SOURCE_LIMIT),
  transcriptPath: Text(4096),
  mark: Text(64),
  prompt: Text(),
  lastAssistantMessage: Text(),
  // A settled turn that cannot be read is settled again; the turn itself is kept.
  resolved: v.fallback(v.optional(ResolvedShape), undefined),
});

const PromptShape = v.object({ prompt: Text(), source: Text(SOURCE_LIMIT) });

// ---------------------------------------------------------------------------------------------
// Prompts (UserPromptSubmit)

/**
 * The name a prompt is kept under when its agent gives no prompt id (Copilot CLI): the session's
 * latest, which the next prompt replaces and the Stop that follows it reads.
 */
export const LATEST_PROMPT = "latest-prompt";

export function recordPrompt(dataDir: string, rec: PromptRecord): void {
  makeDataDir(dataDir);
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
  return readJsonFile(promptFile(dataDir, sessionId, promptId), PromptShape);
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
  const promptId = turn.promptId ?? `t${sha256Hex(`${turn.stoppedAt}\n${turn.lastAssistantMessage ?? ""}`).slice(0, 16)}`;
  const file = join(pendingDir(dataDir), `${keyOf(turn.sessionId, promptId)}.json`);
  const clean: PendingTurn = {
    ...turn,
    prompt: redactText(turn.prompt),
    lastAssistantMessage: redactText(turn.lastAssistantMessage),
  };
  makeDataDir(dataDir);
  if (turn.transcriptPath) {
    try {
      clean.mark = markOf(markedText(dataDir, turn.transcriptPath));
    } catch {
      // No key can be kept (a read-only home): the entry is read as one from elsewhere, its transcript checked.
    }
  }
  atomicWrite(file, JSON.stringify(clean));
  return file;
}

// The folder itself, not how a session spells it: one drainer empties the queue of every session
// of the project, which may reach the folder through a link another does not.
const markedText = (dataDir: string, transcriptPath: string) => `${realOr(dataDir)}\0${transcriptPath}`;

/** Whether this machine queued the turn for this data folder, with the transcript it names (see `PendingTurn.mark`). */
export function queuedHere(dataDir: string, turn: PendingTurn): boolean {
  return turn.transcriptPath !== undefined && isMarkOf(turn.mark, markedText(dataDir, turn.transcriptPath));
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
  const o = readJsonFile(file, PendingShape);
  if (!o) return undefined;
  const turn: PendingTurn = { sessionId: o.sessionId, stoppedAt: o.stoppedAt };
  for (const k of ["agent", "promptId", "promptSource", "transcriptPath", "mark", "prompt", "lastAssistantMessage"] as const) if (o[k] !== undefined) turn[k] = o[k];
  if (o.resolved) turn.resolved = o.resolved;
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

/**
 * What the queue holds, for the turn accounting and import: `session id` keys of each queued turn's
 * prompt id and settled turn id, and per session how many queued turns carry neither (older clients).
 */
export function queuedTurnKeys(dataDir: string): { keys: Set<string>; unnamed: Map<string, number> } {
  const keys = new Set<string>();
  const unnamed = new Map<string, number>();
  for (const file of listPending(dataDir)) {
    const e = readPending(file);
    if (!e) continue;
    if (e.promptId) keys.add(`${e.sessionId} ${e.promptId}`);
    if (e.resolved) keys.add(`${e.sessionId} ${e.resolved.turnUuid}`);
    if (!e.promptId && !e.resolved) unnamed.set(e.sessionId, (unnamed.get(e.sessionId) ?? 0) + 1);
  }
  return { keys, unnamed };
}
