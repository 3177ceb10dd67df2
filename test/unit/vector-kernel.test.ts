/**
 * The vector scan's kernel (src/index/engine/kernels.ts) and what stands on it: its sums must be
 * the JS loop's to the bit (the ranking, its ties and the eval's figures depend on it), at every
 * dimension a model may have, through strides and growth; the block's `nearest` must keep what
 * Orama's vector search keeps, in its order; and the store's vector search must answer what
 * Orama's own search answered.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { search, type AnyOrama } from "@orama/orama";
import { KERNEL_MIN_FLOATS, RowMemory, rowsFor } from "../../src/index/engine/kernels.ts";
import { VectorBlock } from "../../src/index/engine/vector-block.ts";
import { Store } from "../../src/index/store.ts";
import type { StoredChunk } from "../../src/index/types.ts";

function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
}

/** Floats of wildly different sizes: any other order of the additions rounds differently. */
function wide(r: () => number, n: number): Float32Array {
  return Float32Array.from({ length: n }, () => r() * 10 ** Math.round(r() * 6));
}

/** The JS loop of vector-block.ts, written out again: four accumulators, the tail into the first. */
function reference(q: Float32Array, v: Float32Array, at: number, dim: number): number {
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  let i = 0;
  for (; i < dim - (dim % 4); i += 4) {
    d0 += q[i]! * v[at + i]!;
    d1 += q[i + 1]! * v[at + i + 1]!;
    d2 += q[i + 2]! * v[at + i + 2]!;
    d3 += q[i + 3]! * v[at + i + 3]!;
  }
  for (; i < dim; i++) d0 += q[i]! * v[at + i]!;
  return d0 + d1 + d2 + d3;
}

describe("the kernel", () => {
  for (const dim of [1, 3, 4, 7, 8, 12, 13, 100, 384, 768]) {
    test(`its sums are the JS loop's to the bit at ${dim} dimensions, every row`, () => {
      const r = rng(dim);
      // Just enough rows for the kernel to take the scan.
      const rows = Math.ceil(KERNEL_MIN_FLOATS / dim) + 3;
      const mem = RowMemory.create(dim, rows);
      expect(mem.inMemory).toBe(true);
      mem.rows.set(wide(r, rows * dim));
      const q = wide(r, dim);
      const all = mem.dots(q, rows).subarray(0, rows);
      expect(mem.kernelRan).toBe(true);
      let mismatches = 0;
      for (let k = 0; k < rows; k++) if (!Object.is(all[k], reference(q, mem.rows, k * dim, dim))) mismatches++;
      expect(mismatches).toBe(0);
      expect(mem.dot(q, rows - 1)).toBe(reference(q, mem.rows, (rows - 1) * dim, dim));
    });
  }

  test("a small scan is the JS loop's, and the kernel is not compiled for it", () => {
    const r = rng(6);
    const mem = RowMemory.create(768, 100);
    mem.rows.set(wide(r, 100 * 768));
    const q = wide(r, 768);
    expect([...mem.dots(q, 100).subarray(0, 100)]).toEqual(Array.from({ length: 100 }, (_, k) => reference(q, mem.rows, k * 768, 768)));
    expect(mem.kernelRan).toBe(false);
  });

  test("growing keeps the rows where they were, and their sums: a memory in place, a small plain block into a memory once the kernel would scan it", () => {
    const r = rng(7);
    const dim = 768;
    const rows = Math.ceil(KERNEL_MIN_FLOATS / dim);
    // Small: a plain array, scanned by the JS loop (no memory a new process would pay to fill).
    const small = RowMemory.create(dim, 10);
    expect(small.inMemory).toBe(false);
    const first = wide(r, 10 * dim);
    small.rows.set(first);
    small.grow(rows);
    expect(small.inMemory).toBe(true);
    expect([...small.rows.subarray(0, 10 * dim)]).toEqual([...first]);
    // In a memory, more room is made in place: the old view is detached (the memory's buffer was
    // replaced) and the new one holds the same rows.
    const before = small.rows;
    small.grow(rows * 2);
    expect(before.length).toBe(0);
    expect(small.rows.length).toBe(rows * 2 * dim);
    expect([...small.rows.subarray(0, 10 * dim)]).toEqual([...first]);
    const q = wide(r, dim);
    expect(small.dots(q, rows)[9]).toBe(reference(q, first, 9 * dim, dim));
    expect(small.kernelRan).toBe(true);
    // A block is adopted as it is only when it is a memory's whole row view; any other array is wrapped, not copied.
    expect(RowMemory.of(dim, small.rows)).toBe(small);
    const plain = new Float32Array(dim);
    expect(RowMemory.of(dim, plain).rows).toBe(plain);
    expect(RowMemory.of(dim, plain).inMemory).toBe(false);
    expect(RowMemory.of(dim, small.rows.subarray(dim)).inMemory).toBe(false);
    expect(RowMemory.of(dim, rowsFor(dim, rows)).inMemory).toBe(true);
    expect(RowMemory.of(dim, rowsFor(dim, 4)).inMemory).toBe(false);
  });
});

