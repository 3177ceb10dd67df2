/**
 * The index as a base plus segments (src/index/segments.ts): a change is written as a small segment
 * after the base, never as the whole index again, and a reader that replays the segments holds the
 * very index a merge writes as one file: the same hits, scores, cosines, lengths and ties, through
 * every way of opening it (whole, cold as the watch process, lazy as a writer, keywords only).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/index/store.ts";
import { VectorsDamagedError } from "../../src/core/errors.ts";
import { INDEX_FILE, MANIFEST_FILE, openIndexFile, peekIndex, readManifest, tailOf } from "../../src/index/format.ts";
import { peekIndexFiles } from "../../src/index/disk.ts";
import { readRowsTable } from "../../src/index/index-file.ts";
import { fakeEmbedding } from "../helpers/ollama-double.ts";
import { writeInto } from "../helpers/store-of.ts";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "ms-seg-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const WORDS = "redis pool timeout kubernetes deploy migration rollback webpack alias config test failing fixture cache eviction token refresh oauth session cookie header parser lexer stream buffer socket retry backoff queue worker cron schedule index vector cosine ranking stem porter".split(" ");

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** A day file of `turns` sections, reproducible from the seed. */
function dayText(r: () => number, day: number, turns: number): string {
  const out = [`# 2026-01-${String(day).padStart(2, "0")}`, "", "## Session abc", ""];
  for (let t = 0; t < turns; t++) {
    out.push(`### 10:${String(t).padStart(2, "0")}`, `<!-- session:abc turn:t${day}-${t} -->`);
    const n = 2 + Math.floor(r() * 3);
    for (let b = 0; b < n; b++) out.push(`- ${Array.from({ length: 5 + Math.floor(r() * 8) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(" ")}`);
    out.push("");
  }
  return out.join("\n");
}

function vectorOf(dim: number) {
  return (text: string) => Float32Array.from(fakeEmbedding(text, dim));
}

/** Everything a search reads from a store, for these queries. */
function answers(s: Store, dim: number, queries: string[]) {
  const vec = vectorOf(dim);
  return queries.map((q) => {
    const terms = q.split(" ");
    const v = vec(q);
    const text = s.searchText(s.selectiveTerms(terms), 50).map((h) => [h.chunk.chunkHash, h.bm25, h.length, h.chunk.content]);
    const vector = s.searchVector(v, 50, 0).map((h) => [h.chunk.chunkHash, h.cosine, h.length]);
    const cos = [...s.cosines(text.map((t) => t[0] as string), v)];
    return { text, vector, cos, background: s.cosineBackground(v), stats: [s.textStats().docs, s.textStats().avgLength, s.textStats().df(terms[0]!)] };
  });
}

const QUERIES = ["redis pool", "kubernetes deploy rollback", "cache eviction token", "porter stem ranking", "socket retry backoff queue", "oauth"];

/**
 * A base, then `rounds` writers each opening it (lazily or whole), changing it as re-indexes do, and
 * saving a segment; with `inMemory`, the same changes made to the one store that built the base,
 * never saved again nor reopened: the index the segments must give back.
 */
function history(dir: string, dim: number, days: number, rounds: number, seed = 7, inMemory = false) {
  const r = rng(seed);
  const texts = new Map<string, string>();
  const base = Store.empty(dir, "m", dim);
  for (let d = 1; d <= days; d++) {
    const path = `/p/memory/2026-01-${String(d).padStart(2, "0")}.md`;
    texts.set(path, dayText(r, d, 6));
    writeInto(base, path, texts.get(path)!, vectorOf(dim));
  }
  base.save();
  const baseBytes = readFileSync(join(dir, INDEX_FILE));
  const segmentBytes: number[] = [];
  let last: Store = base;
  for (let round = 0; round < rounds; round++) {
    const s = inMemory ? last : Store.open(dir, "m", round % 2 === 0 ? { lazyVectors: "write" } : {}).store;
    const paths = [...texts.keys()];
    const path = paths[Math.floor(r() * paths.length)]!;
    const kind = round % 4;
    if (kind === 0) {
      // A new turn appended to a day.
      texts.set(path, `${texts.get(path)!}\n### 11:${round}\n<!-- session:abc turn:n${round} -->\n- ${WORDS[round % WORDS.length]} appended note ${round} redis\n`);
      writeInto(s, path, texts.get(path)!, vectorOf(dim), 100 + round);
    } else if (kind === 1) {
      // A section forgotten: the lines after it move, their chunks are replaced (vectors from the cache).
      const text = texts.get(path)!;
      const at = text.indexOf("### 10:01");
      const next = text.indexOf("### ", at + 4);
      texts.set(path, at >= 0 && next > at ? text.slice(0, at) + text.slice(next) : text + "\n- tail\n");
      writeInto(s, path, texts.get(path)!, vectorOf(dim), 100 + round);
    } else if (kind === 2) {
      s.removeFile(path);
      texts.delete(path);
    } else {
      const day = days + round;
      const fresh = `/p/memory/2026-02-${String(day).padStart(2, "0")}.md`;
      texts.set(fresh, dayText(r, day, 3));
      writeInto(s, fresh, texts.get(fresh)!, vectorOf(dim), 100 + round);
      s.touchFile(paths[0]!, { mtimeMs: 5000 + round, size: 5000 + round });
    }
    if (inMemory) continue;
    const before = new Set(readdirSync(dir));
    s.save();
    const added = readdirSync(dir).filter((n) => !before.has(n) && n.startsWith("seg-"));
    expect(added.length).toBe(1);
    segmentBytes.push(statSync(join(dir, added[0]!)).size);
    last = s;
  }
  return { baseBytes, segmentBytes, last };
}

