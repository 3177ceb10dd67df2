/**
 * The vector block (src/index/engine/vector-block.ts): Orama's vector index as one Float32Array. It must
 * find what Orama's map of arrays finds, in the same order (ties included), through adds, removes,
 * re-adds, growth and squeezing; a loaded store's vectors must be the file's block itself; and
 * the one-pass cosines to every vector must be the cosines search uses.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyOrama } from "@orama/orama";
import { vector as oramaVector } from "@orama/orama/trees";
import { vectorNode } from "../../src/index/engine/orama-internals.ts";
import { INDEX_FILE, MANIFEST_FILE } from "../../src/index/format.ts";
import { writeIndexFile } from "../../src/index/index-file.ts";
import { Store } from "../../src/index/store.ts";
import { VectorBlock } from "../../src/index/engine/vector-block.ts";
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

  test("holes are squeezed out in place: the block is not copied, the rows keep their order and their vectors", () => {
    const r = rng(11);
    const b = new VectorBlock(DIM, 256);
    const vecs = new Map<number, Float32Array>();
    for (let id = 1; id <= 200; id++) {
      vecs.set(id, Float32Array.from({ length: DIM }, r));
      b.add(id, vecs.get(id)!);
    }
    const buffer = b.get(1)!.buffer;
    // Past a quarter of the rows as holes, and more than 64 of them: a squeeze.
    for (let id = 2; id <= 200; id += 2) b.remove(id);
    expect(b.get(1)!.buffer).toBe(buffer);
    expect([...b.keys()]).toEqual([...vecs.keys()].filter((id) => id % 2 === 1));
    for (const id of b.keys()) expect([...b.get(id)!]).toEqual([...vecs.get(id)!]);
    // Re-added after the squeeze, an id goes last, into the room the squeeze left.
    b.add(2, vecs.get(2)!);
    expect(b.get(2)!.buffer).toBe(buffer);
    expect([...b.keys()].at(-1)).toBe(2);
    const q = Float32Array.from({ length: DIM }, r);
    const fresh = new VectorBlock(DIM);
    for (const id of b.keys()) fresh.add(id, vecs.get(id)!);
    expect(b.find(q, -1)).toEqual(fresh.find(q, -1));
  });

  test("a vector given as a view of the block itself survives the squeeze its add triggers", () => {
    const r = rng(12);
    const b = new VectorBlock(DIM, 100);
    for (let id = 1; id <= 100; id++) b.add(id, Float32Array.from({ length: DIM }, r));
    for (let id = 1; id <= 30; id++) b.remove(id);
    const last = b.get(100)!;
    const expected = [...last];
    b.add(101, last);
    expect([...b.get(101)!]).toEqual(expected);
    expect([...b.get(100)!]).toEqual(expected);
  });

  test("its bytes for the index file are views of the block itself, run by run between holes, in row order", () => {
    const r = rng(13);
    const b = new VectorBlock(DIM, 64);
    const vecs = new Map<number, Float32Array>();
    for (let id = 1; id <= 40; id++) {
      vecs.set(id, Float32Array.from({ length: DIM }, r));
      b.add(id, vecs.get(id)!);
    }
    for (const id of [1, 7, 8, 20, 40]) b.remove(id);
    const buffer = b.get(2)!.buffer;
    // At most 3 rows a piece: runs are cut at holes and at the size asked for.
    const pieces = [...b.bytes(3 * DIM * 4)];
    for (const p of pieces) {
      expect(p.buffer).toBe(buffer);
      expect(p.byteLength).toBeLessThanOrEqual(3 * DIM * 4);
    }
    const floats = new Float32Array(Buffer.concat(pieces).buffer.slice(0));
    const { ids, magnitudes } = b.columns();
    expect(ids).toEqual([...b.keys()]);
    expect(floats.length).toBe(ids.length * DIM);
    ids.forEach((id, i) => {
      expect([...floats.subarray(i * DIM, (i + 1) * DIM)]).toEqual([...vecs.get(id)!]);
      expect(magnitudes[i]).toBe(b.magnitudeOf(id)!);
    });
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
    // Rows past the ids are room for more; a block shorter than its ids, or not whole rows, is refused.
    expect(() => VectorBlock.fromRows(DIM, block, [1], [1])).not.toThrow();
    expect(() => VectorBlock.fromRows(DIM, block, [1, 2, 3], [1, 1, 1])).toThrow();
    expect(() => VectorBlock.fromRows(DIM, new Float32Array(2 * DIM + 1), [1, 2], [1, 1])).toThrow();
    expect(() => VectorBlock.fromRows(DIM, block, [1, 1], [1, 1])).toThrow("same id");
    expect(() => VectorBlock.fromRows(DIM, block, [0, 2], [1, 1])).toThrow();
    expect(() => VectorBlock.fromRows(DIM, block, [1.5, 2], [1, 1])).toThrow();
    expect(() => new VectorBlock(DIM).add(1, new Float32Array(DIM - 1))).toThrow("dimensions");
  });
});

function chunk(id: string, source: string, content: string, line = 1): StoredChunk {
  return { chunkHash: id, contentHash: `c${content}`, source, content, heading: "", headingLevel: 0, startLine: line, endLine: line };
}

/** A store of 40 chunks with seeded vectors, saved and opened again; the generator goes on from where the vectors left it. */
function savedAndLoaded(seed: number) {
  const dir = mkdtempSync(join(tmpdir(), "ms-vblock-"));
  const s = Store.empty(dir, "m", DIM);
  const r = rng(seed);
  const chunks = Array.from({ length: 40 }, (_, i) => chunk(`h${i}`, "/p/a.md", `note ${i}`, i + 1));
  const vecs = new Map(chunks.map((c) => [c.contentHash, Float32Array.from({ length: DIM }, r)]));
  s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, chunks, (h) => vecs.get(h));
  s.save();
  const loaded = Store.open(dir, "m").store;
  return { r, dir, chunks, loaded, node: vectorNode((loaded as unknown as { engine: { db: AnyOrama } }).engine.db)! };
}

