import { describe, expect, test } from "bun:test";
import { closeSync, copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { save as oramaSave, type AnyOrama } from "@orama/orama";
import { INDEX_FILE, SCHEMA_VERSION, Store } from "../../src/index/store.ts";
import { blockStart, openIndexFile, peekIndex, sealHead } from "../../src/index/format.ts";
import { checkIndex } from "../../src/index/disk.ts";
import { stem } from "../../src/index/tokenizer.ts";
import type { StoredChunk } from "../../src/index/types.ts";

function chunk(id: string, source: string, content: string, line = 1): StoredChunk {
  return { chunkHash: id, contentHash: "c" + id, source, content, heading: content.split("\n")[0]!, headingLevel: 2, startLine: line, endLine: line + 2 };
}
/** Query words as the index holds them. */
const stems = (...words: string[]) => words.map(stem);
function vec(...xs: number[]): Float32Array {
  const v = new Float32Array(4);
  xs.forEach((x, i) => (v[i] = x));
  return v;
}

describe("Store", () => {
  test("round-trips text, vectors and bookkeeping through the compact file", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m", 4);
    const vs = new Map([["ca", vec(1, 0, 0, 0)], ["cb", vec(0, 1, 0, 0)]]);
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 10 }, [chunk("a", "/p/a.md", "## Redis cache\nwe chose redis for caching"), chunk("b", "/p/a.md", "## Deploy\nkubernetes rollout failed", 5)], (h) => vs.get(h));
    s.save();
    const { store, rebuilt } = Store.open(dir, "m");
    expect(rebuilt).toBeUndefined();
    expect(store.size).toBe(2);
    expect(store.vectorCount).toBe(2);
    expect(store.searchText(stems("redis"), 5).map((h) => h.chunk.chunkHash)).toEqual(["a"]);
    const v = store.searchVector(vec(0, 1, 0.1, 0), 5, 0.5);
    expect(v[0]!.chunk.chunkHash).toBe("b");
    expect(v[0]!.cosine!).toBeGreaterThan(0.9);
    expect(store.vectorForContent("ca")![0]).toBe(1);
    // remove still works after a reload (vector and text both gone)
    expect(store.removeFile("/p/a.md")).toBe(2);
    expect(store.searchText(stems("redis"), 5)).toEqual([]);
    expect(store.searchVector(vec(0, 1, 0, 0), 5, 0)).toEqual([]);
    expect(store.vectorCount).toBe(0);
  });

  test("a corrupt or other-model index is discarded with a reason, never mixed", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m", 4);
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a", "/p/a.md", "## x\nhello world")], () => vec(1));
    s.save();
    const other = Store.open(dir, "other-model");
    expect(other.rebuilt).toContain("'m'");
    expect(other.store.size).toBe(0);
    const bytes = readFileSync(join(dir, INDEX_FILE));
    writeFileSync(join(dir, INDEX_FILE), bytes.subarray(0, bytes.length - 7));
    const cut = Store.open(dir, "m");
    expect(cut.rebuilt).toContain("unreadable");
    writeFileSync(join(dir, INDEX_FILE), "garbage");
    expect(Store.open(dir, "m").rebuilt).toContain("unreadable");
  });

  test("chunks stored without vectors are reported and filled in later", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m");
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a", "/p/a.md", "## x\nhello world")], () => undefined);
    expect(s.chunksMissingVectors().length).toBe(1);
    s.setDimension(4, new Map());
    s.replaceFile("/p/a.md", { mtimeMs: 2, size: 1 }, [chunk("a", "/p/a.md", "## x\nhello world")], () => vec(0, 0, 1));
    expect(s.chunksMissingVectors().length).toBe(0);
    expect(s.searchVector(vec(0, 0, 1), 3, 0.5).length).toBe(1);
    expect(s.searchText(stems("hello"), 3).length).toBe(1);
  });

  test("chunks missing vectors are listed in the order they were stored, a loaded index's too (the order they are embedded and added to the block in)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m", 4);
    const cs = ["e", "b", "d", "a", "c"].map((id, i) => chunk(id, "/p/a.md", `## ${id}\ntext ${i}`));
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, cs, (h) => (h === "cb" || h === "ca" ? vec(1, 0, 0) : undefined));
    s.replaceFile("/p/b.md", { mtimeMs: 1, size: 1 }, [chunk("z", "/p/b.md", "## z\nlast")], () => undefined);
    expect(s.chunksMissingVectors().map((c) => c.chunkHash)).toEqual(["e", "d", "c", "z"]);
    s.save();
    const loaded = Store.open(dir, "m").store;
    expect(loaded.chunksMissingVectors().map((c) => c.chunkHash)).toEqual(["e", "d", "c", "z"]);
    loaded.removeFile("/p/a.md");
    expect(loaded.chunksMissingVectors().map((c) => c.chunkHash)).toEqual(["z"]);
  });

  test("source prefix filters by path, not by token", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m");
    s.replaceFile("/p/docs/a.md", { mtimeMs: 1, size: 1 }, [chunk("a", "/p/docs/a.md", "## x\nshared words")], () => undefined);
    s.replaceFile("/p/docs2/b.md", { mtimeMs: 1, size: 1 }, [chunk("b", "/p/docs2/b.md", "## y\nshared words")], () => undefined);
    expect(s.searchText(stems("shared"), 5, "/p/docs/").map((h) => h.chunk.chunkHash)).toEqual(["a"]);
    expect(s.searchText(stems("shared"), 5, "/nope")).toEqual([]);
  });
});

