import { loadContext, type Context } from "../core/context.ts";
import { peekIndex } from "../index/format.ts";
import type { SearchResponse, SearchResult } from "../index/search.ts";
import { searchIndex, watchRunning, type AlreadyRead } from "../watch/gateway.ts";
import { clip, oneLine } from "../core/text.ts";
import { touchSession } from "../watch/sessions.ts";
import { recordPrompt } from "../memory/pending.ts";
import { CONTEXT_LIMIT, debugLog, hookCwd, PROMPT_HOOK_BUDGET_MS, startWatch, type HookInput, type HookOutput } from "./runtime.ts";
import type { TurnHit } from "./prompt-recall.ts";
import { basename } from "node:path";

const TRIVIAL = new Set(["ok", "okay", "yes", "no", "y", "n", "thanks", "thank you", "continue", "go on", "go ahead", "proceed", "lgtm", "sure", "do it", "next"]);

export function isTrivialPrompt(prompt: string): boolean {
  const p = prompt.trim();
  if (p.length < 10) return true;
  if (p.startsWith("/")) return true;
  return TRIVIAL.has(p.toLowerCase().replace(/[.!?\s]+$/g, ""));
}

/**
 * UserPromptSubmit. `inject`: up to N memories relevant to the prompt, or, when no note is
 * relevant enough, up to N turns of the project's past conversations (no model on this path).
 * `synthesize`: the same search, then the summariser's model writes a few lines from it inside
 * what remains of the budget; plain injection when the model is slow, missing or fails. `hint`
 * (or when a search cannot answer in time): one line saying memory is there.
 */
export async function userPromptSubmit(input: HookInput): Promise<HookOutput> {
  const prompt = input.prompt ?? "";
  const ctx = loadContext({}, hookCwd(input));
  remember(ctx, input, prompt);
  if (isTrivialPrompt(prompt)) return {};
  const mode = ctx.config["hooks.recall"];
  if (mode === "off") return {};
  const warm = watchRunning(ctx.project.dataDir) !== undefined;
  const head = peekIndex(ctx.project.indexDir);
  const haveNotes = warm || (head !== undefined && head.chunks > 0);
  const hint = hintOutput(head?.chunks);
  if (mode === "hint") return haveNotes ? hint : {};

  const query = clip(prompt, 2000);
  const res = haveNotes ? await recall(ctx, query, { watchRunning: warm, indexBytes: head?.bytes ?? 0 }, input.session_id) : undefined;
  const floor = ctx.config["hooks.inject_min_score"];
  const topK = ctx.config["hooks.inject_top_k"];
  const picked = (res?.results ?? []).filter((r) => r.score >= floor).slice(0, topK);
  if (res) debugLog("user-prompt-submit", `mode ${res.mode}, ${res.results.length} results, ${picked.length} above ${floor}`);

  // Past conversations: always for synthesize, only when no note made it for inject.
  // Loaded only here: a prompt answered from the notes pays for none of it.
  const pr = mode === "synthesize" || !picked.length ? await import("./prompt-recall.ts") : undefined;
  let turns: TurnHit[] = [];
  // A healed conversation index is said once, in this prompt's status line.
  let said = (o: HookOutput) => o;
  if (pr) {
    try {
      const found = await pr.conversationTurns(query, ctx.project.root, floor, topK);
      turns = found.turns;
      const healed = found.healed;
      if (healed) {
        debugLog("user-prompt-submit", healed);
        said = (o) => ({ ...o, systemMessage: healed });
      }
    } catch (e) {
      debugLog("user-prompt-submit", "transcript search failed", oneLine(e));
    }
    debugLog("user-prompt-submit", `${turns.length} conversation turns with at least ${floor} of the prompt's words`);
  }
  const plain = picked.length ? context(notesText(picked)) : pr && turns.length ? context(pr.formatTurns(turns)) : undefined;
  if (!plain) return said(haveNotes && !res ? hint : {});
  if (mode !== "synthesize") return said(plain);
  return said((await synthesize(ctx, query, picked, turns)) ?? plain);
}

function notesText(picked: SearchResult[]): string {
  const lines = picked.map((r) => {
    const c = r.chunk;
    const where = `${basename(c.source)}${c.heading ? ` › ${c.heading}` : ""}`;
    return `- ${where} (chunk ${c.chunkHash}, relevance ${r.score.toFixed(2)}): ${preview(c.content)}`;
  });
  return clip(`[memsearch] Memories from earlier sessions that may be relevant (expand one with \`memsearch expand <chunk>\`):\n${lines.join("\n")}`, CONTEXT_LIMIT);
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
async function synthesize(ctx: Context, query: string, notes: SearchResult[], turns: TurnHit[]): Promise<HookOutput | undefined> {
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
  const [{ askModel, summarizerOptions }, { PROMPT_SYNTHESIS_INSTRUCTIONS, NOTHING_RELEVANT, recallInput }, { mergeRankings, noteOf }, { queryTokens }, { formatSynthesis }] = await Promise.all([
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
  const answer = await askModel(PROMPT_SYNTHESIS_INSTRUCTIONS, recallInput(query, results), summarizerOptions(c, { timeoutMs }));
  if (!answer.ok) {
    debugLog("user-prompt-submit", `synthesize: no model answered (${answer.reason}); plain injection`);
    return undefined;
  }
  if (answer.text.trim().replace(/[.\s]+$/, "").toUpperCase() === NOTHING_RELEVANT) {
    debugLog("user-prompt-submit", "synthesize: the model found nothing relevant");
    return {};
  }
  return context(formatSynthesis(answer.text, answer.provider === "claude" ? c["summarizer.model"] : c["summarizer.ollama_model"], results));
}

/** Notes and turns handed to the model. */
const SYNTHESIS_RESULTS = 6;

/**
 * The prompt on disk under its prompt id, for the Stop hook: the transcript may not hold the turn
 * when Stop fires, and then the note is written from what the hooks saw. Trivial prompts too:
 * they are turns all the same.
 */
function remember(ctx: Context, input: HookInput, prompt: string): void {
  if (!input.session_id || !input.prompt_id || !prompt || ctx.config["summarizer.provider"] === "off") return;
  try {
    recordPrompt(ctx.project.dataDir, { sessionId: input.session_id, promptId: input.prompt_id, prompt, at: new Date().toISOString() });
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
  const topK = Math.max(ctx.config["hooks.inject_top_k"] * 2, 5);
  if (!read.watchRunning) {
    // No watch process (it died, or the session started before install): bring it back for next
    // time, with this session on record so that it stays while the session lives.
    try {
      if (sessionId) touchSession(ctx.project.dataDir, sessionId);
      startWatch(ctx.project.dataDir, ctx.project.root);
    } catch {}
  }
  const found = await searchIndex(ctx, { query, topK }, { reader: "prompt", read });
  if (found.kind === "results") return found.response;
  if (found.kind === "unanswered") debugLog("user-prompt-submit", found.why);
  return undefined;
}

/** Body text without the heading line and anchor comment, on one line, 200 characters. */
export function preview(content: string): string {
  const body = content
    .replace(/<!--[\s\S]*?-->/g, "")
    .split("\n")
    .filter((l) => !/^#{1,6}\s/.test(l))
    .join(" ");
  return clip(oneLine(body), 200);
}
