import { loadContext, type Context } from "../core/context.ts";
import { peekIndex } from "../core/index-file.ts";
import type { SearchResponse } from "../core/search.ts";
import { askWarm, readWatchInfo } from "../core/warm.ts";
import { clip } from "../core/text.ts";
import { oneLine } from "../core/errors.ts";
import { touchSession } from "../core/sessions.ts";
import { recordPrompt } from "../memory/pending.ts";
import { CONTEXT_LIMIT, debugLog, hookCwd, startWatch, type HookInput, type HookOutput } from "./runtime.ts";
import { basename } from "node:path";

const TRIVIAL = new Set(["ok", "okay", "yes", "no", "y", "n", "thanks", "thank you", "continue", "go on", "go ahead", "proceed", "lgtm", "sure", "do it", "next"]);
/** A cold search loads the whole index; above this size it cannot fit in the hook's budget. */
const COLD_INDEX_LIMIT = 12 * 1024 * 1024;
const WARM_WAIT_MS = 3_000;

export function isTrivialPrompt(prompt: string): boolean {
  const p = prompt.trim();
  if (p.length < 10) return true;
  if (p.startsWith("/")) return true;
  return TRIVIAL.has(p.toLowerCase().replace(/[.!?\s]+$/g, ""));
}

/**
 * UserPromptSubmit: in `inject` mode, up to N memories relevant to the prompt; in `hint`
 * mode (or when a search cannot answer in time) one line saying memory is there.
 */
export async function userPromptSubmit(input: HookInput): Promise<HookOutput> {
  const prompt = input.prompt ?? "";
  const ctx = loadContext({}, hookCwd(input));
  remember(ctx, input, prompt);
  if (isTrivialPrompt(prompt)) return {};
  const mode = ctx.config["hooks.recall"];
  if (mode === "off") return {};
  const warm = readWatchInfo(ctx.project.dataDir) !== undefined;
  const head = peekIndex(ctx.project.indexDir);
  if (!warm && (!head || head.chunks === 0)) return {};
  const hint = hintOutput(head?.chunks);
  if (mode === "hint") return hint;

  const res = await recall(ctx, clip(prompt, 2000), warm, head?.bytes ?? 0, input.session_id);
  if (!res) return hint;
  const floor = ctx.config["hooks.inject_min_score"];
  const picked = res.results.filter((r) => r.score >= floor).slice(0, ctx.config["hooks.inject_top_k"]);
  debugLog("user-prompt-submit", `mode ${res.mode}, ${res.results.length} results, ${picked.length} above ${floor}`);
  if (!picked.length) return {};
  const lines = picked.map((r) => {
    const c = r.chunk;
    const where = `${basename(c.source)}${c.heading ? ` › ${c.heading}` : ""}`;
    return `- ${where} (chunk ${c.chunkHash}, relevance ${r.score.toFixed(2)}): ${preview(c.content)}`;
  });
  const text = clip(`[memsearch] Memories from earlier sessions that may be relevant (expand one with \`memsearch expand <chunk>\`):\n${lines.join("\n")}`, CONTEXT_LIMIT);
  return { hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: text } };
}

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

/** Warm process first; a cold in-process search only while the index is small enough. */
async function recall(ctx: Context, query: string, warm: boolean, indexBytes: number, sessionId: string | undefined): Promise<SearchResponse | undefined> {
  const topK = Math.max(ctx.config["hooks.inject_top_k"] * 2, 5);
  if (warm) {
    const r = await askWarm(ctx.project.dataDir, { op: "search", query, topK }, WARM_WAIT_MS);
    if (r?.ok) return r as unknown as SearchResponse;
    debugLog("user-prompt-submit", "warm process did not answer in time");
    return undefined;
  }
  // No warm process (it died, or the session started before install): bring it back for next time,
  // with this session on record so that it stays while the session lives.
  try {
    if (sessionId) touchSession(ctx.project.dataDir, sessionId);
    startWatch(ctx.project.dataDir, ctx.project.root);
  } catch {}
  if (indexBytes > COLD_INDEX_LIMIT) return undefined;
  // Loaded only here: the warm path above needs neither Orama nor the ollama client.
  const [{ openOrRebuild }, { searchChunks }, { embedderFor }] = await Promise.all([import("../core/index-heal.ts"), import("../core/search.ts"), import("../core/embedder.ts")]);
  const { store } = await openOrRebuild(ctx, { lockTimeoutMs: 1_500 });
  return searchChunks({ query, topK, store, config: ctx.config, embedder: embedderFor(ctx.config, "query") });
}

/** Body text without the heading line and anchor comment, on one line, 200 characters. */
export function preview(content: string): string {
  const body = content
    .replace(/<!--[\s\S]*?-->/g, "")
    .split("\n")
    .filter((l) => !/^#{1,6}\s/.test(l))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  return clip(body, 200);
}
