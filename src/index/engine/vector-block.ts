/**
 * The vector field's index: every vector in one Float32Array, rows in the order Orama's map
 * would iterate them, and an exact cosine scan over the rows. It takes the place of Orama's
 * VectorIndex (a Map of [magnitude, Float32Array] per chunk) with the same methods and the same
 * answers: the same cosine, computed the same way, in the same order, so ties sort alike.
 *
 * A loaded index's block is the file's vector block itself (read into one Float32Array with room
 * for more rows), so a load makes no object per vector. A removed row becomes a hole, skipped by
 * the scan, so the rows keep their order (a Map's: a re-added id goes last); holes are squeezed
 * out, in place, when they are a quarter of the block, and rows are appended into the room left.
 * A block large enough for the SIMD kernel lives in a WebAssembly memory (vector-kernel.ts),
 * which scans it with the JS loop's sums to the bit and where more room is made in place: a copy
 * into a larger block held the old and the new one at once, which after a load doubled the watch
 * process's vector memory on the first new turn. A smaller block is a plain array, copied when it
 * grows, and scanned by the JS loop.
 *
 * A cold block (VectorBlock.cold: the watch process's) holds no float rows of the file it was
 * loaded from: int8 codes of them (vector-cold.ts), a first pass over which bounds every cosine,
 * and the floats read from the file for the rows the bounds cannot rule out. Its answers are the
 * exact scan's, to the bit and in the same order; rows, holes, squeezes and growth are the same.
 */
import { ColdRows, type FileCodes, type RowFile } from "./vector-cold.ts";
import type { FigureColumns } from "./codes.ts";
import { dotAt, RowMemory } from "./kernels.ts";
import { Best } from "./best.ts";

type InternalId = number;

/** What Orama's vector search gets back: [internal id, cosine]. */
export type Similar = [InternalId, number];

/** Orama's getMagnitude (trees/vector.ts), the same sum in the same order. */
export function magnitude(v: Float32Array, dim: number): number {
  let m = 0;
  for (let i = 0; i < dim; i++) m += v[i]! * v[i]!;
  return Math.sqrt(m);
}

export class VectorBlock {
  /** The dimension (named as Orama's VectorIndex names it). */
  readonly size: number;
  /** The rows: in a WebAssembly memory with its kernel, or a plain array. */
  private mem: RowMemory;
  private mags: Float64Array;
  /** Row → internal id, 0 for a hole. */
  private ids: Uint32Array;
  /** Internal id → row + 1, 0 for none. */
  private rowOf: Uint32Array;
  /** Rows used, holes included. */
  private rows = 0;
  private live = 0;
  /** The float rows (a view the memory gives anew when it grows). */
  private get data(): Float32Array {
    return this.mem.rows;
  }
  /** Set in a cold block: the codes, and the floats of rows added since the load or the last save. */
  private cold: ColdRows | undefined;

  constructor(dim: number, capacity = 16) {
    this.size = dim;
    this.mem = RowMemory.create(dim, capacity);
    this.mags = new Float64Array(capacity);
    this.ids = new Uint32Array(capacity);
    this.rowOf = new Uint32Array(capacity + 1);
  }

  /**
   * A block over vectors already laid out as rows (the index file's block): `ids[i]` and
   * `mags[i]` go with row i. The array is taken as it is, not copied (rows made by `rowsFor` are
   * in the kernel's memory); rows past the ids are the room new vectors go into (never written,
   * fresh zero pages cost no memory until then).
   */
  static fromRows(dim: number, block: Float32Array, ids: ArrayLike<number>, mags: ArrayLike<number>): VectorBlock {
    const n = ids.length;
    if (block.length < n * dim || block.length % dim !== 0 || mags.length !== n) throw new Error("the vector block does not match its ids");
    const capacity = block.length / dim;
    const b = new VectorBlock(dim, 0);
    b.mem = RowMemory.of(dim, block);
    b.mags = new Float64Array(capacity);
    b.mags.set(mags);
    b.takeIds(ids, capacity);
    return b;
  }

  /**
   * A cold block of the file's `ids.length` vectors, with room for `capacity` rows: its rows are
   * read from `file` (the block at byte `blockAt`) when a search needs them. The caller gives
   * every row's floats once (`coldFill`) before it is searched.
   */
  static cold(dim: number, ids: ArrayLike<number>, mags: ArrayLike<number>, capacity: number, file: RowFile, blockAt: number, wasm = true): VectorBlock {
    const b = VectorBlock.fileBacked(dim, ids, mags, capacity);
    b.cold = new ColdRows(dim, capacity, file, blockAt, wasm);
    return b;
  }

