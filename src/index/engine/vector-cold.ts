/**
 * The rows of a cold vector block (vector-block.ts): what the watch process keeps of a loaded
 * index's vectors. Per row, int8 codes and three f64 (its scale, its quantization error, the norm
 * of its codes); the float32 rows stay in the index file and are read by offset, through the
 * descriptor the store reads its chunk texts with, only for the rows a search must score exactly.
 * Rows added since the load (new turns) keep their floats in memory until a save puts them in the
 * file. Figures in docs/BENCHMARKS.md.
 *
 * Why the answers are the exact scan's, to the bit: the integer pass bounds each row's cosine
 * from both sides (`scores`), every row whose bounds let it into the answer is scored exactly, with
 * the same dot (dotAt) on the same floats, and the exact scores alone decide (VectorBlock.nearest).
 * With q = s_q·q̂ + δq and v = s_r·c + δv, q·v − s_q·s_r·(q̂·c) = q·δv + δq·(s_r·c), so
 * |q·v − A| ≤ ‖q‖·e_r + e_q·n_r; the 1e-9 terms cover the rounding of the floating sums (the exact
 * dot's own, relative to ‖q‖·‖v‖, is under 1e-13 at any model's dimension). A row whose floats or
 * stored magnitude could break that reasoning (not finite, a magnitude of 0, one that is not the
 * row's: only a file we did not write holds those) gets no bound: it is always scored exactly.
 */
import { IndexDamagedError, VectorsDamagedError } from "../../core/errors.ts";
import { CodeMemory, dotAt, KERNEL_MIN_FLOATS, RowMemory } from "./kernels.ts";
import { codeStride, quantizeRow, type FigureColumns } from "./codes.ts";

/** The file a cold block's rows are read from: readInto throws IndexDamagedError once it is closed or cut short. */
export interface RowFile {
  readInto(at: number, len: number, into: Uint8Array, offset?: number): void;
}

/** Rows read from the file in one piece at most (a scan of every row holds one piece at a time). */
const READ_BYTES = 1 << 20;

/**
 * The codes an index file holds of its rows (format.ts), with their figures and each row's CRC-32
 * (`table`, by file row), the byte where they start and their CRC-32.
 */
export interface FileCodes {
  table: FigureColumns & { crc: Uint32Array };
  at: number;
  crc: number;
}

/** A query's codes: q̂ and what the bound needs of it. */
interface QueryCodes {
  codes: Int16Array;
  scale: number;
  err: number;
}

export class ColdRows {
  readonly dim: number;
  /** The codes; none in a lazy block (a writer's: it never searches, every row would be scored exactly). */
  private mem: CodeMemory | undefined;
  /** Per row, the figures that bound its cosine from its codes (`bounded` 0: always scored exactly). */
  private fig: FigureColumns;
  /** Row → its row in the file's vector block, −1 for a row whose floats are in `hot`. */
  private fileRow: Float64Array;
  /** Floats of rows added since the load or the last save, by internal id. */
  readonly hot = new Map<number, Float32Array>();
  private file: RowFile;
  private blockAt: number;
  private readBuf: Float32Array;
  private lo = new Float64Array(0);
  private hi = new Float64Array(0);
  /**
   * The file's codes of file rows 0…rows − 1 (a command's search: useFileCodes), scanned from the
   * file by each search instead of held; every float row read from the file is then checked
   * against its own CRC-32 (`rowCrc`), so that no damaged float reaches a score.
   */
  private fileCodes: { at: number; rows: number; crc: number; rowCrc: Uint32Array } | undefined;
  /** The codes' CRC-32 held when a scan read them whole (checked once per process). */
  private codesChecked = false;

  constructor(dim: number, capacity: number, file: RowFile, blockAt: number, wasm = true, codes = true) {
    this.dim = dim;
    this.mem = codes ? new CodeMemory(dim, capacity, wasm) : undefined;
    this.fig = { scale: new Float64Array(capacity), err: new Float64Array(capacity), norm: new Float64Array(capacity), bounded: new Uint8Array(capacity) };
    this.fileRow = new Float64Array(capacity).fill(-1);
    this.file = file;
    this.blockAt = blockAt;
    // Over an ArrayBuffer made first: readFileRows views its bytes (a new array's buffer would be a copy).
    this.readBuf = new Float32Array(new ArrayBuffer(4 * Math.max(dim, Math.floor(READ_BYTES / 4 / dim) * dim)));
  }

  /** Whether the integer kernel ran (tests). */
  get kernelRan(): boolean {
    return this.mem?.kernelRan === true;
  }

