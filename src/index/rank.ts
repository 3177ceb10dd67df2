/**
 * Keyword ranking of the candidates Orama found. Orama's BM25 is a fine way to find candidates but
 * a poor final order: its term frequency is occurrences ÷ field length (each distinct token once,
 * so every match counts the same), it scores every word a query term is a prefix of, and the
 * search asks it only for the query's rarer terms (store.selectiveTerms). Here each candidate is
 * scored on all the query's terms, from its own words:
 *   - BM25 (k1 1.2, b 0.75) over stems, with the idf and length statistics of Orama's index;
 *     heading words count twice (BM25F's field weight), the anchor comment not at all;
 *   - a word in the form the query wrote it counts once more, as if both the word and its stem
 *     were indexed (Lucene's keyword_repeat): an exact identifier or error text ranks above its
 *     inflections, without the index holding every word twice;
 *   - proximity (BM25TP, Rasolofo & Savoy 2003): each pair of different query terms within five
 *     words adds 1/distance² to the pair's score, saturated like a term frequency and weighted by
 *     the rarer term's idf, so words that belong together in the query count more together;
 *   - the share of the query's distinct terms the chunk holds, which search.ts multiplies in;
 *   - the share of the query's rare-term weight (idf) the chunk holds: absolute evidence, not
 *     relative to the other candidates, which the prompt gate reads (src/recall/gate.ts).
 */
import type { TextStats } from "./store.ts";
import { eachWord, stem, type QueryTerm } from "./tokenizer.ts";
import type { StoredChunk } from "./types.ts";

const K1 = 1.2;
const B = 0.75;
/** A heading word counts as this many body words. */
const HEADING_WEIGHT = 2;
const EXACT_WEIGHT = 1;
const PROXIMITY_WINDOW = 5;
/**
 * Orama matches terms as prefixes, so "kube" finds "kubernetes" and "config" "configuration": such a
 * chunk is still ranked, its prefix match counting half a match of the word itself.
 */
const PREFIX_WEIGHT = 0.5;
const MIN_PREFIX = 3;

export interface Candidate {
  chunk: StoredChunk;
  /** Orama's field length of the chunk (distinct index tokens), when known. */
  length?: number;
}

export interface Scored {
  chunk: StoredChunk;
  /** Keyword relevance, unbounded; 0 when the chunk holds none of the terms. */
  score: number;
  /** Share of the query's distinct terms the chunk holds, 0 to 1. */
  share: number;
  /**
   * Share of the query's idf weight the chunk holds, 0 to 1: each term weighs its idf in the whole
   * index (a term no chunk holds weighs the most), a term matched only as a prefix counts half.
   * Unlike `score`, it does not depend on the other candidates: a chunk lacking the query's rare
   * words scores low even when it is the best there is.
   */
  evidence: number;
  /**
   * How much the chunk holds of the query, in absolute terms: the idf weight of the query terms
   * it holds, in units of a term that one chunk alone holds (idf(1, N)). A long prompt's
   * relevant note holds a small share of its words but a lot of information; a short generic
   * prompt's best match holds a large share of little.
   */
  information: number;
}

export function idf(df: number, docs: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}

const HEADING_LINE = /^#{1,6}[ \t][^\n]*\n?/;

/** The chunk's text without its heading line, which is weighted apart (later pieces of a split section lack it anyway). */
function bodyOf(c: StoredChunk): string {
  return c.heading && HEADING_LINE.test(c.content) ? c.content.replace(HEADING_LINE, "") : c.content;
}

/**
 * What the share of `evidence` is of: every query term the index holds, and the query's rarest
 * terms no chunk holds, at most ABSENT_COUNTED of them (each weighs the most: the memory lacks
 * them). A short prompt with a word no note holds is judged as before; a long task description
 * always holds words memory never saw, and lacking two of them already says what lacking ten would.
 */
function evidenceWeight(terms: QueryTerm[], weights: number[], stats: TextStats): number {
  let known = 0;
  const absent: number[] = [];
  terms.forEach((t, i) => {
    if (stats.df(t.stem) > 0) known += weights[i]!;
    else absent.push(weights[i]!);
  });
  // Every absent term weighs the same (idf at df 0): which ones count does not matter.
  return known + absent.slice(0, ABSENT_COUNTED).reduce((a, w) => a + w, 0);
}

