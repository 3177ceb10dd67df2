import type { Config } from "../core/config.ts";
import { instructionLike } from "../core/frame.ts";
import { noteTime } from "../core/since.ts";
import { EmbedderError, type OllamaEmbedder } from "./embedder.ts";
import type { CosineBackground, Hit, Store } from "./store.ts";
import { rankCandidates, type Scored } from "./rank.ts";
import { rankingTerms } from "./tokenizer.ts";
import { dateBoost, queryDates } from "./query-dates.ts";
import type { StoredChunk } from "./types.ts";

/**
 * Candidates each side hands to the ranking, whatever top-k asks for: the top 5 is then the start
 * of the top 10, and rank.ts has enough to reorder.
 */
const CANDIDATES = 50;

export type QueryEmbedder = Pick<OllamaEmbedder, "embedQuery">;

export interface SearchRequest {
  query: string;
  topK: number;
  sourcePrefix?: string;
  /** Also the query's cosine background (the prompt gate's input, a pass over a sample of the vectors). */
  background?: boolean;
  store: Store;
  config: Config;
  embedder: QueryEmbedder | null;
  /** The time of the query (ms since epoch), for recency; default now. */
  now?: number;
}

export interface SearchResult {
  chunk: StoredChunk;
  /** Fused relevance in [0, 1]: comparable across queries, so a floor means something. */
  score: number;
  /** Keyword score (rank.ts), unbounded; 0 when the chunk holds none of the query's words. */
  bm25: number;
  /** Share of the query's rare-term (idf) weight the chunk holds, 0 to 1 (rank.ts): absolute keyword evidence. */
  evidence: number;
  /** The idf weight of the query terms it holds, in units of a term one chunk alone holds (rank.ts). */
  information: number;
  cosine?: number;
  /** Claude Code's curated memory (its memory folder, CLAUDE.md files), or a memsearch note. */
  kind: ChunkKind;
  /**
   * Whether its text reads like an instruction to the model (core/frame.ts), as `search -j` tells
   * the memory-recall skill. Judged where the index is held: a warm search's client would compile
   * those patterns for five results. (The prompt hook judges the clipped text it injects itself.)
   * Absent from an older watch process's answer.
   */
  instructionLike?: boolean;
}

export type ChunkKind = "note" | "curated";

export interface SearchResponse {
  results: SearchResult[];
  /** Whether vectors took part in the ranking. */
  mode: "hybrid" | "bm25";
  /** Why vectors did not take part, when they could have. */
  warning?: string;
  /** The query's cosines over the index (hybrid, and asked for): what the prompt gate judges a cosine against. */
  background?: CosineBackground;
}

/**
 * Hybrid search. Orama finds the candidates of each side (BM25 over the query's rarer stems,
 * cosine over the vectors); every candidate is then scored on both signals (rank.ts for the
 * keywords, its real cosine for the vector) and the two are fused here:
 *   text   = keyword score / best keyword score × share of query terms the chunk contains
 *   vector = cosine rescaled so the similarity floor maps to 0 and 1 stays 1
 *   score  = 1 − (1 − text_weight·text)(1 − vector_weight·vector)
 * a noisy-OR: either signal alone, if strong, makes a memory relevant (an exact keyword match
 * the embedding model rates as so-so, or a paraphrase sharing no word), and two weak signals
 * stay weak. A linear mix instead buried full keyword matches under a mediocre cosine. Orama's
 * own hybrid mode divides each side by its best score, so the top hit of any query scores ~1
 * however poor it is; that makes a relevance floor meaningless.
 *
 * A chunk only one side's candidate list held used to count as 0 on the other side: a keyword
 * match just outside the vector list lost to vector-only chunks holding none of the words, so
 * turning vectors on could push exact matches out of the top k. Both signals are now measured
 * on every candidate instead.
 */
