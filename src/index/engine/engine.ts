/**
 * The search engine: what the store asks of it, in one small interface (add, remove, search text,
 * search vectors, save, load), over Orama's component API. Orama is the frame: its documents store
 * and id map, its insert and remove, its where filters and its search's orchestration. The parts
 * this project replaced are components Orama takes in their place, so Orama never runs its own
 * version of them: the text index (compact-index.ts: BM25 without per-chunk frequencies, the radix
 * tree with compact postings), the vector index (vector-block.ts, vector-cold.ts, with the SIMD
 * kernels of kernels.ts) and the best-k selection (best.ts). The tokenizer is the caller's (the
 * index's language, index/tokenizer.ts). Every reach into Orama's internals is in
 * orama-internals.ts. Nothing here knows files: saving gives plain state, loading takes it.
 */
import { count, create, insert, remove, search, type AnyOrama, type Results } from "@orama/orama";
import type { Tokenizer } from "@orama/orama";
import { compactIndex, withResultLimit } from "./compact-index.ts";
import { bindOrama, documentIdOf, enumValues, indexShape, loadState, replaceVectorNode, saveState, whereIds, type BoundOrama, type SavedState } from "./orama-internals.ts";
import type { VectorBlock } from "./vector-block.ts";

export type { SavedState } from "./orama-internals.ts";

/** What the engine indexes of a document: its text (BM25), its source (an enum, for filters) and its vector. */
export interface EngineDoc {
  id: string;
  source: string;
  text: string;
  /** Null once the document's vector is in the vector block (not undefined: Orama's remove then clears it). */
  embedding?: number[] | null;
}

/** A where clause on the source: every document of these sources. */
export type SourceFilter = { source: { in: string[] } };

export interface TextHit<D> {
  /** The document's id. */
  id: string;
  /** Its internal id, known without Orama's id map (undefined when Orama's search did not say). */
  internalId: number | undefined;
  score: number;
  /** Orama's copy of the document (its own store holds the one to read). */
  document: D;
}

function schemaFor(dim: number | null) {
  return dim ? ({ source: "enum", text: "string", embedding: `vector[${dim}]` } as const) : ({ source: "enum", text: "string" } as const);
}

function createDb(dim: number | null, tokenizer: Tokenizer) {
  return create({
    // Orama types a schema from a literal; ours is chosen at run time (with or without vectors).
    schema: schemaFor(dim) as never,
    sort: { enabled: false },
    components: { tokenizer, index: compactIndex() },
  });
}

export class Engine<D extends EngineDoc> {
  private constructor(private o: BoundOrama<D>) {}

  /** An empty engine; vectors of `dim` (none when null). */
  static create<D extends EngineDoc>(dim: number | null, tokenizer: Tokenizer): Engine<D> {
    return new Engine(bindOrama<D>(createDb(dim, tokenizer)));
  }

  /**
   * An engine from saved state (save()), its vector index empty until setVectors. Throws a plain
   * Error when the state does not load into the shape of a new engine or holds another count.
   */
  static load<D extends EngineDoc>(dim: number | null, tokenizer: Tokenizer, state: SavedState, docCount: number): Engine<D> {
    // Bound once it is loaded: load() replaces the index objects a binding would hold.
    const db = createDb(dim, tokenizer);
    const shape = indexShape(db);
    loadState(db, state);
    if (indexShape(db) !== shape) throw new Error("the search index does not have the shape of a new one");
    if (count(db) !== docCount) throw new Error("document count does not match the header");
    return new Engine(bindOrama<D>(db));
  }

  /** The vector index's block (a loaded engine gets its own from the file's vectors). */
  setVectors(block: VectorBlock): void {
    replaceVectorNode(this.o.db, block);
    this.o = bindOrama<D>(this.o.db);
  }

  /** The Orama database itself: for tests and the benchmark, which compare with Orama's own answers. */
  get db(): AnyOrama {
    return this.o.db;
  }
  get size(): number {
    return count(this.o.db);
  }
  get vectors(): VectorBlock | undefined {
    return this.o.vectors;
  }
  /** Internal id → document: what Orama's documents store holds. */
  get docs(): Record<number, D> {
    return this.o.docs;
  }
  internalId(id: string): number | undefined {
    return this.o.internalIds.get(id);
  }
  /** The highest internal id a document was given (ids are not reused by another document). */
  lastInternalId(): number {
    let last = 0;
    this.o.internalIds.forEach((internalId) => (last = Math.max(last, internalId)));
    return last;
  }

  /** Index `doc`, and its vector when given (straight into the block: insert() would want a number[]). Returns its internal id. */
  add(doc: D, vector?: Float32Array): number {
    // Orama types a document from the literal schema that createDb could not give it.
    insert(this.o.db, doc as never);
    const internal = this.o.internalIds.get(doc.id)!;
    if (vector) {
      doc.embedding = null;
      this.o.vectors!.add(internal, vector);
    }
    return internal;
  }

  remove(id: string): boolean {
    return remove(this.o.db, id) === true;
  }

  /** BM25 over the text: the best `limit` documents holding any of `terms` (each matched as a prefix), in Orama's order. */
  searchText(terms: string[], limit: number, where?: SourceFilter): TextHit<D>[] {
    const { value, found } = withResultLimit(this.o.db.data.index, limit, () => search(this.o.db, { term: terms.join(" "), properties: ["text"], limit, ...(where ? { where } : {}) }));
    const res = value as unknown as Results<D>;
    // The hits' internal ids from what the index found (a search must not build the id map: lazyIds).
    const byId = new Map(found?.map(([internal]) => [documentIdOf(this.o.db, internal), internal]));
    return res.hits.map((h) => ({ id: h.id, internalId: byId.get(h.id), score: h.score, document: h.document }));
  }

  /** Distinct tokens a document is indexed under (BM25's field length). */
  fieldLength(internalId: number): number | undefined {
    return this.o.text.lengths[internalId];
  }

  /** Documents, mean distinct tokens per document, and documents indexed under exactly a token. */
  textStats(): { docs: number; avgLength: number; df(token: string): number } {
    const { docsWithToken, avgLength } = this.o.text;
    // A plain object keyed by token: "constructor" finds Object's own, hence the type check (as Orama does).
    return { docs: this.size, avgLength: avgLength(), df: (t) => (typeof docsWithToken[t] === "number" ? docsWithToken[t] : 0) };
  }

  /** How many (word, document) pairs a term matches as a prefix: what a text search would score for it. */
  prefixCount(term: string): number {
    let total = 0;
    for (const ids of Object.values(this.o.textRadix.findPostings(term))) total += ids.length;
    return total;
  }

  /** The best `limit` vectors at or above `similarity`, in Orama's order (cosine, then internal id). */
  searchVectors(vector: Float32Array, limit: number, similarity: number, where?: SourceFilter): [number, number][] {
    const node = this.o.vectors;
    if (!node) return [];
    return node.nearest(vector, limit, similarity, where ? whereIds(this.o.db, where) : undefined);
  }

  /** The distinct sources with the internal ids of their documents (read, never changed). */
  sources(): ReadonlyMap<unknown, ReadonlySet<number>> {
    return enumValues(this.o.db);
  }

  /** The state to save (the vectors are not in it: the caller stores the block itself). */
  save(): SavedState {
    return saveState(this.o);
  }
}
