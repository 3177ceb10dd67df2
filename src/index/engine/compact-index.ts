/**
 * Orama's index component, made compact (issue 25; the breakdown is in docs/BENCHMARKS.md). Two
 * structures held most of the loaded index, and neither needs to be what it is:
 *
 *   - BM25's per-document token frequencies: one object per chunk with one key per distinct
 *     token. Our tokenizer hands Orama each chunk's tokens once (tokenizer.ts), so a token's
 *     frequency in a chunk is always 1 ÷ the chunk's token count, which BM25 already keeps per
 *     chunk (fieldLengths). Nothing is stored per (chunk, token); the score is computed from the
 *     length, the same number Orama computed.
 *   - the radix tree's document sets: a Set per word. Here a word's chunks are a Uint32Array
 *     (Postings) in the order a Set would iterate them (insertion order), and the tree's whole
 *     postings are saved as one Uint32Array that a loaded tree's lists are views of.
 *
 * The tree (CompactRadix) is Orama's RadixTree ported with its exact behaviour: the same node
 * splits, the same child order, the same depth-first walk and the same output object, so a
 * search visits words and chunks in the same order and its scores and ties are Orama's to the
 * bit. A vector field's node is our VectorBlock (vector-block.ts) in place of Orama's map of
 * arrays. Everything else (insert, remove, where filters, enum fields) is Orama's own.
 */
import { index as oramaIndex, internalDocumentIDStore } from "@orama/orama/components";
import { Best } from "./best.ts";
import { VectorBlock } from "./vector-block.ts";

type OramaIndex = oramaIndex.Index;
type InternalId = number;

/** A word's chunks, in insertion order (what a Set iterates), as a growable Uint32Array. */
export class Postings {
  ids: Uint32Array;
  size: number;
  constructor(ids: Uint32Array = new Uint32Array(2), size = 0) {
    this.ids = ids;
    this.size = size;
  }
  add(id: InternalId): void {
    // Internal ids grow as chunks are inserted, so a new id is almost always past the last one;
    // only a chunk re-inserted under its old id needs the scan a Set's add does.
    if (this.size > 0 && id <= this.ids[this.size - 1]! && this.indexOf(id) >= 0) return;
    if (this.size === this.ids.length) {
      const grown = new Uint32Array(Math.max(4, this.size * 2));
      grown.set(this.ids.subarray(0, this.size));
      this.ids = grown;
    }
    this.ids[this.size++] = id;
  }
  delete(id: InternalId): boolean {
    const at = this.indexOf(id);
    if (at < 0) return false;
    // A loaded list is a view into the tree's shared block: shifting in place is fine, it is this list's own slice.
    this.ids.copyWithin(at, at + 1, this.size);
    this.size--;
    return true;
  }
  private indexOf(id: InternalId): number {
    for (let i = this.size - 1; i >= 0; i--) if (this.ids[i] === id) return i;
    return -1;
  }
  *[Symbol.iterator](): IterableIterator<InternalId> {
    for (let i = 0; i < this.size; i++) yield this.ids[i]!;
  }
}

/** One node of the tree; fields named as Orama's RadixNode names them. */
export class CompactNode {
  /** Key: the first character of `s`. */
  k: string;
  /** The edge label. */
  s: string;
  c = new Map<string, CompactNode>();
  d = new Postings();
  /** A word ends here. */
  e: boolean;
  /** The word up to here. */
  w = "";
  constructor(key: string, subWord: string, end: boolean) {
    this.k = key;
    this.s = subWord;
    this.e = end;
  }
  updateParent(parent: CompactNode): void {
    this.w = parent.w + this.s;
  }

  /** Every word from here down with its chunks, in Orama's order (a stack: last child first). */
  findAllWords(output: Record<string, InternalId[]>, term: string, exact: boolean): Record<string, InternalId[]> {
    return this.walkWords(output, term, exact, (d) => Array.from(d.ids.subarray(0, d.size)));
  }

