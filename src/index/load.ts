/**
 * The loader: a store's engine and documents from an index file (readIndex), and the engine's
 * state in the sections the file is cut into (stateSections), each the other's reverse. The
 * bytes themselves are format.ts's and index-file.ts's; the documents' codec is docs.ts's.
 */
import { IndexDamagedError, oneLine } from "../core/errors.ts";
import { blockStart, checksumProblem, damagedParts, readLayout, tailOf, type IndexFile, type StoreMeta } from "./format.ts";
import { readCodesInto, readHashes, readRowsTable, readStateSections, readVectorPart, streamVectorBlock, vectorsByContent, writeIndexFile, type StateSection } from "./index-file.ts";
import { decodeDocs, DocWriter, encodeDocs, LazyDocs, TextFile, type Doc } from "./docs.ts";
import { Engine, type SavedState } from "./engine/engine.ts";
import { VectorBlock } from "./engine/vector-block.ts";
import { KERNEL_MIN_FLOATS, rowsFor } from "./engine/kernels.ts";
import { createTokenizer } from "./tokenizer.ts";

/** Entries per section of the per-document parts (frequencies, documents). */
const SECTION_DOCS = 2_500;

type Section = StateSection;

/**
 * Orama's save() state (split by saveState) in sections of bounded size: the serializer's own
 * bookkeeping grows with what it is given, so per-document parts are cut into slices of a few
 * thousand. The index section holds the index with an empty frequency map per property; each
 * property's map goes in "freq" slices, an empty one in none.
 */
