/**
 * A loaded store keeps its chunks' texts in the index file (issue 25): they were a fifth of a
 * loaded index in memory. Each is read by offset through the descriptor the load opened, which
 * still reads the loaded file once a save has replaced it by a rename.
 */
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyOrama } from "@orama/orama";
import { documents } from "../../src/index/engine/orama-internals.ts";
import { INDEX_FILE, Store } from "../../src/index/store.ts";
import { MANIFEST_FILE } from "../../src/index/format.ts";
import type { StoredChunk } from "../../src/index/types.ts";
import { VectorBlock } from "../../src/index/engine/vector-block.ts";
import * as fs from "node:fs";
import { patchDocs } from "../helpers/index-bytes.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ms-texts-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function chunks(source: string, texts: string[]): StoredChunk[] {
  return texts.map((t, i) => ({ chunkHash: `${source}#${i}`, contentHash: `c:${t}`, source, content: `## T${i}\n${t}`, heading: `T${i}`, headingLevel: 2, startLine: i * 3 + 1, endLine: i * 3 + 2 }));
}

const A = ["the quokka balancer fronts staging", "café naïve — 日本語 and emoji 🦘 in a note", "redis cache warmed at deploy"];
const B = ["kubernetes rollout paused", "postgres vacuum tuned"];

function saved(dir: string, files: Record<string, string[]>): StoredChunk[] {
  const s = Store.empty(dir, "m", 2);
  const all: StoredChunk[] = [];
  for (const [f, texts] of Object.entries(files)) {
    const cs = chunks(f, texts);
    all.push(...cs);
    s.replaceFile(f, { mtimeMs: 1, size: 1 }, cs, (h) => new Float32Array([h.length, 1]));
  }
  s.save();
  return all;
}

/** Descriptors of this process open on `path`, by what they read: the file there now, or one unlinked since (" (deleted)"). */
function fdsOn(path: string): { fd: string; target: string }[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target === path || target === `${path} (deleted)` ? [{ fd, target }] : [];
    } catch {
      return [];
    }
  });
}

const docsOf = (s: Store) => Object.values(documents<{ text: string }>((s as unknown as { engine: { db: AnyOrama } }).engine.db));

