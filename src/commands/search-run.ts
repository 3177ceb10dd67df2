import { existsSync } from "node:fs";
import { anchorsIn, DEFAULT_AGENT, noteAgent, showAnchors } from "../core/anchor.ts";
import { NOTE_AGENTS } from "../agents/names.ts";
import { instructionLike } from "../core/frame.ts";
import { provenance, type Provenance } from "../memory/seen.ts";
import { curatedFromRepository } from "../agents/curated.ts";
import { resolve } from "node:path";
import { loadContext } from "../core/context.ts";
import { MemsearchError, UsageError } from "../core/errors.ts";
import type { SearchResponse } from "../index/search.ts";
import { searchIndex, type LoadedIndexes, type Searched } from "../watch/gateway.ts";
import { out } from "./color.ts";
import { embeddingFlags, embeddingOverrides, jsonFlag, needsQuery, queryText } from "./common.ts";
import { flags, type Args } from "./declare.ts";
import { healNotices, nothingIndexedLine } from "./notices.ts";
import { notice, print, printJson } from "./output.ts";

/**
 * What `memsearch search` does once parsed, by yargs (search.ts) or, for its plain forms,
 * by cli.ts's fast path, which must not load yargs.
 */

const PREVIEW = 500;

/** Results a search may return: each costs memory up front (a billion took gigabytes before failing). */
export const MAX_TOP_K = 1000;

/** How many results per one asked for a search filtered by agent ranks before filtering. */
const AGENT_POOL = 10;

export const searchFlags = flags({
  ...embeddingFlags,
  ...jsonFlag,
  query: { positional: true, type: "string", array: true, describe: "The words to look for (no quotes needed; after -- a word may start with -)" },
  limit: { alias: ["k", "top-k"], type: "number", describe: `Number of results, 1 to ${MAX_TOP_K} (default 5)` },
  "source-prefix": { type: "string", describe: "Only chunks whose source path starts with this" },
  agent: { type: "string", choices: NOTE_AGENTS, describe: "Only notes of turns with this agent (you: your own, memsearch remember)" },
});

export type SearchArgs = Args<typeof searchFlags>;

/** --limit from either path (the fast parser or yargs): a whole number in 1..MAX_TOP_K. */
export function checkTopK(topK: number | undefined): void {
  if (topK === undefined) return;
  if (!Number.isInteger(topK)) throw new UsageError(`--limit must be a whole number between 1 and ${MAX_TOP_K}${Number.isFinite(topK) ? ` (got ${topK})` : ""}`);
  if (topK < 1 || topK > MAX_TOP_K) throw new UsageError(`--limit must be between 1 and ${MAX_TOP_K} (got ${topK})`);
}

export async function runSearch(a: SearchArgs): Promise<void> {
    const query = queryText(a.query);
    // An empty query matches nothing and would print "No results found.": say what is missing.
    if (!query) throw needsQuery("search");
    checkTopK(a.limit);
    const overrides = embeddingOverrides(a);
    const ctx = loadContext({ ...overrides, "search.top_k": a.limit });
    const topK = ctx.config["search.top_k"];
    // Filtered by agent after ranking: asked for more, so that the top k of that agent's are there.
    const request = { query, topK: a.agent ? Math.min(MAX_TOP_K, topK * AGENT_POOL) : topK, sourcePrefix: a.sourcePrefix ? resolve(a.sourcePrefix) : undefined };
    // The warm process answers in milliseconds; it runs with the project's own settings, so
    // embedding flags on the command line mean a cold search.
    // No index yet: Claude Code's curated memory is indexed with the notes first (loaded only then: a warm search never pays for it).
    let held: LoadedIndexes | undefined;
    if (!existsSync(ctx.project.indexFile)) {
      const { indexCuratedFirst, firstIndexLine } = await import("./first-index.ts");
      const first = await indexCuratedFirst(ctx);
      if (first !== undefined) notice(firstIndexLine(first));
      held = first?.held;
    }
    const found = await searchIndex(ctx, request, { useWatch: !held && Object.values(overrides).every((v) => v === undefined), ...(held ? { cache: held } : {}) });
    const found2 = notesOrNothing(found, ctx.config["embedding.model"]);
    if (found2 === "nothing indexed") {
      // No index and no markdown to build one from: not an error, and not "no results" either.
      if (a.jsonOutput) {
        notice(nothingIndexedLine(ctx.project.memoryDir));
        printJson([]);
      } else print(nothingIndexedLine(ctx.project.memoryDir));
      return;
    }
    // The agent is shown by the JSON only, and picked by --agent: plain text never pays for it.
    const agents = a.jsonOutput || a.agent ? await agentsOf(found2.results) : [];
    const kept = found2.results.flatMap((_, i) => (!a.agent || agents[i] === a.agent ? [i] : [])).slice(0, topK);
    const res = { ...found2, results: kept.map((i) => found2.results[i]!) };
    if (res.warning) notice(`Warning: ${res.warning}; results use BM25 only`);
    if (a.jsonOutput) printJson(toJson(res, kept.map((i) => agents[i]!)));
    else print(formatText(res, ctx.config["embedding.model"]));
}

