import { create, count, insert, remove, search, type AnyOrama, type Results } from "@orama/orama";
import { isUtf8 } from "node:buffer";
import { closeSync } from "node:fs";
import { dirname, join } from "node:path";
import { IndexDamagedError, MemsearchError, NotFoundError, oneLine } from "../core/errors.ts";
import {
  clearIndexPath,
  INDEX_FILE,
  openIndexFile,
  otherVersion,
  readExactly,
  readLayout,
  readStateSections,
  readVectorPart,
  streamVectorBlock,
  blockStart,
  vectorsByContent,
  SCHEMA_VERSION,
  sizeProblem,
  sweepIndexTemps,
  unreadable,
  writeIndexFile,
  type IndexFile,
  type StateSection,
  type FileRecord,
  type StoreMeta,
} from "./format.ts";

export { INDEX_FILE, SCHEMA_VERSION, type FileRecord, type StoreMeta } from "./format.ts";
import { createTokenizer } from "./tokenizer.ts";
import { compactIndex, withResultLimit } from "./compact-index.ts";
import { bindOrama, enumValues, indexShape, loadState, replaceVectorNode, saveState, whereIds, type BoundOrama, type SavedState } from "./orama-internals.ts";
import { VectorBlock } from "./vector-block.ts";
import { KERNEL_MIN_FLOATS, rowsFor } from "./vector-kernel.ts";
import type { StoredChunk } from "./types.ts";

/**
 * The document as Orama holds it. Only source, text and embedding are indexed; `text` is the
 * chunk's content (its heading line included, so headings are searchable without a field of
 * their own), stored once.
 */
interface Doc {
  id: string;
  source: string;
  heading: string;
  text: string;
  embedding?: number[] | null;
  headingLevel: number;
  startLine: number;
  endLine: number;
  contentHash: string;
}

/**
 * The index file a loaded store's chunk texts stay in, read by offset when a text is asked for
 * (a hit returned, a chunk removed, the next save), through the descriptor the load opened and
 * checked: it still reads the file that was loaded after another writer replaces the file by a
 * rename. Held in memory, the texts were the largest part of a loaded index after the vectors
 * (figures in docs/BENCHMARKS.md); the file's pages are the system's cache, not the process's
 * memory. The store's own save moves its documents to the file it wrote and closes this one, whose
 * blocks an unlinked file would otherwise hold for the life of the process; a store dropped closes
 * it when collected.
 */
class TextFile {
  private open = true;
  constructor(readonly fd: number) {
    closeTextFile.register(this, fd, this);
  }
  /** `len` bytes at `at` into `into` from `offset`; the bytes were checked at load (CRC-32 of the section, UTF-8). */
  readInto(at: number, len: number, into: Uint8Array, offset = 0): void {
    // A closed descriptor's number may be another file's by now: never read through it.
    if (!this.open) throw new IndexDamagedError("a chunk's text was asked of an index file already closed");
    readExactly(this.fd, into, at, offset, len);
  }
  read(at: number, len: number): string {
    const bytes = Buffer.allocUnsafe(len);
    this.readInto(at, len, bytes);
    return fromUtf8.decode(bytes);
  }
  close(): void {
    if (!this.open) return;
    this.open = false;
    closeTextFile.unregister(this);
    try {
      closeSync(this.fd);
    } catch {}
  }
}

const closeTextFile = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {}
});

/**
 * A document of a loaded index: its text is read from the index file when asked for (TextFile).
 * `text` is a getter of the class, so Orama's copies of a hit's document (spread) do not have it:
 * the store reads hits' documents from its own documents store.
 */
class StoredDoc implements Doc {
  declare embedding?: null;
  constructor(
    readonly id: string,
    readonly source: string,
    readonly heading: string,
    readonly headingLevel: number,
    readonly startLine: number,
    readonly endLine: number,
    readonly contentHash: string,
    private file: TextFile,
    private textAt: number,
    /** The text's length in UTF-8 bytes. */
    readonly textBytes: number,
  ) {}
  get text(): string {
    return this.file.read(this.textAt, this.textBytes);
  }
  textInto(into: Uint8Array, offset: number): void {
    this.file.readInto(this.textAt, this.textBytes, into, offset);
  }
  /** The same bytes, found at `at` in another file (the one a save wrote). */
  moveTo(file: TextFile, at: number): void {
    this.file = file;
    this.textAt = at;
  }
}

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

