/**
 * The shapes of Orama's internals that memsearch depends on (src/index/engine/orama-internals.ts).
 * When an Orama upgrade fails here, the message names the field that moved: fix it in
 * orama-internals.ts, nowhere else.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { save as oramaSave, search, type AnyOrama, type Results } from "@orama/orama";
import { OramaShapeError } from "../../src/core/errors.ts";
import { bindOrama, bm25Stats, documents, enumValues, fieldStats, indexShape, internalIds, saveState, textRadix, vectorNode, type BoundOrama } from "../../src/index/engine/orama-internals.ts";
import { Store } from "../../src/index/store.ts";
import { VectorBlock } from "../../src/index/engine/vector-block.ts";
import { stem } from "../../src/index/tokenizer.ts";
import type { StoredChunk } from "../../src/index/types.ts";

function chunk(id: string, content: string): StoredChunk {
  return { chunkHash: id, contentHash: "c" + id, source: "/p/a.md", content, heading: content.split("\n")[0]!, headingLevel: 2, startLine: 1, endLine: 3 };
}

/** A Store of three chunks, two with vectors, and the Orama database inside it. */
function built(dim: number | null = 4): { store: Store; dir: string; o: BoundOrama<{ id: string }> } {
  const dir = mkdtempSync(join(tmpdir(), "ms-orama-"));
  const store = Store.empty(dir, "m", dim);
  const vectors = new Map([
    ["ca", new Float32Array([1, 0, 0, 0])],
    ["cb", new Float32Array([0, 1, 0, 0])],
  ]);
  store.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a", "## Redis\nredis cache"), chunk("b", "## Deploy\nkubernetes rollout"), chunk("c", "## Notes\nredis again, no vector")], (h) => vectors.get(h));
  return { store, dir, o: bindOrama<{ id: string }>(dbOf(store)) };
}

/** The Orama database inside a Store (private: as store.test.ts reaches it). */
function dbOf(store: Store): AnyOrama {
  return (store as unknown as { engine: { db: AnyOrama } }).engine.db;
}

/** Every way Store obtains the internals, from a new database and from one loaded from disk. */
function databases(): [string, AnyOrama][] {
  const { store, dir, o } = built();
  store.save();
  const loaded = Store.open(dir, "m").store;
  return [
    ["created", o.db],
    ["loaded", dbOf(loaded)],
  ];
}

