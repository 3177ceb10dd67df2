import type { Config } from "../core/config.ts";
import { instructionLike } from "../core/frame.ts";
import { noteTime } from "../core/since.ts";
import { EmbedderError, type OllamaEmbedder } from "./embedder.ts";
import type { CosineBackground, Hit, Store } from "./store.ts";
import { rankCandidates } from "./rank.ts";
import { rankingTerms } from "./tokenizer.ts";
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
  const results: SearchResult[] = [...candidates.values()].map((h, i) => {
    const k = keyword[i];
    const text = k && bestText > 0 ? (k.score / bestText) * k.share : 0;
    const cosine = cosines.get(h.chunk.chunkHash);
    const evidence = k?.evidence ?? 0;
    const information = k?.information ?? 0;
    const kind: ChunkKind = store.isCurated(h.chunk.source) ? "curated" : "note";
    if (!hybrid) return { chunk: h.chunk, score: text, bm25: k?.score ?? 0, evidence, information, kind };
    const vec = cosine === undefined ? 0 : Math.max(0, (cosine - similarity) / (1 - similarity || 1));
    return { chunk: h.chunk, score: 1 - (1 - wT * text) * (1 - wV * vec), bm25: k?.score ?? 0, evidence, information, cosine, kind };
  });
  // On a tie the curated record comes first: it is what the user or Claude chose to keep.
  const now = req.now ?? Date.now();
  const offset = store.utcOffsetMin;
  const order = new Map(results.map((r) => [r, r.score * recencyBoost(r.chunk, now, r.kind, offset)]));
  const top = results
    .filter((r) => r.score > 0)
    .sort((a, b) => order.get(b)! - order.get(a)! || curatedFirst(a, b) || a.chunk.source.localeCompare(b.chunk.source) || a.chunk.startLine - b.chunk.startLine)
    .slice(0, req.topK)
    .map((r) => ({ ...r, instructionLike: instructionLike(r.chunk.content) }));
  const background = req.background && queryVector && top.length ? store.cosineBackground(queryVector) : undefined;
  return { results: top, mode: hybrid ? "hybrid" : "bm25", warning, ...(background ? { background } : {}) };
}

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