function schemaFor(dim: number | null) {
  return dim ? ({ source: "enum", text: "string", embedding: `vector[${dim}]` } as const) : ({ source: "enum", text: "string" } as const);
}

function createDb(dim: number | null) {
  return create({
    // Orama types a schema from a literal; ours is chosen at run time (with or without vectors).
    schema: schemaFor(dim) as never,
    sort: { enabled: false },
    components: { tokenizer: createTokenizer(), index: compactIndex() },
  });
}

/** A new Orama database, its internals checked once and kept (orama-internals.ts). */
function newDb(dim: number | null): Orama {
  return bindOrama<Doc>(createDb(dim));
}

type Orama = BoundOrama<Doc>;

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
  /** The Orama database and typed references to the internals Store reads. */
  private o: Orama;
  meta: StoreMeta;
  readonly path: string;
  private dirty = false;
  /** The index file this store's loaded documents read their texts from (TextFile), if any. */
  private texts: TextFile | undefined;

  private constructor(path: string, meta: StoreMeta, o: Orama) {
    this.path = path;
    this.meta = meta;
    this.o = o;
  }
  private get db(): AnyOrama {
    return this.o.db;
  }

  static empty(indexDir: string, model: string, dim: number | null = null): Store {
    const meta: StoreMeta = { schemaVersion: SCHEMA_VERSION, model, dim, updatedAt: new Date().toISOString(), files: {} };
    const s = new Store(join(indexDir, INDEX_FILE), meta, newDb(dim));
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
      const store = new Store(path, decoded.meta, decoded.orama);
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
    return count(this.db);
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
    const block = this.o.vectors;
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
      const vi = this.o.vectors;
      const docs = this.docs();
      this.missing = new Set();
      // By internal id, in the order Object.entries gave: the entries, an array and a key string
      // per chunk, were garbage the watch process made on every start.
      const last = lastInternalId(this.o);
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
    const block = this.o.vectors;
    if (internal !== undefined && block?.has(internal)) {
      const hash = this.docs()[internal]?.contentHash;
      if (hash !== undefined) {
        if (this.byContent?.get(hash) === internal) this.byContent.delete(hash);
        if (this.retired.size >= RETIRED_MAX) this.retired.clear();
        this.retired.set(hash, block.get(internal)!.slice());
      }
    }
    return remove(this.db, id) === true;
  }

  /**
   * Switch to vectors of `dim`. Orama fixes a vector field's size at creation, so the
   * database is recreated and every document re-inserted (their vectors come from `vectors`).
   */
  setDimension(dim: number, vectors: Map<string, Float32Array>): void {
    if (this.meta.dim === dim) return;
    const old = Object.values(this.docs()).map(toChunk);
    this.o = newDb(dim);
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
        if (v && this.meta.dim && !this.o.vectors?.has(this.internalId(c.chunkHash)!)) {
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
    for (const [value, ids] of enumValues(this.db)) {
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
    // Orama types a document from the literal schema that createDb could not give it.
    insert(this.db, doc as never);
    if (vec && this.meta.dim && vec.length === this.meta.dim) {
      // Straight into the vector block: insert() would want a number[] (Array.isArray check).
      // The doc's field becomes null (not undefined) so remove() still clears the vector.
      doc.embedding = null;
      const internal = this.internalId(c.chunkHash)!;
      this.o.vectors!.add(internal, vec);
      this.byContent?.set(c.contentHash, internal);
      this.missing?.delete(c.chunkHash);
    } else {
      this.missing?.add(c.chunkHash);
    }
  }

  /** Full-text (BM25) candidates for index tokens (as tokenizer.ts makes them), each matched as a prefix. */
  searchText(terms: string[], limit: number, sourcePrefix?: string): Hit[] {
    const where = this.whereSource(sourcePrefix);
    if (where === null || terms.length === 0) return [];
    const res = withResultLimit(this.db.data.index, limit, () =>
      search(this.db, {
        term: terms.join(" "),
        properties: ["text"],
        limit,
        ...(where ? { where } : {}),
      }),
    ) as Results<Doc>;
    const lengths = this.o.text.lengths;
    return res.hits.map((h) => ({ chunk: toChunk(this.getDoc(h.id) ?? h.document), bm25: h.score, length: lengths[this.internalId(h.id)!] }));
  }

  textStats(): TextStats {
    const { docsWithToken, avgLength } = this.o.text;
    // A plain object keyed by token: "constructor" finds Object's own, hence the type check (as Orama does).
    return { docs: this.size, avgLength: avgLength(), df: (t) => (typeof docsWithToken[t] === "number" ? docsWithToken[t] : 0) };
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
    const radix = this.o.textRadix;
    const df = (t: string) => {
      let total = 0;
      for (const ids of Object.values(radix.findPostings(t))) total += ids.length;
      return total;
    };
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
    const node = this.o.vectors;
    if (this.vectorsIgnored || !node || !this.meta.dim || vector.length !== this.meta.dim) return [];
    const where = this.whereSource(sourcePrefix);
    if (where === null) return [];
    const docs = this.docs();
    const lengths = this.o.text.lengths;
    const only = where ? whereIds(this.db, where) : undefined;
    return node.nearest(vector, limit, similarity, only).flatMap(([id, cosine]) => {
      const d = docs[id];
      return d ? [{ chunk: toChunk(d), bm25: 0, cosine, length: lengths[id] }] : [];
    });
  }

  /**
   * The cosine of the query vector with each of these chunks that has a vector, whether or not a
   * vector search would have ranked it: a chunk the keywords found gets its real cosine.
   */
  cosines(chunkHashes: string[], vector: Float32Array): Map<string, number> {
    const out = new Map<string, number>();
    const node = this.o.vectors;
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
    const node = this.o.vectors;
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
    const node = this.o.vectors;
    if (this.vectorsIgnored || !node || !this.meta.dim || vector.length !== this.meta.dim) return new Float64Array(0);
    return node.cosinesToAll(vector);
  }

  get vectorCount(): number {
    if (this.vectorsIgnored) return 0;
    return this.o.vectors?.count ?? 0;
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
  private whereSource(prefix?: string): Record<string, unknown> | undefined | null {
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
    const moved = writeIndex(this.path, this.meta, this.o, this.texts !== undefined);
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
    if (vectorsAt !== undefined) this.o.vectors?.repoint(file, vectorsAt);
    this.texts?.close();
    this.texts = file;
  }

  private docs(): Record<number, Doc> {
    return this.o.docs;
  }
  private getDoc(id: string): Doc | undefined {
    const internal = this.internalId(id);
    return internal === undefined ? undefined : this.docs()[internal];
  }
  private internalId(id: string): number | undefined {
    return this.o.internalIds.get(id);
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

function toChunk(d: Doc): StoredChunk {
  return {
    chunkHash: d.id,
    content: d.text,
    source: d.source,
    heading: d.heading,
    headingLevel: d.headingLevel,
    startLine: d.startLine,
    endLine: d.endLine,
    contentHash: d.contentHash,
  };
}

/**
 * Write the index file: Orama's state and vectors as the plain parts format.ts lays out in bytes.
 * The state goes in sections, each serialized and dropped before the next is made: serializing
 * it whole cost 80–150 MB of peak memory at 20k chunks.
 */
function writeIndex(path: string, meta: StoreMeta, o: Orama, reopen: boolean): MovedTexts | undefined {
  const { db, docs } = o;
  const { ids: vectorIds, magnitudes } = o.vectors?.columns() ?? { ids: [], magnitudes: [] };
  const vectorHashes = vectorIds.map((id) => docs[id]?.contentHash ?? "");
  const docCount = count(db);
  // Where each loaded document's text goes in the new file, by internal id.
  const at = reopen ? new Float64Array(lastInternalId(o) + 1) : undefined;
  let vectorsAt: number | undefined;
  const fd = writeIndexFile(
    path,
    {
      meta,
      count: docCount,
      layout: { files: meta.files, vectorIds, magnitudes, vectorHashes },
      sections: stateSections(o, at),
      sectionsAtMost: 2 + 2 * Math.ceil(docCount / SECTION_DOCS),
      vectors: o.vectors?.bytes() ?? [],
    },
    { reopen, vectorsAt: (v) => (vectorsAt = v) },
  );
  return fd === undefined || !at ? undefined : { file: new TextFile(fd), at, vectorsAt };
}

/** The file a save wrote, where in it each loaded document's text is (by internal id), and its vector block. */
interface MovedTexts {
  file: TextFile;
  at: Float64Array;
  vectorsAt: number | undefined;
}

/**
 * Room left in a loaded vector block for new vectors, so the turns a warm process indexes are
 * added without copying the block (a copy held both blocks until the next collection). Unwritten
 * rows cost address space, not memory; when the room is used up the block grows by half.
 */
function spareRows(vectors: number): number {
  return Math.max(1024, Math.ceil(vectors / 4));
}

/** Vectors of removed chunks kept as an embedding cache while a store is open (see Store.retired): 6 MB at 768-d. */
const RETIRED_MAX = 2_000;

/** Entries per section of the per-document parts (frequencies, documents). */
const SECTION_DOCS = 2_500;

type Section = StateSection;

/**
 * Orama's save() state (split by saveState) in sections of bounded size: the serializer's own
 * bookkeeping grows with what it is given, so per-document parts are cut into slices of a few
 * thousand. The index section holds the index with an empty frequency map per property; each
 * property's map goes in "freq" slices, an empty one in none.
 */
function* stateSections(o: Orama, textAt?: Float64Array): Generator<Section> {
  const { ids, index, frequencies, docs, docCount, others } = saveState(o);
  yield { kind: "ids", value: ids };
  yield { kind: "index", value: { index, others, docCount } };
  for (const [prop, perDoc] of Object.entries(frequencies)) for (const slice of slices(perDoc)) yield { kind: "freq", value: { prop, slice } };
  const writer = new DocWriter();
  for (const ids of docSlices(docs as Record<number, Doc>, lastInternalId(o))) {
    const bytes = encodeDocs(docs as Record<number, Doc>, ids, writer, textAt);
    // Offsets in the section so far, made offsets in the file once it is known where it goes.
    const placed = textAt && ((sectionAt: number) => ids.forEach((id) => (textAt[id]! += sectionAt)));
    yield { kind: "docs", bytes, ...(placed ? { placed } : {}) };
  }
}

/** The highest internal id a document was given (ids are not reused by another document). */
function lastInternalId(o: Orama): number {
  let last = 0;
  o.internalIds.forEach((internalId) => (last = Math.max(last, internalId)));
  return last;
}

/**
 * The documents' internal ids in ascending order (the order a for…in over the documents gave),
 * SECTION_DOCS at a time, in one reused array (valid until the next slice): a key string and a
 * slice object per document were garbage of every save.
 */
function* docSlices(docs: Record<number, Doc>, last: number): Generator<Uint32Array> {
  const ids = new Uint32Array(SECTION_DOCS);
  let n = 0;
  for (let id = 1; id <= last; id++) {
    if (!docs[id]) continue;
    ids[n++] = id;
    if (n === SECTION_DOCS) {
      yield ids;
      n = 0;
    }
  }
  if (n > 0) yield ids.subarray(0, n);
}

/**
 * The documents of a section in our own binary form, UTF-8 throughout. As objects, the structured
 * clone wrote every text in UTF-16 once it held one character past Latin-1 (the documents were
 * 21 MB of a 23 MB state at 20k chunks), and each section's serialized copy stayed as garbage
 * until the save ended (a save's peak rose by the whole state). Here each section is encoded into
 * one buffer, reused for the next once it is written:
 *
 *   u32 count | count × (u32 internal id, u8 heading level, u8 flags, u32 start line, u32 end line,
 *   u32 source index) | strings, each u32 byte length + UTF-8: the distinct sources (u32 count
 *   first), then per document its id, content hash, heading and text
 *
 * flags bit 0: the document's embedding field is null (its vector is in the block; see insertChunk).
 */
const FIXED_PER_DOC = 18;
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

class DocWriter {
  // Written through Buffer.write and read into by offset: a view of the rest of the buffer per
  // string written was a garbage object per string, the bulk of what encoding the documents left.
  private buf = Buffer.alloc(1 << 16);
  private view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  at = 0;

  /** Start a section: `bytes` at most are needed. */
  reset(bytes: number): void {
    if (this.buf.byteLength < bytes) {
      this.buf = Buffer.alloc(Math.ceil(bytes * 1.25));
      this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    }
    this.at = 0;
  }
  u8(x: number): void {
    this.view.setUint8(this.at++, x);
  }
  u32(x: number): void {
    this.view.setUint32(this.at, x, true);
    this.at += 4;
  }
  str(x: string): void {
    // The room reserved holds the longest UTF-8 form, so nothing is cut; lone surrogates become
    // U+FFFD, as TextEncoder makes them.
    const written = this.buf.write(x, this.at + 4, "utf8");
    this.u32(written);
    this.at += written;
  }
  /** A loaded document's text, copied from the index file it was loaded from, never decoded; returns where in the section it went. */
  storedText(d: StoredDoc): number {
    this.u32(d.textBytes);
    const at = this.at;
    d.textInto(this.buf, this.at);
    this.at += d.textBytes;
    return at;
  }
  /** The section's bytes: a view, valid until the next reset. */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.at);
  }
}

/** Upper bound of a string's UTF-8 length with its prefix (a UTF-16 code unit is at most 3 bytes). */
const strRoom = (x: string) => 4 + 3 * x.length;

function encodeDocs(docs: Record<number, Doc>, ids: Uint32Array, w: DocWriter, textAt?: Float64Array): Uint8Array {
  const sourceIndex = new Map<string, number>();
  let room = 8 + ids.length * FIXED_PER_DOC;
  for (const id of ids) {
    const d = docs[id]!;
    if (!sourceIndex.has(d.source)) {
      sourceIndex.set(d.source, sourceIndex.size);
      room += strRoom(d.source);
    }
    room += strRoom(d.id) + strRoom(d.contentHash) + strRoom(d.heading) + (d instanceof StoredDoc ? 4 + d.textBytes : strRoom(d.text));
  }
  w.reset(room);
  w.u32(ids.length);
  for (const id of ids) {
    const d = docs[id]!;
    w.u32(id);
    w.u8(d.headingLevel);
    w.u8(d.embedding === null ? 1 : 0);
    w.u32(d.startLine);
    w.u32(d.endLine);
    w.u32(sourceIndex.get(d.source)!);
  }
  w.u32(sourceIndex.size);
  for (const source of sourceIndex.keys()) w.str(source);
  for (const id of ids) {
    const d = docs[id]!;
    w.str(d.id);
    w.str(d.contentHash);
    w.str(d.heading);
    if (d instanceof StoredDoc) {
      const at = w.storedText(d);
      if (textAt) textAt[id] = at;
    } else w.str(d.text);
  }
  return w.bytes();
}

/**
 * The documents of a section, added to `out` as Orama's documents store holds them, their texts left
 * in the file (`texts`, the section starting at byte `sectionAt`): each is checked to be UTF-8
 * (`utf8`), not decoded.
 * Without `texts`, the texts are decoded into the documents. Throws on bytes that do not hold together.
 */
function decodeDocs(bytes: Uint8Array, texts: TextFile | undefined, sectionAt: number, utf8: Utf8Check, out: Record<string, Doc>): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.byteLength) throw new Error("a documents section is cut short");
  };
  const u32 = () => (need(4), (at += 4), view.getUint32(at - 4, true));
  const str = () => {
    const len = u32();
    need(len);
    at += len;
    // Decoded by offset, not through a view per string (garbage a load made for every chunk).
    // Bytes that are not UTF-8 decode as U+FFFD: only then is the strict decoder asked, which throws.
    const s = buf.toString("utf8", at - len, at);
    return s.includes("\uFFFD") ? fromUtf8.decode(bytes.subarray(at - len, at)) : s;
  };
  /** Where a text is in the file, and its length, once its bytes are known to be UTF-8. */
  const text = (): [number, number] => {
    const len = u32();
    need(len);
    at += len;
    utf8.add(buf, at - len, len);
    return [sectionAt + at - len, len];
  };
  const n = u32();
  need(n * FIXED_PER_DOC);
  const fixed = at;
  at += n * FIXED_PER_DOC;
  const sources = Array.from({ length: u32() }, str);
  for (let i = 0; i < n; i++) {
    const f = fixed + i * FIXED_PER_DOC;
    const source = sources[view.getUint32(f + 14, true)];
    if (source === undefined) throw new Error("a document names a source its section does not hold");
    const id = str();
    const contentHash = str();
    const heading = str();
    const [headingLevel, startLine, endLine] = [view.getUint8(f + 4), view.getUint32(f + 6, true), view.getUint32(f + 10, true)];
    let doc: Doc;
    if (texts) {
      const [textAt, textBytes] = text();
      doc = new StoredDoc(id, source, heading, headingLevel, startLine, endLine, contentHash, texts, textAt, textBytes);
    } else doc = { id, source, heading, text: str(), headingLevel, startLine, endLine, contentHash };
    if (view.getUint8(f + 5) & 1) doc.embedding = null;
    out[view.getUint32(f, true)] = doc;
  }
  if (at !== bytes.byteLength) throw new Error("a documents section has bytes past its documents");
  utf8.flush();
}