  /**
   * findAllWords with each word's chunks as a view of its postings, not a copy: a search copied
   * every matching word's list into a new array (thousands of ids for a common prefix), garbage
   * that grew the warm process's heap with every query. Valid until the tree next changes.
   */
  findAllPostings(output: Record<string, Uint32Array>, term: string, exact: boolean): Record<string, Uint32Array> {
    return this.walkWords(output, term, exact, (d) => d.ids.subarray(0, d.size));
  }

  private walkWords<T>(output: Record<string, T>, term: string, exact: boolean, list: (d: Postings) => T): Record<string, T> {
    const stack: CompactNode[] = [this];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.e) {
        const { w, d } = node;
        if (exact && w !== term) continue;
        // As Orama: own properties only (a word "__proto__" would set the prototype and is not
        // listed), in the order Object.keys gives (index-like words first). A word's postings hold
        // each chunk once already (Orama dedupes with includes()).
        if (w !== "__proto__") output[w] = list(d);
      }
      if (node.c.size > 0) for (const child of node.c.values()) stack.push(child);
    }
    return output;
  }
}

/** How many characters an edge's label shares with `word` from `at` on. */
function sharedLength(label: string, word: string, at: number): number {
  let j = 0;
  while (j < label.length && at + j < word.length && label[j] === word[at + j]) j++;
  return j;
}

/** Orama's RadixTree with compact postings (see the top of this file). */
export class CompactRadix extends CompactNode {
  constructor() {
    super("", "", false);
  }

  insert(word: string, docId: InternalId): void {
    let node: CompactNode = this;
    let i = 0;
    const wordLength = word.length;
    while (i < wordLength) {
      const currentCharacter = word[i]!;
      const childNode = node.c.get(currentCharacter);
      if (childNode) {
        const edgeLabel = childNode.s;
        const edgeLabelLength = edgeLabel.length;
        const j = sharedLength(edgeLabel, word, i);
        if (j === edgeLabelLength) {
          node = childNode;
          i += j;
          if (i === wordLength) {
            childNode.e = true;
            childNode.d.add(docId);
            return;
          }
          continue;
        }
        const commonPrefix = edgeLabel.slice(0, j);
        const newEdgeLabel = edgeLabel.slice(j);
        const newWordLabel = word.slice(i + j);
        const between = new CompactNode(commonPrefix[0]!, commonPrefix, false);
        node.c.set(commonPrefix[0]!, between);
        between.updateParent(node);
        childNode.s = newEdgeLabel;
        childNode.k = newEdgeLabel[0]!;
        between.c.set(newEdgeLabel[0]!, childNode);
        childNode.updateParent(between);
        if (newWordLabel) {
          const newNode = new CompactNode(newWordLabel[0]!, newWordLabel, true);
          newNode.d.add(docId);
          between.c.set(newWordLabel[0]!, newNode);
          newNode.updateParent(between);
        } else {
          between.e = true;
          between.d.add(docId);
        }
        return;
      }
      const newNode = new CompactNode(currentCharacter, word.slice(i), true);
      newNode.d.add(docId);
      node.c.set(currentCharacter, newNode);
      newNode.updateParent(node);
      return;
    }
    node.e = true;
    node.d.add(docId);
  }

  /** Orama's find without tolerance (never asked for): the words `term` is a prefix of (or `term` itself, when exact). */
  find(params: { term: string; exact?: boolean; tolerance?: number }): Record<string, InternalId[]> {
    if (params.tolerance) throw new Error("CompactRadix does not search with a tolerance");
    const exact = params.exact ?? false;
    return this.under(params.term, exact)?.findAllWords({}, params.term, exact) ?? {};
  }

  /** find(), each word's chunks as a view of its postings (findAllPostings): for reading at once. */
  findPostings(term: string, exact = false): Record<string, Uint32Array> {
    return this.under(term, exact)?.findAllPostings({}, term, exact) ?? {};
  }

  /** The node whose words `term` is a prefix of (or is, when exact), as Orama's find walks to it. */
  private under(term: string, exact: boolean): CompactNode | undefined {
    let node: CompactNode = this;
    let i = 0;
    const termLength = term.length;
    while (i < termLength) {
      const childNode = node.c.get(term[i]!);
      if (!childNode) return undefined;
      const edgeLabelLength = childNode.s.length;
      const j = sharedLength(childNode.s, term, i);
      if (j === edgeLabelLength) {
        node = childNode;
        i += j;
      } else if (i + j === termLength && j === termLength - i && !exact) {
        return childNode;
      } else {
        return undefined;
      }
    }
    return node;
  }