describe("an index saved empty", () => {
  const state = (s: Store) => oramaSave((s as unknown as { engine: { db: AnyOrama } }).engine.db);

  for (const dim of [null, 4]) {
    test(`round-trips to the shape of a new one, then takes inserts and finds them (${dim ? "with" : "without"} vectors)`, () => {
      const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
      Store.empty(dir, "m", dim).save();
      const { store, rebuilt, missing } = Store.open(dir, "m");
      expect(rebuilt).toBeUndefined();
      expect(missing).toBeUndefined();
      expect(store.size).toBe(0);
      expect(state(store)).toEqual(state(Store.empty(dir, "m", dim)));
      store.replaceFile("/p/2026-11-23.md", { mtimeMs: 1, size: 1 }, [chunk("a", "/p/2026-11-23.md", "### 10:02\n- the deploy key lives in vault")], () => vec(1, 0, 0, 0));
      expect(store.searchText(stems("vault"), 5).map((h) => h.chunk.chunkHash)).toEqual(["a"]);
      store.save();
      const again = Store.open(dir, "m");
      expect(again.rebuilt).toBeUndefined();
      expect(again.store.searchText(stems("deploy", "vault"), 5).map((h) => h.chunk.chunkHash)).toEqual(["a"]);
    });
  }

  test("an index emptied by removing every file loads and takes inserts again", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m");
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a", "/p/a.md", "## x\nhello world")], () => undefined);
    s.removeFile("/p/a.md");
    s.save();
    const { store } = Store.open(dir, "m");
    store.replaceFile("/p/b.md", { mtimeMs: 1, size: 1 }, [chunk("b", "/p/b.md", "## y\nkombucha notes")], () => undefined);
    expect(store.searchText(stems("kombucha"), 5).map((h) => h.chunk.chunkHash)).toEqual(["b"]);
  });
});

describe("selectiveTerms", () => {
  test("drops terms most chunks hold, keeps the rarest when all are common", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m");
    const chunks = Array.from({ length: 300 }, (_, i) => chunk(`c${i}`, "/p/a.md", `## Note ${i}\nthe build uses webpack ${i % 100 === 0 ? "kubernetes" : "locally"}`, i * 3 + 1));
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, chunks, () => undefined);
    expect(s.selectiveTerms(stems("build", "kubernetes"))).toEqual(stems("kubernetes"));
    expect(s.selectiveTerms(stems("build", "webpack")).length).toBe(1);
    expect(s.selectiveTerms(stems("kubernetes"))).toEqual(stems("kubernetes"));
    expect(s.searchText(s.selectiveTerms(stems("build", "kubernetes")), 10).length).toBe(3);
    // A word no chunk holds is no reason to drop the common ones that match: a search still finds something.
    expect(s.selectiveTerms(stems("build", "zeppelin"))).toEqual(stems("build"));
    expect(s.searchText(s.selectiveTerms(stems("zeppelin", "webpack", "build")), 10).length).toBe(10);
    expect(s.selectiveTerms(stems("zeppelin", "kubernetes"))).toEqual(stems("kubernetes"));
    expect(s.selectiveTerms(stems("zeppelin", "quokka"))).toEqual(stems("zeppelin", "quokka"));
  });
});

