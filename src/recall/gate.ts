/**
 * The prompt gate: which of a search's results the prompt hook injects. Search ranks; this decides
 * whether the best of that ranking is worth a prompt's context at all. The hook and the evaluation's
 * negative controls (scripts/eval/controls.ts) call this same function.
 */
import type { Config } from "../core/config.ts";
import type { SearchResponse, SearchResult } from "../index/search.ts";

/** One search result as the gate judged it: plain data, for the hook's log. */
export interface GateCandidate {
  chunkHash: string;
  /** 1-based place in the search's ranking. */
  rank: number;
  /** The search's ranking score (search.ts), unchanged by the gate. */
  score: number;
  /** The gate's absolute relevance, 0 to 1: what `hooks.inject_min_score` is compared with. */
  relevance: number;
  cosine?: number;
  pass: boolean;
  /** Why it passed or not, in a few words. */
  reason: string;
}

export interface GateDecision {
  /** The results to inject, in the search's order. */
  injected: SearchResult[];
  /** Every result considered, in the search's order. */
  candidates: GateCandidate[];
}

/** Results the prompt hook asks of the search: more than it injects, so the gate has a choice. */
export function gateSearchDepth(config: Config): number {
  return Math.max(config["hooks.inject_top_k"] * 2, 5);
}

export function gate(response: SearchResponse, config: Config): GateDecision {
  const floor = config["hooks.inject_min_score"];
  const topK = config["hooks.inject_top_k"];
  const injected: SearchResult[] = [];
  const candidates = response.results.map((r, i): GateCandidate => {
    const relevance = r.score;
    let pass = relevance >= floor;
    let reason = pass ? `relevance ${relevance.toFixed(2)} ≥ ${floor}` : `relevance ${relevance.toFixed(2)} < ${floor}`;
    if (pass && injected.length >= topK) {
      pass = false;
      reason = `beyond the ${topK} injected`;
    }
    if (pass) injected.push(r);
    return { chunkHash: r.chunk.chunkHash, rank: i + 1, score: r.score, relevance, ...(r.cosine !== undefined ? { cosine: r.cosine } : {}), pass, reason };
  });
  return { injected, candidates };
}
