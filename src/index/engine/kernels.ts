/**
 * The dot products of a vector search, in WebAssembly SIMD: where the JS loop does one
 * multiply-add at a time, the kernel does two per f64x2 instruction (figures in docs/BENCHMARKS.md).
 * The kernels are written as WebAssembly text beside this file (dots.wat, idots.wat; why their sums
 * are the JS loops' to the bit is said there) and assembled when the binary is built
 * (scripts/wat.ts): a search ranks and ties exactly as before, whichever of the two scans it.
 *
 * A block the kernel scans lives in the module's memory: its rows are a Float32Array view of it,
 * so a scan copies nothing, and growing the memory keeps the rows where they are (JSC reserves the
 * address space; no second block is alive while one is copied).
 *
 * Only blocks of at least KERNEL_MIN_FLOATS get a memory, and the module is decoded, compiled and
 * instantiated on the first scan that large: a new process paid milliseconds for a memory and the
 * kernel's first call, which a hook over a small index (scanned sooner by the JS loop) must not pay.
 * Smaller blocks, single rows, and any block where WebAssembly is refused run the JS loop.
 */

import dotsWasm from "./dots.wat";
import idotsWasm from "./idots.wat";
import { codeStride } from "./codes.ts";

// A source run that bypassed the assembler (a bun started outside the repository without its
// preload) gets a file's path here, not a module: say so, rather than fall back to the JS loops
// unseen. "AGFzbQ" is base64 of the module's magic, \0asm.
for (const [name, base64] of [["dots.wat", dotsWasm], ["idots.wat", idotsWasm]] as const) {
  if (typeof base64 !== "string" || !base64.startsWith("AGFzbQ")) throw new Error(`the WebAssembly kernel ${name} was not assembled: run bun with --preload scripts/wat-preload.ts (bunfig.toml's preload does it in the repository)`);
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
function lazyModule(base64: string): () => WebAssembly.Module | null {
  let compiled: WebAssembly.Module | null | undefined;
  return () => {
    if (compiled === undefined) {
      try {
        compiled = new WebAssembly.Module(Buffer.from(base64, "base64"));
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

const kernelModule = lazyModule(dotsWasm);

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

  /**
   * Room for `capacity` rows to read a scan's rows into, a run at a time: in a memory whatever its
   * size (the caller has judged the whole scan large enough for the kernel), else a plain array.
   */
  static scratch(dim: number, capacity: number): RowMemory {
    const memory = wasmMemory(bytesFor(dim, capacity));
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
   * rows in a memory (`anySize`: a run of a scan the caller judged large), else the JS loop's. The
   * same numbers either way.
   */
  dots(query: Float32Array, count: number, anySize = false): Float64Array {
    const { dim } = this;
    const kernel = anySize || count * dim >= KERNEL_MIN_FLOATS ? this.instantiated() : null;
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

let kernelsOn = true;

/**
 * Turn the kernels off (or on again) for the memories made from now on: their rows are then plain
 * arrays scanned by the JS loops. For the benchmark's row that shows what the kernels save
 * (scripts/bench/profile.ts `--no-kernel`) and for tests; the product never turns them off.
 */
export function setKernels(on: boolean): void {
  kernelsOn = on;
}

/** A WebAssembly memory of at least `bytes`, or undefined where none is given. */
function wasmMemory(bytes: number): WebAssembly.Memory | undefined {
  if (!kernelsOn || bytes > MAX_BYTES || typeof WebAssembly !== "object") return undefined;
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

const codesModule = lazyModule(idotsWasm);

type IDots = (qp: number, codes: number, count: number, stride: number, out: number) => void;


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