/**
 * Checks that texts are UTF-8 a batch at a time: copied into one reused buffer, each followed by a
 * newline, and the buffer checked when full. A view of the section per text, to check it alone,
 * was the most numerous garbage of a load. Checked whole, the batch is UTF-8 exactly when every
 * text is: a newline can neither end a character begun before it nor continue one.
 */
class Utf8Check {
  private buf = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  add(from: Buffer, at: number, len: number): void {
    if (len + 1 > this.buf.byteLength) {
      if (!isUtf8(from.subarray(at, at + len))) throw new Error("a document's text is not UTF-8");
      return;
    }
    if (this.used + len + 1 > this.buf.byteLength) this.flush();
    from.copy(this.buf, this.used, at, at + len);
    this.buf[this.used + len] = 0x0a;
    this.used += len + 1;
  }
  flush(): void {
    if (this.used && !isUtf8(this.buf.subarray(0, this.used))) throw new Error("a document's text is not UTF-8");
    this.used = 0;
  }
}

function* slices(record: Record<string, unknown>): Generator<Record<string, unknown>> {
  let part: Record<string, unknown> = {};
  let n = 0;
  for (const key in record) {
    part[key] = record[key];
    if (++n === SECTION_DOCS) {
      yield part;
      part = {};
      n = 0;
    }
  }
  if (n > 0) yield part;
}

