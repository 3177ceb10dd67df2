/**
 * Every turn accounted for: for each session of the project, every agent's whose transcripts the
 * caller gives (`sources`, from the adapters: agents/registry.ts projectTranscripts), the turns its transcript
 * holds, and for each one whether it has a note (an anchor in a daily file), is still queued (the
 * write-ahead queue), is still running (the last turn of a session written to in the last minutes),
 * is no turn to capture (turn-kind.ts: a local command, no reply, a trivial words-only turn), or is
 * missing: neither a note nor in the queue. `memsearch import` writes exactly the missing ones (it
 * plans with the same reader, the same anchors and the same decision).
 *
 * Read from files memsearch already keeps. What a transcript holds is kept in a cache by its stamp
 * (`~/.memsearch/turns-cache.json` when the caller names it): only a transcript that changed is
 * read again. A transcript is stamped by its listing (an OpenCode session, `<database>#<session>`,
 * is no file to stat).
 */
import * as v from "valibot";
import { DEFAULT_AGENT, turnKey } from "../core/anchor.ts";
import { atomicWrite } from "../core/fsutil.ts";
import { readJsonFile } from "../core/json-file.ts";
import { clip, oneLine } from "../core/text.ts";
import { sanitize } from "../core/redact.ts";
import { EmptyTranscriptError } from "../transcript/files.ts";
import { describeSkips, NOT_TURN_KINDS, turnKind, type SkipKind } from "../transcript/turn-kind.ts";
import type { ProjectTranscripts, Turn } from "../transcript/types.ts";
import { ACTIVE_MS, existingNotes, turnFate, turnTimes, type TurnRecords } from "./import.ts";
import { localDay } from "./journal.ts";
import { readForgotten } from "./forgotten.ts";
import { queuedTurnKeys } from "./pending.ts";

export type TurnState = "noted" | "queued" | "running" | "missing" | "forgotten" | SkipKind;

export interface MissingTurn {
  /** The agent the turn was with (`claude`, `codex`…) and its name for people. */
  agent: string;
  label: string;
  sessionId: string;
  /** The turn's id (its user entry's uuid): what a note's anchor would name. */
  turn: string;
  /** ISO time of the turn. */
  at: string;
  /** The prompt's first words, redacted. */
  prompt: string;
  transcript: string;
}

export interface Counts {
  /** Turns the transcript holds (what `memsearch transcript` lists). */
  turns: number;
  noted: number;
  queued: number;
  running: number;
  missing: number;
  /** Turns the user forgot (`memsearch forget`): no note, on purpose; import leaves them out too. */
  forgotten: number;
  /** Turns that are not turns to capture, by why; local commands nobody answered (never a turn) are counted with the local commands. */
  notTurns: Record<SkipKind, number>;
}

export interface SessionAccount extends Counts {
  agent: string;
  label: string;
  sessionId: string;
  transcript: string;
  /** ISO times of its first and last turn. */
  first?: string;
  last?: string;
}

export interface DayAccount {
  noted: number;
  missing: number;
}

export interface AgentAccount extends Counts {
  agent: string;
  label: string;
}

export interface TurnAccount extends Counts {
  sessions: SessionAccount[];
  /** Per agent with turns, Claude Code first: the same counts. */
  agents: AgentAccount[];
  /** Turns to capture: noted, queued, running and missing (what "N of N turns" counts). */
  toCapture: number;
  /** ISO time of the earliest turn accounted. */
  since?: string;
  /** Turns without a note, oldest first. */
  missingTurns: MissingTurn[];
  /** Per local day (`YYYY-MM-DD`) of a turn: notes and missing turns. */
  days: Record<string, DayAccount>;
  /** Transcripts that could not be read, with why. */
  unreadable: { path: string; reason: string }[];
  ms: number;
}

export interface AccountOptions {
  /** Where what each transcript holds is kept between runs; none: every transcript is read. */
  cacheFile?: string;
  root: string;
  memoryDir: string;
  dataDir: string;
  now?: number;
  activeMs?: number;
  /** Every agent's transcripts of the project (src/agents/registry.ts: projectTranscripts). */
  sources: readonly ProjectTranscripts[];
}

const emptySkips = (): Record<SkipKind, number> => ({ "local-command": 0, "no-reply": 0, trivial: 0 });

function add(into: Counts, state: TurnState): void {
  into.turns++;
  if (state === "noted" || state === "queued" || state === "running" || state === "missing" || state === "forgotten") into[state]++;
  else into.notTurns[state]++;
}


/** What the accounting needs of a transcript, kept by its stamp. */
const CachedTranscript = v.object({
  stamp: v.string(),
  /** Absent in entries written before every agent's were: the default agent's (core/anchor.ts DEFAULT_AGENT). */
  agent: v.optional(v.string()),
  sessionId: v.string(),
  subagent: v.boolean(),
  /** Slash commands nobody answered (never turns). */
  unanswered: v.number(),
  turns: v.array(
    v.object({
      uuid: v.string(),
      promptId: v.optional(v.string()),
      timestamp: v.optional(v.string()),
      kind: v.picklist(["work", ...NOT_TURN_KINDS]),
      /** The prompt's first words, redacted. */
      prompt: v.string(),
    }),
  ),
});
type CachedTranscript = v.InferOutput<typeof CachedTranscript>;
const TurnsCache = v.object({ version: v.literal(1), files: v.record(v.string(), CachedTranscript) });
type TurnsCache = v.InferOutput<typeof TurnsCache>;

