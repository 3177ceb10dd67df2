/**
 * From a queued turn to a note in the journal: wait (a bounded time) for Claude Code to flush the
 * turn into its transcript, fall back to what the hooks saw, summarise, append. Runs in the drainer
 * process, never in a hook's own time.
 *
 * Exactly once: one drainer per project at a time (a lock), the settled turn is saved into its
 * queue file before the slow step, and the journal skips an anchor it already holds, so a drainer
 * killed anywhere leaves work the next one finishes with the same note.
 */
import { LockTimeoutError, withFileLock } from "../core/lock.ts";
import { oneLine } from "../core/errors.ts";
import type { FoundTurn, LastTurn, TurnQuery } from "../transcript/types.ts";
import { isLocalCommand, type SkipKind } from "../transcript/turn-kind.ts";
import { appendTurnNote } from "./journal.ts";
import { DRAIN_LOCK_STALE_MS, drainLockFile, forgetPrompt, listPending, readPending, removePending, saveResolved, setAside, sweepPrompts, sweepTempFiles, type PendingTurn, type ResolvedTurn } from "./pending.ts";
import { sanitize } from "../core/redact.ts";
import { readForgotten } from "./forgotten.ts";
import type { Summary } from "./summarizer.ts";

/** How the drainer reads one agent's transcripts, given by that agent's adapter (src/agents/). */
export interface AgentReader {
  /** Its name as people call it, for the lines of a turn written from what the hooks saw. */
  label: string;
  findStoppedTurn: (path: string, q: TurnQuery) => Promise<FoundTurn | undefined>;
}

