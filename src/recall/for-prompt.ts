/**
 * Recall for a typed prompt: the prompt hook's face of the recall service, as `commands/recall.ts`
 * is the CLI's and the hub's data is the page's. The hook reads its input and writes what this
 * answers; everything between (the notes' search on the prompt's budget, the gate, past
 * conversation turns, what the session was already given, the top k, the budget, the model's
 * synthesis, and the decision's record in the injection log) is here.
 *
 * Never prints, never throws for what a user's files can cause: a search that cannot answer in
 * time gives the hint, a transcript index that fails gives no turns.
 */
import type { Context } from "../core/context.ts";
import { clip, localMinute, oneLine } from "../core/text.ts";
import { anchorsIn, turnKey } from "../core/anchor.ts";
import { instructionLike } from "../core/frame.ts";
import { peekIndex } from "../index/format.ts";
import type { SearchResponse, SearchResult } from "../index/search.ts";
import { appendInjection, recentlyInjected, type Considered, type InjectionRecord } from "../memory/injections.ts";
import { provenance, type Provenance } from "../memory/seen.ts";
import { searchIndex, watchRunning, type AlreadyRead, type NotesQuery } from "../watch/gateway.ts";
import { touchSession } from "../watch/sessions.ts";
import { gate, gateSearchDepth } from "./gate.ts";
import { hintText, noteLine, noteWhen, NOTES_HEADER, preview, quoteChars } from "./lines.ts";
import type { TurnHit } from "./turns.ts";
import { fitLines } from "../core/frame.ts";
import { isDirectory } from "../core/fsutil.ts";

export const PROMPT_RECALL_MODES = ["inject", "synthesize", "hint", "off"] as const;
export type PromptRecallMode = (typeof PROMPT_RECALL_MODES)[number];

/** The hook clips a prompt to this before searching. */
export const PROMPT_QUERY_CHARS = 2000;

export interface PromptRecallRequest {
  prompt: string;
  session?: string;
  /** For the decision's record: the agent's prompt id, the prompt's source, the agent. */
  promptId?: string;
  source?: string;
  agent?: string;
  /** When the hook's budget ends (performance.now() scale): what synthesis may still use. */
  deadline?: number;
}

export interface PromptRecallDeps {
  ctx: Context;
  /** The debug log's writer (the hook's). */
  debug?: (what: string) => void;
  /** Bring the watch process back for the next prompt when none answered this one. */
  wakeWatch?: () => void;
  /** Whether a curated file came with the repository (a committed CLAUDE.md), as the agent's adapter knows. */
  curatedFromRepository?: (source: string) => boolean;
  /** The conversation index (default: ~/.memsearch/transcripts.sqlite). */
  transcriptDb?: string;
  /** The notes' index held in this process (the evaluation's, as a watch process holds it), instead of the gateway. */
  notes?: (q: NotesQuery) => Promise<SearchResponse>;
}

/** A memory handed to the model: a note (its chunk) or a conversation turn, with the session it came from when known. */
export interface Given {
  kind: "note" | "turn";
  id: string;
  session?: string;
  turn?: string;
}

/** What the prompt gets: context for the model, a status line for the user, and the decision on record. */
export interface PromptRecall {
  context?: string;
  systemMessage?: string;
  /** What the context holds, in its order (empty when nothing was injected). */
  given: Given[];
  /** What passed the gate but the session already has (given by an earlier prompt or by SessionStart's context). */
  repeated: Given[];
  record: InjectionRecord;
}

/**
 * `inject`: up to N notes through the gate (gate.ts), each a quoted line within
 * `hooks.inject_max_chars`, or nothing. `synthesize`: when notes pass, the summariser's model
 * reads them and the conversation turns behind the prompt and writes a few lines inside what
 * remains of the time budget; the notes plainly when the model is slow, missing or fails. `hint`
 * (or when a search cannot answer in time): one line saying memory is there. A memory the session
 * already has (given by one of its last prompts, or by SessionStart's context) is not given
 * again. Every decision is appended to the injection log (memory/injections.ts).
 */
