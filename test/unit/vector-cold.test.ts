/**
 * The watch process's cold vector block (vector-block.ts, vector-cold.ts): int8 codes of the rows
 * in memory, the float rows read from the index file only for the rows the integer pass cannot
 * rule out. Its answers must be the exact scan's to the bit, in the same order, ties included,
 * through new turns, removes, squeezes, growth, saves and reloads; a save must write the same
 * bytes; and a file cut short under it must make a search fail, never answer from other bytes.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, copyFileSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexDamagedError } from "../../src/core/errors.ts";
import { blockStart, INDEX_FILE, openIndexFile, readExactly, tailOf } from "../../src/index/format.ts";
import { Store } from "../../src/index/store.ts";
import type { StoredChunk } from "../../src/index/types.ts";
import { magnitude, VectorBlock } from "../../src/index/engine/vector-block.ts";
import { CodeMemory, KERNEL_MIN_FLOATS } from "../../src/index/engine/kernels.ts";
import { codeStride } from "../../src/index/engine/codes.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ms-cold-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
}

/**
 * Vectors as a model's are: a shared direction plus noise, so cosines sit around 0.6–0.9 and the
 * top of a ranking is crowded (what makes a loose bound rescore much, or a wrong one miss a row).
 */
function vectors(dim: number, n: number, seed: number, baseSeed = 12345): Float32Array[] {
  const b = rng(baseSeed);
  const base = Float32Array.from({ length: dim }, () => b());
  const r = rng(seed);
  return Array.from({ length: n }, () => Float32Array.from(base, (b) => b + 0.6 * r()));
}
/** Queries near the stored vectors, and every third one of another direction (cosines near 0). */
function queries(dim: number, n: number, seed: number): Float32Array[] {
  return vectors(dim, n, seed).map((q, i) => (i % 3 === 0 ? vectors(dim, 1, seed + i, seed + i + 1000)[0]! : q));
}

/** Numbers as their exact text (String of a double round-trips; NaN and -0 told apart). */
const exact = (x: number) => (Object.is(x, -0) ? "-0" : String(x));

const FILES = 30;
/** Rows of a store test: over KERNEL_MIN_FLOATS at 768 dimensions, so a lowPeak load is cold. */
const PER_FILE = 100;

function chunksOf(source: string, n: number, tag = ""): StoredChunk[] {
  return Array.from({ length: n }, (_, i) => ({ chunkHash: `${source}#${tag}${i}`, contentHash: `c:${source}#${tag}${i}`, source, content: `## T${i}\nchunk ${tag}${i} of ${source}`, heading: `T${i}`, headingLevel: 2, startLine: i * 3 + 1, endLine: i * 3 + 2 }));
}

/** The chunks' vectors: rows of `vs` in order, with the awkward rows the exact scan must keep answering as it does. */
function vectorTable(dim: number, seed: number): Map<string, Float32Array> {
  const vs = vectors(dim, FILES * PER_FILE, seed);
  // Exact duplicates (ties broken by internal id), a row of zeros (magnitude 0: a NaN cosine), a NaN.
  for (let i = 0; i < 40; i++) vs[100 + i] = vs[i]!;
  vs[500] = new Float32Array(dim);
  vs[501] = vs[7]!.slice();
  vs[501]![3] = NaN;
  const table = new Map<string, Float32Array>();
  for (let f = 0; f < FILES; f++) chunksOf(`f${f}.md`, PER_FILE).forEach((c, i) => table.set(c.contentHash, vs[f * PER_FILE + i]!));
  return table;
}

function savedStore(dir: string, dim: number, table: Map<string, Float32Array>): void {
  const s = Store.empty(dir, "m", dim);
  for (let f = 0; f < FILES; f++) s.replaceFile(`f${f}.md`, { mtimeMs: 1, size: 1 }, chunksOf(`f${f}.md`, PER_FILE), (h) => table.get(h));
  s.save();
}

const blockOf = (s: Store) => (s as unknown as { engine: { vectors: VectorBlock } }).engine.vectors;

