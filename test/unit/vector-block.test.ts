/**
 * The vector block (src/index/vector-block.ts): Orama's vector index as one Float32Array. It must
 * find what Orama's map of arrays finds, in the same order (ties included), through adds, removes,
 * re-adds, growth and squeezing; a loaded store's vectors must be the file's block itself; and
 * the one-pass cosines to every vector must be the cosines search uses.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyOrama } from "@orama/orama";
import { vector as oramaVector } from "@orama/orama/trees";
import { vectorNode } from "../../src/index/orama-internals.ts";
import { Store } from "../../src/index/store.ts";
import { VectorBlock } from "../../src/index/vector-block.ts";
import type { StoredChunk } from "../../src/index/types.ts";

function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
}

const DIM = 13; // not a multiple of 4: the tail of the loop counts too

describe("vector block", () => {
  test("finds what Orama's vector index finds, in its order, through adds, removes, re-adds, growth and squeezes", () => {
    const r = rng(3);
    const theirs = new oramaVector.VectorIndex(DIM);
    // Its map is private in Orama's types.
    const theirMap = () => (theirs as unknown as { vectors: Map<number, unknown> }).vectors;
    const ours = new VectorBlock(DIM, 4);
    const vecs = new Map<number, Float32Array>();
    const twin = Float32Array.from({ length: DIM }, r);
    for (let id = 1; id <= 400; id++) {
      // Every fifth vector the same: ties, whose order is the map's.
      const v = id % 5 === 0 ? twin : Float32Array.from({ length: DIM }, r);
      vecs.set(id, v);
      theirs.add(id, v);
      ours.add(id, v);
    }
    for (let id = 1; id <= 400; id++) {
      if (id % 3 === 0 || (id > 100 && id < 260)) {
        theirs.remove(id);
        ours.remove(id);
      }
    }
    for (const id of [9, 150, 3, 401, 402]) {
      const v = vecs.get(id) ?? twin;
      theirs.add(id, v);
      ours.add(id, v);
    }
    expect(ours.count).toBe(theirMap().size);
    expect([...ours.keys()]).toEqual([...theirMap().keys()]);
    const q = Float32Array.from({ length: DIM }, r);
    const sorted = (xs: [number, number][]) => [...xs].sort((a, b) => b[1] - a[1]);
    const a = sorted(theirs.find(q, -1, undefined) as [number, number][]);
    const b = sorted(ours.find(q, -1));
    expect(b.map(([id]) => id)).toEqual(a.map(([id]) => id));
    b.forEach(([, c], i) => expect(c).toBeCloseTo(a[i]![1], 6));
    const only = new Set([402, 7, 150, 999, 1]);
    expect(ours.find(q, -1, only).map(([id]) => id)).toEqual((theirs.find(q, -1, only) as [number, number][]).map(([id]) => id));
    expect(ours.find(q, 0.3).map(([id]) => id)).toEqual((theirs.find(q, 0.3, undefined) as [number, number][]).map(([id]) => id));
  });

  test("cosinesToAll is one cosine per vector, the same numbers find gives", () => {
    const r = rng(5);
    const b = new VectorBlock(DIM);
    for (let id = 1; id <= 50; id++) b.add(id, Float32Array.from({ length: DIM }, r));
    b.remove(10);
    const q = Float32Array.from({ length: DIM }, r);
    expect([...b.cosinesToAll(q)]).toEqual(b.find(q, -Infinity).map(([, c]) => c));
  });

  test("a block over the file's rows is refused when its ids do not fit, a vector of another size too", () => {
    const block = new Float32Array(2 * DIM);
    expect(() => VectorBlock.fromRows(DIM, block, [1, 2], [1, 1])).not.toThrow();
    expect(() => VectorBlock.fromRows(DIM, block, [1], [1])).toThrow();
    expect(() => VectorBlock.fromRows(DIM, block, [1, 1], [1, 1])).toThrow("same id");
    expect(() => VectorBlock.fromRows(DIM, block, [0, 2], [1, 1])).toThrow();
    expect(() => VectorBlock.fromRows(DIM, block, [1.5, 2], [1, 1])).toThrow();
    expect(() => new VectorBlock(DIM).add(1, new Float32Array(DIM - 1))).toThrow("dimensions");
  });
});

function chunk(id: string, source: string, content: string, line = 1): StoredChunk {
  return { chunkHash: id, contentHash: `c${content}`, source, content, heading: "", headingLevel: 0, startLine: line, endLine: line };
}

describe("the store's vectors", () => {
  test("a loaded store's vectors are the file's block, one array, with no object per vector", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-vblock-"));
    const s = Store.empty(dir, "m", DIM);
    const r = rng(9);
    const chunks = Array.from({ length: 40 }, (_, i) => chunk(`h${i}`, "/p/a.md", `note ${i}`, i + 1));
    const vecs = new Map(chunks.map((c) => [c.contentHash, Float32Array.from({ length: DIM }, r)]));
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, chunks, (h) => vecs.get(h));
    s.save();
    const loaded = Store.open(dir, "m").store;
    const node = vectorNode((loaded as unknown as { db: AnyOrama }).db)!;
    expect(node).toBeInstanceOf(VectorBlock);
    const buffers = new Set([...node.keys()].map((id) => node.get(id)!.buffer));
    expect(buffers.size).toBe(1);
    expect(loaded.vectorCount).toBe(40);
    const q = Float32Array.from({ length: DIM }, r);
    const all = loaded.cosinesToAll(q);
    expect(all.length).toBe(40);
    const each = loaded.cosines(chunks.map((c) => c.chunkHash), q);
    expect([...all].sort()).toEqual([...each.values()].sort());
    expect(loaded.searchVector(q, 5, -1).map((h) => h.cosine)).toEqual([...all].sort((a, b) => b - a).slice(0, 5));
  });

  test("a section moved to another file keeps its vector though its old chunk went first (no embedding again)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-vblock-"));
    const s = Store.empty(dir, "m", DIM);
    const v = Float32Array.from({ length: DIM }, rng(2));
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a1", "/p/a.md", "moved")], () => v);
    s.save();
    const loaded = Store.open(dir, "m").store;
    expect([...loaded.vectorForContent("cmoved")!]).toEqual([...v]);
    loaded.replaceFile("/p/a.md", { mtimeMs: 2, size: 1 }, [], () => undefined);
    loaded.replaceFile("/p/b.md", { mtimeMs: 2, size: 1 }, [chunk("b1", "/p/b.md", "moved")], (h) => loaded.vectorForContent(h));
    expect(loaded.missingVectorCount).toBe(0);
    expect(loaded.cosines(["b1"], v).get("b1")).toBeCloseTo(1, 6);
  });

  test("a store opened with no vectors answers cosinesToAll with nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-vblock-"));
    const s = Store.empty(dir, "m", null);
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a1", "/p/a.md", "x")], () => undefined);
    expect(s.cosinesToAll(new Float32Array(DIM)).length).toBe(0);
  });
});
