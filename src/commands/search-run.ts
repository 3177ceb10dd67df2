import { resolve } from "node:path";
import { loadContext, type Context } from "../core/context.ts";
import { UsageError } from "../core/errors.ts";
import type { SearchResponse } from "../core/search.ts";
import { askWarm, readWatchInfo } from "../core/warm.ts";
import { embeddingOverrides, type EmbeddingArgs } from "./common.ts";
import { healNotices, nothingIndexedLine, warmNotices } from "./notices.ts";
import { notice, print, printJson } from "./output.ts";

/**
 * `memsearch search`, without yargs: cli.ts runs the common forms of the command straight
 * here (yargs costs ~25 ms of a ~50 ms warm search); search.ts declares it to yargs for
 * --help, the rarer flags and error messages.
 */

export interface SearchArgs extends EmbeddingArgs {
  query: string;
  topK?: number;
  sourcePrefix?: string;
  jsonOutput: boolean;
}

const PREVIEW = 500;

/**
 * The plain forms: one query plus -k/--top-k, -j/--json-output, --source-prefix. Anything
 * else (help, embedding flags, a second positional, a malformed value) returns undefined and
 * goes to yargs, which owns validation and messages.
 */
export function parseSearchFast(argv: string[]): SearchArgs | undefined {
  const out: SearchArgs = { query: "", jsonOutput: false };
  let query: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === "-j" || flag === "--json-output") {
      if (inline !== undefined) return undefined;
      out.jsonOutput = true;
    } else if (flag === "-k" || flag === "--top-k") {
      const v = value();
      if (v === undefined || !/^\d+$/.test(v)) return undefined;
      out.topK = Number(v);
    } else if (flag === "--source-prefix") {
      const v = value();
      if (v === undefined) return undefined;
      out.sourcePrefix = v;
    } else if (arg.startsWith("-") || query !== undefined) {
      return undefined;
    } else {
      query = arg;
    }
  }
  if (query === undefined) return undefined;
  out.query = query;
  return out;
}

/** Results a search may return: each costs memory up front (a billion took gigabytes before failing). */
export const MAX_TOP_K = 1000;

/** --top-k from either path (the fast parser or yargs): a whole number in 1..MAX_TOP_K. */
export function checkTopK(topK: number | undefined): void {
  if (topK === undefined) return;
  if (!Number.isInteger(topK)) throw new UsageError(`--top-k must be a whole number between 1 and ${MAX_TOP_K}${Number.isFinite(topK) ? ` (got ${topK})` : ""}`);
  if (topK < 1 || topK > MAX_TOP_K) throw new UsageError(`--top-k must be between 1 and ${MAX_TOP_K} (got ${topK})`);
}

export async function runSearch(a: SearchArgs): Promise<void> {
    checkTopK(a.topK);
    const overrides = embeddingOverrides(a);
    const ctx = loadContext({ ...overrides, "search.top_k": a.topK });
    const request = { query: String(a.query), topK: ctx.config["search.top_k"], sourcePrefix: a.sourcePrefix ? resolve(a.sourcePrefix) : undefined };
    // The warm process answers in milliseconds; it runs with the project's own settings, so
    // embedding flags on the command line mean a cold search.
    const warm = Object.values(overrides).every((v) => v === undefined) ? await searchWarm(ctx.project.dataDir, request) : undefined;
    const res = warm ?? (await searchCold(ctx, request));
    if (res === "nothing indexed") {
      // No index and no markdown to build one from: not an error, and not "no results" either.
      if (a.jsonOutput) {
        notice(nothingIndexedLine(ctx.project.memoryDir));
        printJson([]);
      } else print(nothingIndexedLine(ctx.project.memoryDir));
      return;
    }
    if (res.warning) notice(`Warning: ${res.warning}; results use BM25 only`);
    if (a.jsonOutput) printJson(toJson(res));
    else print(formatText(res, ctx.config["embedding.model"]));
}

/** The notes' search behind `search` and `recall`: the warm process when one runs, else the index file. */
export async function searchNotes(ctx: Context, req: { query: string; topK: number; sourcePrefix?: string }): Promise<SearchResponse | "nothing indexed"> {
  return (await searchWarm(ctx.project.dataDir, req)) ?? (await searchCold(ctx, req));
}

async function searchWarm(dataDir: string, req: { query: string; topK: number; sourcePrefix?: string }): Promise<SearchResponse | undefined> {
  if (!readWatchInfo(dataDir)) return undefined;
  const r = await askWarm(dataDir, { op: "search", ...req }, 5_000);
  if (!r?.ok) return undefined;
  for (const line of warmNotices(r)) notice(line);
  return r as unknown as SearchResponse;
}

/** Search the index file; an index that is missing or cannot be used is (re)built from the markdown first. */
async function searchCold(ctx: Context, req: { query: string; topK: number; sourcePrefix?: string }): Promise<SearchResponse | "nothing indexed"> {
  const [{ openOrRebuild }, { searchChunks }, { embedderFor }] = await Promise.all([import("../core/index-heal.ts"), import("../core/search.ts"), import("../core/embedder.ts")]);
  const healed = await openOrRebuild(ctx);
  for (const line of healNotices(healed, ctx.config["embedding.model"])) notice(line);
  if (healed.nothingIndexed) return "nothing indexed";
  return searchChunks({ ...req, store: healed.store, config: ctx.config, embedder: healed.otherModel ? null : embedderFor(ctx.config, "query") });
}

/** The reference's JSON shape, plus which signals ranked each result. */
export function toJson(res: SearchResponse) {
  return res.results.map((r) => ({
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
  }));
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

export function formatText(res: SearchResponse, model: string): string {
  const mode = res.mode === "hybrid" ? `hybrid (BM25 + ${model} vectors)` : "BM25 only (no vectors)";
  if (res.results.length === 0) return `Search mode: ${mode}\nNo results found.`;
  const parts = [`Search mode: ${mode}`];
  res.results.forEach((r, i) => {
    const c = r.chunk;
    const body = c.content.length > PREVIEW ? `${c.content.slice(0, PREVIEW)}  ... [truncated, run 'memsearch expand ${c.chunkHash}' for full content]` : c.content;
    parts.push(`\n--- Result ${i + 1} (score: ${r.score.toFixed(4)}) ---`, `Source: ${c.source}`);
    if (c.heading) parts.push(`Heading: ${c.heading}`);
    parts.push(`Chunk: ${c.chunkHash}`, body);
  });
  return parts.join("\n");
}
