/**
 * The compact index component (src/index/engine/compact-index.ts): it must answer exactly as Orama's own
 * index does (same hits, same scores to the bit, same order of ties), through inserts, removals
 * and re-inserts and through a save and load, while keeping no per-chunk token frequencies and
 * loading its postings as views of one block.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, insert, load, remove, save, search, type AnyOrama } from "@orama/orama";
import { CompactRadix, compactIndex, withResultLimit } from "../../src/index/engine/compact-index.ts";
import { patchDocs } from "../helpers/index-bytes.ts";
import { rng } from "../../scripts/bench/corpus.ts";
import { bindOrama, saveState, textRadix } from "../../src/index/engine/orama-internals.ts";
import { Store } from "../../src/index/store.ts";
import { createTokenizer } from "../../src/index/tokenizer.ts";
import type { StoredChunk } from "../../src/index/types.ts";

const WORDS = "redis cache cached caching deploy deployment kubernetes kube rollout rollback config configuration configure postgres post posting index indexer indexing token tokens tokenizer __proto__ constructor café 2024 20 v8 fix fixture fixed the a of snake_case_name".split(" ");


function text(r: () => number): string {
  const n = 3 + Math.floor(r() * 25);
  return Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(r() < 0.2 ? ". " : " ");
}

function db(compact: boolean): AnyOrama {
  return create({
    schema: { source: "enum", text: "string" } as never,
    sort: { enabled: false },
    components: { tokenizer: createTokenizer(), ...(compact ? { index: compactIndex() } : {}) },
  }) as AnyOrama;
}

const QUERIES = ["redis", "cach", "deploy", "kube", "config", "post", "index token", "fix", "the", "2024", "20", "__proto__", "cafe", "snake_case_name", "roll", "r", "nothing"];

function answers(d: AnyOrama, where?: Record<string, unknown>, queries = QUERIES, threshold?: number): [string, number][][] {
  return queries.map((q) => search(d, { term: q, properties: ["text"], limit: 1000, ...(where ? { where } : {}), ...(threshold !== undefined ? { threshold } : {}) } as never) as { hits: { id: string; score: number }[] }).map((r) => r.hits.map((h) => [h.id, h.score] as [string, number]));
}

/** The same history of inserts, removals and re-inserts applied to both databases. */
function twins(seed: number): [AnyOrama, AnyOrama] {
  const r = rng(seed);
  const stock = db(false);
  const ours = db(true);
  const docs = Array.from({ length: 300 }, (_, i) => ({ id: `d${i}`, source: `/p/${i % 7}.md`, text: text(r) }));
  for (const d of docs) {
    insert(stock, { ...d } as never);
    insert(ours, { ...d } as never);
  }
  // Remove some, re-insert some of those with new text (their internal ids come back), add new ones.
  for (const d of docs.filter(() => r() < 0.3)) {
    remove(stock, d.id);
    remove(ours, d.id);
    if (r() < 0.5) {
      const again = { ...d, text: text(r) };
      insert(stock, { ...again } as never);
      insert(ours, { ...again } as never);
    }
  }
  for (let i = 300; i < 340; i++) {
    const d = { id: `d${i}`, source: "/p/new.md", text: text(r) };
    insert(stock, { ...d } as never);
    insert(ours, { ...d } as never);
  }
  return [stock, ours];
}