describe("the store's vectors", () => {
  test("a loaded store's vectors are the file's block, one array, with no object per vector", () => {
    const { r, chunks, loaded, node } = savedAndLoaded(9);
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

  test("a loaded store takes new vectors into its block's room: the block is not copied on the first new turn", () => {
    const { r, dir, loaded, node } = savedAndLoaded(10);
    const buffer = node.get([...node.keys()][0]!)!.buffer;
    const more = Array.from({ length: 40 }, (_, i) => chunk(`n${i}`, "/p/b.md", `new ${i}`, i + 1));
    const newVecs = new Map(more.map((c) => [c.contentHash, Float32Array.from({ length: DIM }, r)]));
    loaded.replaceFile("/p/b.md", { mtimeMs: 2, size: 1 }, more, (h) => newVecs.get(h));
    expect(loaded.vectorCount).toBe(80);
    expect(new Set([...node.keys()].map((id) => node.get(id)!.buffer))).toEqual(new Set([buffer]));
    const q = newVecs.get("cnew 7")!;
    expect(loaded.searchVector(q, 1, -1)[0]!.chunk.chunkHash).toBe("n7");
    // Saved and loaded again, the room is not written to the file: the same vectors come back.
    loaded.save();
    const again = Store.open(dir, "m").store;
    expect(again.vectorCount).toBe(80);
    expect([...again.cosines(["n7", "h3"], q).values()]).toEqual([...loaded.cosines(["n7", "h3"], q).values()]);
  });

  test("a store with holes in its block saves and loads the same vectors; a save given the wrong vector bytes fails and leaves the old index", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-vblock-"));
    const s = Store.empty(dir, "m", DIM);
    const r = rng(14);
    const chunks = Array.from({ length: 30 }, (_, i) => chunk(`h${i}`, `/p/${i % 3}.md`, `note ${i}`, i + 1));
    const vecs = new Map(chunks.map((c) => [c.contentHash, Float32Array.from({ length: DIM }, r)]));
    for (const f of ["/p/0.md", "/p/1.md", "/p/2.md"]) s.replaceFile(f, { mtimeMs: 1, size: 1 }, chunks.filter((c) => c.source === f), (h) => vecs.get(h));
    s.removeFile("/p/1.md");
    s.save();
    const loaded = Store.open(dir, "m").store;
    expect(loaded.vectorCount).toBe(20);
    for (const c of chunks.filter((c) => c.source !== "/p/1.md")) expect([...loaded.vectorForContent(c.contentHash)!]).toEqual([...vecs.get(c.contentHash)!]);
    const before = readFileSync(join(dir, INDEX_FILE));
    const content = {
      meta: { ...loaded.meta },
      id: "abc",
      count: 0,
      layout: { files: {} },
      rows: { ids: [1, 2], magnitudes: [1, 1], hashes: ["a", "b"] },
      sections: [],
      sectionsAtMost: 2,
      vectors: [new Uint8Array(DIM * 4)],
    };
    expect(() => writeIndexFile(join(dir, INDEX_FILE), content)).toThrow("bytes given");
    expect(readFileSync(join(dir, INDEX_FILE)).equals(before)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([INDEX_FILE, MANIFEST_FILE]);
    expect(Store.open(dir, "m").store.vectorCount).toBe(20);
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