/** The reverse of stateSections: the sections of a file, read one at a time. */
function joinSections(file: IndexFile, texts: TextFile | undefined): SavedState {
  let ids: unknown;
  let head: Pick<SavedState, "index" | "others" | "docCount"> = { index: {}, others: {} as SavedState["others"], docCount: 0 };
  const frequencies: SavedState["frequencies"] = {};
  const docs: SavedState["docs"] = {};
  const utf8 = new Utf8Check();
  // Orama's own state as saveState split it, CRC-checked before decoding; loadState's shape check follows.
  readStateSections(file, (kind, v, at) => {
    if (kind === "ids") ids = v;
    else if (kind === "index") head = v as typeof head;
    else if (kind === "freq") Object.assign((frequencies[(v as { prop: string }).prop] ??= {}), (v as { slice: object }).slice);
    else decodeDocs(v as Uint8Array, texts, at, utf8, docs as Record<string, Doc>);
  });
  return { ids, ...head, frequencies, docs };
}

/** The Orama state could not be read; the vectors could, and are handed back as a cache. */
class UnreadableIndex extends IndexDamagedError {
  constructor(
    reason: string,
    readonly vectors: Map<string, Float32Array>,
  ) {
    super(reason);
  }
}

/**
 * Load an index file into Orama. The vector block comes back as one Float32Array that the
 * vectors are views of; the state sections are checked and decoded by format.ts, one at a time.
 */