describe("a loaded store's texts", () => {
  test("stay in the index file: no document holds its text, yet every chunk, hit and prefix lookup gives it", () => {
    const dir = tempDir();
    const all = saved(dir, { "/p/a.md": A, "/p/b.md": B });
    const { store } = Store.open(dir, "m");
    const docs = docsOf(store);
    expect(docs.length).toBe(5);
    for (const d of docs) expect(Object.getOwnPropertyDescriptor(d, "text")).toBeUndefined();
    for (const c of all) expect(store.getChunk(c.chunkHash)).toEqual(c);
    expect(store.searchText(["quokka"], 5).map((h) => h.chunk.content)).toEqual([`## T0\n${A[0]}`]);
    expect(store.searchVector(new Float32Array([9, 1]), 1, -1)[0]!.chunk.content).toContain("## T");
    expect(store.findByPrefix("/p/a.md#1").map((c) => c.content)).toEqual([`## T1\n${A[1]}`]);
  });

  test("are still the loaded file's after a save replaced it by a rename: read, removed and saved again whole", () => {
    const dir = tempDir();
    const all = saved(dir, { "/p/a.md": A, "/p/b.md": B });
    const { store } = Store.open(dir, "m");
    // Another writer replaces the file (a CLI index, another store's save): other texts, same ids.
    saved(dir, { "/p/a.md": ["something else entirely", "and more", "and more again"] });
    for (const c of all) expect(store.getChunk(c.chunkHash)!.content).toBe(c.content);
    // Removing a chunk makes Orama read its text (its words leave the tree).
    store.removeFile("/p/b.md");
    expect(store.searchText(["kubernet"], 5)).toEqual([]);
    expect(store.searchText(["redi"], 5).map((h) => h.chunk.chunkHash)).toEqual(["/p/a.md#2"]);
    store.replaceFile("/p/c.md", { mtimeMs: 2, size: 1 }, chunks("/p/c.md", ["a new turn about quokka"]), () => new Float32Array([1, 1]));
    store.save();
    expect(readdirSync(dir).sort()).toEqual([INDEX_FILE, MANIFEST_FILE]);
    const again = Store.open(dir, "m").store;
    expect(again.size).toBe(4);
    for (const c of all.filter((c) => c.source === "/p/a.md")) expect(again.getChunk(c.chunkHash)).toEqual(c);
    expect(again.searchText(["quokka"], 5).map((h) => h.chunk.chunkHash).sort()).toEqual(["/p/a.md#0", "/p/c.md#0"]);
  });

  test("a heading that holds U+FFFD itself (valid UTF-8) loads as it was", () => {
    const dir = tempDir();
    const s = Store.empty(dir, "m", null);
    const c = { ...chunks("/p/a.md", ["replacement char"])[0]!, heading: "bad \uFFFD byte", content: "## bad \uFFFD byte\nreplacement char" };
    s.replaceFile("/p/a.md", { mtimeMs: 1, size: 1 }, [c], () => undefined);
    s.save();
    expect(Store.open(dir, "m").store.getChunk(c.chunkHash)).toEqual(c);
  });

  for (const [what, bytesOf] of [
    ["a text", "quokka"],
    ["a heading", "T1"],
  ] as const) {
    test(`${what} that is not UTF-8 is refused at load though its section's checksum holds: the index is rebuilt`, () => {
      const dir = tempDir();
      saved(dir, { "/p/a.md": A });
      patchDocs(dir, (section) => {
        const where = section.indexOf(bytesOf);
        expect(where).toBeGreaterThan(0);
        section[where] = 0xff;
      });
      const { store, rebuilt } = Store.open(dir, "m");
      expect(rebuilt).toContain("unreadable");
      expect(store.size).toBe(0);
    });
  }

  test("two texts that are each cut UTF-8 are refused, though one's end and the next one's start would make a character", () => {
    const dir = tempDir();
    saved(dir, { "/p/a.md": A });
    patchDocs(dir, (section) => {
      // The first text ends with the lead byte of "é" (C3 A9), the next begins with its continuation byte.
      const end = section.indexOf(`## T0\n${A[0]}`) + `## T0\n${A[0]}`.length - 1;
      const start = section.indexOf("## T1\n");
      expect(Math.min(end, start)).toBeGreaterThan(0);
      section[end] = 0xc3;
      section[start] = 0xa9;
    });
    const { store, rebuilt } = Store.open(dir, "m");
    expect(rebuilt).toContain("unreadable");
    expect(store.size).toBe(0);
  });

  test("the index file is closed once no loaded store reads from it", async () => {
    const dir = tempDir();
    saved(dir, { "/p/a.md": A });
    const path = realpathSync(join(dir, INDEX_FILE));
    // Descriptors of this process open on the index file.
    const open = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === path;
        } catch {
          return false;
        }
      }).length;
    (() => {
      const { store } = Store.open(dir, "m");
      expect(store.getChunk("/p/a.md#0")!.content).toContain("quokka");
      expect(open()).toBe(1);
    })();
    for (let i = 0; i < 50 && open() > 0; i++) {
      Bun.gc(true);
      await Bun.sleep(10);
    }
    expect(open()).toBe(0);
  });

  test("after the store's own save they are read from the file it wrote: the file it replaced is closed, its blocks freed", () => {
    const dir = tempDir();
    const all = saved(dir, { "/p/a.md": A, "/p/b.md": B });
    const path = realpathSync(join(dir, INDEX_FILE));
    const { store } = Store.open(dir, "m");
    expect(fdsOn(path).map((f) => f.target)).toEqual([path]);
    const loaded = statSync(path).ino;
    store.replaceFile("/p/c.md", { mtimeMs: 2, size: 1 }, chunks("/p/c.md", ["a new turn about quokka"]), () => new Float32Array([1, 1]));
    store.save({ merge: true });
    expect(statSync(path).ino).not.toBe(loaded);
    // One descriptor, on the file now at the path: none left on the unlinked one.
    const fds = fdsOn(path);
    expect(fds.map((f) => f.target)).toEqual([path]);
    expect(statSync(`/proc/self/fd/${fds[0]!.fd}`).ino).toBe(statSync(path).ino);
    // The loaded chunks still hold no text (the new one was never in a file this store read).
    expect(docsOf(store).filter((d) => Object.getOwnPropertyDescriptor(d, "text")).map((d) => d.text)).toEqual(["## T0\na new turn about quokka"]);
    for (const c of all) expect(store.getChunk(c.chunkHash)).toEqual(c);
    expect(store.searchText(["quokka"], 5).map((h) => h.chunk.chunkHash).sort()).toEqual(["/p/a.md#0", "/p/c.md#0"]);
    // Saved again from the file it moved to: removed, read and written whole, the old one closed again.
    store.removeFile("/p/b.md");
    store.save();
    expect(fdsOn(path).map((f) => f.target)).toEqual([path]);
    for (const c of all.filter((c) => c.source === "/p/a.md")) expect(store.getChunk(c.chunkHash)).toEqual(c);
    const again = Store.open(dir, "m").store;
    expect(again.size).toBe(4);
    for (const c of all.filter((c) => c.source === "/p/a.md")) expect(again.getChunk(c.chunkHash)).toEqual(c);
  });

  test("a save that fails before its rename leaves them read from the file loaded, which stays the index", () => {
    const dir = tempDir();
    const all = saved(dir, { "/p/a.md": A, "/p/b.md": B });
    const path = realpathSync(join(dir, INDEX_FILE));
    const before = readFileSync(path);
    const { store } = Store.open(dir, "m");
    store.replaceFile("/p/c.md", { mtimeMs: 2, size: 1 }, chunks("/p/c.md", ["a new turn about quokka"]), () => new Float32Array([1, 1]));
    // Every state section, texts included, is written before the vectors: this fails the save past them.
    const bytes = spyOn(VectorBlock.prototype, "bytes").mockImplementation(function* () {
      yield new Uint8Array(2 * 4); // one whole row of 2-d floats
      throw new Error("no space left on device");
    });
    try {
      expect(() => store.save({ merge: true })).toThrow("no space left on device");
    } finally {
      bytes.mockRestore();
    }
    expect(readdirSync(dir).sort()).toEqual([INDEX_FILE, MANIFEST_FILE]);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(fdsOn(path).map((f) => f.target)).toEqual([path]);
    for (const c of all) expect(store.getChunk(c.chunkHash)).toEqual(c);
    store.save();
    expect(fdsOn(path).map((f) => f.target)).toEqual([path]);
    for (const c of all) expect(store.getChunk(c.chunkHash)).toEqual(c);
    expect(Store.open(dir, "m").store.size).toBe(6);
  });

  test("a save whose file is replaced before it is reopened leaves them read from the file loaded", () => {
    const dir = tempDir();
    const all = saved(dir, { "/p/a.md": A, "/p/b.md": B });
    const other = tempDir();
    saved(other, { "/p/a.md": ["another writer's text"] });
    const path = realpathSync(join(dir, INDEX_FILE));
    const { store } = Store.open(dir, "m");
    const open = fs.openSync;
    let replaced = false;
    // Another writer's file renamed over ours between our rename and our reopening it.
    const spy = spyOn(fs, "openSync").mockImplementation(((p: fs.PathLike, flags: number, mode?: number) => {
      if (p === join(dir, INDEX_FILE) && !replaced) {
        replaced = true;
        renameSync(join(other, INDEX_FILE), p);
      }
      return open(p, flags, mode);
    }) as typeof fs.openSync);
    try {
      store.save({ merge: true });
    } finally {
      spy.mockRestore();
    }
    expect(replaced).toBe(true);
    // Still the loaded file (unlinked now), not the other writer's.
    expect(fdsOn(path).map((f) => f.target)).toEqual([`${path} (deleted)`]);
    for (const c of all) expect(store.getChunk(c.chunkHash)).toEqual(c);
  });

  test("on Windows, which may refuse to rename a new index over an open file, they are read into memory and the file is closed", () => {
    const dir = tempDir();
    const all = saved(dir, { "/p/a.md": A });
    const platform = Object.getOwnPropertyDescriptor(process, "platform")!;
    Object.defineProperty(process, "platform", { value: "win32" });
    let store: Store;
    try {
      store = Store.open(dir, "m").store;
    } finally {
      Object.defineProperty(process, "platform", platform);
    }
    for (const d of docsOf(store)) expect(typeof Object.getOwnPropertyDescriptor(d, "text")?.value).toBe("string");
    rmSync(join(dir, INDEX_FILE));
    for (const c of all) expect(store.getChunk(c.chunkHash)).toEqual(c);
  });
});

describe("a loaded store's texts, when the load fails", () => {
  test("the rebuild still gets the files the damaged index listed (read through the descriptor before it is closed)", () => {
    const dir = tempDir();
    saved(dir, { "/p/a.md": A, "/elsewhere/b.md": B });
    patchDocs(dir, (section) => {
      section[section.indexOf("quokka")] = 0xff;
    });
    const { rebuilt, sources } = Store.open(dir, "m");
    expect(rebuilt).toContain("unreadable");
    expect(sources?.sort()).toEqual(["/elsewhere/b.md", "/p/a.md"]);
    expect(fdsOn(join(realpathSync(dir), INDEX_FILE))).toEqual([]);
  });
});