  /**
   * A lazy block of the file's `ids.length` vectors (a writer's: it adds and removes rows, reads a
   * row now and then, and writes them all only when it writes a new base; a command's search):
   * no float and no code is read at load, every row is read from `file` when asked for. With
   * `codes` (a command's search), the file's codes of its rows bound the cosines as a cold block's
   * do, streamed from the file by each scan (ColdRows.useFileCodes).
   */
  static lazy(dim: number, ids: ArrayLike<number>, mags: ArrayLike<number>, capacity: number, file: RowFile, blockAt: number, codes?: FileCodes): VectorBlock {
    const b = VectorBlock.fileBacked(dim, ids, mags, capacity);
    b.cold = new ColdRows(dim, capacity, file, blockAt, false, false);
    b.cold.fileRows(ids.length);
    if (codes) b.cold.useFileCodes(codes, ids.length);
    return b;
  }

  /** A block with its ids and magnitudes and no rows of its own: they stay in the file. */
  private static fileBacked(dim: number, ids: ArrayLike<number>, mags: ArrayLike<number>, capacity: number): VectorBlock {
    if (mags.length !== ids.length || capacity < ids.length) throw new Error("the vector block does not match its ids");
    const b = new VectorBlock(dim, 0);
    b.mags = new Float64Array(capacity);
    b.mags.set(mags);
    b.takeIds(ids, capacity);
    return b;
  }

  /** A cold block's load: the file's codes of rows 0…n − 1 (ColdRows.takeFileCodes); false when they failed their check and coldFill must make them. */
  coldCodes(read: (into: Uint8Array) => boolean, table: FigureColumns, n: number): boolean {
    return this.cold!.takeFileCodes(read, table, n);
  }

  /** The floats of file rows `first`…`first + n - 1` (`floats` from 0), to make their codes from: a cold block's load. */
  coldFill(first: number, floats: Float32Array, n: number): void {
    for (let k = 0; k < n; k++) this.cold!.setRow(first + k, floats, k * this.size, this.mags[first + k]!, first + k);
  }

  /** Whether the block is cold (its loaded rows' floats are in the index file, not in memory). */
  get isCold(): boolean {
    return this.cold !== undefined;
  }

  /** The integer pass's kernel ran (tests). */
  get coldKernelRan(): boolean {
    return this.cold?.kernelRan === true;
  }

  /**
   * After a save that wrote this block's rows, in row order, into the file now read through `file`
   * (its block at byte `blockAt`): the cold rows are read from there, the floats held for rows
   * added since are dropped.
   */
  repoint(file: RowFile, blockAt: number): void {
    this.cold?.repoint(file, blockAt, this.ids, this.rows);
  }

  /** Rows for `ids` (the file's order), each checked: an id, once. */
  private takeIds(ids: ArrayLike<number>, capacity: number): void {
    const n = ids.length;
    this.ids = new Uint32Array(capacity);
    this.ids.set(ids);
    let max = 0;
    for (let i = 0; i < n; i++) {
      const id = this.ids[i]!;
      if (id === 0 || !Number.isInteger(ids[i])) throw new Error("a vector has no valid id");
      if (id > max) max = id;
    }
    this.rowOf = new Uint32Array(max + 1);
    for (let i = 0; i < n; i++) {
      if (this.rowOf[this.ids[i]!]) throw new Error("two vectors have the same id");
      this.rowOf[this.ids[i]!] = i + 1;
    }
    this.rows = n;
    this.live = n;
  }

  /** Vectors held. */
  get count(): number {
    return this.live;
  }

  has(id: InternalId): boolean {
    return id < this.rowOf.length && this.rowOf[id]! > 0;
  }

  /** The vector of `id`: a view into the block, valid until the next add or remove (in a cold block, read from the file). */
  get(id: InternalId): Float32Array | undefined {
    if (!this.has(id)) return undefined;
    const r = this.rowOf[id]! - 1;
    if (this.cold) return this.cold.row(r, id);
    return this.data.subarray(r * this.size, (r + 1) * this.size);
  }

  magnitudeOf(id: InternalId): number | undefined {
    return this.has(id) ? this.mags[this.rowOf[id]! - 1] : undefined;
  }

