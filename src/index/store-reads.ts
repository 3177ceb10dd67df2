import type { StoredChunk } from "./types.ts";
import type { Doc } from "./docs.ts";
import { toChunk } from "./docs.ts";
import type { Engine, SourceFilter } from "./engine/engine.ts";
import type { StoreMeta } from "./format.ts";

export interface Hit {
  chunk: StoredChunk;
  /** BM25 score, 0 when the chunk was found by vector only. */
  bm25: number;
  /** Cosine similarity, undefined when not found by vector. */
  cosine?: number;
  /** Distinct tokens the chunk is indexed under (BM25's field length), on full-text hits. */
  length?: number;
}

/** The spread of one query's cosines over the index (Store.cosineBackground). */
export interface CosineBackground {
  mean: number;
  sd: number;
  /** Cosines it was measured on. */
  sampled: number;
  /** Vectors in the index: how many chunks a query's best cosine is the best of. */
  vectors: number;
}

/** A query's background is measured on every vector of an index of fewer than twice this many, else on every k-th one (this many to twice as many). */
const BACKGROUND_SAMPLE = 512;

/** What BM25 needs to know about the whole index, for ranking candidates outside Orama. */
export interface TextStats {
  docs: number;
  /** Mean distinct tokens per chunk. */
  avgLength: number;
  /** Chunks indexed under exactly this token. */
  df(token: string): number;
}


/**
 * What a store answers without changing: chunks, the keyword and vector candidates of a query, the
 * query's cosines. Store (store.ts) adds the bookkeeping of files, the embedding cache and persistence.
 */
export abstract class StoreReads {
  /** The search engine (engine/engine.ts): Orama with our components. */
  protected engine: Engine<Doc>;
  meta: StoreMeta;
  /** The vectors come from another embedding model, or were not loaded: never compared with a query. */
  protected vectorsIgnored = false;

  protected constructor(meta: StoreMeta, engine: Engine<Doc>) {
    this.meta = meta;
    this.engine = engine;
  }

  get size(): number {
    return this.engine.size;
  }

  getChunk(chunkHash: string): StoredChunk | undefined {
    const d = this.getDoc(chunkHash);
    return d ? toChunk(d) : undefined;
  }

  /** Every stored chunk whose hash starts with `prefix` (expand accepts unambiguous prefixes). */
  findByPrefix(prefix: string): StoredChunk[] {
    const out: StoredChunk[] = [];
    for (const d of Object.values(this.docs())) if (d.id.startsWith(prefix)) out.push(toChunk(d));
    return out;
  }


  /** The chunk after this one in its file (the next section, or the rest of a long one), if any. */
  nextInFile(chunk: Pick<StoredChunk, "source" | "chunkHash">): StoredChunk | undefined {
    const list = this.meta.files[chunk.source]?.chunks;
    const at = list ? list.indexOf(chunk.chunkHash) : -1;
    return list && at >= 0 && at + 1 < list.length ? this.getChunk(list[at + 1]!) : undefined;
  }

  sources(): string[] {
    return Object.keys(this.meta.files);
  }


  /** Full-text (BM25) candidates for index tokens (as tokenizer.ts makes them), each matched as a prefix. */
  searchText(terms: string[], limit: number, sourcePrefix?: string): Hit[] {
    const where = this.whereSource(sourcePrefix);
    if (where === null || terms.length === 0) return [];
    const docs = this.docs();
    return this.engine.searchText(terms, limit, where).map((h) => {
      const internal = h.internalId ?? this.internalId(h.id)!;
      this.remember(h.id, internal);
      return { chunk: toChunk(docs[internal] ?? h.document), bm25: h.score, length: this.engine.fieldLength(internal) };
    });
  }

  textStats(): TextStats {
    return this.engine.textStats();
  }

  /**
   * The query terms worth asking Orama for. A term found in a large share of chunks adds
   * almost nothing to BM25 (its idf is near zero) yet makes Orama score every chunk holding
   * it: at 20k chunks one such word took a search from 5 ms to 70 ms. The rarest term is
   * always kept, so a query of common words still finds something. The terms left out still
   * count in the ranking of what was found (rank.ts).
   */
  selectiveTerms(terms: string[], maxShare = 0.15): string[] {
    const n = this.size;
    if (n < 200 || terms.length <= 1) return terms;
    // Terms match as prefixes ("fix" also finds "fixture"), so count what Orama will score:
    // every document of every word the term expands to.
    const df = (t: string) => this.engine.prefixCount(t);
    // The word itself is one of its prefix matches: when it alone is over the limit, so is the
    // term, and the walk of the tree is skipped.
    const exact = this.textStats().df;
    const cap = n * maxShare;
    const counts = new Map<string, number>();
    for (const t of terms) counts.set(t, exact(t) > cap ? exact(t) : df(t));
    // A term no chunk holds finds nothing: keeping it alone, and dropping the common ones that
    // do match, returned no result at all ("what attributes describe John?").
    const found = terms.filter((t) => counts.get(t)! > 0);
    if (!found.length) return terms;
    const kept = found.filter((t) => counts.get(t)! <= cap);
    if (kept.length) return kept;
    return [found.reduce((a, b) => (counts.get(a)! <= counts.get(b)! ? a : b))];
  }