/** Everything a store's vector side answers for these queries, as exact text. */
function answers(s: Store, qs: Float32Array[], hashes: string[]): string[] {
  const out: string[] = [];
  for (const q of qs) {
    for (const floor of [-Infinity, 0, 0.35, 0.8]) {
      for (const k of [1, 5, 50, 5000]) out.push(s.searchVector(q, k, floor).map((h) => `${h.chunk.chunkHash}=${exact(h.cosine!)}`).join(" "));
    }
    out.push([...s.cosines(hashes, q)].map(([h, c]) => `${h}=${exact(c)}`).join(" "));
    const bg = s.cosineBackground(q);
    out.push(bg ? `${exact(bg.mean)} ${exact(bg.sd)} ${bg.sampled} ${bg.vectors}` : "none");
    out.push(Array.from(s.cosinesToAll(q), exact).join(" "));
  }
  return out;
}

function openBoth(dir: string): { plain: Store; cold: Store } {
  const plain = Store.open(dir, "m").store;
  const cold = Store.open(dir, "m", { lowPeak: true }).store;
  expect(blockOf(plain).isCold).toBe(false);
  expect(blockOf(cold).isCold).toBe(true);
  return { plain, cold };
}

const DIM = 768;

describe("a cold store answers as the exact scan", () => {
  test("768 dimensions: searches, cosines and backgrounds identical, to the bit, every floor and k", () => {
    expect(FILES * PER_FILE * DIM).toBeGreaterThanOrEqual(KERNEL_MIN_FLOATS);
    const dir = tempDir();
    const table = vectorTable(DIM, 1);
    savedStore(dir, DIM, table);
    const { plain, cold } = openBoth(dir);
    const qs = queries(DIM, 30, 7);
    // Awkward queries: one of the stored rows (a cosine of 1 and its duplicates), zeros, a NaN.
    qs.push(table.get("c:f0.md#5")!, new Float32Array(DIM), Float32Array.from(qs[0]!, (x, i) => (i === 9 ? NaN : x)));
    const hashes = ["f0.md#0", "f1.md#0", "f5.md#0", "f5.md#1", "f7.md#99", "f0.md#40"];
    expect(answers(cold, qs, hashes)).toEqual(answers(plain, qs, hashes));
    expect(blockOf(cold).coldKernelRan).toBe(true);
  }, 60_000);

  test("a cold load takes the file's codes: the same bytes and figures the floats make, which it makes itself when the codes fail their check", () => {
    const dir = tempDir();
    savedStore(dir, DIM, vectorTable(DIM, 3));
    const inside = (s: Store) => (blockOf(s) as unknown as { cold: { mem: CodeMemory; fig: Record<string, Float64Array | Uint8Array> } }).cold;
    // Which way each load went: coldFill quantizes the floats.
    let quantized = 0;
    const coldFill = VectorBlock.prototype.coldFill;
    VectorBlock.prototype.coldFill = function (this: VectorBlock, ...a: Parameters<VectorBlock["coldFill"]>) {
      quantized += a[2];
      return coldFill.apply(this, a);
    };
    cleanups.push(() => void (VectorBlock.prototype.coldFill = coldFill));
    const fromFile = inside(Store.open(dir, "m", { lowPeak: true }).store);
    expect(quantized).toBe(0);
    // One byte of the codes flipped: they fail their CRC-32, and the load quantizes the floats.
    const path = join(dir, INDEX_FILE);
    const file = openIndexFile(path);
    const at = tailOf(file).codesAt + 5;
    closeSync(file.fd);
    const bytes = readFileSync(path);
    bytes[at] = bytes[at]! ^ 0x40;
    writeFileSync(path, bytes);
    const made = Store.open(dir, "m", { lowPeak: true }).store;
    const fromFloats = inside(made);
    const n = FILES * PER_FILE;
    expect(quantized).toBe(n);
    const stride = codeStride(DIM);
    expect(Buffer.compare(Buffer.from(fromFile.mem.codes.subarray(0, n * stride)), Buffer.from(fromFloats.mem.codes.subarray(0, n * stride)))).toBe(0);
    for (const k of ["scale", "err", "norm", "bounded"]) expect(Array.from(fromFile.fig[k]!.subarray(0, n), exact)).toEqual(Array.from(fromFloats.fig[k]!.subarray(0, n), exact));
    const plain = Store.open(dir, "m").store;
    const qs = queries(DIM, 10, 11);
    expect(answers(made, qs, [])).toEqual(answers(plain, qs, []));
  }, 60_000);

  test("through new turns, removes, re-adds, a squeeze and growth, a save and a reload: identical, and the same bytes saved", () => {
    const table = vectorTable(DIM, 2);
    const base = tempDir();
    savedStore(base, DIM, table);
    const dirA = tempDir();
    const dirB = tempDir();
    copyFileSync(join(base, INDEX_FILE), join(dirA, INDEX_FILE));
    copyFileSync(join(base, INDEX_FILE), join(dirB, INDEX_FILE));
    const plain = Store.open(dirA, "m").store;
    const cold = Store.open(dirB, "m", { lowPeak: true }).store;
    expect(blockOf(cold).isCold).toBe(true);
    const extra = vectors(DIM, 4000, 99);
    let next = 0;
    const more = new Map<string, Float32Array>();
    const vectorOf = (h: string) => table.get(h) ?? more.get(h);
    const both = (fn: (s: Store) => void) => {
      fn(plain);
      fn(cold);
    };
    const addFile = (name: string, n: number, tag: string) => {
      const cs = chunksOf(name, n, tag);
      for (const c of cs) more.set(c.contentHash, extra[next++ % extra.length]!);
      both((s) => s.replaceFile(name, { mtimeMs: 2, size: 2 }, cs, vectorOf));
    };
    const qs = queries(DIM, 12, 11);
    const hashes = ["f0.md#0", "f3.md#1", "new0.md#a0", "f2.md#5"];
    const check = () => expect(answers(cold, qs, hashes)).toEqual(answers(plain, qs, hashes));

    addFile("new0.md", 20, "a"); // new turns
    both((s) => s.replaceFile("f1.md", { mtimeMs: 2, size: 2 }, chunksOf("f1.md", PER_FILE).slice(0, 30), vectorOf)); // removes
    check();
    both((s) => s.removeFile("f2.md"));
    both((s) => s.replaceFile("f2.md", { mtimeMs: 3, size: 3 }, chunksOf("f2.md", PER_FILE), vectorOf)); // re-added: last
    // Over a quarter of the rows removed: the block squeezes its holes out.
    for (let f = 10; f < 22; f++) both((s) => s.removeFile(`f${f}.md`));
    check();
    // More rows than the room left: the block grows.
    for (let i = 0; i < 14; i++) addFile(`grow${i}.md`, 200, "g");
    check();
    expect([...blockOf(cold).keys()]).toEqual([...blockOf(plain).keys()]);
    expect(blockOf(cold).columns()).toEqual(blockOf(plain).columns());

    both((s) => s.save());
    const vectorBytes = (dir: string) => {
      const f = openIndexFile(join(dir, INDEX_FILE));
      closeSync(f.fd);
      return readFileSync(join(dir, INDEX_FILE)).subarray(blockStart(f), blockStart(f) + f.head.vectorCount * DIM * 4);
    };
    const savedA = vectorBytes(dirA);
    expect(savedA.byteLength).toBe(blockOf(plain).count * DIM * 4);
    expect(vectorBytes(dirB).equals(savedA)).toBe(true);
    // Re-pointed at the file it wrote: the rows held in memory are dropped.
    expect((blockOf(cold) as unknown as { cold: { hot: Map<number, Float32Array> } }).cold.hot.size).toBe(0);
    check();
    // The file the cold rows were read from before the save is gone: they are read from the new one.
    addFile("after.md", 10, "z");
    both((s) => s.removeFile("f3.md"));
    check();
    both((s) => s.save());
    expect(vectorBytes(dirB).equals(vectorBytes(dirA))).toBe(true);

    const again = openBoth(dirB);
    const plainA = Store.open(dirA, "m").store;
    expect(answers(again.cold, qs, hashes)).toEqual(answers(plainA, qs, hashes));
    expect(answers(again.plain, qs, hashes)).toEqual(answers(plainA, qs, hashes));
  }, 60_000);
});