  /** Orama's add: a new id goes last; an id already held keeps its row (as Map.set keeps its place). */
  add(id: InternalId, value: Float32Array | number[]): void {
    let v = value instanceof Float32Array ? value : new Float32Array(value);
    // Orama checks a document's vector against the schema; one added directly is checked here.
    if (v.length !== this.size) throw new Error(`a vector of ${v.length} dimensions in an index of ${this.size}`);
    let r: number;
    if (this.has(id)) r = this.rowOf[id]! - 1;
    else {
      if (this.rows === this.ids.length) {
        // `v` may be a view of this block: growing the memory in place detaches the old views
        // (a squeeze only moves rows down and leaves the rows past the last one as they were).
        if (v.buffer === this.data.buffer) v = v.slice();
        this.grow();
      }
      r = this.rows++;
      this.live++;
      if (id >= this.rowOf.length) {
        const wider = new Uint32Array(Math.max(id + 1, this.rowOf.length * 2));
        wider.set(this.rowOf);
        this.rowOf = wider;
      }
      this.rowOf[id] = r + 1;
      this.ids[r] = id;
    }
    this.mags[r] = magnitude(v, this.size);
    if (this.cold) {
      // Kept until a save writes it to the file (the caller may reuse its array).
      const own = v.slice();
      this.cold.hot.set(id, own);
      this.cold.setRow(r, own, 0, this.mags[r]!, -1);
      return;
    }
    this.data.set(v, r * this.size);
  }

  remove(id: InternalId): void {
    if (!this.has(id)) return;
    const r = this.rowOf[id]! - 1;
    this.rowOf[id] = 0;
    this.ids[r] = 0;
    this.cold?.hot.delete(id);
    this.live--;
    if (r === this.rows - 1) this.rows--;
    else if (this.rows - this.live > Math.max(64, this.rows / 4)) this.squeeze();
  }

  /** The ids, in row order (the order a Map of them would iterate). */
  *keys(): IterableIterator<InternalId> {
    for (let r = 0; r < this.rows; r++) if (this.ids[r]) yield this.ids[r]!;
  }

  /** The ids and magnitudes of the vectors, in row order (the order `bytes` writes them in). */
  columns(): { ids: InternalId[]; magnitudes: number[] } {
    const ids: InternalId[] = [];
    const magnitudes: number[] = [];
    for (let r = 0; r < this.rows; r++) {
      if (!this.ids[r]) continue;
      ids.push(this.ids[r]!);
      magnitudes.push(this.mags[r]!);
    }
    return { ids, magnitudes };
  }

  /**
   * The vectors' bytes in row order, as views of the block itself: runs of rows without a hole,
   * at most `maxBytes` each. Writing the index file from these copies nothing; a staging block
   * and a view object per vector were part of what a save added to the watch process's peak.
   */
  *bytes(maxBytes = 1 << 20): IterableIterator<Uint8Array> {
    if (this.cold) {
      yield* this.cold.bytes(this.ids, this.rows, maxBytes);
      return;
    }
    const rowBytes = this.size * 4;
    const perRun = Math.max(1, Math.floor(maxBytes / rowBytes));
    for (let r = 0; r < this.rows; ) {
      if (!this.ids[r]) {
        r++;
        continue;
      }
      let end = r + 1;
      while (end < this.rows && end - r < perRun && this.ids[end]) end++;
      yield new Uint8Array(this.data.buffer, this.data.byteOffset + r * rowBytes, (end - r) * rowBytes);
      r = end;
    }
  }

  /**
   * Orama's find: the cosine of `query` with every vector (or with the ids a filter left, in
   * their order), kept when at or above `similarity`.
   */
  find(query: Float32Array | number[], similarity: number, whereFiltersIDs?: Iterable<InternalId>): Similar[] {
    const q = query instanceof Float32Array ? query : new Float32Array(query);
    const out: Similar[] = [];
    this.scan(q, similarity, undefined, whereFiltersIDs, (id, cos) => {
      if (cos >= similarity) out.push([id, cos]);
    });
    return out;
  }

  /**
   * What Orama's vector search keeps of `find`: the `limit` best at or above `similarity`, in
   * its order (cosine descending, then internal id), without a pair per vector and a sort of
   * them all. `only`: the ids a filter left.
   */
  nearest(query: Float32Array, limit: number, similarity: number, only?: Iterable<InternalId>): Similar[] {
    if (limit <= 0) return [];
    const best = new Best(limit);
    this.scan(query, similarity, limit, only, (id, cos) => {
      if (cos >= similarity) best.offer(id, cos);
    });
    return best.sorted();
  }