describe("the block's nearest", () => {
  const DIM = 13;
  /** Orama's vector search: every hit of find, sorted by its predicate, the first `limit`. */
  const oramaOrder = (b: VectorBlock, q: Float32Array, limit: number, similarity: number, only?: Set<number>) =>
    b
      .find(q, similarity, only)
      .sort((x, y) => (y[1] === x[1] ? x[0] - y[0] : y[1] - x[1]))
      .slice(0, limit);

  test("keeps what Orama's search keeps, in its order: ties by id, the floor, a filter, a limit past the count", () => {
    const r = rng(21);
    const b = new VectorBlock(DIM, 8);
    const twin = Float32Array.from({ length: DIM }, r);
    for (let id = 1; id <= 600; id++) b.add(id, id % 7 === 0 ? twin : Float32Array.from({ length: DIM }, r));
    for (let id = 3; id <= 600; id += 5) b.remove(id);
    // Re-added ids go last in row order but rank by id on a tie.
    for (const id of [63, 8, 28]) b.add(id, twin);
    const q = Float32Array.from({ length: DIM }, r);
    for (const [limit, similarity] of [[1, -1], [10, -1], [50, 0], [20, 0.2], [5000, -Infinity], [0, -1]] as const) {
      expect(b.nearest(q, limit, similarity)).toEqual(oramaOrder(b, q, limit, similarity));
    }
    // The twin's rows tie: the query itself puts all of them first.
    const ties = b.nearest(twin, 12, -1);
    expect(ties.map(([id]) => id)).toEqual([...ties.map(([id]) => id)].sort((a, c) => a - c));
    expect(ties).toEqual(oramaOrder(b, twin, 12, -1));
    const only = new Set([5, 7, 14, 63, 3, 9999, 100, 101]);
    expect(b.nearest(q, 4, -1, only)).toEqual(oramaOrder(b, q, 4, -1, only));
  });

  test("a vector given as a view of the block survives the growth its add triggers", () => {
    const r = rng(22);
    const b = new VectorBlock(DIM, 16);
    for (let id = 1; id <= 16; id++) b.add(id, Float32Array.from({ length: DIM }, r));
    const view = b.get(5)!;
    const expected = [...view];
    b.add(17, view);
    expect([...b.get(17)!]).toEqual(expected);
    expect([...b.get(5)!]).toEqual(expected);
  });
});

describe("the store's vector search", () => {
  const DIM = 24;
  function chunk(id: string, source: string, content: string, line: number): StoredChunk {
    return { chunkHash: id, contentHash: `c${content}`, source, content, heading: "", headingLevel: 0, startLine: line, endLine: line };
  }

  test("answers what Orama's own vector search answered: the same chunks, cosines and order, with and without a source filter", () => {
    const r = rng(31);
    const s = Store.empty(mkdtempSync(join(tmpdir(), "ms-kernel-")), "m", DIM);
    const twin = Float32Array.from({ length: DIM }, r);
    for (const f of ["/p/a.md", "/p/b.md", "/p/c.md"]) {
      const chunks = Array.from({ length: 120 }, (_, i) => chunk(`${f}#${i}`, f, `${f} ${i}`, i + 1));
      s.replaceFile(f, { mtimeMs: 1, size: 1 }, chunks, (h) => (h.endsWith("0") ? twin : Float32Array.from({ length: DIM }, r)));
    }
    const db = (s as unknown as { engine: { db: AnyOrama } }).engine.db;
    const q = Float32Array.from({ length: DIM }, r);
    const orama = (limit: number, similarity: number, where?: object) =>
      (search(db, { mode: "vector", vector: { value: q, property: "embedding" }, similarity, limit, includeVectors: false, ...(where ? { where } : {}) } as never) as { hits: { id: string; score: number }[] }).hits.map((h) => [h.id, h.score]);
    const ours = (limit: number, similarity: number, prefix?: string) => s.searchVector(q, limit, similarity, prefix).map((h) => [h.chunk.chunkHash, h.cosine]);
    for (const [limit, similarity] of [[10, 0], [40, -1], [400, 0.1]] as const) expect(ours(limit, similarity)).toEqual(orama(limit, similarity));
    expect(ours(30, -1, "/p/b.md")).toEqual(orama(30, -1, { source: { in: ["/p/b.md"] } }));
    expect(ours(30, -1, "/p/")).toEqual(orama(30, -1));
    expect(ours(30, -1, "/q/")).toEqual([]);
  });

  test("a store loaded for a low peak (as the watch process loads) holds and answers what a plain load does", () => {
    const r = rng(32);
    const dir = mkdtempSync(join(tmpdir(), "ms-kernel-"));
    const s = Store.empty(dir, "m", DIM);
    const chunks = Array.from({ length: 300 }, (_, i) => chunk(`h${i}`, "/p/a.md", `note ${i}`, i + 1));
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, chunks, () => Float32Array.from({ length: DIM }, r));
    s.save();
    const q = Float32Array.from({ length: DIM }, r);
    const plain = Store.open(dir, "m").store;
    const low = Store.open(dir, "m", { lowPeak: true }).store;
    expect(low.vectorCount).toBe(300);
    expect(low.searchVector(q, 20, -1)).toEqual(plain.searchVector(q, 20, -1));
    expect(low.searchText(["note"], 5)).toEqual(plain.searchText(["note"], 5));
  });
});
