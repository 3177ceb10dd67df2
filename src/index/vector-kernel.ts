/**
 * The dot products of a vector search, in WebAssembly SIMD: a JS loop over 20k × 768 floats
 * is bound by one multiply-add at a time; two f64x2 lanes pairs do four.
 *
 * The sums are the JS loop's to the bit (vector-block.ts `dot`): each float is widened to f64,
 * each product is an f64 product (exact: two 24-bit mantissas fit in 53), and the four
 * accumulators of the JS loop are the four lanes here, each fed the same products in the same
 * order and added in the same order at the end ((d0 + d1) + d2) + d3. No fused multiply-add
 * (relaxed SIMD) is used: it would round differently. So a search ranks and ties exactly as
 * before, and the JS loop stays the fallback where WebAssembly is refused.
 *
 * The vectors live in the module's memory: a block's rows are a Float32Array view of it, so a
 * scan copies nothing, and growing the memory keeps the rows where they are (JSC reserves the
 * address space; the engine copies nothing we can see, and no second block is ever alive).
 */

// The module, written out as its bytes: one function, `dots(qd, rows, count, rowBytes, dim, out)`.
// For `count` rows from byte `rows` on (`rowBytes` apart), the dot product of each row (dim f32)
// with the query at `qd` (dim f64, the query widened once) goes to f64 `out[k]`.
const I32 = 0x7f;
const F64 = 0x7c;
const V128 = 0x7b;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return [...out, b];
    out.push(b | 0x80);
  }
}
const list = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const name = (s: string) => list([...s].map((c) => [c.charCodeAt(0)]));

// Locals: the six parameters, then r, p (row start), vp, qp (running pointers), end8, end4, end
// (where the 8-wide, the 4-wide and the scalar parts of a row stop), then the two f64x2
// accumulators (lanes d0 d1 and d2 d3) and d0 once the lanes are taken apart.
const [QD, ROWS, COUNT, ROW_BYTES, DIM, OUT, R, P, VP, QP, END8, END4, END, ACC_A, ACC_B, D0, TMP] = Array.from({ length: 17 }, (_, i) => i);
const get = (l: number) => [0x20, l];
const set = (l: number) => [0x21, l];
const tee = (l: number) => [0x22, l];
const i32 = (n: number) => [0x41, ...sleb(n)];
const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
const memarg = (alignLog2: number, offset: number) => [alignLog2, ...uleb(offset)];
const ADD = 0x6a;
const AND = 0x71;
const SHL = 0x74;
const LT_U = 0x49;
const GE_U = 0x4f;
const v128Load = (offset: number) => simd(0x00, ...memarg(4, offset));
const PROMOTE_LOW = simd(0x5f);
const F64X2_MUL = simd(0xf2);
const F64X2_ADD = simd(0xf0);
const lane = (l: number) => simd(0x21, l);
/** `block loop <cond: exit when true> body br 0 end end` */
const whileNot = (exit: number[], body: number[]) => [0x02, 0x40, 0x03, 0x40, ...exit, 0x0d, 1, ...body, 0x0c, 0, 0x0b, 0x0b];
const bump = (l: number, by: number) => [...get(l), ...i32(by), ADD, ...set(l)];

/** Four floats at vp + vo against the query at qp + qo: d0 d1 into ACC_A, d2 d3 into ACC_B. */
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
const four = (qo: number, vo: number) => [
  ...get(VP), ...v128Load(vo), ...set(TMP),
  ...get(ACC_A), ...get(QP), ...v128Load(qo), ...get(TMP), ...PROMOTE_LOW, ...F64X2_MUL, ...F64X2_ADD, ...set(ACC_A),
  ...get(ACC_B), ...get(QP), ...v128Load(qo + 16), ...get(TMP), ...get(TMP), ...simd(0x0d, ...HIGH_HALF), ...PROMOTE_LOW, ...F64X2_MUL, ...F64X2_ADD, ...set(ACC_B),
];
const rowEnd = (mask: number) => [...get(P), ...get(DIM), ...i32(mask), AND, ...i32(2), SHL, ADD];

const body = [
  ...get(ROWS), ...set(P),
  ...whileNot([...get(R), ...get(COUNT), GE_U], [
    ...simd(0x0c, ...new Array<number>(16).fill(0)), ...tee(ACC_A), ...set(ACC_B),
    ...get(P), ...set(VP), ...get(QD), ...set(QP),
    ...rowEnd(-8), ...set(END8), ...rowEnd(-4), ...set(END4), ...rowEnd(-1), ...set(END),
    // Eight floats a step (two fours, one after the other: the lanes see the JS loop's order).
    ...whileNot([...get(VP), ...get(END8), GE_U], [...four(0, 0), ...four(32, 16), ...bump(QP, 64), ...bump(VP, 32)]),
    ...get(VP), ...get(END4), LT_U, 0x04, 0x40, ...four(0, 0), ...bump(QP, 32), ...bump(VP, 16), 0x0b,
    // The JS loop adds the last dim % 4 products to d0.
    ...get(ACC_A), ...lane(0), ...set(D0),
    ...whileNot([...get(VP), ...get(END), GE_U], [
      ...get(D0), ...get(QP), 0x2b, ...memarg(3, 0), ...get(VP), 0x2a, ...memarg(2, 0), 0xbb, 0xa2, 0xa0, ...set(D0),
      ...bump(QP, 8), ...bump(VP, 4),
    ]),
    ...get(OUT), ...get(R), ...i32(3), SHL, ADD,
    ...get(D0), ...get(ACC_A), ...lane(1), 0xa0, ...get(ACC_B), ...lane(0), 0xa0, ...get(ACC_B), ...lane(1), 0xa0,
    0x39, ...memarg(3, 0),
    ...get(P), ...get(ROW_BYTES), ADD, ...set(P),
    ...bump(R, 1),
  ]),
  0x0b,
];
const code = [...list([[7, I32], [2, V128], [1, F64], [1, V128]]), ...body];
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, list([[0x60, ...list([[I32], [I32], [I32], [I32], [I32], [I32]]), 0]])),
  ...section(2, list([[...name("m"), ...name("mem"), 0x02, 0x00, 0x01]])),
  ...section(3, list([[0]])),
  ...section(7, list([[...name("dots"), 0x00, 0]])),
  ...section(10, list([[...uleb(code.length), ...code]])),
]);