  /**
   * `visit(id, cosine)` for every vector that may be kept: the ids `only` names, in its order; in a
   * cold block, the rows its bounds let through for `similarity` and, with `limit`, the best
   * `limit` (candidates); else every row, in row order. The cosine is the exact scan's, always.
   */
  private scan(query: Float32Array, similarity: number, limit: number | undefined, only: Iterable<InternalId> | undefined, visit: (id: InternalId, cos: number) => void): void {
    const qMag = magnitude(query, this.size);
    if (only) {
      for (const id of only) {
        if (!this.has(id)) continue;
        const r = this.rowOf[id]! - 1;
        visit(id, this.dotOf(query, r) / (qMag * this.mags[r]!));
      }
      return;
    }
    if (this.cold) {
      const picked = this.candidates(query, qMag, similarity, limit);
      if (limit !== undefined && picked.hi && picked.n > 2 * limit) return this.bestFirst(query, qMag, similarity, limit, picked.rows, picked.n, picked.hi, visit);
      const dots = new Float64Array(picked.n);
      this.cold.dots(query, picked.rows, picked.n, this.ids, dots);
      for (let k = 0; k < picked.n; k++) {
        const r = picked.rows[k]!;
        visit(this.ids[r]!, dots[k]! / (qMag * this.mags[r]!));
      }
      return;
    }
    const dots = this.mem.dots(query, this.rows);
    for (let r = 0; r < this.rows; r++) {
      const id = this.ids[r]!;
      if (id !== 0) visit(id, dots[r]! / (qMag * this.mags[r]!));
    }
  }

  /**
   * The candidates of a search for the best `limit`, scored exactly in the order of their upper
   * bounds (`hi`), a batch at a time, until the next one's upper bound is below the limit-th best
   * exact cosine so far: no row left can then enter the best `limit` (its cosine is at most its
   * upper bound), and the rows not scored are not visited. A row without a bound (+Infinity) or with
   * a NaN one comes first. The best `limit` of what is visited are the exact scan's, in its order.
   */
  private bestFirst(query: Float32Array, qMag: number, similarity: number, limit: number, rows: Uint32Array, n: number, hi: Float64Array, visit: (id: InternalId, cos: number) => void): void {
    const upper = (r: number) => (Number.isNaN(hi[r]!) ? Infinity : hi[r]!);
    const order = rows.slice(0, n).sort((a, b) => upper(b) - upper(a) || a - b);
    // The limit best exact cosines at or above the floor so far (a min-heap): its root is the bar.
    const kept = new Float64Array(limit);
    let size = 0;
    const batch = Math.max(limit, 64);
    const dots = new Float64Array(batch);
    for (let from = 0; from < n; from += batch) {
      if (size === limit && upper(order[from]!) < kept[0]!) return;
      const part = order.slice(from, Math.min(n, from + batch)).sort();
      this.cold!.dots(query, part, part.length, this.ids, dots);
      for (let k = 0; k < part.length; k++) {
        const r = part[k]!;
        const cos = dots[k]! / (qMag * this.mags[r]!);
        visit(this.ids[r]!, cos);
        if (!(cos >= similarity)) continue;
        if (size < limit) heapPush(kept, size++, cos);
        else if (cos > kept[0]!) heapReplaceRoot(kept, size, cos);
      }
    }
  }

  /**
   * The cosine of `query` with every vector held, in row order: one pass over the block; with
   * `step`, with every step-th of them only (a sample of the background).
   */
  cosinesToAll(query: Float32Array, step = 1): Float64Array {
    const qMag = magnitude(query, this.size);
    const out = new Float64Array(Math.ceil(this.live / step));
    let seen = 0;
    let k = 0;
    if (this.cold) {
      const visit = new Uint32Array(out.length);
      for (let r = 0; r < this.rows; r++) if (this.ids[r] && seen++ % step === 0) visit[k++] = r;
      this.cold.forRows(visit, k, this.ids, (j, floats, at) => {
        const r = visit[j]!;
        out[j] = dotAt(query, floats, at, this.size) / (qMag * this.mags[r]!);
      });
      return out.subarray(0, k);
    }
    if (step === 1) {
      const dots = this.mem.dots(query, this.rows);
      for (let r = 0; r < this.rows; r++) if (this.ids[r]) out[k++] = dots[r]! / (qMag * this.mags[r]!);
      return out.subarray(0, k);
    }
    for (let r = 0; r < this.rows; r++) if (this.ids[r] && seen++ % step === 0) out[k++] = this.mem.dot(query, r) / (qMag * this.mags[r]!);
    return out.subarray(0, k);
  }