  /**
   * Vector candidates above `similarity`: what Orama's vector search answers (the same hits, in
   * its order), taken from the block's `nearest` instead, which keeps the best `limit` as it
   * scans where Orama made a pair per vector and sorted them all.
   */
  searchVector(vector: Float32Array, limit: number, similarity: number, sourcePrefix?: string): Hit[] {
    const node = this.engine.vectors;
    if (this.vectorsIgnored || !node || !this.meta.dim || vector.length !== this.meta.dim) return [];
    const where = this.whereSource(sourcePrefix);
    if (where === null) return [];
    const docs = this.docs();
    return this.engine.searchVectors(vector, limit, similarity, where).flatMap(([id, cosine]) => {
      const d = docs[id];
      if (d) this.remember(d.id, id);
      return d ? [{ chunk: toChunk(d), bm25: 0, cosine, length: this.engine.fieldLength(id) }] : [];
    });
  }

  /**
   * The cosine of the query vector with each of these chunks that has a vector, whether or not a
   * vector search would have ranked it: a chunk the keywords found gets its real cosine.
   */
  cosines(chunkHashes: string[], vector: Float32Array): Map<string, number> {
    const out = new Map<string, number>();
    const node = this.engine.vectors;
    if (this.vectorsIgnored || !node || !this.meta.dim || vector.length !== this.meta.dim) return out;
    const byInternal = new Map<number, string>();
    for (const h of chunkHashes) {
      const id = this.internalId(h);
      if (id !== undefined) byInternal.set(id, h);
    }
    for (const [id, cos] of node.find(vector, -Infinity, byInternal.keys())) out.set(byInternal.get(id)!, cos);
    return out;
  }

  /**
   * How the query vector's cosines to the index are spread: their mean and standard deviation
   * over every vector of an index of fewer than 2 × `sample`, else over every k-th one (`sample`
   * to 2 × `sample` of them): the estimate is as good, and a prompt does not pay a second pass
   * over all vectors. What a cosine means differs from model to model; how far it stands above
   * this background does not.
   */
  cosineBackground(vector: Float32Array, sample = BACKGROUND_SAMPLE): CosineBackground | undefined {
    const node = this.engine.vectors;
    if (this.vectorsIgnored || !node || !this.meta.dim || vector.length !== this.meta.dim || node.count < 2) return undefined;
    let sum = 0;
    let squares = 0;
    let n = 0;
    for (const cos of node.cosinesToAll(vector, Math.max(1, Math.floor(node.count / sample)))) {
      // A vector of no length has no angle (NaN): it is no part of the background.
      if (!Number.isFinite(cos)) continue;
      sum += cos;
      squares += cos * cos;
      n++;
    }
    if (n < 2) return undefined;
    const mean = sum / n;
    return { mean, sd: Math.sqrt(Math.max(0, (squares - n * mean * mean) / (n - 1))), sampled: n, vectors: node.count };
  }

  /**
   * The cosine of the query vector with every stored vector, in no particular order: one pass
   * over the vector block (a background distribution to judge a query's best cosines against).
   */
  cosinesToAll(vector: Float32Array): Float64Array {
    const node = this.engine.vectors;
    if (this.vectorsIgnored || !node || !this.meta.dim || vector.length !== this.meta.dim) return new Float64Array(0);
    return node.cosinesToAll(vector);
  }

  get vectorCount(): number {
    if (this.vectorsIgnored) return 0;
    return this.engine.vectors?.count ?? 0;
  }

  /** The vectors come from another embedding model: never compare them with this model's queries. */
  ignoreVectors(): void {
    this.vectorsIgnored = true;
  }

  /**
   * Filter by path prefix on the enum field: Orama filters before scoring, so a narrow prefix
   * is also a faster search. undefined = no filter, null = no source matches.
   */
  protected whereSource(prefix?: string): SourceFilter | undefined | null {
    if (!prefix) return undefined;
    const matching = this.sources().filter((s) => s === prefix || s.startsWith(prefix));
    if (matching.length === 0) return null;
    return { source: { in: matching } };
  }


  protected docs(): Record<number, Doc> {
    return this.engine.docs;
  }
  protected getDoc(id: string): Doc | undefined {
    const internal = this.internalId(id);
    return internal === undefined ? undefined : this.docs()[internal];
  }
  protected internalId(id: string): number | undefined {
    if (this.seenAt === this.revision) {
      const seen = this.seen.get(id);
      if (seen !== undefined) return seen;
    }
    return this.engine.internalId(id);
  }

  /** Moves on with every chunk stored or removed (Store.revision). */
  abstract readonly revision: number;
  /**
   * The internal ids of the chunks this store's searches returned, while the store holds what it
   * held then (`seenAt`, its revision): a search's later reads of its own hits (their cosines, their
   * documents) need not build the engine's map of every chunk id (3–5 ms of a new process at 20k).
   */
  private seen = new Map<string, number>();
  private seenAt = -1;
  private remember(id: string, internal: number): void {
    // A watch process serves searches for hours without a change: the list starts again past a few thousand.
    if (this.seenAt !== this.revision || this.seen.size >= 4096) {
      this.seen.clear();
      this.seenAt = this.revision;
    }
    this.seen.set(id, internal);
  }
}
