/**
 * The dot products of a vector search, in WebAssembly SIMD: where the JS loop does one
 * multiply-add at a time, the kernel does two per f64x2 instruction (figures in docs/BENCHMARKS.md).
 *
 * The sums are the JS loop's to the bit (`dotAt` below): each float is widened to f64, each product
 * is an f64 product (exact: two 24-bit mantissas fit in 53), and the four accumulators of the JS
 * loop are the four lanes here, each fed the same products in the same order and added in the same
 * order at the end ((d0 + d1) + d2) + d3. No fused multiply-add (relaxed SIMD) is used: it would
 * round differently. So a search ranks and ties exactly as before, whichever of the two scans it.
 *
 * A block the kernel scans lives in the module's memory: its rows are a Float32Array view of it,
 * so a scan copies nothing, and growing the memory keeps the rows where they are (JSC reserves the
 * address space; no second block is alive while one is copied).
 *
 * Only blocks of at least KERNEL_MIN_FLOATS get a memory, and the module is assembled, compiled and
 * instantiated on the first scan that large: a new process paid milliseconds for a memory and the
 * kernel's first call, which a hook over a small index (scanned sooner by the JS loop) must not pay.
 * Smaller blocks, single rows, and any block where WebAssembly is refused run the JS loop.
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

// Instruction helpers shared by the two modules.
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
/** `block loop <cond: exit when true> body br 0 end end` */
const whileNot = (exit: number[], body: number[]) => [0x02, 0x40, 0x03, 0x40, ...exit, 0x0d, 1, ...body, 0x0c, 0, 0x0b, 0x0b];
const bump = (l: number, by: number) => [...get(l), ...i32(by), ADD, ...set(l)];
/** A module of one function `fn` with these i32 parameters and locals, importing its memory as m.mem. */
function moduleOf(fn: string, params: number, locals: number[][], body: number[]): Uint8Array<ArrayBuffer> {
  const code = [...list(locals), ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, list([[0x60, ...list(Array.from({ length: params }, () => [I32])), 0]])),
    ...section(2, list([[...name("m"), ...name("mem"), 0x02, 0x00, 0x01]])),
    ...section(3, list([[0]])),
    ...section(7, list([[...name(fn), 0x00, 0]])),
    ...section(10, list([[...uleb(code.length), ...code]])),
  ]);
}

/** The module's bytes (built on first need: the arrays cost a millisecond a process never scanning should not pay). */
function assemble(): Uint8Array<ArrayBuffer> {
  // Locals: the six parameters, then r, p (row start), vp, qp (running pointers), end8, end4, end
  // (where the 8-wide, the 4-wide and the scalar parts of a row stop), then the two f64x2
  // accumulators (lanes d0 d1 and d2 d3) and d0 once the lanes are taken apart.
  const [QD, ROWS, COUNT, ROW_BYTES, DIM, OUT, R, P, VP, QP, END8, END4, END, ACC_A, ACC_B, D0, TMP] = Array.from({ length: 17 }, (_, i) => i);
  const v128Load = (offset: number) => simd(0x00, ...memarg(4, offset));
  const PROMOTE_LOW = simd(0x5f);
  const F64X2_MUL = simd(0xf2);
  const F64X2_ADD = simd(0xf0);
  const lane = (l: number) => simd(0x21, l);

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
  return moduleOf("dots", 6, [[7, I32], [2, V128], [1, F64], [1, V128]], body);
}

const PAGE = 65536;
/** Past this, a memory32 cannot address it; such a block stays a plain array (and the JS loop). */
const MAX_BYTES = 2 ** 32 - PAGE;
/** The smallest scan (rows × dim) the kernel runs: below it the JS loop is done before the kernel is compiled. */
export const KERNEL_MIN_FLOATS = 1 << 21;

/**
 * The JS loop: four accumulators let the CPU overlap the multiply-adds; the tail goes to the
 * first, and the sums are added in the same order for every row. The kernel matches it to the bit.
 */
export function dotAt(q: Float32Array, v: Float32Array, at: number, dim: number): number {
  const tail = dim - (dim % 4);
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  let i = 0;
  for (; i < tail; i += 4) {
    d0 += q[i]! * v[at + i]!;
    d1 += q[i + 1]! * v[at + i + 1]!;
    d2 += q[i + 2]! * v[at + i + 2]!;
    d3 += q[i + 3]! * v[at + i + 3]!;
  }
  for (; i < dim; i++) d0 += q[i]! * v[at + i]!;
  return d0 + d1 + d2 + d3;
}