/** A turn as the cache keeps it: its ids, its time, whether it is one to capture, its prompt's first words. */
function cachedTurn(t: Turn): CachedTranscript["turns"][number] {
  return {
    uuid: t.uuid,
    ...(t.promptId !== undefined ? { promptId: t.promptId } : {}),
    ...(t.timestamp !== undefined ? { timestamp: t.timestamp } : {}),
    kind: turnKind(t),
    prompt: clip(oneLine(sanitize(t.userText)), 80),
  };
}

/** A transcript's turns as its agent lists them: each judged by the rule the drainer and import apply to it. */
async function readTurns(source: ProjectTranscripts, path: string, stamp: string): Promise<CachedTranscript> {
  const list = await source.listTurns(path);
  return { stamp, agent: source.agent, sessionId: list.sessionId, subagent: list.subagent === true, unanswered: list.unanswered, turns: list.turns.map(cachedTurn) };
}

/**
 * Keeps the cache's entries of transcripts that still exist (another agent's: in its listing, when
 * it was taken); a cache that cannot be written is only slower next time.
 */
function saveCache(file: string, cache: TurnsCache, sources: readonly ProjectTranscripts[]): void {
  const listed = new Map(sources.map((o) => [o.agent, o]));
  for (const [path, entry] of Object.entries(cache.files)) {
    const source = listed.get(entry.agent ?? DEFAULT_AGENT);
    if (source && !source.exists(path)) delete cache.files[path];
  }
  try {
    atomicWrite(file, JSON.stringify(cache));
  } catch {}
}

/** What the accounting reads every transcript against: the notes, the queue, the forgotten list, the cache. */
interface Accounting extends TurnRecords {
  acc: TurnAccount;
  byAgent: Map<string, AgentAccount>;
  /** A resumed session's file repeats the turns of the one it resumed: each is counted once. */
  seen: Set<string>;
  /** Queued turns named by neither id, per session (pending.ts queuedTurnKeys). */
  unnamedQueued: Map<string, number>;
  now: number;
  activeMs: number;
  cache?: TurnsCache;
  cacheChanged: boolean;
}

export async function accountTurns(o: AccountOptions): Promise<TurnAccount> {
  const started = performance.now();
  const acc: TurnAccount = { turns: 0, noted: 0, queued: 0, running: 0, missing: 0, forgotten: 0, notTurns: emptySkips(), sessions: [], agents: [], toCapture: 0, missingTurns: [], days: {}, unreadable: [], ms: 0 };
  const cache: TurnsCache | undefined = o.cacheFile ? (readJsonFile(o.cacheFile, TurnsCache) ?? { version: 1, files: {} }) : undefined;
  const queue = queuedTurnKeys(o.dataDir);
  const x: Accounting = { acc, byAgent: new Map(), seen: new Set(), notes: existingNotes(o.memoryDir), queued: queue.keys, unnamedQueued: queue.unnamed, forgotten: readForgotten(o.dataDir), now: o.now ?? Date.now(), activeMs: o.activeMs ?? ACTIVE_MS, cache, cacheChanged: false };
  for (const source of o.sources) {
    if (source.problem) acc.unreadable.push({ path: source.label, reason: `its transcripts could not be listed: ${source.problem}` });
    for (const file of source.files) {
      const stamp = file.stamp ?? `${source.agent}:${file.mtime}:${file.size}`;
      const index = await holding(x, file.path, stamp, () => readTurns(source, file.path, stamp));
      if (index && !index.subagent) count(x, source, file.path, index, file.mtime);
    }
  }
  if (cache && o.cacheFile && x.cacheChanged) saveCache(o.cacheFile, cache, o.sources);
  acc.sessions.sort((a, b) => (a.first ?? "").localeCompare(b.first ?? ""));
  acc.missingTurns.sort((a, b) => a.at.localeCompare(b.at));
  acc.agents = [...x.byAgent.values()].filter((a) => a.turns);
  acc.since = acc.sessions.reduce<string | undefined>((min, s) => (s.first && (!min || s.first < min) ? s.first : min), undefined);
  acc.toCapture = toCapture(acc);
  acc.ms = performance.now() - started;
  return acc;
}

/** What a transcript holds: the cache's when its stamp is the same, else read (and kept); undefined when it holds nothing to count. */
async function holding(x: Accounting, path: string, stamp: string, read: () => Promise<CachedTranscript>): Promise<CachedTranscript | undefined> {
  const hit = x.cache?.files[path];
  if (hit?.stamp === stamp) return hit;
  let index: CachedTranscript;
  try {
    index = await read();
  } catch (e) {
    if (!(e instanceof EmptyTranscriptError)) x.acc.unreadable.push({ path, reason: oneLine(e) });
    return undefined;
  }
  if (x.cache) {
    x.cache.files[path] = index;
    x.cacheChanged = true;
  }
  return index;
}

