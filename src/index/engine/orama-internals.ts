/**
 * Every use of Orama's internals, in one place. Orama's public API (create, insert, remove,
 * search, count, save, load) is used directly by store.ts; what it does not offer is reached
 * for here: BM25's per-field statistics, the text field's radix tree, the vector field's node
 * (our VectorBlock, which the index component installs: vector-block.ts), the documents and the
 * id map, and the layout of save()'s state that the index file is cut into sections by.
 *
 * Types come from what Orama exports (Index, DocumentsStore, InternalDocumentIDStore, RawData)
 * and from our own components (compact-index.ts, vector-block.ts). Each object is checked once, when it is obtained
 * (bindOrama: on creating or loading a database), and the typed references are then kept:
 * no per-query work. A check that fails throws OramaShapeError naming the field: an Orama
 * upgrade changed a shape this file depends on (test/unit/orama-internals.test.ts says which).
 */
import { save as oramaSave, load as oramaLoad, type AnyOrama, type RawData } from "@orama/orama";
import type { documentsStore, index as oramaIndex, internalDocumentIDStore } from "@orama/orama/components";
import type { CompactRadix } from "./compact-index.ts";
import { VectorBlock } from "./vector-block.ts";
import oramaPackage from "@orama/orama/package.json" with { type: "json" };
import { OramaShapeError } from "../../core/errors.ts";

type Index = oramaIndex.Index;
type InternalId = internalDocumentIDStore.InternalDocumentID;

/** The Orama release this file was written against. */
const ORAMA_WRITTEN_FOR = "3.1.18";

/** The property names Store indexes (schemaFor in store.ts). */
const TEXT_FIELD = "text";
const VECTOR_FIELD = "embedding";
const SOURCE_FIELD = "source";

/** BM25's statistics, per property: distinct tokens per document, their mean, documents per token. */
export type Bm25Stats = Pick<Index, "fieldLengths" | "avgFieldLength" | "tokenOccurrences">;

/** BM25's statistics of one property (the per-document and per-token maps Orama updates in place). */
export interface FieldStats {
  /** Internal id → distinct tokens the document is indexed under. */
  lengths: Index["fieldLengths"][string];
  /** Token → documents indexed under exactly it. A plain object: "constructor" finds Object's own. */
  docsWithToken: Index["tokenOccurrences"][string];
  /** Mean distinct tokens per document (Orama replaces the number on every insert, so it is read each time). */
  avgLength(): number;
}

/** The radix tree of a string property: find() / findPostings() give the internal ids of every word a term matches. */
export type RadixNode = Pick<CompactRadix, "find" | "findPostings">;

/** The vector field's node: our VectorBlock (compact-index.ts installs it in place of Orama's VectorIndex). */
export type VectorNode = VectorBlock;

/** A database with its internals checked and kept as typed references. D is the document type. */
export interface BoundOrama<D> {
  readonly db: AnyOrama;
  readonly text: FieldStats;
  readonly textRadix: RadixNode;
  /** Undefined when the schema has no vector field. */
  readonly vectors: VectorNode | undefined;
  /** Internal id → document. */
  readonly docs: Record<InternalId, D>;
  /** Document id → internal id. */
  readonly internalIds: Map<string, InternalId>;
}

function shapeError(field: string, expected: string): OramaShapeError {
  return new OramaShapeError(field, expected, ORAMA_WRITTEN_FOR, oramaPackage.version);
}

const isObject = <T extends object>(v: unknown): v is T => typeof v === "object" && v !== null;
const isFunction = (v: unknown): v is (...args: never[]) => unknown => typeof v === "function";