/** A RowFile over a file of float rows (as the store gives its TextFile). */
function rowFile(path: string) {
  const fd = openSync(path, "r");
  cleanups.push(() => closeSync(fd));
  return { readInto: (at: number, len: number, into: Uint8Array, offset = 0) => readExactly(fd, into, at, offset, len) };
}

describe("a cold block answers as the block of its floats", () => {
  for (const [dim, wasm] of [[100, true], [768, true], [100, false]] as const) {
    test(`${dim} dimensions${wasm ? "" : ", without WebAssembly"}: find and nearest identical, stored magnitudes of 0 and wrong ones scored exactly`, () => {
      const n = 3000;
      const vs = vectors(dim, n, dim + 5);
      for (let i = 0; i < 30; i++) vs[200 + i] = vs[i]!;
      vs[300] = new Float32Array(dim);
      vs[301] = vs[2]!.slice();
      vs[301]![0] = NaN;
      const floats = new Float32Array(n * dim);
      vs.forEach((v, i) => floats.set(v, i * dim));
      const ids = Array.from({ length: n }, (_, i) => i * 3 + 1);
      const mags = vs.map((v) => magnitude(v, dim));
      mags[400] = 0; // a magnitude of 0 stored for a row that has one (a file we did not write)
      mags[401] = mags[401]! * 0.5; // a magnitude that is not the row's
      const path = join(tempDir(), "rows");
      const at = 12;
      writeFileSync(path, Buffer.concat([Buffer.alloc(at), Buffer.from(floats.buffer)]));
      const plain = VectorBlock.fromRows(dim, floats.slice(), ids, mags);
      const cold = VectorBlock.cold(dim, ids, mags, n + 10, rowFile(path), at, wasm);
      cold.coldFill(0, floats, n);
      const qs = queries(dim, 30, dim + 6);
      qs.push(vs[401]!, vs[400]!);
      const show = (s: [number, number][]) => s.map(([id, c]) => `${id}=${exact(c)}`).join(" ");
      let compared = 0;
      for (const q of qs) {
        for (const floor of [-Infinity, 0, 0.35, 0.8]) {
          for (const k of [1, 5, 50, 5000]) {
            expect(show(cold.nearest(q, k, floor))).toBe(show(plain.nearest(q, k, floor)));
            compared++;
          }
          expect(show(cold.find(q, floor))).toBe(show(plain.find(q, floor)));
          expect(show(cold.find(q, floor, [7, 400 * 3 + 1, 1201, 5]))).toBe(show(plain.find(q, floor, [7, 400 * 3 + 1, 1201, 5])));
        }
        expect(Array.from(cold.cosinesToAll(q, 7), exact)).toEqual(Array.from(plain.cosinesToAll(q, 7), exact));
      }
      expect(compared).toBe(qs.length * 16);
      expect(cold.coldKernelRan).toBe(wasm);
    });
  }
});

