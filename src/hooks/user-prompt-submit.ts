import { loadContext, type Context } from "../core/context.ts";
import { peekIndex } from "../index/format.ts";
import type { SearchResponse, SearchResult } from "../index/search.ts";
import { searchIndex, watchRunning, type AlreadyRead } from "../watch/gateway.ts";
import { clip, localMinute, oneLine } from "../core/text.ts";
import { anchorsIn, type Anchor } from "../core/anchor.ts";
import { fitLines, FROM_REPOSITORY, instructionLike, quote, QUOTED_DATA } from "../core/frame.ts";
import { isDirectory } from "../core/fsutil.ts";
import { appendInjection, recentlyInjected, type Considered, type InjectionRecord } from "../memory/injections.ts";
import { provenance, type Provenance } from "../memory/seen.ts";
import { touchSession } from "../watch/sessions.ts";
import { LATEST_PROMPT, recordPrompt } from "../memory/pending.ts";
import { debugLog, hookCwd, PROMPT_HOOK_BUDGET_MS, startWatch, type HookInput, type HookOutput } from "./runtime.ts";
import type { TurnHit } from "../recall/turns.ts";
import { gate, gateSearchDepth } from "../recall/gate.ts";
import { expandCommand } from "../recall/drill.ts";
import { curatedFromRepository } from "../transcript/claude-memory.ts";
import { basename } from "node:path";
import { isTrivialPrompt } from "../transcript/turn-kind.ts";

/**
 * Whether a prompt was typed by a person: `user` (the interactive composer) or `sdk` (`claude -p`,
 * the Agent SDK); absent from Claude Code before 2.1.240. Loop and schedule wake-ups, system turns
 * and poll events get no memory (they are still captured), and so does a source we do not know yet.
 */
export function typedByPerson(source: string | undefined): boolean {
  return source === undefined || source === "user" || source === "sdk";
}

/**
 * UserPromptSubmit. `inject`: up to N memories relevant to the prompt, or, when no note passes the
 * gate, up to N turns of the project's past conversations (no model on this path), each a quoted
 * line within `hooks.inject_max_chars`. `synthesize`: the same search, then the summariser's model
 * writes a few lines from it inside what remains of the time budget; plain injection when the model
 * is slow, missing or fails. `hint` (or when a search cannot answer in time): one line saying memory
 * is there. A memory given in the session's last few prompts is not given again. Every decision is
 * appended to the injection log (src/memory/injections.ts).
 */
export async function userPromptSubmit(input: HookInput): Promise<HookOutput> {
  const prompt = input.prompt ?? "";
  const ctx = loadContext({}, hookCwd(input));
  remember(ctx, input, prompt);
  const mode = ctx.config["hooks.recall"];
  const log = new DecisionLog(ctx, input, RECALL_MODES.find((m) => m === mode) ?? "inject");
  if (!typedByPerson(input.source)) return log.skip(`source ${input.source}: not typed by a person`);
  if (isTrivialPrompt(prompt)) return log.skip("trivial prompt");
  if (mode === "off") return log.skip("hooks.recall is off");
  const warm = watchRunning(ctx.project.dataDir) !== undefined;
  const head = peekIndex(ctx.project.indexDir);
  const haveNotes = warm || (head !== undefined && head.chunks > 0);
  const hint = hintOutput(head?.chunks);
  if (mode === "hint") return haveNotes ? log.done(hint, "hint", "hooks.recall is hint") : log.skip("no notes indexed");

  const query = clip(prompt, 2000);
  const res = haveNotes ? await recall(ctx, query, { watchRunning: warm, indexBytes: head?.bytes ?? 0 }, input.session_id) : undefined;
  log.search = res?.mode;
  const recent = input.session_id ? recentlyInjectedQuiet(ctx.project.dataDir, input.session_id) : new Map<string, number>();
  const notes = chooseNotes(ctx, res, recent, log);
  if (res) debugLog("user-prompt-submit", `mode ${res.mode}, ${res.results.length} results, ${notes.passed} through the gate, ${notes.lines.length} new`);

  // Past conversations: always for synthesize, only when no note passed the gate for inject (a
  // note given a few prompts ago is still in Claude's context: nothing else is needed).
  // Loaded only here: a prompt answered from the notes pays for none of it.
  const pr = mode === "synthesize" || !notes.passed ? await import("./prompt-recall.ts") : undefined;
  let turns: TurnHit[] = [];
  // A healed conversation index is said once, in this prompt's status line.
  let said = (o: HookOutput) => o;
  if (pr) {
    try {
      const found = await (await import("../recall/turns.ts")).conversationTurns(query, ctx.project.root, ctx.config["hooks.inject_top_k"] * 2);
      turns = chooseTurns(ctx, found.turns, recent, log);
      const healed = found.healed;
      if (healed) {
        debugLog("user-prompt-submit", healed);
        said = (o) => ({ ...o, systemMessage: healed });
      }
    } catch (e) {
      debugLog("user-prompt-submit", "transcript search failed", oneLine(e));
    }
    debugLog("user-prompt-submit", `${turns.length} new conversation turns through the gate`);
  }
  const finish = (out: HookOutput, decision: InjectionRecord["decision"], reason: string) => said(log.done(out, decision, reason));
  const budget = ctx.config["hooks.inject_max_chars"];
  let plain: string | undefined;
  if (notes.lines.length) plain = log.fit(NOTES_HEADER, notes.lines, budget);
  else if (pr && turns.length) plain = log.fit(pr.TURNS_HEADER, turns.map((t) => ({ id: t.hit.turnUuid, line: pr.turnLine(t, quoteChars(budget, pr.TURNS_HEADER)) })), budget);
  if (!plain) {
    if (haveNotes && !res) return finish(hint, "hint", "the notes' search did not answer in time");
    return finish({}, "nothing", notes.passed ? "every memory through the gate was given in this session's last prompts" : "nothing through the gate");
  }
  if (mode !== "synthesize") return finish(context(plain), "injected", "memories through the gate");
  const synth = await synthesize(ctx, query, notes.picked, turns, budget);
  if (synth === undefined) return finish(context(plain), "injected", "plain injection (no synthesis)");
  if (!synth.hookSpecificOutput) return finish(synth, "nothing", "the model found nothing relevant");
  return finish(synth, "injected", "synthesis");
}