/** `v` checked to be an object, typed as Orama declares it. */
function checkObject<T extends object>(v: unknown, path: string): T {
  if (!isObject<T>(v)) throw shapeError(path, "an object");
  return v;
}
/** `obj[key]` checked to be an object, typed as Orama declares it. */
function objectAt<T extends object>(obj: unknown, key: string, path: string): T {
  return checkObject<T>(isObject<Record<string, unknown>>(obj) ? obj[key] : undefined, `${path}.${key}`);
}
function methodsAt(obj: object, path: string, ...names: string[]): void {
  for (const name of names) if (!isFunction((obj as Record<string, unknown>)[name])) throw shapeError(`${path}.${name}`, "a function");
}

/** The index store as Orama's index component makes it (its own Index type, not AnyIndexStore). */
function indexOf(db: AnyOrama): Index {
  return objectAt<Index>(objectAt(db, "data", "db"), "index", "db.data");
}

export function bm25Stats(db: AnyOrama): Bm25Stats {
  const index = indexOf(db);
  for (const key of ["fieldLengths", "avgFieldLength", "tokenOccurrences"] as const) objectAt(index, key, "db.data.index");
  return index;
}

export function fieldStats(db: AnyOrama, field = TEXT_FIELD): FieldStats {
  const stats = bm25Stats(db);
  const lengths = objectAt<FieldStats["lengths"]>(stats.fieldLengths, field, "db.data.index.fieldLengths");
  const docsWithToken = objectAt<FieldStats["docsWithToken"]>(stats.tokenOccurrences, field, "db.data.index.tokenOccurrences");
  const averages: Partial<Bm25Stats["avgFieldLength"]> = stats.avgFieldLength;
  return { lengths, docsWithToken, avgLength: () => averages[field] ?? 0 };
}

export function textRadix(db: AnyOrama, field = TEXT_FIELD): RadixNode {
  const tree = objectAt<Index["indexes"][string]>(objectAt(indexOf(db), "indexes", "db.data.index"), field, "db.data.index.indexes");
  const node = objectAt<RadixNode>(tree, "node", `db.data.index.indexes.${field}`);
  if (tree.type !== "Radix") throw shapeError(`db.data.index.indexes.${field}.type`, "'Radix'");
  methodsAt(node, `db.data.index.indexes.${field}.node`, "find", "findPostings");
  return node;
}

/** The vector index node of `field`, undefined when the schema has none. */
export function vectorNode(db: AnyOrama, field = VECTOR_FIELD): VectorNode | undefined {
  const vectorIndexes = objectAt<Index["vectorIndexes"]>(indexOf(db), "vectorIndexes", "db.data.index");
  if (!(field in vectorIndexes)) return undefined;
  const path = `db.data.index.vectorIndexes.${field}.node`;
  const node = objectAt<VectorNode>(vectorIndexes[field], "node", `db.data.index.vectorIndexes.${field}`);
  if (!(node instanceof VectorBlock)) throw shapeError(path, "a VectorBlock (the compact index component's)");
  return node;
}

/** Put `node` in place of the vector field's node (a loaded block, built from the index file's vectors). */
export function replaceVectorNode(db: AnyOrama, node: VectorNode, field = VECTOR_FIELD): void {
  const vectorIndexes = objectAt<Index["vectorIndexes"]>(indexOf(db), "vectorIndexes", "db.data.index");
  objectAt<{ node: unknown }>(vectorIndexes, field, "db.data.index.vectorIndexes").node = node;
}

/**
 * The distinct values of an enum property (the chunks' source file) with the internal ids of the
 * documents holding each, as Orama's flat tree keeps them: a look at every source without a walk
 * of every document. Read, never changed.
 */
export function enumValues(db: AnyOrama, field = SOURCE_FIELD): ReadonlyMap<unknown, ReadonlySet<InternalId>> {
  const tree = objectAt<Index["indexes"][string]>(objectAt(indexOf(db), "indexes", "db.data.index"), field, "db.data.index.indexes");
  if (tree.type !== "Flat") throw shapeError(`db.data.index.indexes.${field}.type`, "'Flat'");
  const map = objectAt<{ numberToDocumentId: unknown }>(tree, "node", `db.data.index.indexes.${field}`).numberToDocumentId;
  if (!(map instanceof Map)) throw shapeError(`db.data.index.indexes.${field}.node.numberToDocumentId`, "a Map");
  return map as Map<unknown, Set<InternalId>>;
}