  /** Rows 0…n − 1 are rows 0…n − 1 of the file's block; `unbounded`: without codes (a lazy block's load: no float is read). */
  fileRows(n: number, unbounded = true): void {
    for (let r = 0; r < n; r++) {
      this.fileRow[r] = r;
      if (unbounded) this.fig.bounded[r] = 0;
    }
  }

  /**
   * Rows 0…rows − 1 (file rows 0…rows − 1, fileRows) get the figures of the file's codes: their
   * cosines are bounded by a scan of those codes from the file (fileDots), and their floats are
   * read only for the rows the bounds cannot rule out, each checked against its row's CRC-32.
   */
  useFileCodes(codes: FileCodes, rows: number): void {
    this.takeFigures(codes.table, rows);
    this.fileCodes = { at: codes.at, rows, crc: codes.crc, rowCrc: codes.table.crc };
  }

  /**
   * Rows 0…rows − 1 are file rows 0…rows − 1 with the file's codes and the rows table's figures
   * (a cold block's load): the writer made them from these floats and magnitudes with setRow's own
   * function, so no row is quantized again. `read` fills the codes' bytes in place and says whether
   * they passed their CRC-32; false (nothing kept) when they did not: the caller makes them from
   * the floats instead (setRow).
   */
  takeFileCodes(read: (into: Uint8Array) => boolean, table: FigureColumns, rows: number): boolean {
    if (!this.mem) return false;
    const c = this.mem.codes;
    if (!read(new Uint8Array(c.buffer, c.byteOffset, rows * this.mem.stride))) return false;
    this.takeFigures(table, rows);
    this.fileRows(rows, false);
    return true;
  }

  private takeFigures(table: FigureColumns, rows: number): void {
    for (const k of ["scale", "err", "norm", "bounded"] as const) this.fig[k].set(table[k].subarray(0, rows));
  }

  /**
   * Row `r`'s codes from its floats `v` (from `at`); `mag` is the magnitude the cosine divides by.
   * The row's floats are then found at `fileRow` of the file, or in `hot` (−1).
   */
  setRow(r: number, v: Float32Array, at: number, mag: number, fileRow: number): void {
    this.fileRow[r] = fileRow;
    if (!this.mem) {
      this.fig.bounded[r] = 0;
      return;
    }
    quantizeRow(v, at, this.dim, mag, this.mem.codes, r * this.mem.stride, this.fig, r);
  }

  /** Row `from` moved to row `to` (a squeeze): its codes and figures go with it. */
  move(from: number, to: number): void {
    if (this.mem) {
      const st = this.mem.stride;
      this.mem.codes.copyWithin(to * st, from * st, (from + 1) * st);
    }
    for (const k of ["scale", "err", "norm", "bounded"] as const) this.fig[k][to] = this.fig[k][from]!;
    this.fileRow[to] = this.fileRow[from]!;
  }

