import type { Config } from "./config.ts";
import { EmbedderError, type OllamaEmbedder } from "./embedder.ts";
import type { Store } from "./store.ts";
import { tokenize } from "./tokenizer.ts";
import type { StoredChunk } from "./types.ts";

export type QueryEmbedder = Pick<OllamaEmbedder, "embedQuery">;

export interface SearchRequest {
  query: string;
  topK: number;
  sourcePrefix?: string;
  store: Store;
  config: Config;
  embedder: QueryEmbedder | null;
}

export interface SearchResult {
  chunk: StoredChunk;
  /** Fused relevance in [0, 1]: comparable across queries, so a floor means something. */
  score: number;
  bm25: number;
  cosine?: number;
}

export interface SearchResponse {
  results: SearchResult[];
  /** Whether vectors took part in the ranking. */
  mode: "hybrid" | "bm25";
  /** Why vectors did not take part, when they could have. */
  warning?: string;
}

/**
 * Hybrid search: Orama ranks BM25 and cosine candidates separately and we fuse them here.
 * Orama's own hybrid mode divides each side by its best score, so the top hit of any query
 * scores ~1 however poor it is; that makes a relevance floor meaningless. Instead:
 *   text   = bm25 / best bm25 × share of query terms the chunk contains
 *   vector = cosine rescaled so the similarity floor maps to 0 and 1 stays 1
 *   score  = 1 − (1 − text_weight·text)(1 − vector_weight·vector)
 * a noisy-OR: either signal alone, if strong, makes a memory relevant (an exact keyword match
 * the embedding model rates as so-so, or a paraphrase sharing no word), and two weak signals
 * stay weak. A linear mix instead buried full keyword matches under a mediocre cosine.
 */
export async function searchChunks(req: SearchRequest): Promise<SearchResponse> {
  const { store, config } = req;
  const query = req.query.trim();
  const terms = store.selectiveTerms(tokenize(query));
  const pool = Math.max(req.topK * 4, 20);

  let queryVector: Float32Array | undefined;
  let warning: string | undefined;
  if (req.embedder && store.vectorCount > 0 && query) {
    try {
      queryVector = await req.embedder.embedQuery(query);
      if (queryVector.length !== store.dim) {
        warning = `the query embedding has ${queryVector.length} dimensions but the index holds ${store.dim}; run 'memsearch index --force'`;
        queryVector = undefined;
      }
    } catch (e) {
      if (!(e instanceof EmbedderError)) throw e;
      warning = e.message;
    }
  }

  const textHits = terms.length ? store.searchText(terms.join(" "), pool, req.sourcePrefix) : [];
  const similarity = config["search.similarity"];
  const vecHits = queryVector ? store.searchVector(queryVector, pool, similarity, req.sourcePrefix) : [];

  const byId = new Map<string, SearchResult>();
  const bestText = textHits.reduce((m, h) => Math.max(m, h.bm25), 0);
  for (const h of textHits) byId.set(h.chunk.chunkHash, { chunk: h.chunk, score: 0, bm25: h.bm25 });
  for (const h of vecHits) {
    const r = byId.get(h.chunk.chunkHash);
    if (r) r.cosine = h.cosine;
    else byId.set(h.chunk.chunkHash, { chunk: h.chunk, score: 0, bm25: 0, cosine: h.cosine });
  }

  const hybrid = queryVector !== undefined;
  const wT = config["search.text_weight"];
  const wV = config["search.vector_weight"];
  for (const r of byId.values()) {
    const text = bestText > 0 ? (r.bm25 / bestText) * coverage(terms, r.chunk) : 0;
    if (!hybrid) {
      r.score = text;
      continue;
    }
    const vec = r.cosine === undefined ? 0 : Math.max(0, (r.cosine - similarity) / (1 - similarity || 1));
    r.score = 1 - (1 - wT * text) * (1 - wV * vec);
  }
  const results = [...byId.values()]
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || a.chunk.source.localeCompare(b.chunk.source) || a.chunk.startLine - b.chunk.startLine)
    .slice(0, req.topK);
  return { results, mode: hybrid ? "hybrid" : "bm25", warning };
}

/** Share of query terms found in the chunk (as a prefix of one of its tokens, like Orama matches). */
function coverage(terms: string[], chunk: StoredChunk): number {
  if (terms.length <= 1) return 1;
  const tokens = tokenize(`${chunk.heading} ${chunk.content}`);
  let found = 0;
  for (const t of terms) if (tokens.some((w) => w.startsWith(t))) found++;
  return found / terms.length;
}
