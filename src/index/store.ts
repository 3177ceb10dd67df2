import { closeSync } from "node:fs";
import { dirname, join } from "node:path";
import { IndexDamagedError, MemsearchError, NotFoundError, oneLine } from "../core/errors.ts";
import { clearIndexPath, INDEX_FILE, otherVersion, peekIndex, readLayout, readManifest, SCHEMA_VERSION, sizeProblem, sweepIndexTemps, unreadable, writeManifest, type IndexFile, type FileRecord, type Manifest, type StoreMeta } from "./format.ts";
import { carriedVectors } from "./index-file.ts";
import { StoredDoc, TextFile, toChunk, type Doc } from "./docs.ts";
import { readIndex, UnreadableIndex, writeIndex, type MovedTexts } from "./load.ts";
import { indexStamp, openBase, readSegmentFor, segmentsOf } from "./disk.ts";
import { encodeSegment, mergeDue, newBaseId, removeSegments, strayingSegments, writeSegmentFile, type AddOp, type Op, type Segment } from "./segments.ts";
import { Engine } from "./engine/engine.ts";
import { utcOffsetNow } from "../core/since.ts";
import { createTokenizer } from "./tokenizer.ts";
import { StoreReads } from "./store-reads.ts";
import type { StoredChunk } from "./types.ts";

export { INDEX_FILE, SCHEMA_VERSION, type FileRecord, type StoreMeta } from "./format.ts";
export type { CosineBackground, Hit, TextStats } from "./store-reads.ts";

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
  /**
   * Segments after the base that could not be replayed (damaged, missing, torn), as the start of a
   * sentence: the store holds the base and every whole segment, made consistent, and the files the
   * lost ones touched are to be read again from the markdown (heal.ts), then a new base written.
   */
  segmentsLost?: string;
}

/**
 * How to open (Store.open). `lazyVectors`: the vector block is not loaded, a row is read from the
 * file when it is asked for: "write" for a writer (an index run of a few files, `remember`,
 * `forget`), which never reads the block (only a new base, a merge, reads it all); "search" for a
 * command's search, which checks the block's CRC-32 as it streams by and scores every row from the
 * file (a scan reads what it scores, into no memory of its own).
 */
export interface OpenOptions {
  anyModel?: boolean;
  lowPeak?: boolean;
  keywordsOnly?: boolean;
  lazyVectors?: "write" | "search";
  /**
   * With lazyVectors "search": the block's CRC-32 is checked by the first read of it, in the scan
   * that scores every row when that comes first, instead of at load; a read that finds it damaged
   * throws VectorsDamagedError, and nothing it read is ranked (the caller opens again without it,
   * which finds the damage at load and heals it: watch/engine.ts LocalEngine.search).
   */
  deferVectorCheck?: boolean;
}

/** A new engine over our tokenizer. */
function newEngine(dim: number | null): Engine<Doc> {
  return Engine.create<Doc>(dim, createTokenizer());
}

/**
 * One project's index: the engine (engine/engine.ts: BM25 over the chunk text, cosine over
 * embeddings) plus the per-file bookkeeping, persisted as a base written whole and atomically
 * (layout in format.ts) and the segments after it (segments.ts), each the journal of the store's
 * own changes since the save before. The engine's state goes in Bun's structured-clone format,
 * faster to read than JSON, and the vectors once, as one Float32 block: Orama's persistence plugin
 * writes larger files that load slower and come back with Orama's default tokenizer, not ours
 * (docs/BENCHMARKS.md, "Orama's persistence plugin, re-measured"). If a later Bun cannot read the
 * clone format, the index is rebuilt from the markdown and the vectors are kept as an embedding cache.
 */
export class Store extends StoreReads {
  readonly path: string;
  private dirty = false;
  /** The index file this store's loaded documents read their texts from (TextFile), if any. */
  private texts: TextFile | undefined;

  private constructor(path: string, meta: StoreMeta, engine: Engine<Doc>) {
    super(meta, engine);
    this.path = path;
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
  static open(indexDir: string, model: string, opts: OpenOptions = {}): OpenResult {
    const stamp = indexStamp(indexDir);
    const first = Store.openOnce(indexDir, model, opts);
    // Segments a merge took in and removed while they were read: not lost, read the new base instead.
    if (!first.segmentsLost || indexStamp(indexDir) === stamp) return first;
    first.store.texts?.close();
    return Store.openOnce(indexDir, model, opts);
  }

  private static openOnce(indexDir: string, model: string, opts: OpenOptions): OpenResult {
    const path = join(indexDir, INDEX_FILE);
    let file: IndexFile;
    let manifest: ReturnType<typeof readManifest>;
    try {
      ({ file, manifest } = openBase(indexDir));
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
            carried = carriedVectors(file);
          } catch {}
        }
        return rebuild(otherVersion(meta.schemaVersion), carried);
      }
      const problem = sizeProblem(file);
      if (problem) return rebuild(unreadable(problem));
      // Windows may refuse to rename a new index over a file a process holds open: texts are read
      // into memory there, as before.
      texts = process.platform === "win32" ? undefined : new TextFile(file.fd);
      const decoded = readIndex(file, texts, opts.lowPeak === true, opts.keywordsOnly === true, opts.lazyVectors, opts.deferVectorCheck === true);
      const store = new Store(path, decoded.meta, decoded.engine);
      store.texts = texts;
      kept = texts !== undefined;
      if (opts.keywordsOnly) store.keywordsOnly = true;
      if (opts.keywordsOnly || meta.model !== model) store.ignoreVectors();
      const lost = store.replay(indexDir, file, manifest);
      const out: OpenResult = meta.model === model ? { store } : { store, otherModel: meta.model };
      return lost ? { ...out, segmentsLost: lost } : out;
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
  get isDirty(): boolean {
    return this.dirty;
  }

