import { closeSync } from "node:fs";
import { dirname, join } from "node:path";
import { IndexDamagedError, MemsearchError, NotFoundError, oneLine } from "../core/errors.ts";
import { clearIndexPath, INDEX_FILE, openIndexFile, otherVersion, readLayout, SCHEMA_VERSION, sizeProblem, sweepIndexTemps, unreadable, type IndexFile, type FileRecord, type StoreMeta } from "./format.ts";
import { readVectorPart, vectorsByContent } from "./index-file.ts";
import { StoredDoc, TextFile, toChunk, type Doc } from "./docs.ts";
import { readIndex, UnreadableIndex, writeIndex, type MovedTexts } from "./load.ts";
import { Engine, type SourceFilter } from "./engine/engine.ts";
import { createTokenizer } from "./tokenizer.ts";
import type { StoredChunk } from "./types.ts";

export { INDEX_FILE, SCHEMA_VERSION, type FileRecord, type StoreMeta } from "./format.ts";

export interface OpenResult {
  store: Store;
  /** There is no index file yet; the store is empty. */
  missing?: boolean;
  /**
   * Why the existing index cannot be used (damaged, another format version, another model),
   * as the start of a sentence: the store is then empty, holding only the vectors that could
   * be trusted (as an embedding cache), and is to be rebuilt from the markdown.
   */
  rebuilt?: string;
  /** The markdown files the unusable index listed, when its file list could still be read. */
  sources?: string[];
  /** Opened with `anyModel`: the embedding model the index was built with, when not the one asked for. */
  otherModel?: string;
}

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

/** A new engine over our tokenizer. */
function newEngine(dim: number | null): Engine<Doc> {
  return Engine.create<Doc>(dim, createTokenizer());
}

/**
 * One project's index: an Orama database (BM25 over the chunk text, cosine over embeddings)
 * plus the per-file bookkeeping, persisted as one file written atomically (layout in
 * format.ts). Orama's save() state goes in Bun's structured-clone format, faster to read
 * than JSON, and the vectors once, as one Float32 block: Orama's persistence plugin writes
 * larger files that load slower and come back with Orama's default tokenizer, not ours
 * (docs/BENCHMARKS.md, "Orama's persistence plugin, re-measured"). If a later Bun cannot
 * read the clone format, the index is rebuilt from the markdown and the vectors are kept as an
 * embedding cache.
 */
export class Store {
  /** The search engine (engine/engine.ts): Orama with our components. */
  private engine: Engine<Doc>;
  meta: StoreMeta;
  readonly path: string;
  private dirty = false;
  /** The index file this store's loaded documents read their texts from (TextFile), if any. */
  private texts: TextFile | undefined;

  private constructor(path: string, meta: StoreMeta, engine: Engine<Doc>) {
    this.path = path;
    this.meta = meta;
    this.engine = engine;
  }

  static empty(indexDir: string, model: string, dim: number | null = null): Store {
    const meta: StoreMeta = { schemaVersion: SCHEMA_VERSION, model, dim, updatedAt: new Date().toISOString(), files: {} };
    const s = new Store(join(indexDir, INDEX_FILE), meta, newEngine(dim));
    s.dirty = true;
    return s;
  }

