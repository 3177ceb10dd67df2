/**
 * The prompt gate: which of a search's results the prompt hook injects. Search ranks (search.ts,
 * unchanged by this); the gate decides whether the best of that ranking is worth a prompt's context
 * at all, on an absolute relevance that means the same with any embedding model, and without one.
 * The hook and the evaluation's negative controls (scripts/eval/controls.ts) call this one function.
 *
 * A search's own score cannot do this: its keyword side is relative to the query's best hit (the
 * best hit of any query scores high, however poor), and its vector side is a cosine, whose scale
 * is the model's own (pooled GloVe puts any two English texts near 0.85, nomic-embed-text near
 * 0.45). So each side is judged on what does not depend on either:
 *
 *   keyword  = the share of the query's rare-term weight the chunk holds (rank.ts `evidence`: each
 *              query term weighs its idf in the index; a term no note holds weighs the most), but
 *              no more than a quarter of the information it holds (rank.ts `information`, in units
 *              of a term one chunk alone holds): see keywordSide. A chunk that lacks the query's
 *              rare words (a name, an identifier) scores low even when it is the best there is.
 *   vector   = how far the chunk's cosine stands out from the query's cosines to the whole index
 *              (Store.cosineBackground), in standard deviations: z = (cosine − mean) / sd. The best
 *              of N unrelated chunks already stands about √(2 ln N) out (the expected maximum of N
 *              normal draws), so that is where the vector side starts to count:
 *              standing = (z − √(2 ln N)) / √(2 ln N), between 0 and 1: a chunk twice as far out
 *              as the background's expected best counts fully.
 *   relevance = 1 − (1 − keyword)(1 − standing): either side alone, when strong, makes a memory
 *              relevant (an exact name, a paraphrase sharing no word), two weak ones stay weak.
 *
 * In a memory of fewer than about fifteen notes the vector side alone cannot lift a note over the
 * default floor (the largest z that n cosines can reach, (n − 1)/√n, is too close to the bar):
 * such a memory is judged mostly on its keywords.
 */
import type { Config } from "../core/config.ts";
import type { SearchResponse, SearchResult } from "../index/search.ts";
import type { CosineBackground } from "../index/store.ts";

/** One search result as the gate judged it: plain data, for the hook's log. */
export interface GateCandidate {
  chunkHash: string;
  /** 1-based place in the search's ranking. */
  rank: number;
  /** The search's ranking score (search.ts), unchanged by the gate. */
  score: number;
  /** Share of the query's rare-term weight the chunk holds, 0 to 1. */
  keyword: number;
  /** The chunk's cosine and its z-score against the query's background (hybrid only). */
  cosine?: number;
  z?: number;
  /** The vector side's share of relevance, 0 to 1 (0 in keyword-only mode). */
  standing: number;
  /** The gate's absolute relevance, 0 to 1: what `hooks.inject_min_score` is compared with. */
  relevance: number;
  pass: boolean;
  /** Why it passed or not, in a few words. */
  reason: string;
}

export type Injected = SearchResult & { relevance: number };

export interface GateDecision {
  /** The results to inject, in the search's order, each with its relevance. */
  injected: Injected[];
  /** Every result considered, in the search's order. */
  candidates: GateCandidate[];
}

/** Results the prompt hook asks of the search: more than it injects, so the gate has a choice. */
export function gateSearchDepth(config: Config): number {
  return Math.max(config["hooks.inject_top_k"] * 2, 5);
}

/** Where the vector side starts to count: the expected best z of this many unrelated chunks. */
export function backgroundBest(vectors: number): number {
  return vectors > 1 ? Math.sqrt(2 * Math.log(vectors)) : Infinity;
}

/** The z-score of a cosine against the query's background, and the vector side's share of relevance. */
export function vectorStanding(cosine: number | undefined, background: CosineBackground | undefined): { z?: number; standing: number } {
  if (cosine === undefined || !background || !(background.sd > 0)) return { standing: 0 };
  const z = (cosine - background.mean) / background.sd;
  const bar = backgroundBest(background.vectors);
  return { z, standing: Math.min(1, Math.max(0, (z - bar) / bar)) };
}

/**
 * The keyword side, 0 to 1, half way (the default floor) when the chunk holds both half of the
 * prompt's rare-term weight (SHARE_BAR) and the information of two terms that one chunk alone
 * holds (INFORMATION_BAR), full at twice each. The share alone let short generic
 * prompts through: "fix the merge conflicts" finds all its few words in any project's notes, and
 * on real coding sessions such prompts made most of what another project's memory injected
 * (docs/EVALUATION.md, "The gate on real work").
 */
export function keywordSide(r: Pick<SearchResult, "evidence" | "information">): number {
  const share = Math.max(0, r.evidence) / (2 * SHARE_BAR);
  const amount = Math.max(0, r.information ?? 0) / (2 * INFORMATION_BAR);
  return Math.min(1, share, amount);
}

export const SHARE_BAR = 0.5;
export const INFORMATION_BAR = 2;

export function gate(response: SearchResponse, config: Config): GateDecision {
  const floor = config["hooks.inject_min_score"];
  const topK = config["hooks.inject_top_k"];
  const injected: Injected[] = [];
  const candidates = response.results.map((r, i): GateCandidate => {
    const keyword = keywordSide(r);
    const { z, standing } = vectorStanding(r.cosine, response.background);
    const relevance = 1 - (1 - keyword) * (1 - standing);
    const sides = `keywords ${keyword.toFixed(2)}${z === undefined ? "" : `, vector z ${z.toFixed(1)} (bar ${backgroundBest(response.background!.vectors).toFixed(1)})`}`;
    let pass = relevance >= floor;
    let reason = `${sides}: relevance ${relevance.toFixed(2)} ${pass ? "≥" : "<"} ${floor}`;
    if (pass && injected.length >= topK) {
      pass = false;
      reason = `${sides}: relevant, but beyond the ${topK} injected`;
    }
    if (pass) injected.push({ ...r, relevance });
    return { chunkHash: r.chunk.chunkHash, rank: i + 1, score: r.score, keyword, ...(r.cosine !== undefined ? { cosine: r.cosine } : {}), ...(z !== undefined ? { z } : {}), standing, relevance, pass, reason };
  });
  return { injected, candidates };
}