  /**
   * Moves on with every chunk stored or removed: a reader that awaited something (the query's
   * embedding) between two reads knows whether the first still holds.
   */
  revision = 0;

  /** The base and segments on disk this store holds (loaded, or last saved); none for a store not yet saved. */
  private persisted: { baseId: string; manifest: Manifest; baseBytes: number; baseChunks: number } | undefined;
  /** The store's operations since `persisted`, in order: the next segment (segments.ts). */
  private journal: Op[] = [];
  private journalVectors: Float32Array[] = [];
  /** A change a segment cannot hold (another dimension), or lost segments: the next save writes a new base. */
  private needsBase = false;
  private record(op: Op): void {
    if (this.persisted) this.journal.push(op);
  }

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
    const removed = this.engine.remove(id);
    if (removed) this.record(["r", id]);
    return removed;
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
    this.needsBase = true;
    this.dirty = true;
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
    this.recordFile(source);
    this.dirty = true;
    return { added, removed };
  }

  /** Update only the stat of a file whose chunks did not change. */
  touchFile(source: string, rec: { mtimeMs: number; size: number }): void {
    const f = this.meta.files[source];
    if (f && (f.mtimeMs !== rec.mtimeMs || f.size !== rec.size)) {
      f.mtimeMs = rec.mtimeMs;
      f.size = rec.size;
      this.recordFile(source);
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
    this.recordFile(source);
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
    this.record(["x", source]);
    this.dirty = true;
    return n;
  }

  /** A file's record as it is now, into the journal (a copy: the record may change in place later). */
  private recordFile(source: string): void {
    if (this.persisted) this.journal.push(["f", source, structuredClone(this.meta.files[source]!)]);
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
    const withVector = vec !== undefined && this.meta.dim !== null && vec.length === this.meta.dim;
    if (this.persisted) {
      const at = withVector ? this.journalVectors.push(vec) - 1 : -1;
      this.journal.push(["a", doc.id, doc.source, doc.heading, doc.text, doc.headingLevel, doc.startLine, doc.endLine, doc.contentHash, at]);
    }
    if (withVector) {
      const internal = this.engine.add(doc, vec);
      this.byContent?.set(c.contentHash, internal);
      this.missing?.delete(c.chunkHash);
    } else {
      this.engine.add(doc);
      this.missing?.add(c.chunkHash);
    }
  }

  /** Opened without its vectors (Store.open's `keywordsOnly`): saving it would drop them all. */
  private keywordsOnly = false;

  /**
   * Persist what changed: as one more segment after the base (the operations since the last save:
   * segments.ts), or, with `merge`, when nothing is on disk yet, after a change a segment cannot hold
   * or lost segments, or when another writer changed the index since this store read it, as a new
   * base (every chunk, written whole, atomically) that takes the segments in.
   */
  save(opts: { merge?: boolean } = {}): void {
    if (this.keywordsOnly) throw new Error("an index opened for keywords only holds no vectors and is never saved");
    this.meta.updatedAt = new Date().toISOString();
    const dir = dirname(this.path);
    if (!opts.merge && !this.needsBase && this.persisted && this.unchangedOnDisk()) return this.append(dir, this.persisted);
    clearIndexPath(this.path);
    // Leftovers of writers killed mid-save would otherwise pile up, each the size of the index.
    sweepIndexTemps(dir);
    const id = newBaseId();
    const moved = writeIndex(this.path, id, this.meta, this.engine, this.texts !== undefined);
    const manifest: Manifest = { v: 1, baseId: id, segments: [], counts: this.counts(), updatedAt: this.meta.updatedAt, utcOffsetMin: utcOffsetNow() };
    // A merge killed here leaves the new base and the old manifest, which names another base: readers take the base alone.
    writeManifest(dir, manifest);
    removeSegments(dir, strayingSegments(dir, manifest).stale);
    this.persisted = { baseId: id, manifest, baseBytes: peekIndex(dir)?.bytes ?? 0, baseChunks: this.size };
    this.journal = [];
    this.journalVectors = [];
    this.needsBase = false;
    this.dirty = false;
    if (moved) this.moveTexts(moved);
  }

  /**
   * One segment of the journal after the persisted ones: the manifest naming it first (its size and
   * CRC-32 are known before it is written), then the segment. A writer that dies or meets a full disk
   * between the two leaves a manifest naming a segment that is missing or cut: the next reader finds
   * it lost and heals (heal.ts), never a change silently missing from an index that looks whole.
   */
  private append(dir: string, p: NonNullable<Store["persisted"]>): void {
    if (this.journal.length) {
      const seq = (p.manifest.segments.at(-1)?.seq ?? 0) + 1;
      const { entry, parts } = encodeSegment(p.baseId, seq, this.journal, this.journalVectors, this.meta.dim ?? 0);
      const manifest: Manifest = { ...p.manifest, segments: [...p.manifest.segments, entry], counts: this.counts(), updatedAt: this.meta.updatedAt, utcOffsetMin: utcOffsetNow() };
      writeManifest(dir, manifest);
      writeSegmentFile(dir, entry, parts);
      p.manifest = manifest;
      this.journal = [];
      this.journalVectors = [];
    }
    this.dirty = false;
  }

  /** The index on disk is still the one this store holds: no other writer saved since (the caller holds the index lock). */
  private unchangedOnDisk(): boolean {
    const m = readManifest(dirname(this.path));
    const p = this.persisted!;
    return !!m && !("damaged" in m) && m.baseId === p.baseId && m.segments.length === p.manifest.segments.length && m.segments.at(-1)?.crc === p.manifest.segments.at(-1)?.crc && peekIndex(dirname(this.path))?.id === p.baseId;
  }

  private counts(): Manifest["counts"] {
    return { chunks: this.size, files: Object.values(this.meta.files).filter((f) => !f.skipped).length, vectors: this.engine.vectors?.count ?? 0 };
  }

  /** Whether a merge is due ("due": the watch process and `memsearch index`; "hard": past the bound any other writer merges at). */
  mergeDue(kind: "due" | "hard"): boolean {
    const p = this.persisted;
    return this.needsBase || (p !== undefined && mergeDue(p.manifest, { bytes: p.baseBytes, chunks: p.baseChunks }, kind === "hard"));
  }

  /** The local zone's offset its last writer recorded (manifest.utcOffsetMin); undefined for a store not saved yet or an older manifest. */
  get utcOffsetMin(): number | undefined {
    return this.persisted?.manifest.utcOffsetMin;
  }

  /** Segments on disk after the base (0 for a store not saved yet). */
  get segmentCount(): number {
    return this.persisted?.manifest.segments.length ?? 0;
  }

  /**
   * Replay the segments after the base this store was loaded from (Store.open), in order; returns
   * why some could not be, when so (the store is then made consistent: see repair).
   */
  replay(indexDir: string, file: IndexFile, manifest: ReturnType<typeof readManifest>): string | undefined {
    const { entries, lost, current } = segmentsOf(indexDir, file.head.id, manifest);
    for (const entry of entries) {
      try {
        this.apply(readSegmentFor(indexDir, entry, file.head.id, this.meta.dim));
      } catch (e) {
        if (!(e instanceof IndexDamagedError)) throw e;
        lost.push(e.reason);
      }
    }
    if (lost.length) this.repair();
    this.persisted = { baseId: file.head.id, manifest: current, baseBytes: file.size, baseChunks: file.head.count };
    return lost.length ? `the index was partly unreadable (${lost.join("; ")})` : undefined;
  }

  /** One segment's operations, as the writer made them (the vectors ignored by a keywords-only store). */
  private apply(seg: Segment): void {
    const dim = seg.dim;
    for (const op of seg.ops) {
      if (op[0] === "a") {
        const [, chunkHash, source, heading, content, headingLevel, startLine, endLine, contentHash, at] = op as AddOp;
        // Only after a lost segment can an id be here already: the later segment is the newer truth.
        if (this.getDoc(chunkHash)) this.removeDoc(chunkHash);
        const vec = at >= 0 && !this.keywordsOnly ? seg.vectors.subarray(at * dim, (at + 1) * dim) : undefined;
        this.insertChunk({ chunkHash, source, heading, content, headingLevel, startLine, endLine, contentHash }, vec);
      } else if (op[0] === "r") this.removeDoc(op[1]);
      else if (op[0] === "f") this.meta.files[op[1]] = op[2];
      else delete this.meta.files[op[1]];
    }
  }

  /**
   * After lost segments: a file whose record names a chunk the index does not hold is taken out (its
   * markdown is read again), and so is a chunk no file's record names under its own source. What is
   * left is what base and whole segments agree on; the rest comes back from the markdown.
   */
  private repair(): void {
    for (const [source, rec] of Object.entries(this.meta.files)) if (rec.chunks.some((id) => !this.getDoc(id))) this.removeFile(source);
    const listed = new Map<string, string>();
    for (const [source, rec] of Object.entries(this.meta.files)) for (const id of rec.chunks) listed.set(id, source);
    const docs = this.docs();
    const ghosts: string[] = [];
    for (let id = 1, last = this.engine.lastInternalId(); id <= last; id++) {
      const d = docs[id];
      if (d && listed.get(d.id) !== d.source) ghosts.push(d.id);
    }
    for (const id of ghosts) this.removeDoc(id);
    this.needsBase = true;
    this.dirty = true;
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