  /**
   * Open the index for `model`: the one place that decides whether an index file can be used.
   * A missing file gives an empty store (`missing`). A file that is damaged (cut short, bytes
   * changed, not an index, a directory), of another format version, or built with another
   * model gives an empty store plus the reason (`rebuilt`), so the caller rebuilds from the
   * markdown instead of mixing, crashing or answering from nothing; vectors whose checksum
   * holds are carried over as an embedding cache. With `anyModel`, an index of another model
   * is opened for keyword search, its vectors ignored (`otherModel`).
   * Never prints; throws only what a rebuild cannot fix (the file may not be read).
   * `lowPeak`: collect the state's garbage before the vectors are read, so they are not read on
   * top of it (figures in docs/BENCHMARKS.md); a few tens of milliseconds more, worth it for the
   * watch process, whose peak is what it keeps, not for a command that exits after one search.
   * `keywordsOnly`: for a search with embeddings turned off, the vector block (most of the file) is
   * neither read nor checked, and the store can never be saved (it holds no vectors to save).
   */
  static open(indexDir: string, model: string, opts: { anyModel?: boolean; lowPeak?: boolean; keywordsOnly?: boolean } = {}): OpenResult {
    const path = join(indexDir, INDEX_FILE);
    let file: IndexFile;
    try {
      file = openIndexFile(path);
    } catch (e) {
      if (e instanceof NotFoundError) return { store: Store.empty(indexDir, model), missing: true };
      if (e instanceof IndexDamagedError) return unusable(indexDir, model, unreadable(e.reason));
      throw e;
    }
    const rebuild = (why: string, carried?: Map<string, Float32Array>) => unusable(indexDir, model, why, carried, listedSources(file));
    // Set once a loaded store reads its texts through the file's descriptor: it stays open.
    let kept = false;
    let texts: TextFile | undefined;
    try {
      const { meta } = file.head;
      // Decided from the head alone, before paying for the Orama state.
      if (meta.model !== model && !opts.anyModel) return rebuild(`the index was built with embedding model '${meta.model}', now '${model}'`);
      if (meta.schemaVersion !== SCHEMA_VERSION) {
        // Another memsearch wrote it: keep the vectors when they can be read, so the upgrade
        // costs no re-embedding.
        let carried: Map<string, Float32Array> | undefined;
        if (meta.model === model) {
          try {
            const { layout, block } = readVectorPart(file);
            carried = vectorsByContent(layout, block, meta.dim ?? 0);
          } catch {}
        }
        return rebuild(otherVersion(meta.schemaVersion), carried);
      }
      const problem = sizeProblem(file);
      if (problem) return rebuild(unreadable(problem));
      // Windows may refuse to rename a new index over a file a process holds open: texts are read
      // into memory there, as before.
      texts = process.platform === "win32" ? undefined : new TextFile(file.fd);
      const decoded = readIndex(file, texts, opts.lowPeak === true, opts.keywordsOnly === true);
      const store = new Store(path, decoded.meta, decoded.engine);
      store.texts = texts;
      kept = texts !== undefined;
      if (opts.keywordsOnly) store.keywordsOnly = true;
      if (opts.keywordsOnly || meta.model !== model) store.ignoreVectors();
      return meta.model === model ? { store } : { store, otherModel: meta.model };
    } catch (e) {
      if (e instanceof UnreadableIndex) return rebuild(unreadable(e.reason), e.vectors);
      if (e instanceof IndexDamagedError) return rebuild(unreadable(e.reason));
      if (e instanceof MemsearchError) throw e;
      return rebuild(unreadable(oneLine(e)));
    } finally {
      // Not before: a rebuild reads the file list of the index it replaces through this descriptor.
      if (!kept) texts ? texts.close() : closeSync(file.fd);
    }
  }

  get dim(): number | null {
    return this.meta.dim;
  }
  get size(): number {
    return this.engine.size;
  }
  get isDirty(): boolean {
    return this.dirty;
  }

  /**
   * Moves on with every chunk stored or removed: a reader that awaited something (the query's
   * embedding) between two reads knows whether the first still holds.
   */
  revision = 0;

  /** Vectors saved from an index whose other parts could not be read (see UnreadableIndex). */
  carried: Map<string, Float32Array> = new Map();
  // Content hash → internal id of a chunk holding its vector. Built on first use, then kept up to
  // date: the warm process re-indexes after every turn and must not walk every chunk each time
  // (at 100k chunks that was 400 ms with searches waiting). Ids, not vectors: views of the block
  // would keep an outgrown block alive.
  private byContent: Map<string, number> | undefined;
  /**
   * Copies of vectors whose chunks were removed while this store was open: a section moved to
   * another place or file keeps its vector though its old chunk is gone before the new one is
   * stored. Bounded: past it, a moved section is embedded again.
   */
  private retired = new Map<string, Float32Array>();
  private missing: Set<string> | undefined;