describe("compact index", () => {
  for (const seed of [1, 2, 3]) {
    test(`answers exactly as Orama's own index: hits, scores and the order of ties (history ${seed})`, () => {
      const [stock, ours] = twins(seed);
      const expected = answers(stock);
      expect(expected.some((hits) => hits.length > 20)).toBe(true);
      expect(answers(ours)).toEqual(expected);
      const where = { source: { in: ["/p/1.md", "/p/new.md"] } };
      expect(answers(ours, where)).toEqual(answers(stock, where));
      // Below the default threshold of 1, which keywords each chunk matched counts too.
      for (const threshold of [0, 0.5]) expect(answers(ours, undefined, [...QUERIES, "redis kube", "cache config deploy"], threshold)).toEqual(answers(stock, undefined, [...QUERIES, "redis kube", "cache config deploy"], threshold));
    });
  }

  test("told the limit, it returns only the results Orama keeps, in Orama's order, ties between equal scores included", () => {
    const [stock, ours] = twins(4);
    const queries = [...QUERIES, "redis kube", "cache config deploy"];
    const limited = (d: AnyOrama, limit: number, where?: Record<string, unknown>) =>
      queries.map((q) => (search(d, { term: q, properties: ["text"], limit, ...(where ? { where } : {}) } as never) as { hits: { id: string; score: number }[] }).hits.map((h) => [h.id, h.score]));
    let ties = 0;
    for (const limit of [1, 3, 10, 50]) {
      const expected = limited(stock, limit);
      ties += expected.flat().length - new Set(expected.map((hits) => hits.map(([, score]) => score)).flat()).size;
      expect(withResultLimit(ours.data.index, limit, () => limited(ours, limit)).value).toEqual(expected);
      const where = { source: { in: ["/p/2.md", "/p/new.md"] } };
      expect(withResultLimit(ours.data.index, limit, () => limited(ours, limit, where)).value).toEqual(limited(stock, limit, where));
    }
    expect(ties).toBeGreaterThan(0);
    // Told nothing, it answers every matching chunk again.
    expect((search(ours, { term: "the", properties: ["text"], limit: 1 } as never) as { count: number }).count).toBe((search(stock, { term: "the", properties: ["text"], limit: 1 } as never) as { count: number }).count);
  });

  test("a word named like an Object property ('constructor') is scored like any word; Orama's own index gave NaN once a chunk was removed", () => {
    const [stock, ours] = twins(7);
    const [theirs] = answers(stock, undefined, ["constructor"]);
    const [mine] = answers(ours, undefined, ["constructor"]);
    expect(theirs!.some(([, score]) => Number.isNaN(score))).toBe(true);
    expect(mine!.map(([id]) => id).sort()).toEqual(theirs!.map(([id]) => id).sort());
    expect(mine!.every(([, score]) => Number.isFinite(score) && score > 0)).toBe(true);
  });

  test("a saved and loaded database answers as before, and takes inserts and removals", () => {
    const [stock, ours] = twins(4);
    const copy = db(true);
    load(copy, structuredClone(save(ours)));
    expect(answers(copy)).toEqual(answers(stock));
    for (const d of [stock, copy]) {
      remove(d, "d5");
      remove(d, "d6");
      insert(d, { id: "d5", source: "/p/0.md", text: "redis rollout configuration fixture" } as never);
      insert(d, { id: "dx", source: "/p/0.md", text: "brand new words: zebra zebras" } as never);
    }
    expect(answers(copy)).toEqual(answers(stock));
    expect(answers(copy, undefined, ["zebra"])).toEqual([[["dx", expect.any(Number) as never]]]);
  });

  test("keeps no per-chunk token frequencies (BM25's tf is 1 ÷ the chunk's token count)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-compact-"));
    const store = Store.empty(dir, "m", null);
    const chunks: StoredChunk[] = ["## A\nredis cache", "## B\nkubernetes rollout", "## C\nredis again"].map((content, i) => ({ chunkHash: `h${i}`, contentHash: `c${i}`, source: "/p/a.md", content, heading: content.slice(3, 4), headingLevel: 2, startLine: 1, endLine: 2 }));
    store.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, chunks, () => undefined);
    const live = bindOrama((store as unknown as { engine: { db: AnyOrama } }).engine.db);
    expect(Object.keys(saveState(live).frequencies.text ?? {})).toEqual([]);
    store.save();
    const loaded = Store.open(dir, "m").store;
    const o = bindOrama((loaded as unknown as { engine: { db: AnyOrama } }).engine.db);
    expect(Object.keys(saveState(o).frequencies.text ?? {})).toEqual([]);
    expect(loaded.searchText(["redi"], 10).map((h) => h.chunk.chunkHash).sort()).toEqual(["h0", "h2"]);
  });

  test("a loaded tree's postings are views of one block, not a Set per word", () => {
    const [, ours] = twins(5);
    const copy = db(true);
    load(copy, structuredClone(save(ours)));
    const root = textRadix(copy) as unknown as CompactRadix;
    const buffers = new Set<ArrayBufferLike>();
    const walk = [root as CompactRadix["c"] extends Map<string, infer N> ? N : never];
    let words = 0;
    while (walk.length) {
      const node = walk.pop()!;
      expect(node.d).not.toBeInstanceOf(Set);
      if (node.d.size) {
        buffers.add(node.d.ids.buffer);
        words++;
      }
      walk.push(...node.c.values());
    }
    expect(words).toBeGreaterThan(10);
    expect(buffers.size).toBe(1);
  });

  test("a search reads each word's chunks as views of its postings: the words, chunks and order find gives, nothing copied", () => {
    const [, ours] = twins(6);
    const copy = db(true);
    load(copy, structuredClone(save(ours)));
    const root = textRadix(copy) as unknown as CompactRadix;
    const buffers = new Set<ArrayBufferLike>();
    for (const q of [...QUERIES, ""]) {
      for (const exact of [false, true]) {
        const copied = root.find({ term: q, exact });
        const viewed = root.findPostings(q, exact);
        expect(Object.keys(viewed)).toEqual(Object.keys(copied));
        for (const [word, ids] of Object.entries(viewed)) {
          expect(ids).toBeInstanceOf(Uint32Array);
          expect([...ids]).toEqual(copied[word]!);
          if (ids.length) buffers.add(ids.buffer);
        }
      }
    }
    // A loaded tree's postings are one block: views share it, copies would not.
    expect(buffers.size).toBe(1);
    expect(Object.keys(root.findPostings("2", false))).toEqual(["20", "2024"]);
  });

  test("a damaged saved tree is refused, never half-loaded", () => {
    const [, ours] = twins(6);
    const saved = (save(ours).index as { indexes: { text: { node: Record<string, unknown> } } }).indexes.text.node;
    expect(() => CompactRadix.fromJSON(saved)).not.toThrow();
    const cut = (key: string) => ({ ...saved, [key]: (saved[key] as Uint32Array).subarray(1) });
    for (const key of ["labelLengths", "childCounts", "lengths", "postings"]) expect(() => CompactRadix.fromJSON(cut(key))).toThrow();
    expect(() => CompactRadix.fromJSON({ ...saved, labels: `${saved.labels as string}x` })).toThrow();
    expect(() => CompactRadix.fromJSON({ d: [1], c: [] })).toThrow("compact form");
  });
});

