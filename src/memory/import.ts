/**
 * `memsearch import`: memory from day one. A user who installs memsearch already has months of
 * transcripts; this writes, for every past turn of the project, the note the Stop hook would have
 * written (same summariser input, same anchor, same journal call), into the daily file of the
 * turn's own date. Every agent's transcripts come from the caller, as their adapters give them
 * (agents/registry.ts projectTranscripts).
 *
 * Exactly once and resumable without any state of its own: every note goes through
 * `appendTurnNote`, which appends a whole note (anchor included) in one write or nothing, and a
 * turn whose anchor is already somewhere in the memory folder is never planned again. A run
 * killed anywhere is finished by the next one.
 *
 * The core never prints: progress and warnings go through callbacks, failures are typed errors.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { anchorsIn, isLineId, turnKey } from "../core/anchor.ts";
import { MemsearchError, oneLine, StorageError, UnrecognisedFormatError } from "../core/errors.ts";
import { EmptyTranscriptError } from "../transcript/files.ts";
import type { LastTurn, ProjectTranscripts, Turn, TurnList } from "../transcript/types.ts";
import { turnKind, type SkipKind, type TurnKind } from "../transcript/turn-kind.ts";
import { appendTurnNote, dailyFiles, localDay } from "./journal.ts";
import { queuedTurnKeys } from "./pending.ts";
import { sanitize } from "../core/redact.ts";
import { readForgotten, type Forgotten } from "./forgotten.ts";
import { buildPrompt, type Summary, type SummarizerProvider } from "./summarizer.ts";

// ---------------------------------------------------------------------------------------------
// Turn → note

/**
 * A transcript turn as the Stop hook hands it to the summariser, labelled by its agent's `render`:
 * every text redacted before it can reach a model or the journal, tool outputs clipped as for the
 * last turn. A turn its reader redacted (readTurns) is redacted already, its tool parts before
 * their clip; a turn read without it would have pieces of a clipped secret left (redacting again
 * is cheap and changes nothing).
 */
export function turnToLastTurn(sessionId: string, turn: Turn, render: (t: Turn) => string): LastTurn {
  return {
    sessionId,
    turnUuid: turn.uuid,
    timestamp: turn.timestamp,
    userText: sanitize(turn.userText),
    assistantTexts: turn.assistantTexts.map(sanitize),
    tools: turn.tools.map((c) => ({ id: c.id, name: c.name, input: sanitize(c.input) })),
    text: sanitize(render(turn)),
  };
}

function parseTime(ts: string | undefined): number | undefined {
  if (!ts) return undefined;
  const t = Date.parse(ts);
  return Number.isFinite(t) ? t : undefined;
}

/**
 * When each turn happened, from its own timestamp. A turn without a usable one takes its
 * predecessor's (else its successor's, else the file's mtime), so it lands beside its neighbours.
 */
export function turnTimes(turns: Pick<Turn, "timestamp">[], fallback: number): number[] {
  const out = turns.map((t) => parseTime(t.timestamp));
  let prev: number | undefined;
  for (let i = 0; i < out.length; i++) {
    if (out[i] === undefined) out[i] = prev;
    else prev = out[i];
  }
  let next: number | undefined;
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] === undefined) out[i] = next ?? fallback;
    else next = out[i];
  }
  return out as number[];
}

// ---------------------------------------------------------------------------------------------
// What the memory already holds

export interface ExistingNotes {
  /** Turn ids of every anchor in the memory folder (turn uuids, and prompt ids of hook-written notes). */
  turns: Set<string>;
  /** `session turn` of every anchor: for the reader's `line-N` ids, unique only within a session. */
  pairs: Set<string>;
  /** Per day (`YYYY-MM-DD`), the latest `### HH:MM` already in that file. */
  lastTime: Map<string, string>;
}