/** Each turn's state, by the rule import applies (import.ts turnFate): work without a note is missing. */
function statesOf(x: Accounting, index: CachedTranscript, mtime: number): TurnState[] {
  const sid = index.sessionId;
  const lastRunning = x.now - mtime < x.activeMs ? index.turns.length - 1 : -1;
  const states: TurnState[] = index.turns.map((turn, i) => {
    const fate = turnFate(x, sid, turn, turn.kind, i === lastRunning);
    return fate === "work" ? "missing" : fate;
  });
  // Queued turns the queue names by neither id (older clients, Gemini CLI): the session's latest turns without a note.
  let unnamedQueued = x.unnamedQueued.get(sid) ?? 0;
  for (let i = states.length - 1; i >= 0 && unnamedQueued > 0; i--) {
    if (states[i] === "missing" || states[i] === "running") {
      states[i] = "queued";
      unnamedQueued--;
    }
  }
  return states;
}

/** One transcript's turns counted into its session, its agent and the whole, once each. */
function count(x: Accounting, of: { agent: string; label: string }, path: string, index: CachedTranscript, mtime: number): void {
  const { acc } = x;
  const who = { agent: of.agent, label: of.label };
  const sid = index.sessionId;
  const s: SessionAccount = { ...who, sessionId: sid, transcript: path, turns: 0, noted: 0, queued: 0, running: 0, missing: 0, forgotten: 0, notTurns: emptySkips() };
  let a = x.byAgent.get(who.agent);
  if (!a) x.byAgent.set(who.agent, (a = { ...who, turns: 0, noted: 0, queued: 0, running: 0, missing: 0, forgotten: 0, notTurns: emptySkips() }));
  for (const c of [s, a, acc]) c.notTurns["local-command"] += index.unanswered;
  const times = turnTimes(index.turns, mtime);
  const states = statesOf(x, index, mtime);
  index.turns.forEach((turn, i) => {
    const key = turnKey(sid, turn.uuid);
    if (x.seen.has(key)) return;
    x.seen.add(key);
    const state = states[i]!;
    for (const c of [s, a, acc]) add(c, state);
    const at = new Date(times[i]!).toISOString();
    if (!s.first || at < s.first) s.first = at;
    if (!s.last || at > s.last) s.last = at;
    if (state === "noted" || state === "missing") {
      const d = (acc.days[localDay(new Date(times[i]!))] ??= { noted: 0, missing: 0 });
      d[state]++;
    }
    if (state === "missing") acc.missingTurns.push({ ...who, sessionId: sid, turn: turn.uuid, at, prompt: turn.prompt, transcript: path });
  });
  if (s.turns || index.unanswered) acc.sessions.push(s);
}

/** Turns to capture: noted, queued, running and missing. */
export function toCapture(c: Counts): number {
  return c.noted + c.queued + c.running + c.missing;
}

/** Not turns to capture, all kinds together. */
export function notTurnTotal(c: Pick<Counts, "notTurns">): number {
  return NOT_TURN_KINDS.reduce((n, k) => n + c.notTurns[k], 0);
}

const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * One line for a person: `1,204 of 1,204 turns since 2026-03-01 have a note (not turns: 3 local
 * commands)`, or which turns have none.
 */
export function turnsLine(a: TurnAccount): string {
  const since = a.since ? ` since ${a.since.slice(0, 10)}` : "";
  const parts: string[] = [];
  if (a.queued) parts.push(`${fmt(a.queued)} queued`);
  if (a.running) parts.push(`${fmt(a.running)} still running`);
  if (a.forgotten) parts.push(`${fmt(a.forgotten)} forgotten`);
  const skipped = describeSkips(a.notTurns);
  const tail = `${parts.length ? `; ${parts.join(", ")}` : ""}${skipped ? ` (not turns to capture: ${skipped})` : ""}`;
  // Which agents the turns were with, once more than one has turns to capture.
  const withTurns = a.agents.filter((x) => toCapture(x));
  const per = withTurns.length > 1 ? ` (${withTurns.map((x) => `${x.label} ${fmt(toCapture(x))}`).join(", ")})` : "";
  if (!a.missing) return `${fmt(a.noted)} of ${fmt(a.toCapture)} turns${since} have a note${per}${tail}`;
  const named = (m: MissingTurn) => (per || m.agent !== DEFAULT_AGENT ? `${m.label} ` : "");
  const shown = a.missingTurns.slice(0, 3).map((m) => `${m.at.slice(0, 16).replace("T", " ")} ${named(m)}session ${m.sessionId.slice(0, 8)} turn ${m.turn.slice(0, 8)} "${clip(m.prompt, 40)}"`);
  const more = a.missing > shown.length ? `, and ${fmt(a.missing - shown.length)} more` : "";
  return `${fmt(a.missing)} of ${fmt(a.toCapture)} turns${since} have no note${per}: ${shown.join(", ")}${more}${tail}`;
}