/** Words of the query no chunk holds that count against a chunk's share of its weight. */
const ABSENT_COUNTED = 2;

export function rankCandidates(terms: QueryTerm[], candidates: Candidate[], stats: TextStats): Scored[] {
  const n = terms.length;
  const weights = terms.map((t) => idf(stats.df(t.stem), stats.docs));
  const totalWeight = evidenceWeight(terms, weights, stats);
  const unit = idf(1, stats.docs);
  const byStem = new Map(terms.map((t, i) => [t.stem, i]));
  const forms = terms.map((t) => new Set(t.forms));
  const prefixes = terms.map((t, i) => [t.stem, i] as const).filter(([p], i) => p.length >= MIN_PREFIX && !terms[i]!.stop);
  const prefixOf = (word: string) => prefixes.find(([p]) => word.length > p.length && word.startsWith(p))?.[1];
  // Stemming rewrites only the end of a word: one that does not start like a term cannot match it,
  // and most words of a chunk are skipped before they are stemmed.
  const starts = new Set(terms.map((t) => t.stem.slice(0, 2)));
  return candidates.map((c) => {
    const tf = new Array<number>(n).fill(0);
    const exact = new Array<number>(n).fill(0);
    /** Matched as the word itself (its stem), not only as a prefix of longer words. */
    const whole = new Array<boolean>(n).fill(false);
    eachWord(c.chunk.heading, (w) => {
      if (!starts.has(w.slice(0, 2))) return;
      const i = byStem.get(stem(w));
      if (i === undefined) return;
      tf[i]! += HEADING_WEIGHT;
      whole[i] = true;
      if (forms[i]!.has(w)) exact[i]! += HEADING_WEIGHT;
    });
    const hits: number[] = []; // position * n + term, in order
    let pos = 0;
    eachWord(bodyOf(c.chunk), (w) => {
      const at = pos++;
      if (!starts.has(w.slice(0, 2))) return;
      const s = stem(w);
      const i = byStem.get(s) ?? prefixOf(w);
      if (i === undefined) return;
      if (terms[i]!.stem === s) {
        tf[i]!++;
        whole[i] = true;
      } else tf[i]! += PREFIX_WEIGHT;
      if (forms[i]!.has(w)) exact[i]!++;
      hits.push(at * n + i);
    });
    const length = c.length ?? pos;
    const norm = K1 * (1 - B + (B * length) / (stats.avgLength || length || 1));
    const saturate = (x: number) => (x * (K1 + 1)) / (x + norm);
    let score = 0;
    let held = 0;
    let heldWeight = 0;
    for (let i = 0; i < n; i++) {
      if (tf[i] === 0) continue;
      held++;
      heldWeight += whole[i] ? weights[i]! : weights[i]! * PREFIX_WEIGHT;
      score += weights[i]! * (saturate(tf[i]!) + EXACT_WEIGHT * (exact[i] ? saturate(exact[i]!) : 0));
    }
    if (held > 1) score += proximity(hits, n, weights, saturate);
    // Terms no chunk holds whole still count as prefixes, past the ABSENT_COUNTED of the total: capped.
    return { chunk: c.chunk, score, share: n ? held / n : 0, evidence: totalWeight > 0 ? Math.min(1, heldWeight / totalWeight) : 0, information: unit > 0 ? heldWeight / unit : 0 };
  });
}

/** BM25TP's term-pair score over the matches (position * n + term, in order). */
function proximity(hits: number[], n: number, weights: number[], saturate: (x: number) => number): number {
  const pairs = new Map<number, number>();
  for (let a = 0; a < hits.length; a++) {
    const pa = Math.floor(hits[a]! / n);
    const ta = hits[a]! % n;
    for (let b = a + 1; b < hits.length; b++) {
      const d = Math.floor(hits[b]! / n) - pa;
      if (d > PROXIMITY_WINDOW) break;
      const tb = hits[b]! % n;
      if (ta === tb) continue;
      const key = Math.min(ta, tb) * n + Math.max(ta, tb);
      pairs.set(key, (pairs.get(key) ?? 0) + 1 / (d * d));
    }
  }
  let score = 0;
  for (const [key, acc] of pairs) score += Math.min(weights[Math.floor(key / n)]!, weights[key % n]!) * saturate(acc);
  return score;
}