describe("Orama internals", () => {
  for (const [how, db] of databases()) {
    describe(how, () => {
      test("the text radix tree finds the internal ids of a term's words", () => {
        const ids = internalIds(db);
        const found = textRadix(db).find({ term: stem("redis"), exact: false, tolerance: 0 });
        const all = Object.values(found).flat().sort();
        expect(all).toEqual([ids.get("a")!, ids.get("c")!].sort());
      });

      test("the source field's values name each source with its documents' internal ids", () => {
        const ids = internalIds(db);
        const values = enumValues(db);
        expect([...values.keys()]).toEqual(["/p/a.md"]);
        expect([...values.get("/p/a.md")!].sort()).toEqual([ids.get("a")!, ids.get("b")!, ids.get("c")!].sort());
      });

      test("BM25 statistics hold the per-field maps", () => {
        const stats = bm25Stats(db);
        const ids = internalIds(db);
        expect(typeof stats.fieldLengths.text![ids.get("a")!]).toBe("number");
        expect(stats.tokenOccurrences.text![stem("redis")]).toBe(2);
        expect(stats.avgFieldLength.text).toBeGreaterThan(0);
        const text = fieldStats(db);
        expect(text.lengths).toBe(stats.fieldLengths.text!);
        expect(text.docsWithToken[stem("kubernetes")]).toBe(1);
        expect(text.avgLength()).toBe(stats.avgFieldLength.text!);
      });

      test("the vector node is the compact component's VectorBlock, which Orama's vector search calls", () => {
        const node = vectorNode(db)!;
        const ids = internalIds(db);
        expect(node).toBeInstanceOf(VectorBlock);
        expect(node.size).toBe(4);
        expect([...node.keys()].sort()).toEqual([ids.get("a")!, ids.get("b")!].sort());
        expect(node.magnitudeOf(ids.get("b")!)).toBe(1);
        expect([...node.get(ids.get("b")!)!]).toEqual([0, 1, 0, 0]);
        expect(node.find(new Float32Array([0, 1, 0, 0]), 0.5)).toEqual([[ids.get("b")!, 1]]);
        const hits = search(db, { mode: "vector", vector: { value: new Float32Array([0, 1, 0, 0]), property: "embedding" }, similarity: 0.5 } as never) as Results<{ id: string }>;
        expect(hits.hits.map((h) => h.id)).toEqual(["b"]);
      });

      test("documents and the id map", () => {
        const docs = documents<{ id: string }>(db);
        const ids = internalIds(db);
        expect(docs[ids.get("c")!]!.id).toBe("c");
        expect(Object.keys(docs)).toHaveLength(3);
      });

      test("save() state has the sections the index file is split on", () => {
        const raw = oramaSave(db);
        expect(Object.keys(raw).sort()).toEqual(["docs", "index", "internalDocumentIDStore", "language", "pinning", "sorting"]);
        const s = saveState(bindOrama(db));
        expect(Object.keys(s.others).sort()).toEqual(["language", "pinning", "sorting"]);
        expect(s.docCount).toBe(3);
        expect(Object.keys(s.docs)).toHaveLength(3);
        expect(Object.keys(s.frequencies)).toEqual(["text"]);
        // The index keeps an empty frequency map per property; the vectors are left out of it.
        expect(s.index.frequencies).toEqual({ text: {} });
        expect(s.index.vectorIndexes).toEqual({ embedding: { size: 4, vectors: [] } });
        // ...they are in the block, which the index file stores itself.
        expect(vectorNode(db)!.count).toBe(2);
      });

      test("the index shape names every map per property", () => {
        expect(indexShape(db)).toBe("indexes:source,text vectorIndexes:embedding frequencies:text tokenOccurrences:text fieldLengths:text avgFieldLength:text searchable:embedding,source,text");
      });
    });
  }

  test("no vector field: no vector node", () => {
    const { o } = built(null);
    expect(o.vectors).toBeUndefined();
    expect(vectorNode(o.db)).toBeUndefined();
  });

  // An Orama upgrade that renames a field must fail here, naming it, not somewhere in a search.
  const renames: [string, (db: AnyOrama) => void, string][] = [
    ["fieldLengths", (db) => delete (db.data.index as unknown as Record<string, unknown>).fieldLengths, "db.data.index.fieldLengths"],
    ["tokenOccurrences.text", (db) => delete (db.data.index as unknown as { tokenOccurrences: Record<string, unknown> }).tokenOccurrences.text, "db.data.index.tokenOccurrences.text"],
    ["the radix find()", (db) => {
        (db.data.index as unknown as { indexes: Record<string, { node: Record<string, unknown> }> }).indexes.text!.node.find = undefined;
      },
      "db.data.index.indexes.text.node.find"],
    ["the vector node", (db) => ((db.data.index.vectorIndexes.embedding as unknown as { node: unknown }).node = { size: 4, vectors: new Map() }), "db.data.index.vectorIndexes.embedding.node"],
    ["the id map", (db) => delete (db.internalDocumentIDStore as unknown as Record<string, unknown>).idToInternalId, "db.internalDocumentIDStore.idToInternalId"],
    ["the documents", (db) => delete (db.data.docs as unknown as Record<string, unknown>).docs, "db.data.docs.docs"],
  ];
  for (const [what, damage, field] of renames) {
    test(`a renamed field fails loudly with OramaShapeError: ${what}`, () => {
      const { o } = built();
      damage(o.db);
      let thrown: unknown;
      try {
        bindOrama(o.db);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(OramaShapeError);
      expect((thrown as OramaShapeError).field).toBe(field);
      expect((thrown as Error).message).toContain(field);
      expect((thrown as Error).message).toContain("the Orama version changed");
    });
  }

  test("a loaded id map is built only when asked, and then answers as the one the database held", () => {
    const { store, dir, o } = built();
    store.replaceFile("/p/b.md", { mtimeMs: 1, size: 1 }, [chunk("d", "## Later\nlater one")], () => undefined);
    store.removeFile("/p/b.md"); // an id Orama keeps in its list, with no document
    store.replaceFile("/p/c.md", { mtimeMs: 1, size: 1 }, [chunk("e", "## Last\nlast one")], () => undefined);
    const want = [...internalIds(o.db)].sort();
    store.save();
    const loaded = Store.open(dir, "m").store;
    const ids = internalIds(dbOf(loaded)) as Map<string, number> & { pending?: unknown };
    // A search by keywords and by vector, and the reads of its hits: the map is not built.
    expect(loaded.searchText([stem("redis")], 5).map((h) => h.chunk.chunkHash).sort()).toEqual(["a", "c"]);
    expect(loaded.searchVector(new Float32Array([1, 0, 0, 0]), 5, 0)[0]!.chunk.chunkHash).toBe("a");
    expect([...loaded.cosines(["a", "c"], new Float32Array([1, 0, 0, 0])).keys()]).toEqual(["a"]);
    expect(ids.pending).not.toBeUndefined();
    // Asked (an iteration), it holds what the saved database held; an insert takes the next id.
    expect([...ids].sort()).toEqual(want);
    expect(ids.pending).toBeUndefined();
    loaded.replaceFile("/p/d.md", { mtimeMs: 1, size: 1 }, [chunk("f", "## New\nnew one")], () => undefined);
    expect(ids.get("f")).toBe(want.length + 1);
    expect(loaded.getChunk("e")?.content).toContain("last one");
  });

  test("a changed save() state fails loudly with OramaShapeError", () => {
    const { o } = built();
    const original = o.db.index.save;
    o.db.index.save = ((index) => {
      const { frequencies: _, ...rest } = original(index) as Record<string, unknown>;
      return rest;
    }) as typeof original;
    expect(() => saveState(o)).toThrow(OramaShapeError);
    expect(() => saveState(o)).toThrow("save().index.frequencies");
  });
});
