/**
 * The injection log, `.memsearch/injections.jsonl`: one line per decision of the prompt hook (what
 * it considered, what passed the gate with which scores, how many characters it injected, or why
 * nothing). Its schema is here and only here; the hook writes it, `memsearch debug` and the hub read
 * it back through `readInjections`, checking each line (the file lives in the project: its bytes
 * are not trusted).
 *
 * The log is also the session's memory of what it was given: a memory injected within the last
 * few prompts of a session is not injected again (`recentlyInjected`), with no second file to keep.
 *
 * Bounded: past LOG_MAX_BYTES the log becomes `injections.1.jsonl` (replacing the older one) and a
 * new one starts, so the two never hold more than twice that.
 */
import * as v from "valibot";
import { dataFiles, makeDataDir } from "../core/project.ts";
import { appendBounded, readOwnTail } from "../core/fsutil.ts";
import { parseJson } from "../core/json-file.ts";
import { redactedJsonLine, sanitize } from "../core/redact.ts";

export const LOG_MAX_BYTES = 256 * 1024;

/** How many of a session's latest prompts a memory injected in stays out of the next injections. */
export const RECENT_PROMPTS = 5;

const Num = v.pipe(v.number(), v.finite());

/** One memory the hook looked at, and what became of it. */
export const ConsideredSchema = v.object({
  /** A note (chunk hash) or a conversation turn (turn uuid). */
  kind: v.picklist(["note", "turn"]),
  id: v.pipe(v.string(), v.maxLength(200)),
  /** `YYYY-MM-DD HH:MM` when known. */
  date: v.optional(v.pipe(v.string(), v.maxLength(40))),
  /** The gate's score (notes: its relevance, recall/gate.ts; turns: share of the prompt's words). */
  score: Num,
  /** Notes: the gate's keyword side (share of the prompt's rare-word weight held) and the cosine's z-score against the index. */
  keyword: v.optional(Num),
  z: v.optional(Num),
  bm25: v.optional(Num),
  cosine: v.optional(Num),
  /**
   * `injected`; `below-gate`; `repeated` (given in the session's last prompts); `over-top-k`,
   * `over-budget` (left out for room); `not-given` (chosen, but the synthesis found nothing relevant).
   */
  outcome: v.picklist(["injected", "below-gate", "repeated", "over-top-k", "over-budget", "not-given"]),
  /** A note whose session this machine never saw (a curated file: a committed CLAUDE.md). */
  fromRepository: v.optional(v.boolean()),
  /** A piece of Claude Code's curated memory (its memory folder, a CLAUDE.md), not a note. */
  curated: v.optional(v.boolean()),
  /** Its text reads like an instruction to the model (quoted with a mark). */
  instructionLike: v.optional(v.boolean()),
});

export const InjectionRecordSchema = v.object({
  v: v.literal(1),
  at: v.pipe(v.string(), v.maxLength(40)),
  /** `session-start`: what SessionStart's context gave the session (absent: a prompt's decision). */
  event: v.optional(v.literal("session-start")),
  session: v.optional(v.pipe(v.string(), v.maxLength(300))),
  /** Claude Code's prompt id. */
  prompt: v.optional(v.pipe(v.string(), v.maxLength(300))),
  /** UserPromptSubmit's `source` (absent: an older Claude Code, a person typing). */
  source: v.optional(v.pipe(v.string(), v.maxLength(60))),
  /** The agent whose prompt it was (absent: written before agents were named, Claude Code). */
  agent: v.optional(v.pipe(v.string(), v.maxLength(32))),
  /** `hooks.recall`. */
  mode: v.picklist(["inject", "synthesize", "hint", "off"]),
  /** Whether vectors took part in the notes' search; absent when no search ran. */
  search: v.optional(v.picklist(["hybrid", "bm25"])),
  /** `injected` memories, a `hint` line, `nothing` after a search, `skipped` before any. */
  decision: v.picklist(["injected", "hint", "nothing", "skipped"]),
  /** Why, in a few words. */
  reason: v.pipe(v.string(), v.maxLength(500)),
  considered: v.pipe(v.array(ConsideredSchema), v.maxLength(100)),
  /** Characters of context handed to Claude. */
  chars: v.pipe(Num, v.minValue(0)),
});

export type Considered = v.InferOutput<typeof ConsideredSchema>;
export type InjectionRecord = v.InferOutput<typeof InjectionRecordSchema>;

/** Append one decision (redacted). A log that cannot be written never breaks the hook: the caller ignores the throw. */
export function appendInjection(dataDir: string, rec: InjectionRecord): void {
  const files = dataFiles(dataDir);
  makeDataDir(dataDir);
  appendBounded(files.injectionLog, files.injectionLogOld, redactedJsonLine(rec), LOG_MAX_BYTES);
}

/**
 * The records of both parts of the log, oldest first; lines that are not records are skipped. Each
 * part is read from its last LOG_MAX_BYTES only, the most it holds before it rotates: a larger
 * file came with the repository (a committed 200 MB log cost every prompt 14–18 s and over a GB).
 */
export function readInjections(dataDir: string, filter?: (line: string) => boolean): InjectionRecord[] {
  const files = dataFiles(dataDir);
  const out: InjectionRecord[] = [];
  for (const file of [files.injectionLogOld, files.injectionLog]) {
    for (const line of (readOwnTail(file, LOG_MAX_BYTES) ?? "").split("\n")) {
      if (!line || (filter && !filter(line))) continue;
      const r = parseJson(line, InjectionRecordSchema);
      if ("value" in r) out.push(r.value);
    }
  }
  return out;
}

/**
 * Memories the session has in its context, by id, with how many prompts ago they were given (1 =
 * the previous prompt): what its last `prompts` prompts injected (every prompt leaves one record),
 * and what its SessionStart context held (its turns' ids, counted as given before the first prompt).
 */
export function recentlyInjected(dataDir: string, session: string, prompts = RECENT_PROMPTS): Map<string, number> {
  const key = JSON.stringify(sanitize(session));
  const mine = readInjections(dataDir, (line) => line.includes(key)).filter((r) => r.session === sanitize(session));
  const out = new Map<string, number>();
  const asked = mine.filter((r) => r.event === undefined);
  for (const r of mine) if (r.event === "session-start") for (const c of r.considered) out.set(c.id, asked.length + 1);
  const last = asked.slice(-prompts);
  last.forEach((r, i) => {
    for (const c of r.considered) if (c.outcome === "injected") out.set(c.id, last.length - i);
  });
  return out;
}

/** SessionStart's context on record: the turns whose notes it gave (anchor turn ids), so the prompt hook does not give them again. */
export function recordSessionStart(dataDir: string, session: string, turns: string[]): void {
  appendInjection(dataDir, {
    v: 1,
    at: new Date().toISOString(),
    event: "session-start",
    session,
    mode: "inject",
    decision: "injected",
    reason: "the newest sessions' notes",
    considered: turns.slice(0, 100).map((id) => ({ kind: "note" as const, id: id.slice(0, 200), score: 1, outcome: "injected" as const })),
    chars: 0,
  });
}