  grow(capacity: number): void {
    this.mem?.grow(capacity);
    const wider = <T extends Float64Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(capacity);
      b.set(a.subarray(0, Math.min(a.length, capacity)));
      return b;
    };
    const f = this.fig;
    this.fig = { scale: wider(f.scale, (n) => new Float64Array(n)), err: wider(f.err, (n) => new Float64Array(n)), norm: wider(f.norm, (n) => new Float64Array(n)), bounded: wider(f.bounded, (n) => new Uint8Array(n)) };
    this.fileRow = wider(this.fileRow, (n) => new Float64Array(n).fill(-1));
  }

  /**
   * After a save that reopened the file it wrote: the live rows (`ids[r]` ≠ 0), in row order, are
   * rows 0, 1, … of that file's block at `blockAt`, the floats held in memory among them.
   */
  repoint(file: RowFile, blockAt: number, ids: Uint32Array, rows: number): void {
    let k = 0;
    for (let r = 0; r < rows; r++) this.fileRow[r] = ids[r] ? k++ : -1;
    this.hot.clear();
    this.file = file;
    this.blockAt = blockAt;
    // The codes read were the old file's: every row is scored exactly from here on.
    if (this.fileCodes) {
      this.fileCodes = undefined;
      this.fig.bounded.fill(0);
    }
  }

  /**
   * Read `n` rows of the file from file row `first` into `into` (its first n × dim floats); with
   * the file's codes, each row checked against its CRC-32 (VectorsDamagedError when one fails).
   */
  private readFileRows(first: number, n: number, into: Float32Array): void {
    const rowBytes = this.dim * 4;
    const view = new Uint8Array(into.buffer, into.byteOffset, n * rowBytes);
    this.file.readInto(this.blockAt + first * rowBytes, n * rowBytes, view);
    const fc = this.fileCodes;
    if (!fc) return;
    for (let k = 0; k < n; k++) {
      if (first + k >= fc.rows || Bun.hash.crc32(view.subarray(k * rowBytes, (k + 1) * rowBytes)) !== fc.rowCrc[first + k]) throw new VectorsDamagedError("checksum mismatch in the vectors");
    }
  }

  /** Row `r`'s floats (of `id`): the ones in memory, or a fresh copy read from the file. */
  row(r: number, id: number): Float32Array {
    const hot = this.hot.get(id);
    if (hot) return hot;
    const fr = this.fileRow[r]!;
    if (fr < 0) throw new IndexDamagedError("a vector's row is neither in memory nor in the index file");
    const out = new Float32Array(this.dim);
    this.readFileRows(fr, 1, out);
    return out;
  }

  /**
   * Calls `each(k, floats, at)` for the rows `rows[0..n)` (ascending), the floats of rows[k] at
   * `at` of `floats` (valid during the call): rows next to each other in the file are read in one
   * piece.
   */
  forRows(rows: ArrayLike<number>, n: number, ids: Uint32Array, each: (k: number, floats: Float32Array, at: number) => void): void {
    const { dim } = this;
    const perRead = this.readBuf.length / dim;
    for (let k = 0; k < n; ) {
      const r = rows[k]!;
      const first = this.fileRow[r]!;
      // A row held in memory has no file row (setRow, repoint): −1 says both.
      if (first < 0) {
        each(k, this.row(r, ids[r]!), 0);
        k++;
        continue;
      }
      let end = k + 1;
      while (end < n && end - k < perRead && this.fileRow[rows[end]!] === first + (end - k)) end++;
      this.readFileRows(first, end - k, this.readBuf);
      for (let j = k; j < end; j++) each(j, this.readBuf, (j - k) * dim);
      k = end;
    }
  }

  /** A memory the float kernel scans runs of rows in, made for the first scan large enough. */
  private scratch: RowMemory | undefined;

  /**
   * The exact dots of `query` with the rows `rows[0..n)` (ascending) into `out[0..n)`: the rows read
   * from the file a run at a time; when the scan is large enough for the float kernel (a lazy block
   * whose every row is scored), each run is read into a WebAssembly memory the kernel scans, with
   * the JS loop's sums to the bit (kernels.ts); rows held in memory get the JS loop.
   */
  dots(query: Float32Array, rows: ArrayLike<number>, n: number, ids: Uint32Array, out: Float64Array): void {
    const { dim } = this;
    if (n * dim < KERNEL_MIN_FLOATS) {
      this.forRows(rows, n, ids, (k, floats, at) => (out[k] = dotAt(query, floats, at, dim)));
      return;
    }
    const perRead = this.readBuf.length / dim;
    this.scratch ??= RowMemory.scratch(dim, perRead);
    const buf = this.scratch.rows;
    for (let k = 0; k < n; ) {
      const r = rows[k]!;
      const first = this.fileRow[r]!;
      if (first < 0) {
        out[k] = dotAt(query, this.row(r, ids[r]!), 0, dim);
        k++;
        continue;
      }
      let end = k + 1;
      while (end < n && end - k < perRead && this.fileRow[rows[end]!] === first + (end - k)) end++;
      this.readFileRows(first, end - k, buf);
      const d = this.scratch.dots(query, end - k, true);
      for (let j = k; j < end; j++) out[j] = d[j - k]!;
      k = end;
    }
  }

  /**
   * The rows' floats in row order, as a save writes them: runs of rows next to each other in the
   * file read into a fresh buffer each (at most `maxBytes`), rows held in memory as views of them.
   */
  *bytes(ids: Uint32Array, rows: number, maxBytes: number): IterableIterator<Uint8Array> {
    const rowBytes = this.dim * 4;
    const perRun = Math.max(1, Math.floor(maxBytes / rowBytes));
    for (let r = 0; r < rows; ) {
      const id = ids[r]!;
      if (!id) {
        r++;
        continue;
      }
      const first = this.fileRow[r]!;
      if (first < 0) {
        const v = this.row(r, id);
        yield new Uint8Array(v.buffer, v.byteOffset, rowBytes);
        r++;
        continue;
      }
      let end = r + 1;
      let n = 1;
      for (; end < rows && n < perRun; end++) {
        if (!ids[end]) continue;
        if (this.fileRow[end] !== first + n) break;
        n++;
      }
      const out = new Float32Array(n * this.dim);
      this.readFileRows(first, n, out);
      yield new Uint8Array(out.buffer);
      r = end;
    }
  }

  /**
   * The bounds of every row's cosine with `query` (`lo`, `hi`, for rows 0..rows), as `find`
   * computes it: dot / (qMag × mags[r]); undefined when the query itself cannot be bounded (not
   * finite, or of no length: every row is then scored exactly, as before). A row without a bound
   * gets −Infinity..+Infinity.
   */
  scores(query: Float32Array, qMag: number, mags: Float64Array, rows: number): { lo: Float64Array; hi: Float64Array } | undefined {
    // ‖q‖ is qMag itself: the same sum of squares, in the same order (vector-block.ts magnitude).
    if (!(qMag > 0) || !Number.isFinite(qMag) || (!this.mem && !this.fileCodes)) return undefined;
    const q = this.quantizeQuery(query);
    if (!q) return undefined;
    if (this.lo.length < rows) {
      this.lo = new Float64Array(this.fig.scale.length);
      this.hi = new Float64Array(this.fig.scale.length);
    }
    const { lo, hi } = this;
    const { scale, err, norm, bounded } = this.fig;
    const dots = this.mem ? this.mem.dots(q.codes, rows) : this.fileDots(q.codes, rows);
    const up = 1 + 1e-9;
    for (let r = 0; r < rows; r++) {
      if (!bounded[r]) {
        lo[r] = -Infinity;
        hi[r] = Infinity;
        continue;
      }
      const denom = qMag * mags[r]!;
      const a = q.scale * scale[r]! * dots[r]!;
      const e = (qMag * err[r]! + q.err * norm[r]!) * up + 1e-9 * denom;
      lo[r] = (a - e) / denom;
      hi[r] = (a + e) / denom;
    }
    return { lo, hi };
  }

  /**
   * The integer dots of `query`'s codes with rows 0…rows − 1 from the file's codes (useFileCodes),
   * read a piece at a time into one scratch memory the integer kernel scans; 0 for a row whose
   * floats are held in memory (it has no bound). The codes' CRC-32 is summed as they stream by:
   * when it fails, VectorsDamagedError before any bound is made of them.
   */
  private fileDots(query: Int16Array, rows: number): Int32Array {
    const fc = this.fileCodes!;
    const stride = codeStride(this.dim);
    const perRead = Math.max(1, Math.floor(READ_BYTES / stride));
    this.codeScratch ??= new CodeMemory(this.dim, perRead);
    const scratch = this.codeScratch;
    const bytes = new Uint8Array(scratch.codes.buffer, scratch.codes.byteOffset, perRead * stride);
    const byFileRow = new Int32Array(fc.rows);
    let crc = 0;
    for (let first = 0; first < fc.rows; first += perRead) {
      const n = Math.min(perRead, fc.rows - first);
      const part = bytes.subarray(0, n * stride);
      this.file.readInto(fc.at + first * stride, part.byteLength, part);
      if (!this.codesChecked) crc = Bun.hash.crc32(part, crc);
      byFileRow.set(scratch.dots(query, n).subarray(0, n), first);
    }
    if (!this.codesChecked) {
      if (crc !== fc.crc) throw new VectorsDamagedError("checksum mismatch in the vectors");
      this.codesChecked = true;
    }
    const out = new Int32Array(rows);
    for (let r = 0; r < rows; r++) {
      const fr = this.fileRow[r]!;
      out[r] = fr >= 0 && fr < fc.rows ? byFileRow[fr]! : 0;
    }
    return out;
  }

  /** A memory the integer kernel scans the file's codes in, a piece at a time, made for the first scan. */
  private codeScratch: CodeMemory | undefined;

  /** Whether row `r` has a bound (else it is always scored exactly). */
  isBounded(r: number): boolean {
    return this.fig.bounded[r] === 1;
  }

  /**
   * q̂ = round(q / s_q), s_q = max|q| / Q, with Q the largest code whose sums over any row fit in
   * an i32 (127 × Q × dim < 2^31); undefined for a query not finite or all zeros.
   */
  private quantizeQuery(query: Float32Array): QueryCodes | undefined {
    const { dim } = this;
    const top = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * dim)));
    let max = 0;
    for (let i = 0; i < dim; i++) {
      const x = query[i]!;
      if (!Number.isFinite(x)) return undefined;
      if (Math.abs(x) > max) max = Math.abs(x);
    }
    if (!(max > 0) || top < 1) return undefined;
    const s = max / top;
    const codes = new Int16Array(codeStride(dim));
    let e = 0;
    for (let i = 0; i < dim; i++) {
      const c = Math.max(-top, Math.min(top, Math.floor(query[i]! / s + 0.5)));
      codes[i] = c;
      const d = query[i]! - s * c;
      e += d * d;
    }
    return { codes, scale: s, err: Math.sqrt(e) };
  }
}