/** A copy of the index, merged into one base. */
function merged(dir: string): Store {
  const copy = tempDir();
  cpSync(dir, copy, { recursive: true });
  Store.open(copy, "m").store.save({ merge: true });
  expect(readdirSync(copy).filter((n) => n.startsWith("seg-"))).toEqual([]);
  const { store } = Store.open(copy, "m");
  expect(store.segmentCount).toBe(0);
  return store;
}

describe("segments after the base", () => {
  test("a change writes a small segment and a manifest, never the base again", () => {
    const dir = tempDir();
    const { baseBytes, segmentBytes } = history(dir, 32, 12, 8);
    expect(readFileSync(join(dir, INDEX_FILE)).equals(baseBytes)).toBe(true);
    for (const b of segmentBytes) expect(b).toBeLessThan(64 * 1024);
    const m = readManifest(dir);
    expect(m && !("damaged" in m) && m.segments.map((s) => s.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Peeks count what the segments hold, without replaying them into an engine.
    const { store } = Store.open(dir, "m");
    expect(peekIndex(dir)).toMatchObject({ chunks: store.size, vectors: store.vectorCount, segments: 8 });
    expect(Object.keys(peekIndexFiles(dir)!.fileRecords).sort()).toEqual(store.sources().sort());
  });

  test("replayed, they answer as the one file a merge writes: hits, scores, lengths, cosines and ties to the bit", () => {
    const dir = tempDir();
    const { last } = history(dir, 32, 20, 16);
    const want = answers(history(tempDir(), 32, 20, 16, 7, true).last, 32, QUERIES);
    expect(answers(merged(dir), 32, QUERIES)).toEqual(want);
    expect(want.some((a) => a.text.length > 5 && a.vector.length > 5)).toBe(true);
    expect(answers(Store.open(dir, "m").store, 32, QUERIES)).toEqual(want);
    expect(answers(Store.open(dir, "m", { lazyVectors: "search" }).store, 32, QUERIES)).toEqual(want);
    // The writer that appended the last segment holds the same index in memory.
    expect(answers(last, 32, QUERIES)).toEqual(want);
    const keywords = Store.open(dir, "m", { keywordsOnly: true }).store;
    expect(answers(keywords, 32, QUERIES).map((a) => [a.text, a.stats])).toEqual(want.map((a) => [a.text, a.stats]));
  });

  test("the watch process's cold block, and a command's lazy search, over base and segments answer as the same changes in memory (768-d, past the kernel's size)", () => {
    const dir = tempDir();
    history(dir, 768, 480, 6, 11);
    const one = history(tempDir(), 768, 480, 6, 11, true).last;
    expect(one.vectorCount * 768).toBeGreaterThan(1 << 21);
    const cold = Store.open(dir, "m", { lowPeak: true }).store;
    expect(cold.segmentCount).toBe(6);
    const want = answers(one, 768, QUERIES);
    expect(answers(cold, 768, QUERIES)).toEqual(want);
    // A command's search over the same: its rows read from the file as they are scored.
    expect(answers(Store.open(dir, "m", { lazyVectors: "search" }).store, 768, QUERIES)).toEqual(want);
  });

  test("a command's search that scans the file's codes answers as one checked at load, and ranks nothing from damaged vectors", () => {
    // A base alone and one with segments (rows removed by them leave holes; rows they add are held in memory).
    const merged = tempDir();
    history(merged, 768, 480, 0, 11);
    expect(answers(Store.open(merged, "m", { lazyVectors: "search", deferVectorCheck: true }).store, 768, QUERIES)).toEqual(answers(Store.open(merged, "m", { lazyVectors: "search" }).store, 768, QUERIES));
    expect(answers(Store.open(merged, "m", { lazyVectors: "search", deferVectorCheck: true }).store, 768, QUERIES)).toEqual(answers(Store.open(merged, "m").store, 768, QUERIES));
    const dir = tempDir();
    history(dir, 768, 480, 6, 11);
    const deferred = () => Store.open(dir, "m", { lazyVectors: "search", deferVectorCheck: true }).store;
    const want = answers(Store.open(dir, "m", { lazyVectors: "search" }).store, 768, QUERIES);
    expect(answers(deferred(), 768, QUERIES)).toEqual(want);
    expect(answers(Store.open(dir, "m").store, 768, QUERIES)).toEqual(want);
    expect(deferred().searchVector(vectorOf(768)("redis pool"), 5, 0, "/p/memory/2026-01-0").length).toBe(5);
    const file = join(dir, INDEX_FILE);
    const clean = readFileSync(file);
    const f = openIndexFile(file);
    closeSync(f.fd);
    const t = tailOf(f);
    const rows = f.head.vectorCount;
    const hit = want[0]!.text[0]![0] as string;
    const reads = [(s: Store) => s.searchVector(vectorOf(768)("redis pool"), 50, 0), (s: Store) => s.searchVector(vectorOf(768)("redis pool"), 5, 0, "/p/memory/2026-01-0"), (s: Store) => s.cosines([hit], vectorOf(768)("redis pool"))];
    // One float changed in every row of the base's block: any read of a row refuses it, again and again.
    const everyRow = Buffer.from(clean);
    for (let r = 0; r < rows; r++) everyRow[t.vectorsAt + r * 768 * 4 + 5] ^= 0x40;
    writeFileSync(file, everyRow);
    for (const read of reads) {
      const s = deferred();
      expect(() => read(s)).toThrow(VectorsDamagedError);
      expect(() => read(s)).toThrow(VectorsDamagedError);
    }
    // Checked at load, the same file is refused there (the path a search takes next: heal.ts).
    expect(Store.open(dir, "m", { lazyVectors: "search" }).rebuilt).toContain("checksum mismatch in the vectors");
    // One row changed: each query refuses it or, when it never read it, answers as the undamaged index.
    const oneRow = Buffer.from(clean);
    oneRow[t.vectorsAt + Math.floor(rows / 3) * 768 * 4 + 9] ^= 0x40;
    writeFileSync(file, oneRow);
    let answered = 0;
    QUERIES.forEach((q, i) => {
      try {
        expect(deferred().searchVector(vectorOf(768)(q), 5, 0)).toEqual(want[i]!.vector.slice(0, 5).map(([hash]) => expect.objectContaining({ chunk: expect.objectContaining({ chunkHash: hash }) })));
        answered++;
      } catch (e) {
        if (!(e instanceof VectorsDamagedError)) throw e;
      }
    });
    expect(answered).toBeGreaterThan(0);
    // The base's row of a query's best vector changed: that query refuses it.
    writeFileSync(file, clean);
    const store = Store.open(dir, "m").store as unknown as { engine: { internalId(id: string): number | undefined } };
    const fd = openIndexFile(file);
    const table = readRowsTable(fd);
    closeSync(fd.fd);
    const inBase = QUERIES.map((q, i) => ({ q, row: table.ids.indexOf(store.engine.internalId(want[i]!.vector[0]![0] as string)!) })).find((x) => x.row >= 0)!;
    const bestRow = Buffer.from(clean);
    bestRow[t.vectorsAt + inBase.row * 768 * 4 + 9] ^= 0x40;
    writeFileSync(file, bestRow);
    expect(() => deferred().searchVector(vectorOf(768)(inBase.q), 5, 0)).toThrow(VectorsDamagedError);
    // A code changed: the scan refuses the codes before any bound is made of them, and so does a load that checks.
    const oneCode = Buffer.from(clean);
    oneCode[t.codesAt + 100] ^= 0x01;
    writeFileSync(file, oneCode);
    expect(() => deferred().searchVector(vectorOf(768)("oauth"), 50, 0)).toThrow(VectorsDamagedError);
    expect(Store.open(dir, "m", { lazyVectors: "search" }).rebuilt).toContain("checksum mismatch in the vectors");
    // The rows table changed: refused at load.
    const oneFigure = Buffer.from(clean);
    oneFigure[t.rowsAt + 3] ^= 0x01;
    writeFileSync(file, oneFigure);
    expect(Store.open(dir, "m", { lazyVectors: "search", deferVectorCheck: true }).rebuilt).toContain("checksum mismatch in the vectors");
  });

  test("a merge writes one base with no segment, and what it holds opens as before", () => {
    const dir = tempDir();
    history(dir, 16, 6, 5);
    const before = answers(Store.open(dir, "m").store, 16, QUERIES);
    const s = Store.open(dir, "m").store;
    expect(s.segmentCount).toBe(5);
    s.save({ merge: true });
    expect(readdirSync(dir).sort()).toEqual([INDEX_FILE, "index.lock", MANIFEST_FILE].filter((n) => readdirSync(dir).includes(n)).sort());
    expect(readManifest(dir)).toMatchObject({ segments: [] });
    expect(answers(Store.open(dir, "m").store, 16, QUERIES)).toEqual(before);
  });
});