/** A module compiled on first need, once per process; null where WebAssembly refuses it. */
function lazyModule(make: () => Uint8Array<ArrayBuffer>): () => WebAssembly.Module | null {
  let compiled: WebAssembly.Module | null | undefined;
  return () => {
    if (compiled === undefined) {
      try {
        compiled = new WebAssembly.Module(make());
      } catch {
        compiled = null;
      }
    }
    return compiled;
  };
}

/** `fn` of an instance of `mod` over `memory`, or null (no module or memory, or refused). */
function instantiate<F>(mod: WebAssembly.Module | null, memory: WebAssembly.Memory | undefined, fn: string): F | null {
  if (!mod || !memory) return null;
  try {
    return new WebAssembly.Instance(mod, { m: { mem: memory } }).exports[fn] as F;
  } catch {
    return null;
  }
}

const kernelModule = lazyModule(assemble);

/** Each memory's current buffer → its RowMemory, so a block read into one is adopted, not copied. */
const owners = new WeakMap<ArrayBufferLike, RowMemory>();

type Dots = (qd: number, rows: number, count: number, rowBytes: number, dim: number, out: number) => void;

/**
 * Rows of `dim` floats with room for `capacity` rows: in a WebAssembly memory, with the scratch
 * the kernel uses after them (the query widened to f64, then an f64 per row), or, where that is
 * refused, in a plain array scanned by the JS loop. `rows` is the view a VectorBlock keeps;
 * `grow` makes room (in place in a memory) and gives a new view of the same rows.
 */
export class RowMemory {
  readonly dim: number;
  private memory: WebAssembly.Memory | undefined;
  /** The kernel once instantiated; null when it cannot be. */
  private kernel: Dots | null | undefined;
  rows: Float32Array = new Float32Array(0);
  private queryAt = 0;
  private outAt = 0;
  private out = new Float64Array(0);

  private constructor(dim: number, capacity: number, memory: WebAssembly.Memory | undefined, plain?: Float32Array) {
    this.dim = dim;
    this.memory = memory;
    if (plain) this.rows = plain;
    else this.place(capacity);
  }

  /**
   * Room for `capacity` rows: in a WebAssembly memory when the kernel would scan that many and
   * one is given, else a plain array (a memory's pages cost a new process more to fill, which a
   * hook loading a small index would pay for nothing).
   */
  static create(dim: number, capacity: number): RowMemory {
    const memory = capacity * dim >= KERNEL_MIN_FLOATS ? wasmMemory(bytesFor(dim, capacity)) : undefined;
    return memory ? new RowMemory(dim, capacity, memory) : new RowMemory(dim, capacity, undefined, new Float32Array(capacity * dim));
  }

  /** The memory `rows` is the whole row view of, if it is one of these; else a plain one over `rows` itself (not copied). */
  static of(dim: number, rows: Float32Array): RowMemory {
    const mem = owners.get(rows.buffer);
    if (mem && mem.dim === dim && mem.rows.byteOffset === rows.byteOffset && mem.rows.length === rows.length) return mem;
    return new RowMemory(dim, rows.length / dim, undefined, rows);
  }

  /** Whether the kernel has scanned these rows (instantiated and run). */
  get kernelRan(): boolean {
    return typeof this.kernel === "function";
  }

  /** Whether the rows are in a WebAssembly memory (the kernel may scan them). */
  get inMemory(): boolean {
    return this.memory !== undefined;
  }

  /**
   * Room for `capacity` rows, the rows kept: in place in a memory; a plain array is copied into a
   * larger one, or into a memory once the kernel would scan that many.
   */
  grow(capacity: number): void {
    const bytes = bytesFor(this.dim, capacity);
    if (this.memory && growInPlace(this.memory, bytes)) {
      // The query and the per-row sums move past the new rows; what they held was scratch.
      this.place(capacity);
      return;
    }
    const old = this.rows;
    const memory = !this.memory && capacity * this.dim >= KERNEL_MIN_FLOATS ? wasmMemory(bytes) : undefined;
    this.memory = memory;
    this.kernel = undefined;
    if (memory) this.place(capacity);
    else this.rows = new Float32Array(capacity * this.dim);
    this.rows.set(old.subarray(0, Math.min(old.length, this.rows.length)));
  }

