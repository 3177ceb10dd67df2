import { describe, expect, test } from "bun:test";
import { closeSync, fstatSync, mkdtempSync, openSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeDocs, DocWriter, encodeDocs, LazyDocs, TextFile, type Doc } from "../../src/index/docs.ts";

/** A documents section as a save writes it, in a file of its own at byte `at`, and a TextFile over it. */
function section(docs: Record<number, Doc>, at = 7) {
  const ids = Uint32Array.from(Object.keys(docs).map(Number));
  const bytes = new Uint8Array(encodeDocs(docs, ids, new DocWriter()));
  const path = join(mkdtempSync(join(tmpdir(), "ms-lazy-")), "section.bin");
  writeFileSync(path, Buffer.concat([Buffer.alloc(at, 0x20), bytes]));
  // The TextFile owns the descriptor: it closes it, or closes it when collected. Closing the number
  // here as well closed whatever the process had opened under it since (Bun's inotify or epoll
  // descriptor, in two runs of the whole suite).
  const texts = new TextFile(openSync(path, "r"));
  return { bytes, at, texts, close: () => texts.close() };
}

const doc = (id: string, source: string, heading: string, text: string, line: number, vector = true): Doc => ({ id, source, heading, text, headingLevel: 3, startLine: line, endLine: line + 4, contentHash: `h-${id}`, ...(vector ? { embedding: null } : {}) });

const plain = (d: Doc) => ({ id: d.id, source: d.source, heading: d.heading, text: d.text, headingLevel: d.headingLevel, startLine: d.startLine, endLine: d.endLine, contentHash: d.contentHash, embedding: d.embedding });

describe("LazyDocs", () => {
  const docs: Record<number, Doc> = {
    1: doc("a", "/m/2026-01-01.md", "### 09:00", "### 09:00\n- café ☕ and naïve", 1),
    2: doc("b", "/m/2026-01-01.md", "### 10:00", "### 10:00\n- plain", 6, false),
    5: doc("c", "/m/2026-01-02.md", "### 𝔘nicode", "### 𝔘nicode\n- astral", 1),
  };

  test("decodes each document on first read as decodeDocs does, and behaves as a plain record", () => {
    const s = section(docs);
    const eager: Record<string, Doc> = {};
    decodeDocs(new Uint8Array(s.bytes), s.texts, s.at, eager);
    const lazy = new LazyDocs(s.texts);
    // addSection writes over its bytes (the loader's scratch): a copy.
    lazy.addSection(new Uint8Array(s.bytes), s.at);
    const rec = lazy.record();
    expect(plain(rec[5]!)).toEqual(plain(eager[5]!));
    expect(rec[5]).toBe(rec[5]); // decoded once, then kept
    expect(2 in rec && !(4 in rec)).toBe(true);
    expect(rec[4]).toBeUndefined();
    // A write or a delete wins over what the file holds; an enumeration decodes the rest, in key order.
    rec[2] = doc("z", "/m/x.md", "### z", "z", 1);
    delete rec[1];
    rec[9] = doc("n", "/m/x.md", "### n", "n", 1);
    expect(Object.keys(rec)).toEqual(["2", "5", "9"]);
    expect(rec[2]!.id).toBe("z");
    expect(rec[1]).toBeUndefined();
    expect(Object.values(rec).map((d) => d.id)).toEqual(["z", "c", "n"]);
    s.close();
  });

  test("a section that does not hold together is refused when it is read, not when a document is", () => {
    const s = section(docs);
    const bad = (mutate: (b: Uint8Array, view: DataView) => void) => {
      const b = new Uint8Array(s.bytes);
      mutate(b, new DataView(b.buffer));
      return () => new LazyDocs(s.texts).addSection(b, s.at);
    };
    // A byte that is not UTF-8 in a text, and in a heading.
    const text = Buffer.from(s.bytes).indexOf("naïve");
    expect(bad((b) => (b[text + 2] = 0xff))).toThrow("not UTF-8");
    const heading = Buffer.from(s.bytes).indexOf("### 10:00");
    expect(bad((b) => (b[heading + 4] = 0xc3))).toThrow("not UTF-8");
    // A source index past the section's sources (the first document's: the fourth column of three).
    expect(bad((_, v) => v.setUint32(8 + 4 * 3 * 3, 9, true))).toThrow("source");
    // Lengths that add up but cut a character: the first document's heading made longer and its
    // text shorter by as much, so that the text starts on the second byte of its "é".
    const into = Buffer.from(docs[1]!.text).indexOf("é") + 1;
    const [heads, texts] = [8 + 4 * 6 * 3, 8 + 4 * 7 * 3];
    expect(
      bad((_, v) => {
        v.setUint32(heads, v.getUint32(heads, true) + into, true);
        v.setUint32(texts, v.getUint32(texts, true) - into, true);
      }),
    ).toThrow("not UTF-8");
    // Cut short, and bytes past the last document.
    expect(() => new LazyDocs(s.texts).addSection(s.bytes.slice(0, s.bytes.length - 3), s.at)).toThrow("cut short");
    expect(() => new LazyDocs(s.texts).addSection(Uint8Array.from([...s.bytes, 0x20]), s.at)).toThrow("past its documents");
    s.close();
  });

  test("a dropped TextFile whose descriptor was closed by someone else leaves the number's new file open", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-textfile-"));
    writeFileSync(join(dir, "a"), "a");
    writeFileSync(join(dir, "b"), "b");
    const fd = openSync(join(dir, "a"), "r");
    (() => new TextFile(fd))();
    closeSync(fd);
    // The lowest free number: the one just closed, now another file's.
    const other = openSync(join(dir, "b"), "r");
    expect(other).toBe(fd);
    for (let i = 0; i < 3; i++) {
      Bun.gc(true);
      await Bun.sleep(1);
    }
    expect(fstatSync(other).ino).toBe(statSync(join(dir, "b")).ino);
    closeSync(other);
  });
});