  /** Orama's removeDocumentByWord, walk included (it follows the word's own path when the word is in the tree). */
  removeDocumentByWord(term: string, docID: InternalId, exact = true): boolean {
    if (!term) return true;
    let node: CompactNode = this;
    const termLength = term.length;
    for (let i = 0; i < termLength; i++) {
      const childNode = node.c.get(term[i]!);
      if (!childNode) return false;
      i += childNode.s.length - 1;
      node = childNode;
      if (!exact || node.w === term) node.d.delete(docID);
    }
    return true;
  }

  /** The tree as a few flat arrays, in depth-first order with children in Map order. */
  toJSON(): SavedTree {
    const labels: string[] = [];
    const ends: number[] = [];
    const childCounts: number[] = [];
    const lengths: number[] = [];
    let total = 0;
    const order: CompactNode[] = [];
    const walk = [this as CompactNode];
    while (walk.length) {
      const node = walk.pop()!;
      order.push(node);
      labels.push(node.s);
      ends.push(node.e ? 1 : 0);
      childCounts.push(node.c.size);
      lengths.push(node.d.size);
      total += node.d.size;
      // Pushed in reverse so they come off the stack in Map order.
      const kids = [...node.c.values()];
      for (let k = kids.length - 1; k >= 0; k--) walk.push(kids[k]!);
    }
    const postings = new Uint32Array(total);
    let at = 0;
    for (const node of order) {
      postings.set(node.d.ids.subarray(0, node.d.size), at);
      at += node.d.size;
    }
    return { compact: 1, labels: labels.join(""), labelLengths: Uint32Array.from(labels, (l) => l.length), ends: Uint8Array.from(ends), childCounts: Uint32Array.from(childCounts), lengths: Uint32Array.from(lengths), postings };
  }

  static fromJSON(raw: unknown): CompactRadix {
    const t = raw as Partial<SavedTree>;
    if (t?.compact !== 1 || typeof t.labels !== "string" || !(t.labelLengths instanceof Uint32Array) || !(t.ends instanceof Uint8Array) || !(t.childCounts instanceof Uint32Array) || !(t.lengths instanceof Uint32Array) || !(t.postings instanceof Uint32Array)) {
      throw new Error("the text index is not in the compact form");
    }
    const n = t.labelLengths.length;
    if (n === 0 || t.ends.length !== n || t.childCounts.length !== n || t.lengths.length !== n) throw new Error("the text index's arrays disagree in length");
    const { labels, labelLengths, ends, childCounts, lengths, postings } = t as SavedTree;
    const root = new CompactRadix();
    let li = 0;
    let pi = 0;
    const take = (node: CompactNode, i: number) => {
      const len = labelLengths[i]!;
      const s = labels.slice(li, li + len);
      li += len;
      node.s = s;
      node.k = s[0] ?? "";
      node.e = ends[i] === 1;
      const size = lengths[i]!;
      if (pi + size > postings.length || li > labels.length) throw new Error("the text index's arrays are short");
      node.d = new Postings(postings.subarray(pi, pi + size), size);
      pi += size;
    };
    take(root, 0);
    // Depth-first: each entry waits for the children it still expects.
    const stack: { node: CompactNode; left: number }[] = [{ node: root, left: childCounts[0]! }];
    for (let i = 1; i < n; i++) {
      while (stack.length && stack[stack.length - 1]!.left === 0) stack.pop();
      const parent = stack[stack.length - 1];
      if (!parent) throw new Error("the text index's tree has more nodes than its root holds");
      parent.left--;
      const node = new CompactNode("", "", false);
      take(node, i);
      if (!node.k || parent.node.c.has(node.k)) throw new Error("the text index's tree has a bad edge");
      parent.node.c.set(node.k, node);
      node.updateParent(parent.node);
      stack.push({ node, left: childCounts[i]! });
    }
    if (stack.some((s) => s.left !== 0) || pi !== postings.length || li !== labels.length) throw new Error("the text index's tree is incomplete");
    return root;
  }
}

