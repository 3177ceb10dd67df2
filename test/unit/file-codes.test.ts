/**
 * A command's search reads the index file's int8 codes instead of its floats (format.ts v11), and
 * scores exactly only the rows the codes cannot rule out, best upper bound first
 * (VectorBlock.bestFirst). Its answers must be the exact scan's, to the bit, ties included.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/index/store.ts";
import { ColdRows } from "../../src/index/engine/vector-cold.ts";
import type { StoredChunk } from "../../src/index/types.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const DIM = 768;

/**
 * `n` chunks whose vectors gather around a few centres (as a model's do around a project's
 * topics), every tenth one a copy of another (exact ties), saved as one base.
 */
function built(n: number, seed: number): { dir: string; vectors: Float32Array[] } {
  const dir = mkdtempSync(join(tmpdir(), "ms-codes-"));
  dirs.push(dir);
  const r = rng(seed);
  const centres = Array.from({ length: 12 }, () => Float32Array.from({ length: DIM }, () => r() - 0.5));
  const vectors: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 10 === 9) {
      vectors.push(vectors[Math.floor(r() * i)]!.slice());
      continue;
    }
    const c = centres[i % centres.length]!;
    vectors.push(Float32Array.from(c, (x) => x + (r() - 0.5) * 0.6));
  }
  const s = Store.empty(dir, "m", DIM);
  const perFile = 50;
  for (let f = 0; f * perFile < n; f++) {
    const path = `/p/memory/2026-01-${String(f + 1).padStart(2, "0")}.md`;
    const chunks: StoredChunk[] = [];
    for (let i = f * perFile; i < Math.min(n, (f + 1) * perFile); i++) {
      chunks.push({ chunkHash: `c${i}`, contentHash: `h${i}`, source: path, content: `### ${i}\nnote ${i}`, heading: `### ${i}`, headingLevel: 3, startLine: i, endLine: i + 1 });
    }
    s.replaceFile(path, { mtimeMs: 1, size: 1 }, chunks, (h) => vectors[Number(h.slice(1))]);
  }
  s.save();
  return { dir, vectors };
}

describe("a command's search over the file's codes", () => {
  test("answers as the whole block loaded, at every limit, ties included, scoring few rows exactly", () => {
    const { dir, vectors } = built(4000, 3);
    const whole = Store.open(dir, "m").store;
    const fromCodes = Store.open(dir, "m", { lazyVectors: "search", deferVectorCheck: true }).store;
    const r = rng(9);
    // Queries on a stored vector (its copies tie with it), near one, and far from all.
    const queries = [
      ...Array.from({ length: 10 }, (_, i) => vectors[i * 37]!),
      ...Array.from({ length: 10 }, (_, i) => Float32Array.from(vectors[i * 53 + 1]!, (x) => x + (r() - 0.5) * 0.2)),
      ...Array.from({ length: 5 }, () => Float32Array.from({ length: DIM }, () => r() - 0.5)),
    ];
    // Rows scored exactly, counted through the one method that scores them.
    let scored = 0;
    const dots = ColdRows.prototype.dots;
    ColdRows.prototype.dots = function (this: ColdRows, ...args: Parameters<ColdRows["dots"]>) {
      scored += args[2];
      return dots.apply(this, args);
    };
    try {
      for (const q of queries) {
        for (const limit of [1, 5, 50, 200]) {
          for (const similarity of [0, 0.35]) {
            const want = whole.searchVector(q, limit, similarity).map((h) => [h.chunk.chunkHash, h.cosine]);
            expect(fromCodes.searchVector(q, limit, similarity).map((h) => [h.chunk.chunkHash, h.cosine])).toEqual(want);
          }
        }
      }
    } finally {
      ColdRows.prototype.dots = dots;
    }
    // 25 queries × 8 searches over 4000 rows: a scan of every row would score 800,000.
    expect(scored).toBeGreaterThan(0);
    expect(scored).toBeLessThan(25 * 8 * 4000 * 0.1);
  }, 60_000);
});