/** The notes' search behind `search` and `recall`, with what opening the index had to repair said on stderr. */
function notesOrNothing(found: Searched, model: string): SearchResponse | "nothing indexed" {
  if (found.kind === "nothing-indexed") return "nothing indexed";
  // Only the prompt hook's reader gives up on a slow watch process; a command loads the index itself.
  if (found.kind === "unanswered") throw new MemsearchError(found.why);
  for (const line of healNotices(found.heal, model)) notice(line);
  return found.response;
}

/**
 * The agent of each result's note. A note's anchor is in its chunk but for the later pieces of a
 * long section, whose anchor is at the section's top: only then is the section read (expand.ts,
 * which loads the markdown chunker), so a plain search does not pay for it.
 */
async function agentsOf(results: SearchResponse["results"]): Promise<string[]> {
  const own = results.map((r) => anchorsIn(r.chunk.content)[0]);
  // Curated files (CLAUDE.md, Claude Code's memory) have no anchors: Claude Code's, as the hub says.
  const agent = (r: SearchResponse["results"][number], a: Parameters<typeof noteAgent>[0]) => (r.kind === "curated" ? DEFAULT_AGENT : noteAgent(a));
  if (own.every((x, i) => x !== undefined || results[i]!.kind === "curated")) return own.map((x, i) => agent(results[i]!, x));
  const { chunkAnchor } = await import("../index/expand.ts");
  return results.map((r, i) => agent(r, own[i] ?? chunkAnchor(r.chunk)));
}

/**
 * The reference's JSON shape, plus which signals ranked each result and, for the model reading it
 * (the memory-recall skill), whether the note came with the repository (its session never ran on
 * this machine) and whether its text reads like an instruction (src/core/frame.ts).
 */
export function toJson(res: SearchResponse, agents: readonly string[], ours: Provenance = provenance()) {
  return res.results.map((r, i) => ({
    content: r.chunk.content,
    source: r.chunk.source,
    heading: r.chunk.heading,
    chunk_hash: r.chunk.chunkHash,
    heading_level: r.chunk.headingLevel,
    start_line: r.chunk.startLine,
    end_line: r.chunk.endLine,
    score: round(r.score),
    bm25_score: round(r.bm25),
    vector_score: r.cosine === undefined ? null : round(r.cosine),
    mode: res.mode,
    kind: r.kind,
    agent: agents[i],
    from_repository: r.kind === "curated" ? curatedFromRepository(r.chunk.source) : !ours(anchorsIn(r.chunk.content)[0]),
    instruction_like: r.instructionLike ?? instructionLike(r.chunk.content),
  }));
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

export function formatText(res: SearchResponse, model: string): string {
  const mode = res.mode === "hybrid" ? `hybrid (BM25 + ${model} vectors)` : "BM25 only (no vectors)";
  if (res.results.length === 0) return `Search mode: ${mode}\nNo results found.`;
  const parts = [out.dim(`Search mode: ${mode}`)];
  res.results.forEach((r, i) => {
    const c = r.chunk;
    // Anchors read as expand heads a section; clipped after, so none is cut in half.
    const text = showAnchors(c.content);
    const body = text.length > PREVIEW ? `${text.slice(0, PREVIEW)}  ... [truncated, run 'memsearch expand ${c.chunkHash}' for full content]` : text;
    parts.push(`\n${out.bold(out.cyan(`--- Result ${i + 1} (score: ${out.yellow(r.score.toFixed(4))}) ---`))}`, `${r.kind === "curated" ? "Curated" : "Source"}: ${out.green(c.source)}`);
    if (c.heading) parts.push(`Heading: ${out.bold(c.heading)}`);
    parts.push(`Chunk: ${out.dim(c.chunkHash)}`, body);
  });
  return parts.join("\n");
}