function readIndex(file: IndexFile, texts: TextFile | undefined, lowPeak: boolean, keywordsOnly: boolean): { meta: StoreMeta; orama: Orama } {
  const { head } = file;
  const dim = head.meta.dim ?? 0;
  // Bound once it is loaded: load() replaces the index objects a binding would hold.
  const db = createDb(head.meta.dim);
  const shape = indexShape(db);
  // The state first, the vectors last: the state's load leaves garbage that, read after the
  // vectors, added to a peak already holding them (figures in docs/BENCHMARKS.md). Its damage is
  // told once the vectors are read, so they are still handed back as a cache.
  let broken: string | undefined;
  try {
    loadState(db, joinSections(file, texts));
    if (indexShape(db) !== shape) throw new Error("the search index does not have the shape of a new one");
    if (count(db) !== head.count) throw new Error("document count does not match the header");
  } catch (e) {
    broken = oneLine(e);
  }
  if (keywordsOnly) {
    if (broken !== undefined) throw new IndexDamagedError(broken);
    // The file list is in the layout, checked by its own CRC-32; the block after it is not read.
    return { meta: { ...head.meta, files: readLayout(file, true).files }, orama: bindOrama<Doc>(db) };
  }
  if (lowPeak) Bun.gc(true);
  if (lowPeak && texts && broken === undefined && dim && head.vectorCount * dim >= KERNEL_MIN_FLOATS) {
    const files = readColdVectors(file, texts, dim, db);
    if (files) return { meta: { ...head.meta, files }, orama: bindOrama<Doc>(db) };
  }
  // Read into the rows the vector scan reads (the SIMD kernel's memory for a block it scans), with room for new turns.
  const { layout, block } = readVectorPart(file, (dim, rows) => rowsFor(dim, rows + (dim ? spareRows(rows) : 0)));
  const cache = () => vectorsByContent(layout, block, dim);
  if (broken !== undefined) throw new UnreadableIndex(broken, cache());
  let orama: Orama;
  try {
    // The file's block becomes the vector index as it is: no object per vector.
    if (dim) replaceVectorNode(db, VectorBlock.fromRows(dim, block, layout.vectorIds, layout.magnitudes));
    orama = bindOrama<Doc>(db);
  } catch (e) {
    throw new UnreadableIndex(oneLine(e), cache());
  }
  return { meta: { ...head.meta, files: layout.files }, orama };
}

/**
 * The watch process's load (Store.open with lowPeak): the vector block streamed from the file a few
 * MiB at a time into a cold block (vector-block.ts), which keeps int8 codes of the rows and reads
 * their floats through `texts` when a search needs them, put in `db`. Returns the layout's file
 * list; undefined when the block fails its CRC-32 (nothing put in `db`): the caller then reads it
 * as before, which tells the damage the same way.
 */
function readColdVectors(file: IndexFile, texts: TextFile, dim: number, db: AnyOrama): StoreMeta["files"] | undefined {
  const layout = readLayout(file, true);
  const n = layout.vectorIds.length;
  if (n !== file.head.vectorCount) throw new IndexDamagedError("the vector count does not match the header");
  let block: VectorBlock;
  try {
    block = VectorBlock.cold(dim, layout.vectorIds, layout.magnitudes, n + spareRows(n), texts, blockStart(file));
  } catch (e) {
    throw new IndexDamagedError(oneLine(e));
  }
  if (!streamVectorBlock(file, (first, floats, count) => block.coldFill(first, floats, count))) return undefined;
  replaceVectorNode(db, block);
  return layout.files;
}