const RECALL_MODES = ["inject", "synthesize", "hint", "off"] as const;

const NOTES_HEADER = `[memsearch] Memories from earlier sessions that may be relevant (${QUOTED_DATA}; "${FROM_REPOSITORY}": not written on this machine; open one with memsearch expand):`;

/**
 * What a memory gets to say on its line, before the budget decides how many lines fit: at most
 * QUOTE_CHARS, less when the budget is small, so that one line always fits beside the header.
 */
const QUOTE_CHARS = 240;
const LINE_FRAME_CHARS = 140;
export function quoteChars(budget: number, header: string): number {
  return Math.max(40, Math.min(QUOTE_CHARS, budget - header.length - LINE_FRAME_CHARS));
}

/**
 * The calibrated gate (recall/gate.ts) on the notes' search: each result with the relevance that
 * decided and why. Whether a note that passes is given is decided after it (new to the session,
 * top-k, the budget), so a note the session already has does not take another's place.
 */
function gateNotes(res: SearchResponse | undefined, ctx: Context) {
  if (!res) return [];
  const floor = ctx.config["hooks.inject_min_score"];
  const { candidates } = gate(res, ctx.config);
  return res.results.map((result, i) => ({ result, judged: candidates[i]!, pass: candidates[i]!.relevance >= floor }));
}

/** The same gate for conversation turns: the share of the prompt's words their best message holds. */
function turnGate(turns: TurnHit[], ctx: Context): { turn: TurnHit; score: number; pass: boolean }[] {
  const floor = ctx.config["hooks.inject_min_score"];
  return turns.map((turn) => ({ turn, score: turn.coverage, pass: turn.coverage >= floor }));
}

interface Line {
  id: string;
  line: string;
}