describe("vector scan", () => {
  test("the tuned scan ranks exactly as a plain cosine over every vector, filters included", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const dim = 37; // not a multiple of 4: the tail loop counts too
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const s = Store.empty(dir, "m", dim);
    const vecs = new Map<string, Float32Array>();
    for (const src of ["/p/a.md", "/p/b.md"]) {
      const chunks = Array.from({ length: 60 }, (_, i) => chunk(`${src.at(-4)}${i}`, src, `## n${i}\nnote ${i}`, i * 3 + 1));
      for (const c of chunks) vecs.set(c.contentHash, Float32Array.from({ length: dim }, rnd));
      s.replaceFile(src, { mtimeMs: 1, size: 1 }, chunks, (h) => vecs.get(h));
    }
    const q = Float32Array.from({ length: dim }, rnd);
    const cos = (v: Float32Array) => {
      let d = 0, a = 0, b = 0;
      for (let i = 0; i < dim; i++) (d += q[i]! * v[i]!), (a += q[i]! * q[i]!), (b += v[i]! * v[i]!);
      return d / Math.sqrt(a * b);
    };
    const expected = [...vecs.entries()].map(([h, v]) => ({ id: h.slice(1), c: cos(v) })).filter((x) => x.c >= 0.1).sort((x, y) => y.c - x.c);
    const got = s.searchVector(q, 10, 0.1);
    expect(got.map((h) => h.chunk.chunkHash)).toEqual(expected.slice(0, 10).map((x) => x.id));
    expect(got[0]!.cosine!).toBeCloseTo(expected[0]!.c, 5);
    const onlyB = s.searchVector(q, 200, 0.1, "/p/b.md");
    expect(onlyB.map((h) => h.chunk.chunkHash)).toEqual(expected.filter((x) => x.id.startsWith("b")).map((x) => x.id));
  });
});

describe("format upgrades and damage keep the vectors", () => {
  function built(dir: string) {
    const s = Store.empty(dir, "m", 4);
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a", "/p/a.md", "## x\nhello world")], () => vec(0, 1, 0, 0));
    s.save();
  }
  function patchHead(dir: string, edit: (head: Record<string, any>) => void) {
    const path = join(dir, INDEX_FILE);
    const bytes = readFileSync(path);
    const len = bytes.readUInt32LE(16);
    const head = JSON.parse(bytes.subarray(20, 20 + len).toString());
    edit(head);
    // Sealed again: a whole header that says something else.
    const text = Buffer.from(sealHead(head).padEnd(len, " "));
    expect(text.length).toBe(len);
    text.copy(bytes, 20);
    writeFileSync(path, bytes);
  }

  test("an older format version is rebuilt, with its vectors carried as a cache", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    built(dir);
    patchHead(dir, (h) => (h.meta.schemaVersion = 1));
    const { store, rebuilt } = Store.open(dir, "m");
    expect(rebuilt).toContain("older format (v1, now v");
    expect(store.size).toBe(0);
    // Not a real v1 file (today's parts under an old number): nothing to carry, nothing thrown.
    expect(store.vectorForContent("ca")).toBeUndefined();
  });

  test("a v10 index (ids and hashes in its layout, the vectors last) is rebuilt with its vectors carried", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    copyFileSync(join(import.meta.dir, "..", "fixtures", "index", "v10-two-vectors.bin"), join(dir, INDEX_FILE));
    const { store, rebuilt } = Store.open(dir, "m");
    expect(rebuilt).toContain(`older format (v10, now v${SCHEMA_VERSION})`);
    expect(store.size).toBe(0);
    expect([...store.vectorForContent("ca")!]).toEqual([0, 1, 0, 0]);
    expect([...store.vectorForContent("cb")!]).toEqual([...vec(0.6, 0, 0.8, 0)]);
    // Ready to take the carried vectors: a rebuild that needs no embedding keeps them.
    expect(store.dim).toBe(4);
  });

  test("opened for keywords only (embeddings off): the vector block is neither read nor checked, and the store is never saved", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m", 4);
    const vs = new Map([["ca", vec(1, 0, 0, 0)], ["cb", vec(0, 1, 0, 0)]]);
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 10 }, [chunk("a", "/p/a.md", "## Redis cache\nwe chose redis for caching"), chunk("b", "/p/a.md", "## Deploy\nkubernetes rollout failed", 5)], (h) => vs.get(h));
    s.save();
    // Damage the vector block.
    const path = join(dir, INDEX_FILE);
    const bytes = readFileSync(path);
    const f = openIndexFile(path);
    closeSync(f.fd);
    bytes[blockStart(f)]! ^= 0xff;
    writeFileSync(path, bytes);
    const { store, rebuilt } = Store.open(dir, "m", { keywordsOnly: true });
    expect(rebuilt).toBeUndefined();
    expect(store.size).toBe(2);
    expect(store.vectorCount).toBe(0);
    expect(store.searchText(stems("redis"), 5).map((h) => h.chunk.chunkHash)).toEqual(["a"]);
    expect(store.sources()).toEqual(["/p/a.md"]);
    expect(() => store.save()).toThrow("never saved");
    expect(readFileSync(path)).toEqual(bytes);
    // Opened whole, the same file is damage, and is rebuilt.
    expect(Store.open(dir, "m").rebuilt).toContain("checksum mismatch");
  });

  test("an unreadable Orama state still yields the vectors", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    built(dir);
    patchHead(dir, (h) => (h.runtime = "0.0.0"));
    const path = join(dir, INDEX_FILE);
    const bytes = readFileSync(path);
    const f = openIndexFile(path);
    closeSync(f.fd);
    // Scribble over the serialized Orama state (between the layout and the vectors).
    bytes.fill(0xff, f.bodyAt, f.bodyAt + f.head.jsonBytes);
    writeFileSync(path, bytes);
    const { store, rebuilt } = Store.open(dir, "m");
    expect(rebuilt).toContain("unreadable");
    expect(store.vectorForContent("ca")?.[1]).toBe(1);
  });
});