export async function recallForPrompt(req: PromptRecallRequest, deps: PromptRecallDeps): Promise<PromptRecall> {
  const { ctx } = deps;
  const debug = deps.debug ?? (() => {});
  const mode = modeOf(ctx);
  const log = new DecisionLog(ctx, req, mode, debug);
  if (mode === "off") return log.skip("hooks.recall is off");
  const warm = deps.notes !== undefined || watchRunning(ctx.project.dataDir) !== undefined;
  const head = deps.notes ? undefined : peekIndex(ctx.project.indexDir);
  const haveNotes = warm || (head !== undefined && head.chunks > 0);
  const hint = hintText(head?.chunks);
  if (mode === "hint") return haveNotes ? log.done({ context: hint }, "hint", "hooks.recall is hint") : log.skip("no notes indexed");

  const query = clip(req.prompt, PROMPT_QUERY_CHARS);
  const res = haveNotes ? await searchNotes(deps, query, { watchRunning: warm, head }, req.session) : undefined;
  log.search = res?.mode;
  const recent = req.session ? recentlyInjectedQuiet(ctx.project.dataDir, req.session, debug) : new Map<string, number>();
  const notes = chooseNotes(deps, res, recent, log);
  if (res) debug(`mode ${res.mode}, ${res.results.length} results, ${notes.passed} through the gate, ${notes.lines.length} new`);

  const budget = ctx.config["hooks.inject_max_chars"];
  const plain = notes.lines.length ? log.fit(NOTES_HEADER, notes.lines, budget) : undefined;
  if (!plain) {
    if (haveNotes && !res) return log.done({ context: hint }, "hint", "the notes' search did not answer in time");
    return log.done({}, "nothing", notes.passed ? nothingNewReason(log, budget) : "nothing through the gate");
  }
  if (mode !== "synthesize") return log.done({ context: plain }, "injected", "memories through the gate");

  // Synthesize: the model reads the notes through the gate and the conversation turns behind the
  // prompt, and judges what of them helps; turns are never injected without it (they pass no gate
  // of their own: a raw message covers the words of any prompt). Loaded only here.
  let turns: TurnHit[] = [];
  let systemMessage: string | undefined;
  try {
    const found = await (await import("./turns.ts")).conversationTurns(query, ctx.project.root, ctx.config["hooks.inject_top_k"] * 2, deps.transcriptDb);
    turns = turnsForModel(ctx, found.turns, recent, log);
    // A healed conversation index is said once, in this prompt's status line.
    if (found.healed) {
      debug(found.healed);
      systemMessage = found.healed;
    }
  } catch (e) {
    debug(`transcript search failed: ${oneLine(e)}`);
  }
  const finish = (out: { context?: string }, decision: InjectionRecord["decision"], reason: string) => log.done({ ...out, ...(systemMessage ? { systemMessage } : {}) }, decision, reason);
  const synth = await synthesize(ctx, query, notes.picked, turns, budget, req.deadline, debug);
  if (synth === undefined) {
    log.notGiven("turn");
    return finish({ context: plain }, "injected", "plain injection (no synthesis)");
  }
  if (synth === "nothing") return finish({}, "nothing", "the model found nothing relevant");
  return finish({ context: synth }, "injected", "synthesis");
}

function modeOf(ctx: Context): PromptRecallMode {
  return PROMPT_RECALL_MODES.find((m) => m === ctx.config["hooks.recall"]) ?? "inject";
}

/** A prompt that gets no memory before any search (not typed by a person, trivial), on record like any other decision. */
export function skippedPrompt(req: PromptRecallRequest, deps: PromptRecallDeps, reason: string): PromptRecall {
  return new DecisionLog(deps.ctx, req, modeOf(deps.ctx), deps.debug ?? (() => {})).skip(reason);
}

/** The notes' search, as the index gateway allows a prompt hook (undefined: no answer in the budget). */
async function searchNotes(deps: PromptRecallDeps, query: string, read: AlreadyRead, sessionId: string | undefined): Promise<SearchResponse | undefined> {
  const { ctx } = deps;
  const topK = gateSearchDepth(ctx.config);
  if (deps.notes) return deps.notes({ query, topK, background: true });
  if (!read.watchRunning && deps.wakeWatch) {
    // No watch process (it died, or the session started before install): bring it back for next
    // time, with this session on record so that it stays while the session lives.
    try {
      if (sessionId) touchSession(ctx.project.dataDir, sessionId);
      deps.wakeWatch();
    } catch {}
  }
  const found = await searchIndex(ctx, { query, topK, background: true }, { reader: "prompt", read });
  if (found.kind === "results") return found.response;
  if (found.kind === "unanswered") deps.debug?.(found.why);
  return undefined;
}

/**
 * The calibrated gate (gate.ts) on the notes' search: each result with the relevance that decided
 * and why. Whether a note that passes is given is decided after it (new to the session, top-k,
 * the budget), so a note the session already has does not take another's place.
 */
function gateNotes(res: SearchResponse | undefined, ctx: Context) {
  if (!res) return [];
  const floor = ctx.config["hooks.inject_min_score"];
  const { candidates } = gate(res, ctx.config);
  return res.results.map((result, i) => ({ result, judged: candidates[i]!, pass: candidates[i]!.relevance >= floor }));
}

interface Line {
  id: string;
  line: string;
}