describe("the bound at its worst", () => {
  // Queries for which a term of the bound is reached, not merely approached: a bound short of
  // either term (or a margin too small) leaves out the row the exact scan keeps.
  for (const dim of [100, 768]) {
    test(`${dim} dimensions: a query along a row's rounding error, and one whose own rounding runs along a row's codes`, () => {
      const r = rng(dim * 7 + 1);
      const n = 40;
      const vs = vectors(dim, n, dim + 9);
      // A row of ±1: its codes are exact (±127, no error of its own), all of one size.
      const signs = Float32Array.from({ length: dim }, () => (r() < 0 ? -1 : 1));
      vs[n - 1] = signs;
      const floats = new Float32Array(n * dim);
      vs.forEach((v, i) => floats.set(v, i * dim));
      const ids = Array.from({ length: n }, (_, i) => i + 1);
      const mags = vs.map((v) => magnitude(v, dim));
      const path = join(tempDir(), "rows");
      writeFileSync(path, Buffer.from(floats.buffer));
      const plain = VectorBlock.fromRows(dim, floats.slice(), ids, mags);
      const cold = VectorBlock.cold(dim, ids, mags, n, rowFile(path), 0);
      cold.coldFill(0, floats, n);
      const qs: [Float32Array, number][] = [];
      // q = v − s·c: q·v − A is then ‖q‖·e_r exactly.
      for (let x = 0; x < 12; x++) {
        const v = vs[x]!;
        const s = v.reduce((m, y) => Math.max(m, Math.abs(y)), 0) / 127;
        qs.push([Float32Array.from(v, (y) => y - s * Math.max(-127, Math.min(127, Math.floor(y / s + 0.5)))), x + 1]);
      }
      // q = s_q·(q̂ + 0.49·sign(c)): its rounding error is e_q along the ±1 row's codes, q·v − A = e_q·n_r.
      const top = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * dim)));
      for (let k = 0; k < 6; k++) {
        const sq = 1 / top;
        const q = Float32Array.from(signs, (sg, i) => (i === 0 ? sg * top * sq : sg * (Math.floor(((r() + 1) / 2) * (top - 2)) + 0.49) * sq));
        qs.push([q, n]);
      }
      for (const [q, id] of qs) {
        const [[, cos]] = plain.find(q, -Infinity, [id]) as [[number, number]];
        const kept = plain.find(q, cos);
        expect(kept.map(([i]) => i)).toContain(id);
        expect(cold.find(q, cos)).toEqual(kept);
        expect(cold.nearest(q, 3, cos)).toEqual(plain.nearest(q, 3, cos));
        expect(cold.nearest(q, 1, -Infinity)).toEqual(plain.nearest(q, 1, -Infinity));
      }
    });
  }
});