describe("the header checks itself", () => {
  /** An index of one file and one chunk, its head's `from` replaced by `to` (same length, not sealed again; `to` "+1": the last digit of the number after `from` changed). */
  function tampered(from: string, to: string): string {
    const dir = mkdtempSync(join(tmpdir(), "ms-store-"));
    const s = Store.empty(dir, "m", 4);
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [chunk("a", "/p/a.md", "## x\nhello world")], () => vec(0, 1, 0, 0));
    s.save();
    expect(checkIndex(dir).state).toBe("ok");
    expect(peekIndex(dir)).toMatchObject({ chunks: 1, files: 1 });
    const path = join(dir, INDEX_FILE);
    const bytes = readFileSync(path);
    const len = bytes.readUInt32LE(16);
    const head = bytes.subarray(20, 20 + len);
    const at = head.indexOf(from);
    expect(at).toBeGreaterThan(0);
    if (to === "+1") {
      // The number's last digit: changing its first could make a leading zero, which is no JSON at all.
      let digit = at + from.length;
      while (head[digit + 1]! >= 48 && head[digit + 1]! <= 57) digit++;
      head[digit] = 48 + ((head[digit]! - 48 + 1) % 10);
    } else head.write(to, at, "latin1");
    writeFileSync(path, bytes);
    return dir;
  }

  for (const [what, from, to] of [
    ["chunk count", '"count":1,', '"count":7,'],
    ["file count", '"fileCount":1,', '"fileCount":5,'],
    ["model name", '"model":"m"', '"model":"n"'],
    ["checksum (its own)", '"headCrc":', "+1"],
  ]) {
    test(`a changed ${what} is damage: peekIndex sees no index, checkIndex and Store.open say why`, () => {
      const dir = tampered(from!, to!);
      expect(peekIndex(dir)).toBeUndefined();
      expect(checkIndex(dir)).toEqual({ state: "unusable", reason: "the index was unreadable (checksum mismatch in the header)" });
      const { store, rebuilt } = Store.open(dir, "m");
      expect(rebuilt).toBe("the index was unreadable (checksum mismatch in the header)");
      expect(store.size).toBe(0);
    });
  }

  test("sealHead: the last field is the CRC-32 of the JSON before it; sealing again changes nothing", () => {
    const sealed = sealHead({ meta: { schemaVersion: SCHEMA_VERSION, model: "m", dim: 4, updatedAt: "x" }, id: "abc", count: 1, fileCount: 1, vectorCount: 1, layoutBytes: 2, jsonBytes: 0, sections: [], kinds: [], runtime: "1", hashesBytes: 2, fileBytes: 3, crc: { layout: 0, sections: [], vectors: 0, rows: 0, hashes: 0, codes: 0 } });
    const head = JSON.parse(sealed);
    expect(Object.keys(head).at(-1)).toBe("headCrc");
    const { headCrc, ...rest } = head;
    expect(headCrc).toBe(Bun.hash.crc32(JSON.stringify(rest)));
    expect(sealHead(head)).toBe(sealed);
  });
});

describe("dropSources (issue 31: an index naming another place's files)", () => {
  test("takes out the files a check refuses, and documents naming a refused source that no file lists, saved and loaded", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-drop-"));
    const s = Store.empty(dir, "m");
    s.replaceFile("/proj/a.md", { mtimeMs: 1, size: 1 }, [chunk("a1", "/proj/a.md", "## A\nalpha"), chunk("s1", "/elsewhere/secret.md", "## S\nsecret stray")], () => undefined);
    s.replaceFile("/other/b.md", { mtimeMs: 1, size: 1 }, [chunk("b1", "/other/b.md", "## B\nbravo")], () => undefined);
    s.save();
    const { store } = Store.open(dir, "m");
    const dropped = store.dropSources((src) => src.startsWith("/proj/"));
    expect(dropped.sources.sort()).toEqual(["/elsewhere/secret.md", "/other/b.md"]);
    expect(dropped.chunks).toBe(2);
    expect(store.sources()).toEqual(["/proj/a.md"]);
    expect(store.getChunk("a1")).toBeDefined();
    expect(store.getChunk("s1")).toBeUndefined();
    expect(store.getChunk("b1")).toBeUndefined();
    expect(store.isDirty).toBe(true);
  });
});