function* stateSections(engine: Engine<Doc>, textAt?: Float64Array): Generator<Section> {
  const { ids, index, frequencies, docs, docCount, others } = engine.save();
  yield { kind: "ids", value: joinedIds(ids) };
  yield { kind: "index", value: { index, others, docCount } };
  for (const [prop, perDoc] of Object.entries(frequencies)) for (const slice of slices(perDoc)) yield { kind: "freq", value: { prop, slice } };
  const writer = new DocWriter();
  for (const ids of docSlices(docs as Record<number, Doc>, engine.lastInternalId())) {
    const bytes = encodeDocs(docs as Record<number, Doc>, ids, writer, textAt);
    // Offsets in the section so far, made offsets in the file once it is known where it goes.
    const placed = textAt && ((sectionAt: number) => ids.forEach((id) => (textAt[id]! += sectionAt)));
    yield { kind: "docs", bytes, ...(placed ? { placed } : {}) };
  }
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
 * Orama's id map as saved (its internal id → document id list) as one string: a structured clone
 * of 20k short strings took milliseconds a cold search pays, one string and a split a fraction of
 * that. Ids that cannot be joined (not strings, or holding the separator: never ours, which are
 * hex hashes) are saved as Orama gives them.
 */
function joinedIds(ids: unknown): unknown {
  const list = (ids as { internalIdToId?: unknown })?.internalIdToId;
  if (!Array.isArray(list) || !list.every((id) => typeof id === "string" && !id.includes("\n"))) return ids;
  return { joined: list.join("\n"), count: list.length };
}

function splitIds(v: unknown): unknown {
  const { joined, count } = (v ?? {}) as { joined?: unknown; count?: unknown };
  if (typeof joined !== "string") return v;
  const internalIdToId = count === 0 ? [] : joined.split("\n");
  if (internalIdToId.length !== count) throw new Error("the id map does not hold its count");
  return { internalIdToId };
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

/**
 * The reverse of stateSections: the sections of a file, read one at a time. With `lazyDocs` (a
 * command's search, whose texts stay in the file) the documents are checked and indexed, and each
 * is decoded when first read (LazyDocs).
 */
function joinSections(file: IndexFile, texts: TextFile | undefined, lazyDocs: boolean): SavedState {
  let ids: unknown;
  let head: Pick<SavedState, "index" | "others" | "docCount"> = { index: {}, others: {} as SavedState["others"], docCount: 0 };
  const frequencies: SavedState["frequencies"] = {};
  const lazy = lazyDocs && texts ? new LazyDocs(texts) : undefined;
  const docs: SavedState["docs"] = lazy ? lazy.record() : {};
  // Orama's own state as saveState split it, CRC-checked before decoding; loadState's shape check follows.
  readStateSections(file, (kind, v, at) => {
    if (kind === "ids") ids = splitIds(v);
    else if (kind === "index") head = v as typeof head;
    else if (kind === "freq") Object.assign((frequencies[(v as { prop: string }).prop] ??= {}), (v as { slice: object }).slice);
    else if (lazy) lazy.addSection(v as Uint8Array, at);
    else decodeDocs(v as Uint8Array, texts, at, docs as Record<string, Doc>);
  });
  return { ids, ...head, frequencies, docs };
}

/** The Orama state could not be read; the vectors could, and are handed back as a cache. */
export class UnreadableIndex extends IndexDamagedError {
  constructor(
    reason: string,
    readonly vectors: Map<string, Float32Array>,
  ) {
    super(reason);
  }
}

/**
 * Load an index file into an engine. The vector block comes back as one Float32Array that the
 * vectors are views of; the state sections are checked and decoded by format.ts, one at a time.
 */
export function readIndex(file: IndexFile, texts: TextFile | undefined, lowPeak: boolean, keywordsOnly: boolean, lazy?: "write" | "search", deferVectorCheck = false): { meta: StoreMeta; engine: Engine<Doc> } {
  const { head } = file;
  const dim = head.meta.dim ?? 0;
  // The state first, the vectors last: the state's load leaves garbage that, read after the
  // vectors, added to a peak already holding them (figures in docs/BENCHMARKS.md). Its damage is
  // told once the vectors are read, so they are still handed back as a cache.
  let broken: string | undefined;
  let engine: Engine<Doc> | undefined;
  try {
    engine = Engine.load<Doc>(head.meta.dim, createTokenizer(), joinSections(file, texts, lazy === "search"), head.count);
  } catch (e) {
    broken = oneLine(e);
  }
  if (keywordsOnly) {
    if (broken !== undefined) throw new IndexDamagedError(broken);
    // The file list is in the layout, checked by its own CRC-32; the block after it is not read.
    return { meta: { ...head.meta, files: readLayout(file, true).files }, engine: engine! };
  }
  const large = head.vectorCount * dim >= KERNEL_MIN_FLOATS;
  // A small block is read whole for a search (a few MiB: reading it twice, checked then scored, cost more).
  if (lazy && texts && engine && dim && !(lowPeak && large) && (lazy === "write" || large)) {
    // The rows table only; a row's floats are read from the file when asked for. A search scans the
    // file's int8 codes instead of the floats, and reads the floats of the rows the codes cannot
    // rule out, each checked against its own CRC-32; the codes are checked as the scan streams them
    // (deferred), or, with the whole block, at load: damaged vectors must not rank anything. A
    // writer does not read them (the next reader checks; a new base is written from a checked one).
    const layout = readLayout(file, true);
    const rows = readRowsTable(file);
    const n = rows.ids.length;
    const deferred = lazy === "search" && deferVectorCheck;
    if (lazy === "search" && !deferred && n && damagedParts(file, ["vectors"]).length) throw new IndexDamagedError(checksumProblem(["vectors"]));
    try {
      const codes = lazy === "search" ? { table: rows, at: tailOf(file).codesAt, crc: head.crc.codes } : undefined;
      engine.setVectors(VectorBlock.lazy(dim, rows.ids, rows.magnitudes, n + spareRows(n), texts, blockStart(file), codes));
    } catch (e) {
      throw new IndexDamagedError(oneLine(e));
    }
    return { meta: { ...head.meta, files: layout.files }, engine };
  }
  if (lowPeak) Bun.gc(true);
  if (lowPeak && texts && engine && dim && head.vectorCount * dim >= KERNEL_MIN_FLOATS) {
    const files = readColdVectors(file, texts, dim, engine);
    if (files) return { meta: { ...head.meta, files }, engine };
  }
  // Read into the rows the vector scan reads (the SIMD kernel's memory for a block it scans), with room for new turns.
  const { layout, rows, block } = readVectorPart(file, (dim, rows) => rowsFor(dim, rows + (dim ? spareRows(rows) : 0)));
  const cache = () => {
    try {
      return vectorsByContent(readHashes(file), block, dim);
    } catch {
      return new Map<string, Float32Array>();
    }
  };
  if (!engine) throw new UnreadableIndex(broken!, cache());
  try {
    // The file's block becomes the vector index as it is: no object per vector.
    if (dim) engine.setVectors(VectorBlock.fromRows(dim, block, rows.ids, rows.magnitudes));
  } catch (e) {
    throw new UnreadableIndex(oneLine(e), cache());
  }
  return { meta: { ...head.meta, files: layout.files }, engine };
}

/**
 * The watch process's load (Store.open with lowPeak): the vector block streamed from the file a few
 * MiB at a time (its CRC-32 checked) into a cold block (vector-block.ts), which keeps the file's
 * int8 codes of the rows and reads their floats through `texts` when a search needs them, given to
 * `engine`. Returns the layout's
 * file list; undefined when the block fails its CRC-32 (nothing given to `engine`): the caller then
 * reads it as before, which tells the damage the same way.
 */
function readColdVectors(file: IndexFile, texts: TextFile, dim: number, engine: Engine<Doc>): StoreMeta["files"] | undefined {
  const layout = readLayout(file, true);
  const rows = readRowsTable(file);
  const n = rows.ids.length;
  let block: VectorBlock;
  try {
    block = VectorBlock.cold(dim, rows.ids, rows.magnitudes, n + spareRows(n), texts, blockStart(file));
  } catch (e) {
    throw new IndexDamagedError(oneLine(e));
  }
  // The file's codes when they pass their check (the writer made them from these floats), else
  // made again from the floats as they stream; the floats are checked either way.
  const hasCodes = block.coldCodes((into) => readCodesInto(file, into), rows, n);
  if (!streamVectorBlock(file, hasCodes ? () => {} : (first, floats, count) => block.coldFill(first, floats, count))) return undefined;
  engine.setVectors(block);
  return layout.files;
}

/**
 * Write the index file: the engine's state and vectors as the plain parts format.ts lays out in bytes.
 * The state goes in sections, each serialized and dropped before the next is made: serializing
 * it whole cost 80–150 MB of peak memory at 20k chunks.
 */
export function writeIndex(path: string, id: string, meta: StoreMeta, engine: Engine<Doc>, reopen: boolean): MovedTexts | undefined {
  const { docs, vectors } = engine;
  const { ids: vectorIds, magnitudes } = vectors?.columns() ?? { ids: [], magnitudes: [] };
  const vectorHashes = vectorIds.map((id) => docs[id]?.contentHash ?? "");
  const docCount = engine.size;
  // Where each loaded document's text goes in the new file, by internal id.
  const at = reopen ? new Float64Array(engine.lastInternalId() + 1) : undefined;
  let vectorsAt: number | undefined;
  const fd = writeIndexFile(
    path,
    {
      meta,
      id,
      count: docCount,
      layout: { files: meta.files },
      rows: { ids: vectorIds, magnitudes, hashes: vectorHashes },
      sections: stateSections(engine, at),
      sectionsAtMost: 2 + 2 * Math.ceil(docCount / SECTION_DOCS),
      vectors: vectors?.bytes() ?? [],
    },
    { reopen, vectorsAt: (v) => (vectorsAt = v) },
  );
  return fd === undefined || !at ? undefined : { file: new TextFile(fd), at, vectorsAt };
}

/** The file a save wrote, where in it each loaded document's text is (by internal id), and its vector block. */
export interface MovedTexts {
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