export function documents<D>(db: AnyOrama): Record<InternalId, D> {
  return objectAt<Record<InternalId, D>>(objectAt<documentsStore.DocumentsStore>(db.data, "docs", "db.data"), "docs", "db.data.docs");
}

/** The document id Orama holds for an internal id (its id store's list, no map). */
export function documentIdOf(db: AnyOrama, internalId: InternalId): string | undefined {
  const list = objectAt<internalDocumentIDStore.InternalDocumentIDStore>(db, "internalDocumentIDStore", "db").internalIdToId;
  return Array.isArray(list) ? list[internalId - 1] : undefined;
}

/**
 * Orama's map of document id → internal id, built the first time anything asks it (a lookup by
 * chunk id, an insert, a remove): a Map of 20k ids costs a new process 3–5 ms however it is made,
 * and a search that looks its hits up by internal id never asks. Built as Orama's load builds it:
 * the id at list position i is internal id i + 1, a later position of the same id winning.
 */
class LazyIdMap extends Map<string, InternalId> {
  private pending: readonly string[] | undefined;
  constructor(ids: readonly string[]) {
    super();
    this.pending = ids.length ? ids : undefined;
  }
  private fill(): void {
    const ids = this.pending;
    if (!ids) return;
    this.pending = undefined;
    for (let i = 0; i < ids.length; i++) super.set(ids[i]!, i + 1);
  }
  override get(key: string): InternalId | undefined {
    this.fill();
    return super.get(key);
  }
  override set(key: string, value: InternalId): this {
    this.fill();
    return super.set(key, value);
  }
  override has(key: string): boolean {
    this.fill();
    return super.has(key);
  }
  override delete(key: string): boolean {
    this.fill();
    return super.delete(key);
  }
  override clear(): void {
    this.pending = undefined;
    super.clear();
  }
  override get size(): number {
    this.fill();
    return super.size;
  }
  override forEach(fn: (value: InternalId, key: string, map: Map<string, InternalId>) => void, thisArg?: unknown): void {
    this.fill();
    super.forEach(fn, thisArg);
  }
  override entries(): MapIterator<[string, InternalId]> {
    this.fill();
    return super.entries();
  }
  override keys(): MapIterator<string> {
    this.fill();
    return super.keys();
  }
  override values(): MapIterator<InternalId> {
    this.fill();
    return super.values();
  }
  override [Symbol.iterator](): MapIterator<[string, InternalId]> {
    return this.entries();
  }
}

export function internalIds(db: AnyOrama): Map<string, InternalId> {
  const map = objectAt<internalDocumentIDStore.InternalDocumentIDStore>(db, "internalDocumentIDStore", "db").idToInternalId;
  if (!(map instanceof Map)) throw shapeError("db.internalDocumentIDStore.idToInternalId", "a Map");
  return map;
}

/**
 * The internal ids a where clause leaves, as Orama's own searches compute them (its index
 * component's searchByWhereClause), for a search Store runs itself (the vector block's nearest).
 */
export function whereIds(db: AnyOrama, where: Record<string, unknown>): Set<InternalId> {
  const component = objectAt<Pick<typeof oramaIndex, "searchByWhereClause">>(db, "index", "db");
  methodsAt(component, "db.index", "searchByWhereClause");
  // Orama types a where clause from the literal schema of a database; ours is chosen at run time.
  const ids = component.searchByWhereClause(indexOf(db), db.tokenizer, where as never, "english");
  if (!(ids instanceof Set)) throw shapeError("db.index.searchByWhereClause()", "a Set of internal ids");
  return ids as Set<InternalId>;
}

/**
 * Check every internal Store uses and keep the typed references. Call again whenever Orama
 * replaces the objects (load() does).
 */