  /** The vector of a content hash, if any chunk had it: the embedding cache (an unchanged chunk is never re-embedded). */
  vectorForContent(contentHash: string): Float32Array | undefined {
    const block = this.engine.vectors;
    if (!this.byContent) {
      this.byContent = new Map();
      const docs = this.docs();
      for (const internalId of block?.keys() ?? []) {
        const d = docs[internalId];
        if (d) this.byContent.set(d.contentHash, internalId);
      }
    }
    const id = this.byContent.get(contentHash);
    // A copy: the caller may hold it while the block grows or moves its rows.
    return (id !== undefined ? block?.get(id)?.slice() : undefined) ?? this.retired.get(contentHash) ?? this.carried.get(contentHash);
  }

  /** Chunks without a vector (indexed while Ollama was down): the next run fills them in. */
  chunksMissingVectors(): StoredChunk[] {
    return [...this.missingIds()].map((id) => this.getChunk(id)).filter((c): c is StoredChunk => c !== undefined);
  }

  get missingVectorCount(): number {
    return this.missingIds().size;
  }

  private missingIds(): Set<string> {
    if (!this.missing) {
      const vi = this.engine.vectors;
      const docs = this.docs();
      this.missing = new Set();
      // By internal id, in the order Object.entries gave: the entries, an array and a key string
      // per chunk, were garbage the watch process made on every start.
      const last = this.engine.lastInternalId();
      for (let internalId = 1; internalId <= last; internalId++) {
        const d = docs[internalId];
        if (d && !vi?.has(internalId)) this.missing.add(d.id);
      }
    }
    return this.missing;
  }

  private removeDoc(id: string): boolean {
    this.revision++;
    this.missing?.delete(id);
    const internal = this.internalId(id);
    const block = this.engine.vectors;
    if (internal !== undefined && block?.has(internal)) {
      const hash = this.docs()[internal]?.contentHash;
      if (hash !== undefined) {
        if (this.byContent?.get(hash) === internal) this.byContent.delete(hash);
        if (this.retired.size >= RETIRED_MAX) this.retired.clear();
        this.retired.set(hash, block.get(internal)!.slice());
      }
    }
    return this.engine.remove(id);
  }