  private place(capacity: number): void {
    const { dim, memory } = this;
    if (!memory) return;
    this.queryAt = queryAt(dim, capacity);
    this.outAt = this.queryAt + dim * 8;
    this.rows = new Float32Array(memory.buffer, 0, capacity * dim);
    this.out = new Float64Array(memory.buffer, this.outAt, capacity);
    owners.set(memory.buffer, this);
  }

  /**
   * The dot product of `query` with each of the first `count` rows, in the first `count` places
   * of the array returned (valid until the next call or grow): the kernel's for a large scan of
   * rows in a memory, else the JS loop's. The same numbers either way.
   */
  dots(query: Float32Array, count: number): Float64Array {
    const { dim } = this;
    const kernel = count * dim >= KERNEL_MIN_FLOATS ? this.instantiated() : null;
    if (kernel) {
      const widened = new Float64Array(this.memory!.buffer, this.queryAt, dim);
      for (let i = 0; i < dim; i++) widened[i] = query[i]!;
      kernel(this.queryAt, 0, count, dim * 4, dim, this.outAt);
      return this.out;
    }
    const out = new Float64Array(count);
    for (let r = 0; r < count; r++) out[r] = dotAt(query, this.rows, r * dim, dim);
    return out;
  }

  /** The dot product of `query` with one row (the JS loop: one row is not worth a call into the kernel). */
  dot(query: Float32Array, row: number): number {
    return dotAt(query, this.rows, row * this.dim, this.dim);
  }

  private instantiated(): Dots | null {
    if (this.kernel === undefined) this.kernel = instantiate<Dots>(this.memory ? kernelModule() : null, this.memory, "dots");
    return this.kernel;
  }
}

/** Grow `memory` to hold at least `bytes`, its contents kept; false (nothing changed) when it cannot. */
function growInPlace(memory: WebAssembly.Memory, bytes: number): boolean {
  if (bytes > MAX_BYTES) return false;
  try {
    const pages = Math.ceil(bytes / PAGE) - memory.buffer.byteLength / PAGE;
    if (pages > 0) memory.grow(pages);
    return true;
  } catch {
    return false;
  }
}