const PAGE = 65536;
/** Past this, a memory32 cannot address it; such a block stays a plain array (and the JS loop). */
const MAX_BYTES = 2 ** 32 - PAGE;

let compiled: WebAssembly.Module | null | undefined;
function kernelModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(MODULE);
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** Each memory's current buffer → its RowMemory, so a block read into one is adopted, not copied. */
const owners = new WeakMap<ArrayBufferLike, RowMemory>();

type Dots = (qd: number, rows: number, count: number, rowBytes: number, dim: number, out: number) => void;

/**
 * Rows of `dim` floats in a WebAssembly memory, with room for `capacity` rows, and the scratch
 * the kernel uses after them (the query widened to f64, then an f64 per row). `rows` is the view
 * a VectorBlock keeps; `grow` makes room in place and gives a new view of the same rows.
 */
export class RowMemory {
  readonly dim: number;
  private memory: WebAssembly.Memory;
  private kernel: Dots;
  private capacity = 0;
  rows = new Float32Array(0);
  private queryAt = 0;
  private outAt = 0;
  private widened = new Float64Array(0);
  private out = new Float64Array(0);

  private constructor(dim: number, capacity: number, memory: WebAssembly.Memory, kernel: Dots) {
    this.dim = dim;
    this.memory = memory;
    this.kernel = kernel;
    this.place(capacity);
  }

  /** Room for `capacity` rows, or undefined where WebAssembly or that much memory is refused. */
  static create(dim: number, capacity: number): RowMemory | undefined {
    const mod = kernelModule();
    const bytes = bytesFor(dim, capacity);
    if (!mod || dim <= 0 || bytes > MAX_BYTES) return undefined;
    try {
      const memory = new WebAssembly.Memory({ initial: Math.ceil(bytes / PAGE) });
      const instance = new WebAssembly.Instance(mod, { m: { mem: memory } });
      return new RowMemory(dim, capacity, memory, instance.exports.dots as Dots);
    } catch {
      return undefined;
    }
  }

  /** The memory `rows` is the whole row view of, if it is one of these. */
  static of(rows: Float32Array): RowMemory | undefined {
    const mem = owners.get(rows.buffer);
    return mem && mem.rows.byteOffset === rows.byteOffset && mem.rows.length === rows.length ? mem : undefined;
  }

  /** Room for `capacity` rows; false (nothing changed) when the memory cannot grow that far. */
  grow(capacity: number): boolean {
    const bytes = bytesFor(this.dim, capacity);
    if (bytes > MAX_BYTES) return false;
    const pages = Math.ceil(bytes / PAGE) - this.memory.buffer.byteLength / PAGE;
    try {
      if (pages > 0) this.memory.grow(pages);
    } catch {
      return false;
    }
    // The query and the per-row sums move past the new rows; what they held was scratch.
    this.place(capacity);
    return true;
  }

  private place(capacity: number): void {
    const { dim, memory } = this;
    this.capacity = capacity;
    this.queryAt = queryAt(dim, capacity);
    this.outAt = this.queryAt + dim * 8;
    this.rows = new Float32Array(memory.buffer, 0, capacity * dim);
    owners.set(memory.buffer, this);
    this.widened = new Float64Array(memory.buffer, this.queryAt, dim);
    this.out = new Float64Array(memory.buffer, this.outAt, capacity);
  }

  /** The query the next `dots` calls use (widened to f64 once, not per row). */
  query(q: Float32Array): void {
    for (let i = 0; i < this.dim; i++) this.widened[i] = q[i]!;
  }

  /**
   * The dot product of the query with `count` rows from row `first` on, `step` rows apart, in
   * the first `count` places of the array returned (valid until the next call or grow).
   */
  dots(first: number, count: number, step = 1): Float64Array {
    const { dim } = this;
    if (count > 0) this.kernel(this.queryAt, first * dim * 4, Math.min(count, this.capacity), step * dim * 4, dim, this.outAt);
    return this.out;
  }

  /** The dot product of the query with one row. */
  dot(row: number): number {
    this.kernel(this.queryAt, row * this.dim * 4, 1, 0, this.dim, this.outAt);
    return this.out[0]!;
  }
}

/** The rows, then the query widened to f64 (16-byte aligned), then an f64 per row. */
function bytesFor(dim: number, capacity: number): number {
  return queryAt(dim, capacity) + dim * 8 + capacity * 8;
}
function queryAt(dim: number, capacity: number): number {
  return Math.ceil((capacity * dim * 4) / 16) * 16;
}

/**
 * Room for `rows` vectors of `dim` floats, to read an index file's block into: in a memory of the
 * kernel's (VectorBlock.fromRows then takes it as it is), else a plain array.
 */
export function rowsFor(dim: number, rows: number): Float32Array {
  return (dim > 0 ? RowMemory.create(dim, rows)?.rows : undefined) ?? new Float32Array(rows * dim);
}