  /**
   * Switch to vectors of `dim`. Orama fixes a vector field's size at creation, so the
   * database is recreated and every document re-inserted (their vectors come from `vectors`).
   */
  setDimension(dim: number, vectors: Map<string, Float32Array>): void {
    if (this.meta.dim === dim) return;
    const old = Object.values(this.docs()).map(toChunk);
    this.engine = newEngine(dim);
    this.meta.dim = dim;
    this.byContent = undefined;
    this.retired.clear();
    this.missing = undefined;
    for (const c of old) this.insertChunk(c, vectors.get(c.contentHash));
    this.dirty = true;
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

  /** Replace the chunks of one file. Chunks already stored with the same hash are kept as they are. */
  replaceFile(source: string, rec: Pick<FileRecord, "mtimeMs" | "size" | "damaged" | "leftOut"> & { curated?: boolean }, chunks: StoredChunk[], vectorOf: (contentHash: string) => Float32Array | undefined): { added: number; removed: number } {
    const keep = new Set(chunks.map((c) => c.chunkHash));
    const prev = this.meta.files[source]?.chunks ?? [];
    let removed = 0;
    for (const id of prev) {
      if (!keep.has(id) && this.removeDoc(id)) removed++;
    }
    let added = 0;
    for (const c of chunks) {
      if (this.getDoc(c.chunkHash)) {
        // Fill in a vector that was missing (Ollama was down last time).
        const v = vectorOf(c.contentHash);
        if (v && this.meta.dim && !this.engine.vectors?.has(this.internalId(c.chunkHash)!)) {
          this.removeDoc(c.chunkHash);
          this.insertChunk(c, v);
        }
        continue;
      }
      this.insertChunk(c, vectorOf(c.contentHash));
      added++;
    }
    this.meta.files[source] = {
      mtimeMs: rec.mtimeMs,
      size: rec.size,
      chunks: chunks.map((c) => c.chunkHash),
      ...(rec.damaged ? { damaged: rec.damaged } : {}),
      ...(rec.curated ? { curated: true as const } : {}),
      ...(rec.leftOut?.length ? { leftOut: rec.leftOut } : {}),
    };
    this.dirty = true;
    return { added, removed };
  }

  /** Update only the stat of a file whose chunks did not change. */
  touchFile(source: string, rec: { mtimeMs: number; size: number }): void {
    const f = this.meta.files[source];
    if (f && (f.mtimeMs !== rec.mtimeMs || f.size !== rec.size)) {
      f.mtimeMs = rec.mtimeMs;
      f.size = rec.size;
      this.dirty = true;
    }
  }

  /**
   * Record a file that is not indexed (not text): whatever it held before goes, and its
   * stat is kept so an unchanged file is neither read again nor taken for new. Returns the
   * chunks removed.
   */
  skipFile(source: string, rec: { mtimeMs: number; size: number; curated?: boolean }, reason: "binary"): number {
    const removed = this.removeFile(source);
    this.meta.files[source] = { mtimeMs: rec.mtimeMs, size: rec.size, chunks: [], skipped: reason, ...(rec.curated ? { curated: true as const } : {}) };
    this.dirty = true;
    return removed;
  }

  removeFile(source: string): number {
    const f = this.meta.files[source];
    if (!f) return 0;
    let n = 0;
    // One remove() per id: removeMultiple() returns before it is done (see the Orama traps).
    for (const id of f.chunks) if (this.removeDoc(id)) n++;
    delete this.meta.files[source];
    this.dirty = true;
    return n;
  }

  /**
   * Take out every chunk whose source `allows` refuses: the files the file list names, and any
   * document naming such a source though no file lists it (a crafted file). Each distinct source
   * is judged once. Returns the sources taken out and the chunks they held.
   */
  dropSources(allows: (source: string) => boolean): { sources: string[]; chunks: number } {
    const verdict = new Map<string, boolean>();
    const ok = (s: string) => {
      let v = verdict.get(s);
      if (v === undefined) verdict.set(s, (v = allows(s)));
      return v;
    };
    const sources = new Set<string>();
    let chunks = 0;
    for (const s of this.sources()) {
      if (ok(s)) continue;
      sources.add(s);
      chunks += this.removeFile(s);
    }
    // Documents naming a refused source that no file record lists: found by the source field's
    // values (a few hundred files), not by a walk of every chunk (milliseconds at 20k).
    const docs = this.docs();
    const strays: string[] = [];
    for (const [value, ids] of this.engine.sources()) {
      if (typeof value === "string" && ok(value)) continue;
      sources.add(String(value));
      for (const id of ids) {
        const d = docs[id];
        if (d) strays.push(d.id);
      }
    }
    for (const id of strays) if (this.removeDoc(id)) chunks++;
    if (strays.length) this.dirty = true;
    return { sources: [...sources], chunks };
  }

  /** Whether a source is Claude Code's curated memory rather than a note. */
  isCurated(source: string): boolean {
    return this.meta.files[source]?.curated === true;
  }

  sources(): string[] {
    return Object.keys(this.meta.files);
  }

  private insertChunk(c: StoredChunk, vec: Float32Array | undefined): void {
    this.revision++;
    const doc: Doc = {
      id: c.chunkHash,
      source: c.source,
      heading: c.heading,
      text: c.content,
      headingLevel: c.headingLevel,
      startLine: c.startLine,
      endLine: c.endLine,
      contentHash: c.contentHash,
    };
    if (vec && this.meta.dim && vec.length === this.meta.dim) {
      const internal = this.engine.add(doc, vec);
      this.byContent?.set(c.contentHash, internal);
      this.missing?.delete(c.chunkHash);
    } else {
      this.engine.add(doc);
      this.missing?.add(c.chunkHash);
    }
  }

  /** Full-text (BM25) candidates for index tokens (as tokenizer.ts makes them), each matched as a prefix. */
  searchText(terms: string[], limit: number, sourcePrefix?: string): Hit[] {
    const where = this.whereSource(sourcePrefix);
    if (where === null || terms.length === 0) return [];
    return this.engine.searchText(terms, limit, where).map((h) => ({ chunk: toChunk(this.getDoc(h.id) ?? h.document), bm25: h.score, length: this.engine.fieldLength(this.internalId(h.id)!) }));
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

  private vectorsIgnored = false;
  /** The vectors come from another embedding model: never compare them with this model's queries. */
  ignoreVectors(): void {
    this.vectorsIgnored = true;
  }

  /**
   * Filter by path prefix on the enum field: Orama filters before scoring, so a narrow prefix
   * is also a faster search. undefined = no filter, null = no source matches.
   */
  private whereSource(prefix?: string): SourceFilter | undefined | null {
    if (!prefix) return undefined;
    const matching = this.sources().filter((s) => s === prefix || s.startsWith(prefix));
    if (matching.length === 0) return null;
    return { source: { in: matching } };
  }

  /** Opened without its vectors (Store.open's `keywordsOnly`): saving it would drop them all. */
  private keywordsOnly = false;

  save(): void {
    if (this.keywordsOnly) throw new Error("an index opened for keywords only holds no vectors and is never saved");
    this.meta.updatedAt = new Date().toISOString();
    clearIndexPath(this.path);
    // Leftovers of writers killed mid-save would otherwise pile up, each the size of the index.
    sweepIndexTemps(dirname(this.path));
    const moved = writeIndex(this.path, this.meta, this.engine, this.texts !== undefined);
    this.dirty = false;
    if (moved) this.moveTexts(moved);
  }

  /**
   * Point every loaded document at its text in the file just saved, and close the file they read
   * before: replaced by the rename, it was unlinked, but its blocks stayed allocated (the size of
   * an index) while a descriptor held it.
   */
  private moveTexts({ file, at, vectorsAt }: MovedTexts): void {
    const docs = this.docs();
    for (let id = 1; id < at.length; id++) {
      const d = docs[id];
      if (d instanceof StoredDoc) d.moveTo(file, at[id]!);
    }
    // A cold block's rows were written in row order: they are the new file's block now.
    if (vectorsAt !== undefined) this.engine.vectors?.repoint(file, vectorsAt);
    this.texts?.close();
    this.texts = file;
  }

  private docs(): Record<number, Doc> {
    return this.engine.docs;
  }
  private getDoc(id: string): Doc | undefined {
    const internal = this.internalId(id);
    return internal === undefined ? undefined : this.docs()[internal];
  }
  private internalId(id: string): number | undefined {
    return this.engine.internalId(id);
  }
}

/** An empty store standing in for an unusable index, with the vectors that could be saved from it. */
function unusable(indexDir: string, model: string, why: string, carried?: Map<string, Float32Array>, sources?: string[]): OpenResult {
  const first = carried?.values().next().value;
  const store = Store.empty(indexDir, model, first ? first.length : null);
  if (carried) store.carried = carried;
  return { store, rebuilt: why, sources };
}

/** The markdown files an index lists, if its file list can be read at all (best effort). */
function listedSources(file: IndexFile): string[] | undefined {
  try {
    const files = readLayout(file).files;
    return files && typeof files === "object" ? Object.keys(files) : undefined;
  } catch {
    return undefined;
  }
}


/** Vectors of removed chunks kept as an embedding cache while a store is open (see Store.retired): 6 MB at 768-d. */
const RETIRED_MAX = 2_000;