  /** Room for more rows: holes squeezed out when there are many, else a larger block. */
  private grow(): void {
    if (this.rows - this.live > this.rows / 4) {
      this.squeeze();
      if (this.rows < this.ids.length) return;
    }
    const capacity = Math.max(16, Math.ceil(this.ids.length * 1.5));
    if (this.cold) this.cold.grow(capacity);
    else this.mem.grow(capacity);
    const mags = new Float64Array(capacity);
    mags.set(this.mags.subarray(0, this.rows));
    const ids = new Uint32Array(capacity);
    ids.set(this.ids.subarray(0, this.rows));
    this.mags = mags;
    this.ids = ids;
  }

  /**
   * Drop the holes, keeping the rows' order, in place: a copy into new arrays held the old and the
   * new block at once. Views handed out before (get: valid until the next add or remove) may then
   * show another row.
   */
  private squeeze(): void {
    const n = this.size;
    let w = 0;
    for (let r = 0; r < this.rows; r++) {
      const id = this.ids[r]!;
      if (!id) continue;
      if (w !== r) {
        if (this.cold) this.cold.move(r, w);
        else this.data.copyWithin(w * n, r * n, (r + 1) * n);
        this.mags[w] = this.mags[r]!;
        this.ids[w] = id;
        this.rowOf[id] = w + 1;
      }
      w++;
    }
    this.ids.fill(0, w, this.rows);
    this.rows = w;
  }

  /** The exact dot of `query` with row `r` (a cold row's floats read from the file). */
  private dotOf(query: Float32Array, r: number): number {
    if (!this.cold) return this.mem.dot(query, r);
    return dotAt(query, this.cold.row(r, this.ids[r]!), 0, this.size);
  }

  /**
   * The rows of a cold block to score exactly, ascending: every row whose cosine's upper bound
   * reaches `similarity` and, with `limit`, the limit-th largest lower bound (τ), plus every row
   * without a bound. Why no row of the answer is left out: `limit` rows have cos ≥ lower ≥ τ, so
   * the limit-th best cosine is ≥ τ and every row of the best `limit` has upper ≥ cos ≥ τ; and a
   * row kept for its cosine ≥ similarity has upper ≥ cos ≥ similarity. The exact cosines alone
   * then decide, in the exact scan's order. A query without a bound (not finite, no length) scores
   * every row exactly.
   */
  private candidates(query: Float32Array, qMag: number, similarity: number, limit?: number): { rows: Uint32Array; n: number; hi?: Float64Array } {
    const cold = this.cold!;
    const rows = new Uint32Array(this.live);
    let n = 0;
    const b = cold.scores(query, qMag, this.mags, this.rows);
    if (!b) {
      for (let r = 0; r < this.rows; r++) if (this.ids[r]) rows[n++] = r;
      return { rows, n };
    }
    const { lo, hi } = b;
    let t = similarity;
    if (limit !== undefined) t = Math.max(similarity, kthLargest(lo, this.ids, this.rows, limit, (r) => cold.isBounded(r)));
    // Written as "not below" so a NaN bound (never expected) is scored rather than dropped.
    for (let r = 0; r < this.rows; r++) if (this.ids[r] && (!cold.isBounded(r) || !(hi[r]! < t))) rows[n++] = r;
    return { rows, n, hi };
  }

  /** Orama's save() gets nothing: the index file stores the block itself (format.ts). */
  toJSON(): { size: number; vectors: [] } {
    return { size: this.size, vectors: [] };
  }
}

/** Adds `x` to the min-heap `heap[0..size)`. */
function heapPush(heap: Float64Array, size: number, x: number): void {
  let i = size;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (heap[p]! <= x) break;
    heap[i] = heap[p]!;
    i = p;
  }
  heap[i] = x;
}

/** Replaces the root of the min-heap `heap[0..size)` with `x` (larger than it). */
function heapReplaceRoot(heap: Float64Array, size: number, x: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const c = l + 1 < size && heap[l + 1]! < heap[l]! ? l + 1 : l;
    if (heap[c]! >= x) break;
    heap[i] = heap[c]!;
    i = c;
  }
  heap[i] = x;
}

/** The `k`-th largest of `values` over the live rows `use` accepts; −Infinity when fewer than `k` (a min-heap of the k largest). */
function kthLargest(values: Float64Array, ids: Uint32Array, rows: number, k: number, use: (r: number) => boolean): number {
  const heap = new Float64Array(Math.min(k, rows) + 1);
  let size = 0;
  for (let r = 0; r < rows; r++) {
    const x = values[r]!;
    if (!ids[r] || !use(r) || !(x > -Infinity)) continue;
    if (size < k) heapPush(heap, size++, x);
    else if (x > heap[0]!) heapReplaceRoot(heap, size, x);
  }
  return size < k ? -Infinity : heap[0]!;
}