/** CompactRadix as saved: what the index file's state holds for a string property. */
export interface SavedTree {
  compact: 1;
  /** Every node's edge label, concatenated in depth-first order. */
  labels: string;
  labelLengths: Uint32Array;
  ends: Uint8Array;
  childCounts: Uint32Array;
  /** Per node, how many of `postings` are its chunks. */
  lengths: Uint32Array;
  postings: Uint32Array;
}

// ---------------------------------------------------------------------------------------------
// The component

interface Relevance {
  k: number;
  b: number;
  d: number;
}

/** Orama's BM25 (components/algorithms.ts, not exported), the same expression so the same bits. */
function BM25(tf: number, matchingCount: number, docsCount: number, fieldLength: number, averageFieldLength: number, { k, b, d }: Relevance): number {
  const idf = Math.log(1 + (docsCount - matchingCount + 0.5) / (matchingCount + 0.5));
  return (idf * (d + tf * (k + 1))) / (tf + k * (1 - b + (b * fieldLength) / averageFieldLength));
}

const defaults = oramaIndex.createIndex();

function insertDocumentScoreParameters(index: OramaIndex, prop: string, id: InternalId, tokens: string[], docsCount: number): void {
  const internalId = internalOf(index, id);
  index.avgFieldLength[prop] = ((index.avgFieldLength[prop] ?? 0) * (docsCount - 1) + tokens.length) / docsCount;
  index.fieldLengths[prop]![internalId] = tokens.length;
}

/**
 * Chunks per token. Orama's own counter starts from `token in occurrences`, so "constructor"
 * started from Object's constructor function and became a string (then NaN scores once a chunk
 * holding it was removed): here every token counts from 0.
 */
function insertTokenScoreParameters(index: OramaIndex, prop: string, _id: InternalId, _tokens: string[], token: string): void {
  const occurrences = index.tokenOccurrences[prop]!;
  occurrences[token] = (typeof occurrences[token] === "number" ? occurrences[token] : 0) + 1;
}

function removeDocumentScoreParameters(index: OramaIndex, prop: string, id: InternalId | string, docsCount: number): void {
  const internalId = internalOf(index, id);
  if (docsCount > 1) index.avgFieldLength[prop] = (index.avgFieldLength[prop]! * docsCount - index.fieldLengths[prop]![internalId]!) / (docsCount - 1);
  else (index.avgFieldLength as Record<string, number | undefined>)[prop] = undefined;
  (index.fieldLengths[prop] as Record<number, number | undefined>)[internalId] = undefined;
}

/** Orama passes an internal id on insert and the document's own id on remove. */
function internalOf(index: OramaIndex, id: InternalId | string): InternalId {
  return internalDocumentIDStore.getInternalDocumentId(index.sharedInternalDocumentStore, id);
}

/**
 * Orama's BM25 of each chunk a word holds. The token frequency Orama stored per (chunk, token)
 * was occurrences ÷ tokens, with each token occurring once: 1 ÷ the chunk's length.
 */
function calculateResultScores(index: OramaIndex, prop: string, term: string, ids: ArrayLike<InternalId>, docsCount: number, relevance: Relevance, resultsMap: Map<InternalId, number>, boostPerProperty: number, whereFiltersIDs: Set<InternalId> | undefined, keywordMatchesMap: Map<InternalId, Map<string, number>> | undefined): void {
  const avgFieldLength = index.avgFieldLength[prop]!;
  const fieldLengths = index.fieldLengths[prop]!;
  const occurrences = index.tokenOccurrences[prop]!;
  const termOccurrences = typeof occurrences[term] === "number" ? (occurrences[term] ?? 0) : 0;
  for (let k = 0; k < ids.length; k++) {
    const internalId = ids[k]!;
    if (whereFiltersIDs && !whereFiltersIDs.has(internalId)) continue;
    if (keywordMatchesMap) {
      let propertyMatches = keywordMatchesMap.get(internalId);
      if (!propertyMatches) keywordMatchesMap.set(internalId, (propertyMatches = new Map()));
      propertyMatches.set(prop, (propertyMatches.get(prop) || 0) + 1);
    }
    const length = fieldLengths[internalId]!;
    const bm25 = BM25(1 / length, termOccurrences, docsCount, length, avgFieldLength, relevance);
    const had = resultsMap.get(internalId);
    resultsMap.set(internalId, had === undefined ? bm25 * boostPerProperty : had + bm25 * boostPerProperty);
  }
}