describe("documents in the index file", () => {
  test("texts are stored as UTF-8 (not the clone's UTF-16) and come back exactly, fields and vectors included", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-compact-"));
    const store = Store.empty(dir, "m", 2);
    const long = `## Notes → next\n${"plain ascii words for the memory index ".repeat(300)}`;
    const odd = "## Ünïcödé\ncafé 東京 🚀 e\u0301 \u0000 tab\there";
    const chunks: StoredChunk[] = [long, odd, "## C\nno vector here"].map((content, i) => ({ chunkHash: `h${i}`, contentHash: `c${i}`, source: i === 2 ? "/p/b.md" : "/p/a.md", content, heading: content.slice(3, content.indexOf("\n")), headingLevel: 2 + i, startLine: 10 * i + 1, endLine: 10 * i + 7 }));
    store.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, chunks.slice(0, 2), (h) => (h === "c2" ? undefined : new Float32Array([1, 0])));
    store.replaceFile("/p/b.md", { mtimeMs: 1, size: 1 }, chunks.slice(2), () => undefined);
    store.save();
    const head = JSON.parse(readFileSync(join(dir, "index.bin")).subarray(20, 2048).toString().trim()) as { jsonBytes: number };
    // One character past Latin-1 made the whole text UTF-16 (two bytes a character) in the clone.
    expect(head.jsonBytes).toBeLessThan(long.length * 1.5);
    const loaded = Store.open(dir, "m").store;
    for (const c of chunks) expect(loaded.getChunk(c.chunkHash)).toEqual(c);
    expect(loaded.vectorCount).toBe(2);
    expect(loaded.missingVectorCount).toBe(1);
    // The vector goes with its chunk (the document's embedding field was kept as null).
    loaded.removeFile("/p/a.md");
    expect(loaded.vectorCount).toBe(0);
  });
});

describe("a documents section that does not hold together", () => {
  test("is refused though its checksum holds (a bug, not a disk): the index is rebuilt, its vectors kept as a cache", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-compact-"));
    const store = Store.empty(dir, "m", 2);
    const chunks: StoredChunk[] = ["## A\nredis cache", "## B\nkubernetes"].map((content, i) => ({ chunkHash: `h${i}`, contentHash: `c${i}`, source: "/p/a.md", content, heading: content.slice(3, 4), headingLevel: 2, startLine: 1, endLine: 2 }));
    store.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, chunks, () => new Float32Array([0, 1]));
    store.save();
    // The document count says one more than the section holds.
    patchDocs(dir, (section) => section.writeUInt32LE(section.readUInt32LE(0) + 1, 0));
    const { store: again, rebuilt } = Store.open(dir, "m");
    expect(rebuilt).toContain("unreadable");
    expect(again.size).toBe(0);
    expect([...again.vectorForContent("c1")!]).toEqual([0, 1]);
  });
});