export function bindOrama<D>(db: AnyOrama): BoundOrama<D> {
  return { db, text: fieldStats(db), textRadix: textRadix(db), vectors: vectorNode(db), docs: documents<D>(db), internalIds: internalIds(db) };
}

/**
 * Which maps Orama's index holds, per property: what load() must give back for inserts and
 * searches to work (a loaded database is compared with a new one).
 */
export function indexShape(db: AnyOrama): string {
  const index = indexOf(db);
  const maps = { indexes: index.indexes, vectorIndexes: index.vectorIndexes, frequencies: index.frequencies, tokenOccurrences: index.tokenOccurrences, fieldLengths: index.fieldLengths, avgFieldLength: index.avgFieldLength };
  const parts = Object.entries(maps).map(([k, m]) => `${k}:${Object.keys(m ?? {}).sort().join(",")}`);
  return [...parts, `searchable:${[...(index.searchableProperties ?? [])].sort().join(",")}`].join(" ");
}

/**
 * save()'s state, split the way the index file stores it: the id map; the index without its
 * per-document frequency maps (an empty map kept per property, so an index saved with no
 * documents loads with the shape of a new one: Orama's insert() writes into frequencies[prop]);
 * those frequency maps; the documents and their count; the rest (sorting, pinning, language).
 */
export interface SavedState {
  ids: unknown;
  index: Record<string, unknown>;
  frequencies: Record<string, Record<string, unknown>>;
  docs: Record<string, unknown>;
  docCount: number;
  /** save()'s other parts (sorting, pinning, language), as they are. */
  others: Omit<RawData, "internalDocumentIDStore" | "index" | "docs">;
}

/**
 * Orama's save() state, split. The vectors are not in it (VectorBlock gives save() none): the
 * file stores them as one Float32 block.
 */
export function saveState(o: Pick<BoundOrama<unknown>, "db">): SavedState {
  const { internalDocumentIDStore: ids, index, docs, ...others } = oramaSave(o.db);
  if (ids === undefined) throw shapeError("save().internalDocumentIDStore", "present");
  const { frequencies, ...indexRest } = checkObject<Index>(index, "save().index");
  checkObject(frequencies, "save().index.frequencies");
  const docStore = checkObject<documentsStore.DocumentsStore>(docs, "save().docs");
  const docRecord = objectAt<Record<string, unknown>>(docStore, "docs", "save().docs");
  if (typeof docStore.count !== "number") throw shapeError("save().docs.count", "a number");
  const shells = Object.fromEntries(Object.keys(frequencies).map((prop) => [prop, {}]));
  return { ids, index: { ...indexRest, frequencies: shells }, frequencies, docs: docRecord, docCount: docStore.count, others };
}

/** The reverse of saveState: load the split state into `db` (replacing its index objects: bind again). */
export function loadState(db: AnyOrama, s: SavedState): void {
  const frequencies = { ...(isObject<Record<string, Record<string, unknown>>>(s.index.frequencies) ? s.index.frequencies : {}) };
  for (const [prop, perDoc] of Object.entries(s.frequencies)) frequencies[prop] = Object.assign(frequencies[prop] ?? {}, perDoc);
  // The id store's list taken as saved, its map made lazily (LazyIdMap) instead of by Orama's load.
  const list = (s.ids as { internalIdToId?: unknown })?.internalIdToId;
  const lazy = Array.isArray(list) && list.every((id) => typeof id === "string");
  oramaLoad(db, { ...s.others, internalDocumentIDStore: lazy ? { internalIdToId: [] } : s.ids, index: { ...s.index, frequencies }, docs: { docs: s.docs, count: s.docCount } });
  if (lazy) {
    const store = objectAt<internalDocumentIDStore.InternalDocumentIDStore>(db, "internalDocumentIDStore", "db");
    store.internalIdToId = list as string[];
    store.idToInternalId = new LazyIdMap(list as string[]);
  }
}