/**
 * How many results the search about to run will keep. Orama hands the index no limit: it sorts
 * every matching chunk and keeps the first `limit`, and the index sorted them all once already.
 * A query whose words a fifth of the chunks hold spent more time in those two sorts than in
 * scoring; told the limit (Store.searchText), the index returns only the results Orama would
 * keep, in Orama's order. Orama's `count` is then at most the limit (the store never reads it).
 */
const resultLimits = new WeakMap<object, number>();
/** What the limited search gave Orama: its internal ids and scores, in Orama's order. */
const resultsFound = new WeakMap<object, [InternalId, number][]>();

/**
 * `run` (one Orama search) told the limit; returns what it returns, and the internal ids of the
 * results the index gave it (undefined when the search took no limited path): a caller maps hits to
 * internal ids without Orama's id map.
 */
export function withResultLimit<T>(index: object, limit: number, run: () => T): { value: T; found: [InternalId, number][] | undefined } {
  resultLimits.set(index, limit);
  resultsFound.delete(index);
  try {
    const value = run();
    return { value, found: resultsFound.get(index) };
  } finally {
    resultLimits.delete(index);
    resultsFound.delete(index);
  }
}

/** Orama's index search, with the scoring above; threshold semantics as Orama's. */
function search(index: OramaIndex, term: string, tokenizer: { tokenize(raw: string, language?: string): string[] }, language: string | undefined, propertiesToSearch: string[], exact: boolean, tolerance: number, boost: Partial<Record<string, number>>, relevance: Relevance, docsCount: number, whereFiltersIDs: Set<InternalId> | undefined, threshold = 0): [InternalId, number][] {
  const tokens = tokenizer.tokenize(term, language);
  const keywordsCount = tokens.length || 1;
  // Which keywords each chunk matched matters only to a threshold below 1 (Orama's default is 1,
  // and ours): otherwise a Map per matching chunk was made for nothing on every query.
  const keywordMatchesMap = threshold === 1 ? undefined : new Map<InternalId, Map<string, number>>();
  const tokenFoundMap = new Map<string, boolean>();
  const resultsMap = new Map<InternalId, number>();
  for (const prop of propertiesToSearch) {
    if (!(prop in index.indexes)) continue;
    const tree = index.indexes[prop]!;
    if (tree.type !== "Radix") throw new Error(`WRONG_SEARCH_PROPERTY_TYPE: ${prop}`);
    const boostPerProperty = boost[prop] ?? 1;
    if (boostPerProperty <= 0) throw new Error(`INVALID_BOOST_VALUE: ${boostPerProperty}`);
    if (tokens.length === 0 && !term) tokens.push("");
    for (const token of tokens) {
      if (tolerance) throw new Error("CompactRadix does not search with a tolerance");
      const found = (tree.node as unknown as CompactRadix).findPostings(token, exact);
      const words = Object.keys(found);
      if (words.length > 0) tokenFoundMap.set(token, true);
      for (const word of words) calculateResultScores(index, prop, word, found[word]!, docsCount, relevance, resultsMap, boostPerProperty, whereFiltersIDs, keywordMatchesMap);
    }
  }
  const limit = resultLimits.get(index);
  if (threshold === 1 && limit !== undefined) {
    const best = new Best(limit);
    resultsMap.forEach((score, id) => best.offer(id, score));
    const sorted = best.sorted();
    resultsFound.set(index, sorted);
    return sorted;
  }
  const results = [...resultsMap.entries()].sort((a, b) => b[1] - a[1]);
  if (results.length === 0 || threshold === 1) return results;
  const fullMatches = results.filter(([id]) => [...(keywordMatchesMap?.get(id)?.values() ?? [])].some((m) => m === keywordsCount));
  if (threshold === 0) {
    if (keywordsCount === 1) return results;
    for (const token of tokens) if (!tokenFoundMap.get(token)) return [];
    return fullMatches;
  }
  if (fullMatches.length > 0) {
    const full = new Set(fullMatches.map(([id]) => id));
    const remaining = results.filter(([id]) => !full.has(id));
    return [...fullMatches, ...remaining.slice(0, Math.ceil(remaining.length * threshold))];
  }
  return results;
}