/** Notes through the gate, new to the session, at most `hooks.inject_top_k`, as quoted lines. */
function chooseNotes(deps: PromptRecallDeps, res: SearchResponse | undefined, recent: Map<string, number>, log: DecisionLog): { passed: number; picked: SearchResult[]; lines: Line[] } {
  const { ctx } = deps;
  const topK = ctx.config["hooks.inject_top_k"];
  let ours: Provenance | undefined;
  const picked: SearchResult[] = [];
  const lines: Line[] = [];
  let passed = 0;
  for (const { result: r, judged, pass } of gateNotes(res, ctx)) {
    const c = r.chunk;
    const entry: Considered = {
      kind: "note",
      id: c.chunkHash,
      date: noteWhen(c),
      score: round(judged.relevance),
      keyword: round(judged.keyword),
      ...(judged.z === undefined ? {} : { z: round(judged.z) }),
      bm25: round(r.bm25),
      ...(r.cosine === undefined ? {} : { cosine: round(r.cosine) }),
      outcome: "below-gate",
    };
    log.considered.push(entry);
    const anchor = anchorsIn(c.content)[0];
    if (anchor) log.origin.set(c.chunkHash, { session: anchor.session, turn: anchor.turn });
    if (!pass) continue;
    passed++;
    // Given by a prompt (its chunk) or by SessionStart's context (its turn's note).
    const ago = recent.get(c.chunkHash) ?? (anchor ? recent.get(turnKey(anchor.session, anchor.turn)) : undefined);
    if (ago !== undefined) {
      entry.outcome = "repeated";
      log.debug(`chunk ${c.chunkHash} was given ${ago} prompt${ago === 1 ? "" : "s"} ago in this session: not again`);
      continue;
    }
    if (picked.length >= topK) {
      entry.outcome = "over-top-k";
      continue;
    }
    ours ??= provenance();
    // Curated: Claude Code's memory folder and CLAUDE.local.md are this machine's; a CLAUDE.md is committed.
    const curated = r.kind === "curated";
    const foreign = curated ? (deps.curatedFromRepository?.(c.source) ?? false) : !ours(anchor);
    if (curated) entry.curated = true;
    const text = preview(c.content, quoteChars(ctx.config["hooks.inject_max_chars"], NOTES_HEADER));
    entry.fromRepository = foreign;
    entry.instructionLike = instructionLike(text);
    entry.outcome = "injected";
    picked.push(r);
    lines.push({ id: c.chunkHash, line: noteLine(c, text, foreign, curated) });
  }
  return { passed, picked, lines };
}

/** Conversation turns for the model (synthesize only), new to the session, at most `hooks.inject_top_k`. */
function turnsForModel(ctx: Context, found: TurnHit[], recent: Map<string, number>, log: DecisionLog): TurnHit[] {
  const topK = ctx.config["hooks.inject_top_k"];
  const out: TurnHit[] = [];
  for (const turn of found) {
    const id = turnKey(turn.hit.session, turn.hit.turnUuid);
    const entry: Considered = { kind: "turn", id, date: turn.hit.ts ? localMinute(turn.hit.ts) : undefined, score: round(turn.coverage), outcome: "injected" };
    log.considered.push(entry);
    log.origin.set(id, { session: turn.hit.session, turn: turn.hit.turnUuid });
    const ago = recent.get(id) ?? (turn.hit.promptId ? recent.get(turn.hit.promptId) : undefined);
    if (ago !== undefined) {
      entry.outcome = "repeated";
      log.debug(`turn ${id} was given ${ago} prompt${ago === 1 ? "" : "s"} ago in this session: not again`);
      continue;
    }
    if (out.length >= topK) {
      entry.outcome = "over-top-k";
      continue;
    }
    entry.instructionLike = instructionLike(turn.hit.snippet);
    out.push(turn);
  }
  return out;
}

/**
 * The record of one prompt's decision, appended to the injection log when the answer is ready. A
 * log that cannot be written (no data folder yet, a full disk) costs the prompt nothing.
 */
class DecisionLog {
  considered: Considered[] = [];
  /** Where each memory considered came from, for the caller. */
  origin = new Map<string, { session?: string; turn?: string }>();
  search: "hybrid" | "bm25" | undefined;
  constructor(
    private ctx: Context,
    private req: PromptRecallRequest,
    private mode: InjectionRecord["mode"],
    readonly debug: (what: string) => void,
  ) {}

  skip(reason: string): PromptRecall {
    return this.done({}, "skipped", reason);
  }

  /** What the model was shown of this kind but the answer does not hold (the plain injection after a failed synthesis). */
  notGiven(kind: Considered["kind"]): void {
    for (const c of this.considered) if (c.kind === kind && c.outcome === "injected") c.outcome = "not-given";
  }

  /** Header and the lines that fit the budget; the others are marked as left out for it. */
  fit(header: string, lines: Line[], budget: number): string | undefined {
    const { text, kept } = fitLines(header, lines.map((l) => l.line), budget);
    for (const l of lines.slice(kept)) {
      const c = this.considered.find((x) => x.id === l.id);
      if (c) c.outcome = "over-budget";
    }
    return kept ? text : undefined;
  }