describe("the integer kernel", () => {
  for (const dim of [1, 7, 16, 100, 768]) {
    test(`its sums are the exact integer dots at ${dim} dimensions, the largest codes included`, () => {
      const r = rng(dim * 31);
      const rows = 70;
      const stride = codeStride(dim);
      const top = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * dim)));
      const withKernel = new CodeMemory(dim, rows);
      const withLoop = new CodeMemory(dim, rows, false);
      for (let k = 0; k < rows; k++) for (let i = 0; i < dim; i++) withKernel.codes[k * stride + i] = k === 0 ? 127 : k === 1 ? -127 : Math.round(r() * 127);
      withLoop.codes.set(withKernel.codes);
      const q = new Int16Array(stride);
      for (let i = 0; i < dim; i++) q[i] = i % 5 === 0 ? top : Math.round(r() * top);
      const maxed = new Int16Array(stride).fill(0);
      maxed.fill(top, 0, dim);
      for (const query of [q, maxed]) {
        const reference = Array.from({ length: rows }, (_, k) => {
          let s = 0;
          for (let i = 0; i < dim; i++) s += query[i]! * withLoop.codes[k * stride + i]!;
          return s;
        });
        expect(Array.from(withKernel.dots(query, rows).subarray(0, rows))).toEqual(reference);
        expect(Array.from(withLoop.dots(query, rows).subarray(0, rows))).toEqual(reference);
      }
      expect(withKernel.kernelRan).toBe(true);
      expect(withLoop.kernelRan).toBe(false);
    });
  }
});

describe("a cold store whose index file is cut short under it", () => {
  function coldStore(): { dir: string; cold: Store; q: Float32Array } {
    const dir = tempDir();
    savedStore(dir, DIM, vectorTable(DIM, 3));
    const cold = Store.open(dir, "m", { lowPeak: true }).store;
    expect(blockOf(cold).isCold).toBe(true);
    return { dir, cold, q: queries(DIM, 2, 5)[1]! };
  }

  test("cut in place: a search that needs a row fails as damage", () => {
    const { dir, cold, q } = coldStore();
    const before = cold.searchVector(q, 5, 0.35).length;
    expect(before).toBe(5);
    truncateSync(join(dir, INDEX_FILE), 4096);
    expect(() => cold.searchVector(q, 5, 0.35)).toThrow(IndexDamagedError);
    expect(() => cold.cosinesToAll(q)).toThrow(IndexDamagedError);
  });

  test("cut, then another index renamed over it: still damage, never the other file's bytes", () => {
    const { dir, cold, q } = coldStore();
    const other = tempDir();
    savedStore(other, DIM, vectorTable(DIM, 4));
    truncateSync(join(dir, INDEX_FILE), 4096);
    renameSync(join(other, INDEX_FILE), join(dir, INDEX_FILE));
    expect(() => cold.searchVector(q, 5, 0.35)).toThrow(IndexDamagedError);
  });

  test("replaced by a rename alone: the rows loaded are still read, the answers unchanged", () => {
    const { dir, cold, q } = coldStore();
    const before = cold.searchVector(q, 50, 0.35).map((h) => `${h.chunk.chunkHash}=${exact(h.cosine!)}`);
    expect(before.length).toBe(50);
    const other = tempDir();
    savedStore(other, DIM, vectorTable(DIM, 4));
    renameSync(join(other, INDEX_FILE), join(dir, INDEX_FILE));
    expect(cold.searchVector(q, 50, 0.35).map((h) => `${h.chunk.chunkHash}=${exact(h.cosine!)}`)).toEqual(before);
  });
});