function create(...args: Parameters<typeof defaults.create>): OramaIndex {
  const index = defaults.create(...args) as OramaIndex;
  for (const tree of Object.values(index.indexes)) if (tree.type === "Radix") (tree as { node: unknown }).node = new CompactRadix();
  blocks(index);
  return index;
}

function save(index: OramaIndex): unknown {
  const text: Record<string, SavedTree> = {};
  const others: OramaIndex["indexes"] = {};
  for (const [prop, tree] of Object.entries(index.indexes)) {
    if (tree.type === "Radix") text[prop] = (tree.node as unknown as CompactRadix).toJSON();
    else others[prop] = tree;
  }
  const saved = defaults.save({ ...index, indexes: others }) as { indexes: Record<string, unknown>; fieldLengths: Record<string, unknown> };
  for (const [prop, tree] of Object.entries(text)) saved.indexes[prop] = { type: "Radix", node: tree, isArray: index.indexes[prop]!.isArray };
  // Saved as arrays by internal id: an object of one key per chunk took a cold search's load
  // milliseconds to deserialize (20k keys), an array a tenth of that. Orama reads and writes them
  // by index, so a loaded array serves as the object did; a file saved before holds objects, read as they are.
  saved.fieldLengths = Object.fromEntries(Object.entries(index.fieldLengths).map(([prop, lengths]) => [prop, Array.isArray(lengths) ? lengths : byInternalId(lengths)]));
  return saved;
}

/** A record keyed by internal id as an array indexed by it (holes where no key is). */
function byInternalId(record: Record<number, number | undefined>): (number | undefined)[] {
  const out: (number | undefined)[] = [];
  for (const key in record) out[Number(key)] = record[key];
  return out;
}

function load(sharedInternalDocumentStore: Parameters<typeof defaults.load>[0], raw: unknown): OramaIndex {
  const r = raw as { indexes?: Record<string, { type?: string; node?: unknown; isArray?: boolean }> };
  const text: Record<string, { node?: unknown; isArray?: boolean }> = {};
  const others: Record<string, unknown> = {};
  for (const [prop, tree] of Object.entries(r.indexes ?? {})) {
    if (tree?.type === "Radix") text[prop] = tree;
    else others[prop] = tree;
  }
  // Orama's load takes its own saved shape, which the text trees left; the radix slot is typed as
  // Orama's RadixNode, and CompactRadix answers the same calls its search makes.
  const index = defaults.load(sharedInternalDocumentStore, { ...(raw as object), indexes: others } as never) as OramaIndex;
  for (const [prop, tree] of Object.entries(text)) index.indexes[prop] = { type: "Radix", node: CompactRadix.fromJSON(tree.node) as never, isArray: tree.isArray ?? false };
  // Orama's load gives back an empty VectorIndex (VectorBlock saves no vectors): an empty block
  // takes its place, and the store fills it from the index file's vector block.
  blocks(index);
  return index;
}

/** Every vector field's node made a VectorBlock of its dimension. */
function blocks(index: OramaIndex): void {
  for (const entry of Object.values(index.vectorIndexes)) {
    const node = entry.node as unknown as { size: number };
    if (!(node instanceof VectorBlock)) (entry as { node: unknown }).node = new VectorBlock(node.size);
  }
}

/** The index component to give Orama's create(): its own, with compact text search structures. */
export function compactIndex(): ReturnType<typeof oramaIndex.createIndex> {
  return {
    ...defaults,
    create,
    insertDocumentScoreParameters,
    insertTokenScoreParameters,
    removeDocumentScoreParameters,
    calculateResultScores,
    search,
    save,
    load,
  } as unknown as ReturnType<typeof oramaIndex.createIndex>;
}