export async function searchChunks(req: SearchRequest): Promise<SearchResponse> {
  const { store, config } = req;
  const query = req.query.trim();
  const terms = rankingTerms(query);
  const pool = Math.max(req.topK, CANDIDATES);

  // The keyword side runs while the query is being embedded (an HTTP round trip to Ollama, the
  // slowest step of a warm search); done again if the index changed meanwhile (a re-index lands
  // between two awaits), so both sides always read one state.
  const embedding = req.embedder && store.vectorCount > 0 && query ? req.embedder.embedQuery(query).then((v) => ({ v }), (e: unknown) => ({ e })) : undefined;
  if (embedding) await new Promise((resolve) => setImmediate(resolve));
  const keywordSide = () => store.searchText(terms.length ? store.selectiveTerms(terms.map((t) => t.stem)) : [], pool, req.sourcePrefix);
  const before = store.revision;
  let textHits = keywordSide();

  let queryVector: Float32Array | undefined;
  let warning: string | undefined;
  if (embedding) {
    const got = await embedding;
    if ("e" in got) {
      if (!(got.e instanceof EmbedderError)) throw got.e;
      warning = got.e.message;
    } else if (got.v.length !== store.dim) {
      warning = `the query embedding has ${got.v.length} dimensions but the index holds ${store.dim}; run 'memsearch index --force'`;
    } else queryVector = got.v;
    if (store.revision !== before) textHits = keywordSide();
  }
  const similarity = config["search.similarity"];
  const vecHits = queryVector ? store.searchVector(queryVector, pool, similarity, req.sourcePrefix) : [];

  const candidates = new Map<string, Hit>();
  for (const h of [...textHits, ...vecHits]) if (!candidates.has(h.chunk.chunkHash)) candidates.set(h.chunk.chunkHash, h);
  const hybrid = queryVector !== undefined;
  const cosines = new Map<string, number>();
  if (queryVector) {
    for (const h of vecHits) cosines.set(h.chunk.chunkHash, h.cosine!);
    const unscored = textHits.map((h) => h.chunk.chunkHash).filter((id) => !cosines.has(id));
    for (const [id, cos] of store.cosines(unscored, queryVector)) cosines.set(id, cos);
  }
  const keyword = terms.length ? rankCandidates(terms, [...candidates.values()], store.textStats()) : [];
  const bestText = keyword.reduce((m, k) => Math.max(m, k.score), 0);

  const wT = config["search.text_weight"];
  const wV = config["search.vector_weight"];
  const fuse = (chunk: StoredChunk, k: Scored | undefined): SearchResult => {
    const text = k && bestText > 0 ? Math.min(1, k.score / bestText) * k.share : 0;
    const cosine = cosines.get(chunk.chunkHash);
    const evidence = k?.evidence ?? 0;
    const information = k?.information ?? 0;
    const kind: ChunkKind = store.isCurated(chunk.source) ? "curated" : "note";
    if (!hybrid) return { chunk, score: text, bm25: k?.score ?? 0, evidence, information, kind };
    const vec = cosine === undefined ? 0 : Math.max(0, (cosine - similarity) / (1 - similarity || 1));
    return { chunk, score: 1 - (1 - wT * text) * (1 - wV * vec), bm25: k?.score ?? 0, evidence, information, cosine, kind };
  };
  const results: SearchResult[] = [...candidates.values()].map((h, i) => fuse(h.chunk, keyword[i]));
  const now = req.now ?? Date.now();
  const offset = store.utcOffsetMin;
  const dates = queryDates(query, now, offset);
  const rankOf = (r: SearchResult) => r.score * recencyBoost(r.chunk, now, r.kind, offset) * dateBoost(r.chunk.source, dates);
  const order = new Map(results.map((r) => [r, rankOf(r)]));
  const answers = answersOf(results, order, Math.max(req.topK, ANSWERS_AFTER), store, candidates);
  if (answers.length) {
    const chunks = answers.map((a) => a.answer);
    if (queryVector) for (const [id, cos] of store.cosines(chunks.map((c) => c.chunkHash), queryVector)) cosines.set(id, cos);
    const scored = terms.length ? rankCandidates(terms, chunks.map((chunk) => ({ chunk })), store.textStats()) : [];
    answers.forEach(({ answer, question }, i) => {
      const r = fuse(answer, scored[i]);
      results.push(r);
      order.set(r, Math.max(rankOf(r), order.get(question)! * ANSWER_SHARE));
    });
  }
  // On a tie the curated record comes first: it is what the user or Claude chose to keep.
  const top = results
    .filter((r) => order.get(r)! > 0)
    .sort((a, b) => order.get(b)! - order.get(a)! || curatedFirst(a, b) || a.chunk.source.localeCompare(b.chunk.source) || a.chunk.startLine - b.chunk.startLine)
    .slice(0, req.topK)
    .map((r) => ({ ...r, instructionLike: instructionLike(r.chunk.content) }));
  const background = req.background && queryVector && top.length ? store.cosineBackground(queryVector) : undefined;
  return { results: top, mode: hybrid ? "hybrid" : "bm25", warning, ...(background ? { background } : {}) };
}