  done(out: { context?: string; systemMessage?: string }, decision: InjectionRecord["decision"], reason: string): PromptRecall {
    const chars = out.context?.length ?? 0;
    // Chosen but not handed over (the synthesis found nothing relevant in them): not given, so not held back next time.
    if (decision !== "injected") for (const c of this.considered) if (c.outcome === "injected") c.outcome = "not-given";
    this.debug(`decision: ${decision} (${reason}), ${chars} characters`);
    const record: InjectionRecord = {
      v: 1,
      at: new Date().toISOString(),
      session: this.req.session,
      prompt: this.req.promptId,
      source: this.req.source,
      agent: this.req.agent,
      mode: this.mode,
      search: this.search,
      decision,
      reason,
      considered: this.considered.slice(0, 100),
      chars,
    };
    const dataDir = this.ctx.project.dataDir;
    if (isDirectory(dataDir)) {
      try {
        appendInjection(dataDir, record);
      } catch (e) {
        this.debug(`could not append to the injection log: ${oneLine(e)}`);
      }
    }
    const as = (c: Considered): Given => ({ kind: c.kind, id: c.id, ...this.origin.get(c.id) });
    const given = record.decision === "injected" ? this.considered.filter((c) => c.outcome === "injected").map(as) : [];
    return { ...out, given, repeated: this.considered.filter((c) => c.outcome === "repeated").map(as), record };
  }
}

/** Why notes passed the gate and none was given: the session had them, or none fits the budget. */
function nothingNewReason(log: DecisionLog, budget: number): string {
  if (log.considered.some((c) => c.outcome === "over-budget")) return `no note through the gate fits hooks.inject_max_chars (${budget})`;
  return "every memory through the gate was given in this session's last prompts";
}

function recentlyInjectedQuiet(dataDir: string, session: string, debug: (what: string) => void): Map<string, number> {
  try {
    return recentlyInjected(dataDir, session);
  } catch (e) {
    debug(`could not read the injection log: ${oneLine(e)}`);
    return new Map();
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Time the model needs to be worth asking, and what is kept back for the fallback and the output. */
const MODEL_MIN_MS = 500;
const MODEL_MARGIN_MS = 800;
/** Notes and turns handed to the model. */
const SYNTHESIS_RESULTS = 6;

/**
 * The synthesize mode's model call, given what remains of the hook's budget minus a margin.
 * Undefined means "inject plainly" (no model, too little time left, slow, failed); "nothing"
 * means the model found nothing in the results that helps with the prompt.
 */
async function synthesize(ctx: Context, query: string, notes: SearchResult[], turns: TurnHit[], budget: number, deadline: number | undefined, debug: (what: string) => void): Promise<string | "nothing" | undefined> {
  const c = ctx.config;
  const provider = c["summarizer.provider"];
  if (provider !== "claude" && provider !== "ollama") {
    debug(`synthesize: summarizer.provider is "${provider}", no model; plain injection`);
    return undefined;
  }
  const left = (deadline ?? Infinity) - performance.now() - MODEL_MARGIN_MS;
  const timeoutMs = Math.min(c["summarizer.timeout_ms"], Math.floor(left));
  if (timeoutMs < MODEL_MIN_MS) {
    debug(`synthesize: ${Math.round(left)} ms left, not enough for a model; plain injection`);
    return undefined;
  }
  const [{ summarizerOptions }, { answerFrom }, { mergeRankings, noteOf }, { queryTokens }, { formatSynthesis }] = await Promise.all([
    import("../memory/summarizer.ts"),
    import("./prompt.ts"),
    import("./recall.ts"),
    import("../conversations/fts.ts"),
    import("./lines.ts"),
  ]);
  // The notes above the floor and the relevant turns, one result per turn (a note and its own turn fused).
  const tokens = queryTokens(query);
  const results = mergeRankings(
    notes.map((r) => noteOf(r.chunk, r.score, tokens)),
    turns.map((t) => t.hit),
  ).slice(0, SYNTHESIS_RESULTS);
  const answer = await answerFrom("synthesis", query, results, summarizerOptions(c, { timeoutMs, ledger: { dataDir: ctx.project.dataDir, purpose: "synthesize" } }));
  if (!answer.ok) {
    debug(`synthesize: no model answered (${answer.reason}); plain injection`);
    return undefined;
  }
  if (answer.nothingRelevant) {
    debug("synthesize: the model found nothing relevant");
    return "nothing";
  }
  return formatSynthesis(answer.text, answer.provider === "claude" ? c["summarizer.model"] : c["summarizer.ollama_model"], results, budget);
}