/** Anchors of all daily files: a turn may have been noted on another day than its own (a Stop hook after midnight). */
export function existingNotes(memoryDir: string): ExistingNotes {
  const turns = new Set<string>();
  const pairs = new Set<string>();
  const lastTime = new Map<string, string>();
  for (const name of dailyFiles(memoryDir)) {
    let content: string;
    try {
      content = readFileSync(join(memoryDir, name), "utf8");
    } catch {
      continue;
    }
    for (const a of anchorsIn(content)) {
      turns.add(a.turn);
      pairs.add(`${a.session} ${a.turn}`);
    }
    let last: string | undefined;
    for (const m of content.matchAll(/^###\s+(\d{1,2}):(\d{2})\b/gm)) {
      const hm = `${m[1]!.padStart(2, "0")}:${m[2]}`;
      if (last === undefined || hm > last) last = hm;
    }
    if (last) lastTime.set(name.slice(0, 10), last);
  }
  return { turns, pairs, lastTime };
}

// ---------------------------------------------------------------------------------------------
// Planning

export interface PlannedTurn {
  /** Position in `ImportPlan.transcripts`. */
  transcript: number;
  /** Position among that transcript's turns. */
  turn: number;
  uuid: string;
  sessionId: string;
  /** ms since the epoch. */
  time: number;
  day: string;
}

export interface PlannedTranscript {
  path: string;
  sessionId: string;
  agent: string;
  /** Its turns as listed: those to write are read from it (by range, where its agent reads so). */
  list: TurnList;
  source: Pick<ProjectTranscripts, "readTurns" | "render">;
}

/** An agent's transcripts of the project, with the reading its adapter gives (src/agents/). */
export type ImportSource = Pick<ProjectTranscripts, "agent" | "label" | "folder" | "files" | "listTurns" | "readTurns" | "render" | "problem" | "skipped" | "otherProjects">;

export interface ImportPlan {
  /** Where the first agent's transcripts were looked for (said when none were found). */
  projectsDir: string;
  /** Readable transcripts of the project (with or without turns to write). */
  transcripts: PlannedTranscript[];
  /** Turns to write, oldest first. */
  todo: PlannedTurn[];
  /** Turns that already have a note (by turn uuid or by prompt id). */
  already: number;
  /** Turns that appear in more than one transcript (a resumed session copies its history): written once. */
  repeated: number;
  /** Last turns of sessions written to recently: maybe still running, left to the Stop hook. */
  active: number;
  /** Turns in the write-ahead queue (`dataDir` given): the drainer writes them. */
  queued: number;
  /** Turns that get no note, by why (turn-kind.ts): local commands, no reply, trivial. */
  notTurns: Record<SkipKind, number>;
  /** Sessions with turns to write. */
  sessions: number;
  /** Days (daily files) that get notes. */
  days: string[];
  /** Days whose file already holds notes later than a turn to write there (appended after them). */
  laterNotesDays: string[];
  /** Transcripts skipped (unreadable, not a transcript), with why. */
  skipped: { path: string; reason: string }[];
  /** Session files of other projects seen (not imported). */
  otherProjects: number;
  /** Turns the user forgot (`memsearch forget`): never imported again. */
  forgotten: number;
}

export interface PlanOptions {
  /** The project root (git top level, shared by worktrees). */
  root: string;
  memoryDir: string;
  /** The project's `.memsearch/`: turns in its queue are left to the drainer. */
  dataDir?: string;
  /** A transcript modified this recently may hold a running turn: its last turn is left out (default 10 min; 0: none is). */
  activeMs?: number;
  now?: number;
  warn?: (msg: string) => void;
  /** Every agent's transcripts of the project, or those a person named (agents/registry.ts: projectTranscripts, namedTranscripts). */
  sources: readonly ImportSource[];
}

export const ACTIVE_MS = 10 * 60_000;

const SUBAGENT_REASON = "a subagent transcript (its work is part of its parent session's turn; import the parent)";

/** What a plan is made against: the notes, the queue and the forgotten list as they are now. */
interface Planning extends TurnRecords {
  plan: ImportPlan;
  notes: ExistingNotes;
  now: number;
  activeMs: number;
  /** Turns to write, before a turn copied into a resumed session is kept once. */
  candidates: PlannedTurn[];
  skip(path: string, reason: string): void;
}

export async function planImport(o: PlanOptions): Promise<ImportPlan> {
  const warn = o.warn ?? (() => {});
  const plan: ImportPlan = { projectsDir: o.sources.find((x) => x.folder)?.folder ?? "", transcripts: [], todo: [], already: 0, repeated: 0, active: 0, queued: 0, notTurns: { "local-command": 0, "no-reply": 0, trivial: 0 }, sessions: 0, days: [], laterNotesDays: [], skipped: [], otherProjects: 0, forgotten: 0 };
  const skip = (path: string, reason: string) => {
    plan.skipped.push({ path, reason });
    warn(`skipped ${path}: ${reason}`);
  };
  // Never opened: which project they belong to is unknowable without reading them.
  for (const source of o.sources) for (const s of source.skipped ?? []) skip(s.path, `${s.reason}, not a transcript file`);
  plan.otherProjects = o.sources.reduce((n, x) => n + (x.otherProjects ?? 0), 0);
  // The memory folder is `<dataDir>/memory` (core/project.ts); the list is beside it.
  const forgotten = readForgotten(dirname(o.memoryDir));
  if (forgotten.problem) throw new StorageError(`${forgotten.problem}: fix or remove it before importing, or forgotten turns would be written again`);
  const queued = o.dataDir ? queuedTurnKeys(o.dataDir).keys : new Set<string>();
  const p: Planning = { plan, notes: existingNotes(o.memoryDir), queued, forgotten, now: o.now ?? Date.now(), activeMs: o.activeMs ?? ACTIVE_MS, candidates: [], skip };
  for (const source of o.sources) {
    if (source.problem) skip(source.agent, `its transcripts could not be listed: ${source.problem}`);
    // The listing's time: an OpenCode session (`<database>#<session>`) is no file to stat.
    for (const { path, mtime } of source.files) {
      const list = await listed(p, source, path);
      if (list) consider(p, { path, sessionId: list.sessionId, agent: source.agent, list, source }, mtime);
    }
  }
  plan.todo = firstOfEach(p);
  plan.sessions = new Set(plan.todo.map((c) => c.sessionId)).size;
  daysOf(plan, p.notes);
  return plan;
}

/** A transcript's turns, or undefined when it is skipped (said, unless it is empty: an agent creates the file before writing to it). */
async function listed(p: Planning, source: ImportSource, path: string): Promise<TurnList | undefined> {
  let list: TurnList;
  try {
    list = await source.listTurns(path);
  } catch (e) {
    if (e instanceof EmptyTranscriptError) return undefined;
    // The reader's own message tells a human to read the file by hand; here it is just skipped.
    p.skip(path, e instanceof UnrecognisedFormatError ? `not a ${source.label} transcript (unrecognised format)` : oneLine(e));
    return undefined;
  }
  if (list.subagent) {
    p.skip(path, SUBAGENT_REASON);
    return undefined;
  }
  // Commands nobody answered never became turns; they are counted with the local commands.
  p.plan.notTurns["local-command"] += list.unanswered;
  return list;
}

/** One transcript's turns: each counted by what becomes of it, those to write kept as candidates. */
function consider(p: Planning, tr: PlannedTranscript, mtime: number): void {
  const t = p.plan.transcripts.length;
  p.plan.transcripts.push(tr);
  const turns = tr.list.turns;
  const times = turnTimes(turns, mtime);
  // A session written to in the last minutes may be mid-turn: its last turn is the Stop hook's.
  // activeMs 0 means none: a file's time has sub-millisecond digits that `now` lacks, so `now - mtime` may be below 0.
  const last = p.activeMs > 0 && p.now - mtime < p.activeMs ? turns.length - 1 : -1;
  turns.forEach((turn, i) => {
    const fate = turnFate(p, tr.sessionId, turn, turnKind(turn), i === last);
    if (fate === "work") p.candidates.push({ transcript: t, turn: i, uuid: turn.uuid, sessionId: tr.sessionId, time: times[i]!, day: localDay(new Date(times[i]!)) });
    else if (fate === "noted") p.plan.already++;
    else if (fate === "running") p.plan.active++;
    else if (fate === "forgotten" || fate === "queued") p.plan[fate]++;
    else p.plan.notTurns[fate]++;
  });
}

/** What a turn's fate is read from: the notes, the forgotten list and the drainer's queue as they are now. */
export interface TurnRecords {
  notes: Pick<ExistingNotes, "turns" | "pairs">;
  forgotten: Pick<Forgotten, "has">;
  /** `session turn` of every queued turn named by an id (pending.ts queuedTurnKeys). */
  queued: ReadonlySet<string>;
}

/**
 * What becomes of a turn, in this order: it has a note, it was forgotten, a local command, queued
 * for the drainer, maybe still running (`running`: its reply may still be coming), not a turn to
 * capture (`kind`, turn-kind.ts), or work without a note. `import` and the turn accounting
 * (accounting.ts) judge every turn by this one rule.
 */
export function turnFate(r: TurnRecords, sessionId: string, turn: Pick<Turn, "uuid" | "promptId">, kind: TurnKind, running: boolean): "noted" | "forgotten" | "queued" | "running" | TurnKind {
  if (hasNote(r.notes, sessionId, turn)) return "noted";
  if (r.forgotten.has(turn.uuid, sessionId) || r.forgotten.has(turn.promptId, sessionId)) return "forgotten";
  if (kind === "local-command") return kind;
  if (r.queued.has(`${sessionId} ${turn.uuid}`) || (turn.promptId !== undefined && r.queued.has(`${sessionId} ${turn.promptId}`))) return "queued";
  return running ? "running" : kind;
}

/**
 * The candidates oldest first across sessions, so days read in order; a turn copied into a
 * resumed session's file is written once, under the session where it happened first.
 */
function firstOfEach(p: Planning): PlannedTurn[] {
  const seen = new Set<string>();
  const out: PlannedTurn[] = [];
  p.candidates.sort((a, b) => a.time - b.time || a.transcript - b.transcript || a.turn - b.turn);
  for (const c of p.candidates) {
    const key = turnKey(c.sessionId, c.uuid);
    if (seen.has(key)) p.plan.repeated++;
    else {
      seen.add(key);
      out.push(c);
    }
  }
  return out;
}

/** The days that get notes, and those whose file already holds notes later than a turn to write there. */
function daysOf(plan: ImportPlan, existing: ExistingNotes): void {
  const days = new Set<string>();
  const later = new Set<string>();
  for (const c of plan.todo) {
    days.add(c.day);
    const last = existing.lastTime.get(c.day);
    if (last !== undefined && hhmm(c.time) < last) later.add(c.day);
  }
  plan.days = [...days].sort();
  plan.laterNotesDays = [...later].sort();
}

/**
 * Whether a turn has a note: an anchor naming its id (a hook-written note of Claude Code names the
 * prompt id; another agent's turn id is its prompt id), or, for an id a reader made of a line
 * number (unique only within its session: Claude Code's oldest files, Codex's older rollouts), an
 * anchor naming its session and that id.
 */
export function hasNote(n: Pick<ExistingNotes, "turns" | "pairs">, sessionId: string, turn: Pick<Turn, "uuid" | "promptId">): boolean {
  const byPrompt = turn.promptId !== undefined && !isLineId(turn.promptId) && n.turns.has(turn.promptId);
  return byPrompt || (isLineId(turn.uuid) ? n.pairs.has(`${sessionId} ${turn.uuid}`) : n.turns.has(turn.uuid));
}

function hhmm(t: number): string {
  const d = new Date(t);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

// ---------------------------------------------------------------------------------------------
// Reading the turns to write

/** Turns read per range: bounds memory on a session of thousands of turns. */
const READ_BATCH = 64;

/**
 * The planned turns, in plan order, fully read. Consecutive planned turns of one transcript (the
 * usual case: sessions rarely overlap in time) are parsed with one range read.
 */
async function* readPlanned(plan: ImportPlan, from = 0): AsyncGenerator<{ planned: PlannedTurn; turn: LastTurn }> {
  const todo = plan.todo;
  let i = from;
  while (i < todo.length) {
    const first = todo[i]!;
    let j = i;
    while (j + 1 < todo.length && j + 1 - i < READ_BATCH && todo[j + 1]!.transcript === first.transcript && todo[j + 1]!.turn > todo[j]!.turn) j++;
    const tr = plan.transcripts[first.transcript]!;
    // Redacted by the reader, tool inputs and outputs before they are clipped.
    const turns = await tr.source.readTurns(tr.list, first.turn, todo[j]!.turn);
    for (let k = i; k <= j; k++) {
      const p = todo[k]!;
      const turn = turns[p.turn - first.turn];
      // The file changed under us (rewritten, truncated): the index no longer matches it.
      if (!turn || turn.uuid !== p.uuid) throw new TranscriptChangedError(tr.path);
      yield { planned: p, turn: turnToLastTurn(tr.sessionId, turn, tr.source.render) };
    }
    i = j + 1;
  }
}

/** A transcript no longer holds what it held when the import was planned. */
export class TranscriptChangedError extends MemsearchError {
  constructor(path: string) {
    super(`the transcript changed during the import: ${path}; run memsearch import again`);
  }
}

// ---------------------------------------------------------------------------------------------
// Cost

export interface ImportCost {
  provider: SummarizerProvider;
  /** Model calls (0 for the extract). */
  calls: number;
  /** Characters the model would read (the prompt with each turn's redacted text). */
  inputChars: number;
  /** An estimate: characters / 4. */
  inputTokens: number;
}

/** What writing the plan would cost with `provider`: for a model, one call per turn and its input. */
export async function estimateCost(plan: ImportPlan, provider: SummarizerProvider): Promise<ImportCost> {
  if (provider === "extract") return { provider, calls: 0, inputChars: 0, inputTokens: 0 };
  let chars = 0;
  for await (const { turn } of readPlanned(plan)) chars += buildPrompt(turn.text).length;
  return { provider, calls: plan.todo.length, inputChars: chars, inputTokens: Math.ceil(chars / 4) };
}

// ---------------------------------------------------------------------------------------------
// Writing

export interface ImportProgress {
  done: number;
  total: number;
  /** Sessions with turns still to write. */
  sessionsLeft: number;
}

export interface RunOptions {
  memoryDir: string;
  summarize: (turn: LastTurn) => Promise<Summary>;
  /** Turns summarised at once ahead of the writer (model calls are slow); notes are still written in order. */
  concurrency?: number;
  /** Consecutive model failures after which the import stops (each falls back to the extract until then). */
  maxConsecutiveFallbacks?: number;
  onProgress?: (p: ImportProgress) => void;
  warn?: (msg: string) => void;
}

export interface ImportResult {
  /** Notes appended. */
  written: number;
  /** Turns found noted when their turn came (another process wrote them meanwhile). */
  raced: number;
  sessions: number;
  /** Daily files written to. */
  files: number;
  /** Turns whose model summary failed and got the extract instead. */
  fallbacks: number;
  ms: number;
}

/** The model failed on too many turns in a row: stopping beats writing thousands of extract notes nobody asked for. */
export class SummarizerGaveUpError extends MemsearchError {}

export const MAX_CONSECUTIVE_FALLBACKS = 5;

/**
 * Writes the plan's notes, oldest first. Summaries may run ahead (`concurrency`) but notes are
 * appended one by one in plan order, each one whole, so a kill leaves a prefix of the plan
 * written and the next run (which skips anchored turns) writes the rest.
 */
export async function runImport(plan: ImportPlan, o: RunOptions): Promise<ImportResult> {
  const start = performance.now();
  const total = plan.todo.length;
  const left = new Map<string, number>();
  for (const c of plan.todo) left.set(c.sessionId, (left.get(c.sessionId) ?? 0) + 1);
  const res: ImportResult = { written: 0, raced: 0, sessions: left.size, files: 0, fallbacks: 0, ms: 0 };
  const files = new Set<string>();
  const fallbacks = fallbackWatch(res, o);
  const ahead = summariesAhead(plan, o);
  o.onProgress?.({ done: 0, total, sessionsLeft: left.size });
  try {
    for (let done = 0; ; ) {
      const item = await ahead.next();
      if (!item) break;
      const summary = await item.summary;
      fallbacks(summary);
      const written = await writeNote(plan, item.planned, summary, o.memoryDir, res.written);
      if (written.appended) {
        res.written++;
        files.add(written.file);
      } else res.raced++;
      done++;
      const n = left.get(item.planned.sessionId)! - 1;
      if (n === 0) left.delete(item.planned.sessionId);
      else left.set(item.planned.sessionId, n);
      o.onProgress?.({ done, total, sessionsLeft: left.size });
    }
  } finally {
    await ahead.abandon();
  }
  res.files = files.size;
  res.ms = performance.now() - start;
  return res;
}

/** The plan's turns in order, each with its summary started up to `concurrency` turns ahead of the writer. */
function summariesAhead(plan: ImportPlan, o: RunOptions) {
  const width = Math.max(1, o.concurrency ?? 1);
  const source = readPlanned(plan);
  const queue: { planned: PlannedTurn; turn: LastTurn; summary: Promise<Summary> }[] = [];
  let exhausted = false;
  return {
    async next() {
      while (!exhausted && queue.length < width) {
        const next = await source.next();
        if (next.done) exhausted = true;
        else queue.push({ ...next.value, summary: o.summarize(next.value.turn) });
      }
      return queue.shift();
    },
    /** Summaries still running are abandoned; their turns are written by the next run. */
    async abandon() {
      await source.return(undefined);
      await Promise.allSettled(queue.map((q) => q.summary));
    },
  };
}

/** Counts the summaries that fell back to the extract (said once); too many in a row stop the import. */
function fallbackWatch(res: ImportResult, o: RunOptions): (summary: Summary) => void {
  const maxFallbacks = o.maxConsecutiveFallbacks ?? MAX_CONSECUTIVE_FALLBACKS;
  let inARow = 0;
  let warned = false;
  return (summary) => {
    if (!summary.fallbackReason) {
      inARow = 0;
      return;
    }
    res.fallbacks++;
    inARow++;
    if (!warned) {
      (o.warn ?? (() => {}))(`the summariser fell back to the extract (${summary.fallbackReason})`);
      warned = true;
    }
    if (inARow >= maxFallbacks) {
      throw new SummarizerGaveUpError(`the summariser failed on ${inARow} turns in a row (${summary.fallbackReason}); stopped after ${res.written} notes; run memsearch import again later, or with --summarizer extract`);
    }
  };
}

/** One planned turn's note, whole or not at all; a full disk says how many notes were written before it. */
async function writeNote(plan: ImportPlan, p: PlannedTurn, summary: Summary, memoryDir: string, writtenBefore: number): Promise<{ appended: boolean; file: string }> {
  const tr = plan.transcripts[p.transcript]!;
  try {
    return await appendTurnNote({ memoryDir, sessionId: p.sessionId, turnUuid: p.uuid, transcriptPath: tr.path, agent: tr.agent, bullets: summary.bullets, now: new Date(p.time) });
  } catch (e) {
    if (e instanceof StorageError) {
      // appendTurnNote cut the file back: every note before this one is whole, this one absent.
      throw new StorageError(`${oneLine(e)}; ${writtenBefore === 1 ? "1 note was" : `${writtenBefore} notes were`} written before it, none half-written; run memsearch import again to continue`);
    }
    throw e;
  }
}

/** Exposed for tests: the day file a turn goes to. */
export function dayOfTurn(turn: Pick<Turn, "timestamp">, fallback = Date.now()): string {
  return localDay(new Date(turnTimes([turn], fallback)[0]!));
}