/**
 * A question's answer is the section after it in its file: in a conversation the next turn, in the
 * notes the next note (asked which way to go, the user answers in the next turn). The words of the
 * query are the asker's, and the answer holds the fact in its own words: on LoCoMo, for a third of
 * the questions whose evidence missed the top 5, the turn just before the evidence was in it, a
 * question most of the time (docs/EVALUATION.md). So each of the leading results that ends with a
 * question brings the section after it in, ranked just behind it (ANSWER_SHARE of its rank) unless
 * its own rank is higher. Its score, what the prompt gate reads, stays its own.
 */
function answersOf(results: SearchResult[], order: Map<SearchResult, number>, leading: number, store: Store, candidates: Map<string, Hit>): { question: SearchResult; answer: StoredChunk }[] {
  const out: { question: SearchResult; answer: StoredChunk }[] = [];
  const leaders = results.filter((r) => r.score > 0 && QUESTION_END.test(r.chunk.content)).sort((a, b) => order.get(b)! - order.get(a)!);
  const bar = [...order.values()].sort((a, b) => b - a)[leading - 1] ?? 0;
  const taken = new Set<string>();
  for (const q of leaders) {
    if (order.get(q)! < bar) break;
    const next = store.nextInFile(q.chunk);
    if (!next || taken.has(next.chunkHash)) continue;
    taken.add(next.chunkHash);
    const known = candidates.has(next.chunkHash) ? results.find((r) => r.chunk.chunkHash === next.chunkHash) : undefined;
    if (known) order.set(known, Math.max(order.get(known)!, order.get(q)! * ANSWER_SHARE));
    else out.push({ question: q, answer: next });
  }
  return out;
}

/** The leading results whose questions bring their answers in: the top 10, or the top k when larger. */
const ANSWERS_AFTER = 10;
/** An answer ranks just behind its question. */
const ANSWER_SHARE = 0.95;
/** A question mark ending the chunk's text (closing quotes, brackets or an emoji may follow). */
const QUESTION_END = /\?[\s"'”’)\]\p{Extended_Pictographic}\uFE0F]*$/u;

/**
 * Recency as evidence, in the order only: coding work continues recent work (on real sessions the
 * few newest ones touch the files a new session touches more often than any other sessions do:
 * docs/EVALUATION.md), so a note of today ranks as if its score were up to half again as high, one
 * of three days ago a quarter, one of last month as it is. The score itself (what the prompt gate
 * and `search -j` read) is left as it is. Curated memory (CLAUDE.md, Claude Code's memory folder)
 * is what holds now: it ranks as fresh as a note of this minute.
 */
export function recencyBoost(chunk: Pick<StoredChunk, "source" | "heading">, now: number, kind: ChunkKind = "note", utcOffsetMin?: number): number {
  if (kind === "curated") return 1 + RECENCY_WEIGHT;
  const at = noteTime(chunk.source, chunk.heading, false, utcOffsetMin);
  if (at === undefined) return 1;
  const ageHours = Math.max(0, now - at) / 3_600_000;
  return 1 + RECENCY_WEIGHT * 0.5 ** (ageHours / RECENCY_HALF_LIFE_HOURS);
}

const RECENCY_WEIGHT = 0.5;
const RECENCY_HALF_LIFE_HOURS = 72;

/** Curated before notes; 0 when both are of one kind. */
export function curatedFirst(a: { kind?: ChunkKind }, b: { kind?: ChunkKind }): number {
  return (b.kind === "curated" ? 1 : 0) - (a.kind === "curated" ? 1 : 0);
}