export interface DrainOptions {
  memoryDir: string;
  dataDir: string;
  /** The reader of a queued turn's agent (its name, absent for entries queued before agents were named): agents/registry.ts agentOrDefault. */
  readerFor: (agent: string | undefined) => AgentReader;
  /** Throws when the entry's transcript must not be read (queued elsewhere, naming another project's): the hooks' record stands in. */
  checkTranscript?: (entry: PendingTurn) => void;
  summarize: (turn: LastTurn) => Promise<Summary>;
  /** How long after its Stop a lagging transcript is waited for before the hooks' own record is used. */
  transcriptWaitMs?: number;
  pollMs?: number;
  /** Time, for tests that count the waiting instead of doing it. */
  clock?: Clock;
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: Clock = { now: () => Date.now(), sleep: (ms) => Bun.sleep(ms) };

export interface DrainReport {
  /** Notes appended to the journal. */
  written: number;
  /** Turns whose note was already there (a retry after a crash). */
  duplicates: number;
  /** Notes written from what the hooks saw because the transcript did not have the turn in time. */
  fromHooks: number;
  /** Turns left queued because writing failed (disk full…): retried by the next drainer. */
  failed: number;
  /** Queue files that were not turns, set aside. */
  damaged: number;
  /** Why the summariser fell back, or why a write failed, one line each. */
  problems: string[];
  /** False when another drainer holds the queue (it also takes what this one was called for). */
  ran: boolean;
  /** Temp files of killed writers removed from the queue. */
  tempSwept: number;
  /** Turns taken off the queue without a note because they are not work (turn-kind.ts), by why. */
  notTurns: Partial<Record<SkipKind, number>>;
  /** Turns the user forgot (`memsearch forget`): taken off the queue, not written. */
  forgotten: number;
}

export const TRANSCRIPT_WAIT_MS = 10_000;
const POLL_MS = 200;

/**
 * Write a note for every queued turn. One drainer at a time: a second one returns at once, and
 * the holder looks again after letting go, so a turn queued meanwhile is never left behind.
 */
export async function drainPending(opts: DrainOptions): Promise<DrainReport> {
  const report: DrainReport = { written: 0, duplicates: 0, fromHooks: 0, failed: 0, damaged: 0, problems: [], ran: false, tempSwept: 0, notTurns: {}, forgotten: 0 };
  const tried = new Set<string>();
  for (;;) {
    const todo = listPending(opts.dataDir).filter((f) => !tried.has(f));
    if (!todo.length) return report;
    try {
      // A summariser may take minutes; only a dead holder's lock is broken.
      await withFileLock(drainLockFile(opts.dataDir), () => drainLocked(opts, report, tried), { timeoutMs: 0, staleMs: DRAIN_LOCK_STALE_MS });
      report.ran = true;
    } catch (e) {
      if (e instanceof LockTimeoutError) return report;
      throw e;
    }
  }
}

async function drainLocked(opts: DrainOptions, report: DrainReport, tried: Set<string>): Promise<void> {
  sweepPrompts(opts.dataDir);
  report.tempSwept += sweepTempFiles(opts.dataDir);
  for (const file of listPending(opts.dataDir)) {
    if (tried.has(file)) continue;
    tried.add(file);
    const entry = readPending(file);
    if (!entry) {
      setAside(file);
      report.damaged++;
      continue;
    }
    await finishTurn(file, entry, opts, report);
  }
}

async function finishTurn(file: string, entry: PendingTurn, opts: DrainOptions, report: DrainReport): Promise<void> {
  let resolved = entry.resolved;
  if (!resolved) {
    // A `/clear` or `/exit` the hooks saw: no transcript turn to wait for.
    if (entry.prompt !== undefined && isLocalCommand(entry.prompt)) return notATurn(file, entry, "local-command", opts, report);
    resolved = await resolveTurn(entry, opts);
    if (!resolved) {
      // Nothing to write: no prompt, no reply, no transcript turn (a Stop with empty input).
      done(file, entry, opts);
      return;
    }
    if (resolved.kind && resolved.kind !== "work") return notATurn(file, entry, resolved.kind, opts, report);
    saveResolved(file, entry, resolved);
  }
  // Before the summariser: a forgotten turn costs no model call either.
  const forgotten = readForgotten(opts.dataDir);
  if (forgotten.problem) report.problems.push(`${forgotten.problem}; turns on it may be written again`);
  if (forgotten.has(resolved.turnUuid, entry.sessionId) || forgotten.has(entry.promptId, entry.sessionId)) {
    report.forgotten++;
    done(file, entry, opts);
    return;
  }
  if (resolved.source === "hooks") report.fromHooks++;
  const summary = await opts.summarize(toLastTurn(entry, resolved));
  if (summary.fallbackReason) report.problems.push(`summariser fell back to a plain extract (${summary.fallbackReason})`);
  try {
    const written = await appendTurnNote({
      memoryDir: opts.memoryDir,
      sessionId: entry.sessionId,
      turnUuid: resolved.turnUuid,
      transcriptPath: entry.transcriptPath ?? "",
      agent: entry.agent,
      bullets: summary.bullets,
      source: entry.promptSource,
      now: new Date(entry.stoppedAt),
    });
    if (written.appended) report.written++;
    else if (written.forgotten) report.forgotten++;
    else report.duplicates++;
    done(file, entry, opts);
  } catch (e) {
    report.failed++;
    report.problems.push(`a turn could not be written to memory (it stays queued): ${oneLine(e)}`);
  }
}

/** Off the queue without a note, counted by why (the drainer's debug line carries the counts). */
function notATurn(file: string, entry: PendingTurn, kind: SkipKind, opts: DrainOptions, report: DrainReport): void {
  report.notTurns[kind] = (report.notTurns[kind] ?? 0) + 1;
  done(file, entry, opts);
}

/**
 * The turn is in memory: its prompt, then its queue entry, go. In that order: a drainer killed
 * between the two leaves an entry (which carries its prompt) that the next one finds noted and
 * removes, never a prompt file with no entry left to remove it.
 */
function done(file: string, entry: PendingTurn, opts: DrainOptions): void {
  if (entry.promptId) forgetPrompt(opts.dataDir, entry.sessionId, entry.promptId);
  removePending(file);
}

/**
 * The turn to write, from the transcript when it holds the turn within the wait, else from what
 * the hooks recorded. A transcript that holds the turn but not yet its final message is waited
 * for too, then completed with Stop's `last_assistant_message`.
 *
 * The wait runs from the turn's Stop, not from when the drainer reaches it: Claude Code flushes
 * a turn soon after Stop or not at all, so turns queued together share one wait (a queue of N
 * turns the transcript never gets costs one wait, not N), and a turn queued long ago is not
 * waited for at all. Never longer than one wait from now (a Stop time in the future).
 */
export async function resolveTurn(entry: PendingTurn, opts: Pick<DrainOptions, "transcriptWaitMs" | "pollMs" | "clock" | "readerFor" | "checkTranscript">): Promise<ResolvedTurn | undefined> {
  const clock = opts.clock ?? realClock;
  const reader = opts.readerFor(entry.agent);
  const wait = opts.transcriptWaitMs ?? TRANSCRIPT_WAIT_MS;
  const stopped = Date.parse(entry.stoppedAt);
  const now = clock.now();
  const deadline = Math.min(now + wait, (Number.isFinite(stopped) ? stopped : now) + wait);
  let found: FoundTurn | undefined;
  for (;;) {
    found = entry.transcriptPath ? await lookUp(entry, reader, opts.checkTranscript) : undefined;
    if (found?.complete || clock.now() >= deadline || !entry.transcriptPath) break;
    await clock.sleep(opts.pollMs ?? POLL_MS);
  }
  if (found) {
    const r = fromTranscript(found.turn);
    // A turn the transcript holds only in part may still get its reply and tools: only a local command is sure.
    const kind = found.turn.turnKind;
    if (kind === "local-command" || (found.complete && kind)) r.kind = kind;
    return r;
  }
  return fromHooks(entry, reader.label);
}

async function lookUp(entry: PendingTurn, reader: AgentReader, check?: (entry: PendingTurn) => void): Promise<FoundTurn | undefined> {
  try {
    check?.(entry);
    return await reader.findStoppedTurn(entry.transcriptPath!, {
      promptId: entry.promptId,
      prompt: entry.prompt,
      lastAssistantMessage: entry.lastAssistantMessage,
      redact: sanitize,
      stoppedAt: entry.stoppedAt,
    });
  } catch {
    // Not there yet, unreadable, not a transcript, refused: the hooks' record stands in.
    return undefined;
  }
}

/** The reader redacted the turn already (lookUp: tool inputs and outputs before their clip); again is cheap and changes nothing. */
function fromTranscript(t: LastTurn): ResolvedTurn {
  return {
    turnUuid: t.turnUuid,
    source: "transcript",
    userText: sanitize(t.userText),
    assistantTexts: t.assistantTexts.map(sanitize),
    tools: t.tools.map((c) => ({ name: c.name, input: sanitize(c.input) })),
    text: sanitize(t.text),
  };
}

function fromHooks(entry: PendingTurn, label: string): ResolvedTurn | undefined {
  if (!entry.prompt && !entry.lastAssistantMessage) return undefined;
  const userText = entry.prompt ?? "";
  const assistantTexts = entry.lastAssistantMessage ? [entry.lastAssistantMessage] : [];
  const text = [`[User]: ${userText || "(prompt not recorded)"}`, ...assistantTexts.map((a) => `[${label}]: ${a}`)].join("\n");
  // The prompt id is what Claude Code writes on the turn's user entry: `transcript --turn` finds it.
  const turnUuid = entry.promptId ?? `stop-${Date.parse(entry.stoppedAt).toString(36)}`;
  return { turnUuid, source: "hooks", userText, assistantTexts, tools: [], text };
}

function toLastTurn(entry: PendingTurn, r: ResolvedTurn): LastTurn {
  return {
    sessionId: entry.sessionId,
    turnUuid: r.turnUuid,
    userText: r.userText,
    assistantTexts: r.assistantTexts,
    tools: r.tools.map((t, i) => ({ id: String(i), name: t.name, input: t.input })),
    text: r.text,
  };
}