/** A WebAssembly memory of at least `bytes`, or undefined where none is given. */
function wasmMemory(bytes: number): WebAssembly.Memory | undefined {
  if (bytes > MAX_BYTES || typeof WebAssembly !== "object") return undefined;
  try {
    return new WebAssembly.Memory({ initial: Math.ceil(bytes / PAGE) });
  } catch {
    return undefined;
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
 * kernel's where one is given (VectorBlock.fromRows then takes it as it is), else a plain array.
 */
export function rowsFor(dim: number, rows: number): Float32Array {
  return RowMemory.create(dim, rows).rows;
}

/**
 * The integer dots of a cold block's first pass (vector-block.ts): each row's int8 codes against
 * the query's int16 codes, summed exactly in i32 lanes (the query's scale keeps every sum within
 * an i32: quantizeQuery). `idots(qp, codes, count, stride, out)`: `count` rows of `stride` bytes
 * (a multiple of 16, zero past the dimension) from byte `codes` on, against `stride` i16 at `qp`,
 * each sum to i32 `out[k]`.
 */
function assembleCodes(): Uint8Array<ArrayBuffer> {
  const [QP0, CODES, COUNT, STRIDE, OUT, R, P, VP, QP, END, ACC, C] = Array.from({ length: 12 }, (_, i) => i);
  const v128Load = (offset: number) => simd(0x00, ...memarg(4, offset));
  const EXTEND_LOW = simd(0x87);
  const EXTEND_HIGH = simd(0x88);
  const DOT = simd(0xba);
  const I32X4_ADD = simd(0xae);
  const lane = (l: number) => simd(0x1b, l);
  const half = (extend: number[], qo: number) => [...get(ACC), ...get(C), ...extend, ...get(QP), ...v128Load(qo), ...DOT, ...I32X4_ADD, ...set(ACC)];
  const body = [
    ...get(CODES), ...set(P),
    ...whileNot([...get(R), ...get(COUNT), GE_U], [
      ...simd(0x0c, ...new Array<number>(16).fill(0)), ...set(ACC),
      ...get(P), ...set(VP), ...get(QP0), ...set(QP),
      ...get(P), ...get(STRIDE), ADD, ...set(END),
      ...whileNot([...get(VP), ...get(END), GE_U], [
        ...get(VP), ...v128Load(0), ...set(C),
        ...half(EXTEND_LOW, 0), ...half(EXTEND_HIGH, 16),
        ...bump(VP, 16), ...bump(QP, 32),
      ]),
      ...get(OUT), ...get(R), ...i32(2), SHL, ADD,
      ...get(ACC), ...lane(0), ...get(ACC), ...lane(1), ADD, ...get(ACC), ...lane(2), ADD, ...get(ACC), ...lane(3), ADD,
      0x36, ...memarg(2, 0),
      ...get(P), ...get(STRIDE), ADD, ...set(P),
      ...bump(R, 1),
    ]),
    0x0b,
  ];
  return moduleOf("idots", 5, [[5, I32], [2, V128]], body);
}

const codesModule = lazyModule(assembleCodes);

type IDots = (qp: number, codes: number, count: number, stride: number, out: number) => void;

/** Bytes per row of codes: the dimension rounded up to the kernel's 16 lanes. */
export function codeStride(dim: number): number {
  return Math.ceil(dim / 16) * 16;
}

/**
 * Rows of int8 codes (`stride` bytes each, zero past the dimension) with room for `capacity`
 * rows: in a WebAssembly memory, with the query's i16 codes and an i32 per row after them, or
 * in a plain array where that is refused (then the JS loop sums them: integers, exact in any order).
 */
export class CodeMemory {
  readonly dim: number;
  readonly stride: number;
  private memory: WebAssembly.Memory | undefined;
  private kernel: IDots | null | undefined;
  codes: Int8Array = new Int8Array(0);
  private queryAt = 0;
  private outAt = 0;
  private out = new Int32Array(0);

  constructor(dim: number, capacity: number, wasm = true) {
    this.dim = dim;
    this.stride = codeStride(dim);
    this.memory = wasm ? wasmMemory(this.bytesFor(capacity)) : undefined;
    this.place(capacity);
  }

  get capacity(): number {
    return this.codes.length / this.stride;
  }

  /** Whether the integer kernel has summed these rows (instantiated and run). */
  get kernelRan(): boolean {
    return typeof this.kernel === "function";
  }

  private bytesFor(capacity: number): number {
    return capacity * this.stride + this.stride * 2 + capacity * 4;
  }

  private place(capacity: number): void {
    const { memory, stride } = this;
    if (!memory) {
      const old = this.codes;
      this.codes = new Int8Array(capacity * stride);
      this.codes.set(old.subarray(0, Math.min(old.length, this.codes.length)));
      return;
    }
    this.queryAt = capacity * stride;
    this.outAt = this.queryAt + stride * 2;
    this.codes = new Int8Array(memory.buffer, 0, capacity * stride);
    this.out = new Int32Array(memory.buffer, this.outAt, capacity);
  }

  /** Room for `capacity` rows, the rows kept (in place in a memory; the query and sums after them are scratch). */
  grow(capacity: number): void {
    if (this.memory && !growInPlace(this.memory, this.bytesFor(capacity))) {
      // Plain codes from here on; place() copies them out of the memory, still whole.
      this.memory = undefined;
      this.kernel = undefined;
    }
    this.place(capacity);
  }

  /**
   * The exact integer dot of `query` (`stride` i16 codes, zero past the dimension) with each of the
   * first `count` rows, in the first `count` places of the array returned (valid until the next call or grow).
   */
  dots(query: Int16Array, count: number): Int32Array {
    const kernel = this.instantiated();
    if (kernel) {
      new Int16Array(this.memory!.buffer, this.queryAt, this.stride).set(query);
      kernel(this.queryAt, 0, count, this.stride, this.outAt);
      return this.out;
    }
    const { codes, dim, stride } = this;
    const out = new Int32Array(count);
    for (let r = 0; r < count; r++) {
      let s = 0;
      const at = r * stride;
      for (let i = 0; i < dim; i++) s += query[i]! * codes[at + i]!;
      out[r] = s;
    }
    return out;
  }

  private instantiated(): IDots | null {
    if (this.kernel === undefined) this.kernel = instantiate<IDots>(this.memory ? codesModule() : null, this.memory, "idots");
    return this.kernel;
  }
}