/** Notes through the gate, new to the session, at most `hooks.inject_top_k`, as quoted lines. */
function chooseNotes(ctx: Context, res: SearchResponse | undefined, recent: Map<string, number>, log: DecisionLog): { passed: number; picked: SearchResult[]; lines: Line[] } {
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
    if (!pass) continue;
    passed++;
    const ago = recent.get(c.chunkHash);
    if (ago !== undefined) {
      entry.outcome = "repeated";
      debugLog("user-prompt-submit", `chunk ${c.chunkHash} was injected ${ago} prompt${ago === 1 ? "" : "s"} ago in this session: not again`);
      continue;
    }
    if (picked.length >= topK) {
      entry.outcome = "over-top-k";
      continue;
    }
    ours ??= provenance();
    // Curated: Claude Code's memory folder and CLAUDE.local.md are this machine's; a CLAUDE.md is committed.
    const curated = r.kind === "curated";
    const foreign = curated ? curatedFromRepository(c.source) : !ours(firstAnchor(c.content));
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

/** One injected note: its date, the command that opens it, and its text quoted as data. */
function noteLine(c: SearchResult["chunk"], text: string, foreign: boolean, curated = false): string {
  const what = curated ? `curated ${basename(c.source)}` : (noteWhen(c) ?? basename(c.source));
  return `- ${what} · ${expandCommand(c.chunkHash)} · ${quote(text, { foreign })}`;
}

/**
 * The context the hook gives for these notes, as written on this machine, within `budget`
 * characters ("" when none fits): the evaluation measures injections with it.
 */
export function notesText(picked: SearchResult[], budget: number): string {
  const width = quoteChars(budget, NOTES_HEADER);
  return fitLines(NOTES_HEADER, picked.map((r) => noteLine(r.chunk, preview(r.chunk.content, width), false)), budget).text;
}

/** Conversation turns through the gate and new to the session, at most `hooks.inject_top_k`. */
function chooseTurns(ctx: Context, found: TurnHit[], recent: Map<string, number>, log: DecisionLog): TurnHit[] {
  const topK = ctx.config["hooks.inject_top_k"];
  const out: TurnHit[] = [];
  for (const { turn, score, pass } of turnGate(found, ctx)) {
    const id = turn.hit.turnUuid;
    const entry: Considered = { kind: "turn", id, date: turn.hit.ts ? localMinute(turn.hit.ts) : undefined, score: round(score), outcome: "below-gate" };
    log.considered.push(entry);
    if (!pass) continue;
    const ago = recent.get(id);
    if (ago !== undefined) {
      entry.outcome = "repeated";
      debugLog("user-prompt-submit", `turn ${id} was injected ${ago} prompt${ago === 1 ? "" : "s"} ago in this session: not again`);
      continue;
    }
    if (out.length >= topK) {
      entry.outcome = "over-top-k";
      continue;
    }
    entry.outcome = "injected";
    entry.instructionLike = instructionLike(turn.hit.snippet);
    out.push(turn);
  }
  return out;
}

/**
 * The record of one prompt's decision, appended to the injection log when the hook answers. A
 * log that cannot be written (no data folder yet, a full disk) costs the prompt nothing.
 */
class DecisionLog {
  considered: Considered[] = [];
  search: "hybrid" | "bm25" | undefined;
  constructor(
    private ctx: Context,
    private input: HookInput,
    private mode: InjectionRecord["mode"],
  ) {}

  skip(reason: string): HookOutput {
    return this.done({}, "skipped", reason);
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

  done(out: HookOutput, decision: InjectionRecord["decision"], reason: string): HookOutput {
    const chars = out.hookSpecificOutput?.additionalContext?.length ?? 0;
    // Chosen but not handed over (the synthesis found nothing relevant in them): not given, so not held back next time.
    if (decision !== "injected") for (const c of this.considered) if (c.outcome === "injected") c.outcome = "not-given";
    debugLog("user-prompt-submit", `decision: ${decision} (${reason}), ${chars} characters`);
    const dataDir = this.ctx.project.dataDir;
    if (!isDirectory(dataDir)) return out;
    try {
      appendInjection(dataDir, {
        v: 1,
        at: new Date().toISOString(),
        session: this.input.session_id,
        prompt: this.input.prompt_id,
        source: this.input.source,
        agent: this.input.agent,
        mode: this.mode,
        search: this.search,
        decision,
        reason,
        considered: this.considered.slice(0, 100),
        chars,
      });
    } catch (e) {
      debugLog("user-prompt-submit", "could not append to the injection log", oneLine(e));
    }
    return out;
  }
}

function recentlyInjectedQuiet(dataDir: string, session: string): Map<string, number> {
  try {
    return recentlyInjected(dataDir, session);
  } catch (e) {
    debugLog("user-prompt-submit", "could not read the injection log", oneLine(e));
    return new Map();
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** `YYYY-MM-DD HH:MM` of a note from its daily file's name and its heading's time, when it has them. */
function noteWhen(c: { source: string; heading: string }): string | undefined {
  const day = /^(\d{4}-\d{2}-\d{2})\.md$/.exec(basename(c.source))?.[1];
  if (!day) return undefined;
  const time = /^\d{1,2}:\d{2}\b/.exec(c.heading)?.[0];
  return time ? `${day} ${time}` : day;
}

/** The first anchor comment of a chunk: the turn (and session) its note was written for. */
function firstAnchor(content: string): Anchor | undefined {
  return anchorsIn(content)[0];
}

function context(text: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: text } };
}

/** Time the model needs to be worth asking, and what is kept back for the fallback and the output. */
const MODEL_MIN_MS = 500;
const MODEL_MARGIN_MS = 800;

/**
 * The synthesize mode's model call, given what remains of the hook's budget minus a margin.
 * Undefined means "inject plainly" (no model, too little time left, slow, failed); {} means the
 * model found nothing in the results that helps with the prompt.
 */
async function synthesize(ctx: Context, query: string, notes: SearchResult[], turns: TurnHit[], budget: number): Promise<HookOutput | undefined> {
  const c = ctx.config;
  const provider = c["summarizer.provider"];
  if (provider !== "claude" && provider !== "ollama") {
    debugLog("user-prompt-submit", `synthesize: summarizer.provider is "${provider}", no model; plain injection`);
    return undefined;
  }
  // performance.now() counts from the process start, a little before the budget's timer began.
  const left = PROMPT_HOOK_BUDGET_MS - performance.now() - MODEL_MARGIN_MS;
  const timeoutMs = Math.min(c["summarizer.timeout_ms"], Math.floor(left));
  if (timeoutMs < MODEL_MIN_MS) {
    debugLog("user-prompt-submit", `synthesize: ${Math.round(left)} ms left, not enough for a model; plain injection`);
    return undefined;
  }
  const [{ summarizerOptions }, { answerFrom }, { mergeRankings, noteOf }, { queryTokens }, { formatSynthesis }] = await Promise.all([
    import("../memory/summarizer.ts"),
    import("../recall/prompt.ts"),
    import("../recall/recall.ts"),
    import("../conversations/fts.ts"),
    import("./prompt-recall.ts"),
  ]);
  // The notes above the floor and the relevant turns, one result per turn (a note and its own turn fused).
  const tokens = queryTokens(query);
  const results = mergeRankings(
    notes.map((r) => noteOf(r.chunk, r.score, tokens)),
    turns.map((t) => t.hit),
  ).slice(0, SYNTHESIS_RESULTS);
  const answer = await answerFrom("synthesis", query, results, summarizerOptions(c, { timeoutMs, ledger: { dataDir: ctx.project.dataDir, purpose: "synthesize" } }));
  if (!answer.ok) {
    debugLog("user-prompt-submit", `synthesize: no model answered (${answer.reason}); plain injection`);
    return undefined;
  }
  if (answer.nothingRelevant) {
    debugLog("user-prompt-submit", "synthesize: the model found nothing relevant");
    return {};
  }
  return context(formatSynthesis(answer.text, answer.provider === "claude" ? c["summarizer.model"] : c["summarizer.ollama_model"], results, budget));
}

/** Notes and turns handed to the model. */
const SYNTHESIS_RESULTS = 6;

/**
 * The prompt on disk under its prompt id, for the Stop hook: the transcript may not hold the turn
 * when Stop fires, and then the note is written from what the hooks saw. Trivial prompts too:
 * they are turns all the same.
 */
function remember(ctx: Context, input: HookInput, prompt: string): void {
  if (!input.session_id || !prompt || ctx.config["summarizer.provider"] === "off") return;
  try {
    // An agent with no prompt id (Copilot CLI) has its session's latest prompt kept: its Stop carries no text of its own.
    recordPrompt(ctx.project.dataDir, { sessionId: input.session_id, promptId: input.prompt_id ?? LATEST_PROMPT, prompt, at: new Date().toISOString(), source: input.source });
  } catch (e) {
    debugLog("user-prompt-submit", "could not record the prompt", oneLine(e));
  }
}

function hintOutput(chunks: number | undefined): HookOutput {
  return {
    hookSpecificOutput: {
      hookEventName: "UserPromptSubmit",
      additionalContext: `[memsearch] Memory available: ${chunks ? `${chunks} notes` : "notes"} from earlier sessions of this project; the memory-recall skill searches them.`,
    },
  };
}

/** The notes' search, as the index gateway allows a prompt hook (undefined: no answer in the budget). */
async function recall(ctx: Context, query: string, read: AlreadyRead, sessionId: string | undefined): Promise<SearchResponse | undefined> {
  const topK = gateSearchDepth(ctx.config);
  if (!read.watchRunning) {
    // No watch process (it died, or the session started before install): bring it back for next
    // time, with this session on record so that it stays while the session lives.
    try {
      if (sessionId) touchSession(ctx.project.dataDir, sessionId);
      startWatch(ctx.project.dataDir, ctx.project.root);
    } catch {}
  }
  const found = await searchIndex(ctx, { query, topK, background: true }, { reader: "prompt", read });
  if (found.kind === "results") return found.response;
  if (found.kind === "unanswered") debugLog("user-prompt-submit", found.why);
  return undefined;
}

/** Body text without the heading line, anchor comment and bullet marks, on one line, `max` characters. */
export function preview(content: string, max = 200): string {
  const body = content
    .replace(/<!--[\s\S]*?-->/g, "")
    .split("\n")
    .filter((l) => !/^#{1,6}\s/.test(l))
    .map((l) => l.replace(/^\s*[-*+]\s+/, "").trim())
    .filter(Boolean)
    .join(" · ");
  return clip(oneLine(body), max);
}
