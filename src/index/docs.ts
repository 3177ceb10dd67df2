/**
 * The chunks as the engine holds them (Doc), and as the index file stores them: the documents
 * sections' binary codec, and the documents of a loaded index whose texts stay in the file
 * (StoredDoc, read through a TextFile). The store makes them; the loader (load.ts) reads and
 * writes them.
 */
import { isUtf8 } from "node:buffer";
import { closeSync, fstatSync } from "node:fs";
import { IndexDamagedError } from "../core/errors.ts";
import { readExactly } from "./format.ts";
import type { StoredChunk } from "./types.ts";

/**
 * The document as Orama holds it. Only source, text and embedding are indexed; `text` is the
 * chunk's content (its heading line included, so headings are searchable without a field of
 * their own), stored once.
 */
export interface Doc {
  id: string;
  source: string;
  heading: string;
  text: string;
  embedding?: number[] | null;
  headingLevel: number;
  startLine: number;
  endLine: number;
  contentHash: string;
}

/**
 * The index file a loaded store's chunk texts stay in, read by offset when a text is asked for
 * (a hit returned, a chunk removed, the next save), through the descriptor the load opened and
 * checked: it still reads the file that was loaded after another writer replaces the file by a
 * rename. Held in memory, the texts were the largest part of a loaded index after the vectors
 * (figures in docs/BENCHMARKS.md); the file's pages are the system's cache, not the process's
 * memory. The store's own save moves its documents to the file it wrote and closes this one, whose
 * blocks an unlinked file would otherwise hold for the life of the process; a store dropped closes
 * it when collected.
 */
export class TextFile {
  private open = true;
  constructor(readonly fd: number) {
    const { dev, ino } = fstatSync(fd);
    closeTextFile.register(this, { fd, dev, ino }, this);
  }
  /** `len` bytes at `at` into `into` from `offset`; the bytes were checked at load (CRC-32 of the section, UTF-8). */
  readInto(at: number, len: number, into: Uint8Array, offset = 0): void {
    // A closed descriptor's number may be another file's by now: never read through it.
    if (!this.open) throw new IndexDamagedError("a chunk's text was asked of an index file already closed");
    readExactly(this.fd, into, at, offset, len);
  }
  read(at: number, len: number): string {
    const bytes = Buffer.allocUnsafe(len);
    this.readInto(at, len, bytes);
    return fromUtf8.decode(bytes);
  }
  close(): void {
    if (!this.open) return;
    this.open = false;
    closeTextFile.unregister(this);
    try {
      closeSync(this.fd);
    } catch {}
  }
}

/**
 * Closes a dropped TextFile's descriptor, only while the number still names the file it was given:
 * closed by someone else meanwhile, the number may be another file's or the runtime's own (its
 * epoll or inotify descriptor, whose loss fails every watch and poll of the process after it).
 */
const closeTextFile = new FinalizationRegistry<{ fd: number; dev: number; ino: number }>(({ fd, dev, ino }) => {
  try {
    const now = fstatSync(fd);
    if (now.dev === dev && now.ino === ino) closeSync(fd);
  } catch {}
});

/**
 * A document of a loaded index: its text is read from the index file when asked for (TextFile).
 * `text` is a getter of the class, so Orama's copies of a hit's document (spread) do not have it:
 * the store reads hits' documents from its own documents store.
 */
export class StoredDoc implements Doc {
  declare embedding?: null;
  constructor(
    readonly id: string,
    readonly source: string,
    readonly heading: string,
    readonly headingLevel: number,
    readonly startLine: number,
    readonly endLine: number,
    readonly contentHash: string,
    private file: TextFile,
    private textAt: number,
    /** The text's length in UTF-8 bytes. */
    readonly textBytes: number,
  ) {}
  get text(): string {
    return this.file.read(this.textAt, this.textBytes);
  }
  textInto(into: Uint8Array, offset: number): void {
    this.file.readInto(this.textAt, this.textBytes, into, offset);
  }
  /** The same bytes, found at `at` in another file (the one a save wrote). */
  moveTo(file: TextFile, at: number): void {
    this.file = file;
    this.textAt = at;
  }
}

/**
 * The documents of a section in our own binary form, UTF-8 throughout. As objects, the structured
 * clone wrote every text in UTF-16 once it held one character past Latin-1 (the documents were
 * 21 MB of a 23 MB state at 20k chunks), and each section's serialized copy stayed as garbage
 * until the save ended (a save's peak rose by the whole state). Here each section is encoded into
 * one buffer, reused for the next once it is written:
 *
 *   u32 count | count × (u32 internal id, u8 heading level, u8 flags, u32 start line, u32 end line,
 *   u32 source index) | strings, each u32 byte length + UTF-8: the distinct sources (u32 count
 *   first), then per document its id, content hash, heading and text
 *
 * flags bit 0: the document's embedding field is null (its vector is in the block; see insertChunk).
 */
const FIXED_PER_DOC = 18;
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

export class DocWriter {
  // Written through Buffer.write and read into by offset: a view of the rest of the buffer per
  // string written was a garbage object per string, the bulk of what encoding the documents left.
  private buf = Buffer.alloc(1 << 16);
  private view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  at = 0;

  /** Start a section: `bytes` at most are needed. */
  reset(bytes: number): void {
    if (this.buf.byteLength < bytes) {
      this.buf = Buffer.alloc(Math.ceil(bytes * 1.25));
      this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    }
    this.at = 0;
  }
  u8(x: number): void {
    this.view.setUint8(this.at++, x);
  }
  u32(x: number): void {
    this.view.setUint32(this.at, x, true);
    this.at += 4;
  }
  str(x: string): void {
    // The room reserved holds the longest UTF-8 form, so nothing is cut; lone surrogates become
    // U+FFFD, as TextEncoder makes them.
    const written = this.buf.write(x, this.at + 4, "utf8");
    this.u32(written);
    this.at += written;
  }
  /** A loaded document's text, copied from the index file it was loaded from, never decoded; returns where in the section it went. */
  storedText(d: StoredDoc): number {
    this.u32(d.textBytes);
    const at = this.at;
    d.textInto(this.buf, this.at);
    this.at += d.textBytes;
    return at;
  }
  /** The section's bytes: a view, valid until the next reset. */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.at);
  }
}

/** Upper bound of a string's UTF-8 length with its prefix (a UTF-16 code unit is at most 3 bytes). */
const strRoom = (x: string) => 4 + 3 * x.length;

export function encodeDocs(docs: Record<number, Doc>, ids: Uint32Array, w: DocWriter, textAt?: Float64Array): Uint8Array {
  const sourceIndex = new Map<string, number>();
  let room = 8 + ids.length * FIXED_PER_DOC;
  for (const id of ids) {
    const d = docs[id]!;
    if (!sourceIndex.has(d.source)) {
      sourceIndex.set(d.source, sourceIndex.size);
      room += strRoom(d.source);
    }
    room += strRoom(d.id) + strRoom(d.contentHash) + strRoom(d.heading) + (d instanceof StoredDoc ? 4 + d.textBytes : strRoom(d.text));
  }
  w.reset(room);
  w.u32(ids.length);
  for (const id of ids) {
    const d = docs[id]!;
    w.u32(id);
    w.u8(d.headingLevel);
    w.u8(d.embedding === null ? 1 : 0);
    w.u32(d.startLine);
    w.u32(d.endLine);
    w.u32(sourceIndex.get(d.source)!);
  }
  w.u32(sourceIndex.size);
  for (const source of sourceIndex.keys()) w.str(source);
  for (const id of ids) {
    const d = docs[id]!;
    w.str(d.id);
    w.str(d.contentHash);
    w.str(d.heading);
    if (d instanceof StoredDoc) {
      const at = w.storedText(d);
      if (textAt) textAt[id] = at;
    } else w.str(d.text);
  }
  return w.bytes();
}

/**
 * The documents of a section, added to `out` as Orama's documents store holds them, their texts left
 * in the file (`texts`, the section starting at byte `sectionAt`): each is checked to be UTF-8
 * (`utf8`), not decoded.
 * Without `texts`, the texts are decoded into the documents. Throws on bytes that do not hold together.
 */
export function decodeDocs(bytes: Uint8Array, texts: TextFile | undefined, sectionAt: number, utf8: Utf8Check, out: Record<string, Doc>): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.byteLength) throw new Error("a documents section is cut short");
  };
  const u32 = () => (need(4), (at += 4), view.getUint32(at - 4, true));
  const str = () => {
    const len = u32();
    need(len);
    at += len;
    // Decoded by offset, not through a view per string (garbage a load made for every chunk).
    // Bytes that are not UTF-8 decode as U+FFFD: only then is the strict decoder asked, which throws.
    const s = buf.toString("utf8", at - len, at);
    return s.includes("\uFFFD") ? fromUtf8.decode(bytes.subarray(at - len, at)) : s;
  };
  /** Where a text is in the file, and its length, once its bytes are known to be UTF-8. */
  const text = (): [number, number] => {
    const len = u32();
    need(len);
    at += len;
    utf8.add(buf, at - len, len);
    return [sectionAt + at - len, len];
  };
  const n = u32();
  need(n * FIXED_PER_DOC);
  const fixed = at;
  at += n * FIXED_PER_DOC;
  const sources = Array.from({ length: u32() }, str);
  for (let i = 0; i < n; i++) {
    const f = fixed + i * FIXED_PER_DOC;
    const source = sources[view.getUint32(f + 14, true)];
    if (source === undefined) throw new Error("a document names a source its section does not hold");
    const id = str();
    const contentHash = str();
    const heading = str();
    const [headingLevel, startLine, endLine] = [view.getUint8(f + 4), view.getUint32(f + 6, true), view.getUint32(f + 10, true)];
    let doc: Doc;
    if (texts) {
      const [textAt, textBytes] = text();
      doc = new StoredDoc(id, source, heading, headingLevel, startLine, endLine, contentHash, texts, textAt, textBytes);
    } else doc = { id, source, heading, text: str(), headingLevel, startLine, endLine, contentHash };
    if (view.getUint8(f + 5) & 1) doc.embedding = null;
    out[view.getUint32(f, true)] = doc;
  }
  if (at !== bytes.byteLength) throw new Error("a documents section has bytes past its documents");
  utf8.flush();
}

/**
 * The documents of a loaded index for a command's search, decoded one at a time when first asked
 * for: a search reads a hundred of them, and decoding every one at load (an object and three
 * strings per chunk) was the largest part of a cold search's load after the process itself
 * (docs/BENCHMARKS.md). Each section is still checked whole when it is read (addSection: its
 * sizes, its sources, every string UTF-8), so a file that does not hold together is refused at
 * load as before; a document's strings are then read back from the file through `texts` (the
 * descriptor the load checked), never from memory kept for them.
 */
export class LazyDocs {
  private sources: string[] = [];
  /** Per entry: the internal id, its fixed fields, where its strings are in the file. */
  private n = 0;
  private ids = new Uint32Array(0);
  private level = new Uint8Array(0);
  private flags = new Uint8Array(0);
  private lines = new Uint32Array(0);
  private source = new Uint32Array(0);
  /** File offset of the id string; the content hash and the heading follow it, each after its u32 length. */
  private at = new Float64Array(0);
  /** Per entry: the byte lengths of the id, the content hash, the heading and the text. */
  private lens = new Uint32Array(0);
  /** Internal id → entry + 1 while it is not decoded (0 once decoded, replaced or removed). */
  private entryOf = new Uint32Array(0);
  private pendingCount = 0;
  private scratch = Buffer.allocUnsafe(256);

  constructor(private readonly texts: TextFile) {}

  /**
   * One documents section (`bytes`, found at byte `sectionAt` of the file), checked as decodeDocs
   * checks it and indexed. `bytes` is the caller's scratch (valid during the call): its length
   * fields are overwritten, so that one UTF-8 check of everything after the fixed part checks
   * every string (a space can neither end a character begun before it nor continue one).
   */
  addSection(bytes: Uint8Array, sectionAt: number): void {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 0;
    const need = (k: number) => {
      if (at + k > bytes.byteLength) throw new Error("a documents section is cut short");
    };
    // A string's length, its field then blanked (see above).
    const len = () => {
      need(4);
      const k = view.getUint32(at, true);
      view.setUint32(at, 0x20202020);
      at += 4;
      need(k);
      return k;
    };
    need(4);
    const n = view.getUint32(0, true);
    at = 4;
    need(n * FIXED_PER_DOC);
    const fixed = at;
    at += n * FIXED_PER_DOC;
    const checkFrom = at;
    const sourceCount = len();
    const firstSource = this.sources.length;
    const sourceSpans: [number, number][] = [];
    for (let i = 0; i < sourceCount; i++) {
      const k = len();
      sourceSpans.push([at, k]);
      at += k;
    }
    this.room(n);
    for (let i = 0; i < n; i++) {
      const f = fixed + i * FIXED_PER_DOC;
      const src = view.getUint32(f + 14, true);
      if (src >= sourceCount) throw new Error("a document names a source its section does not hold");
      const e = this.n++;
      const idLen = len();
      const idAt = at;
      at += idLen;
      const hashLen = len();
      at += hashLen;
      const headLen = len();
      at += headLen;
      const textLen = len();
      const textAt = at;
      at += textLen;
      const id = view.getUint32(f, true);
      this.ids[e] = id;
      this.level[e] = view.getUint8(f + 4);
      this.flags[e] = view.getUint8(f + 5);
      this.lines[2 * e] = view.getUint32(f + 6, true);
      this.lines[2 * e + 1] = view.getUint32(f + 10, true);
      this.source[e] = firstSource + src;
      this.at[2 * e] = sectionAt + idAt;
      this.at[2 * e + 1] = sectionAt + textAt;
      // Four stores, not set() of an array: an array per document cost a cold load of 20k a millisecond or two.
      this.lens[4 * e] = idLen;
      this.lens[4 * e + 1] = hashLen;
      this.lens[4 * e + 2] = headLen;
      this.lens[4 * e + 3] = textLen;
      this.index(id, e);
    }
    if (at !== bytes.byteLength) throw new Error("a documents section has bytes past its documents");
    if (!isUtf8(buf.subarray(checkFrom, at))) throw new Error("a document's text is not UTF-8");
    for (const [s, k] of sourceSpans) this.sources.push(buf.toString("utf8", s, s + k));
  }

  private room(more: number): void {
    const need = this.n + more;
    if (need <= this.ids.length) return;
    const cap = Math.max(need, Math.ceil(this.ids.length * 1.5));
    const grow = <T extends Uint32Array | Uint8Array | Float64Array>(a: T, per: number, make: (k: number) => T): T => {
      const b = make(cap * per);
      b.set(a);
      return b;
    };
    this.ids = grow(this.ids, 1, (k) => new Uint32Array(k));
    this.level = grow(this.level, 1, (k) => new Uint8Array(k));
    this.flags = grow(this.flags, 1, (k) => new Uint8Array(k));
    this.lines = grow(this.lines, 2, (k) => new Uint32Array(k));
    this.source = grow(this.source, 1, (k) => new Uint32Array(k));
    this.at = grow(this.at, 2, (k) => new Float64Array(k));
    this.lens = grow(this.lens, 4, (k) => new Uint32Array(k));
  }

  private index(id: number, e: number): void {
    if (id >= this.entryOf.length) {
      const wider = new Uint32Array(Math.max(id + 1, this.entryOf.length * 2, 1024));
      wider.set(this.entryOf);
      this.entryOf = wider;
    }
    // A later entry of the same id wins, as a later assignment did in decodeDocs.
    if (!this.entryOf[id]) this.pendingCount++;
    this.entryOf[id] = e + 1;
  }

  /** The internal id a property key names, when it names a document not decoded yet. */
  pending(key: string | symbol): number | undefined {
    if (typeof key !== "string" || !this.pendingCount) return undefined;
    const id = Number(key);
    if (!(id >= 0 && id < this.entryOf.length) || !this.entryOf[id] || String(id) !== key) return undefined;
    return id;
  }

  /** Not to be decoded any more: the key was set, deleted or decoded. */
  drop(key: string | symbol): void {
    const id = this.pending(key);
    if (id === undefined) return;
    this.entryOf[id] = 0;
    this.pendingCount--;
  }

  /** The document of a pending id, read from the file; it is no longer pending. */
  take(id: number): Doc {
    const e = this.entryOf[id]! - 1;
    this.entryOf[id] = 0;
    this.pendingCount--;
    const idLen = this.lens[4 * e]!;
    const hashLen = this.lens[4 * e + 1]!;
    const headLen = this.lens[4 * e + 2]!;
    const span = idLen + hashLen + headLen + 8;
    if (this.scratch.byteLength < span) this.scratch = Buffer.allocUnsafe(span * 2);
    this.texts.readInto(this.at[2 * e]!, span, this.scratch);
    // Checked to be UTF-8 when the section was read, through this descriptor: plain decoding.
    const s = this.scratch;
    const chunkId = s.toString("utf8", 0, idLen);
    const hash = s.toString("utf8", idLen + 4, idLen + 4 + hashLen);
    const heading = s.toString("utf8", idLen + hashLen + 8, span);
    const doc = new StoredDoc(chunkId, this.sources[this.source[e]!]!, heading, this.level[e]!, this.lines[2 * e]!, this.lines[2 * e + 1]!, hash, this.texts, this.at[2 * e + 1]!, this.lens[4 * e + 3]!);
    if (this.flags[e]! & 1) doc.embedding = null;
    return doc;
  }

  /** Every pending document into `into`. */
  takeAll(into: Record<string, Doc>): void {
    if (!this.pendingCount) return;
    for (let id = 0; id < this.entryOf.length && this.pendingCount; id++) if (this.entryOf[id]) into[id] = this.take(id);
  }

  /**
   * The documents as Orama's documents store holds them (internal id → document): a record that
   * decodes a document on its first read; setting, deleting or enumerating behave as on a plain
   * object (an enumeration decodes every document left first, so keys come in the same order).
   */
  record(): Record<string, Doc> {
    const target: Record<string, Doc> = {};
    // A read of a document not decoded yet decodes it into the record first.
    const decoded = (t: Record<string, Doc>, key: string | symbol) => {
      const id = Object.hasOwn(t, key) ? undefined : this.pending(key);
      if (id !== undefined) t[id] = this.take(id);
    };
    return new Proxy(target, {
      get: (t, key, receiver) => {
        decoded(t, key);
        return Reflect.get(t, key, receiver);
      },
      has: (t, key) => this.pending(key) !== undefined || Reflect.has(t, key),
      set: (t, key, value) => {
        this.drop(key);
        (t as Record<string | symbol, unknown>)[key] = value;
        return true;
      },
      defineProperty: (t, key, desc) => {
        this.drop(key);
        return Reflect.defineProperty(t, key, desc);
      },
      deleteProperty: (t, key) => {
        this.drop(key);
        return Reflect.deleteProperty(t, key);
      },
      ownKeys: (t) => {
        this.takeAll(t);
        return Reflect.ownKeys(t);
      },
      getOwnPropertyDescriptor: (t, key) => {
        decoded(t, key);
        return Reflect.getOwnPropertyDescriptor(t, key);
      },
    });
  }
}

/**
 * Checks that texts are UTF-8 a batch at a time: copied into one reused buffer, each followed by a
 * newline, and the buffer checked when full. A view of the section per text, to check it alone,
 * was the most numerous garbage of a load. Checked whole, the batch is UTF-8 exactly when every
 * text is: a newline can neither end a character begun before it nor continue one.
 */
export class Utf8Check {
  private buf = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  add(from: Buffer, at: number, len: number): void {
    if (len + 1 > this.buf.byteLength) {
      if (!isUtf8(from.subarray(at, at + len))) throw new Error("a document's text is not UTF-8");
      return;
    }
    if (this.used + len + 1 > this.buf.byteLength) this.flush();
    from.copy(this.buf, this.used, at, at + len);
    this.buf[this.used + len] = 0x0a;
    this.used += len + 1;
  }
  flush(): void {
    if (this.used && !isUtf8(this.buf.subarray(0, this.used))) throw new Error("a document's text is not UTF-8");
    this.used = 0;
  }
}

export function toChunk(d: Doc): StoredChunk {
  return {
    chunkHash: d.id,
    content: d.text,
    source: d.source,
    heading: d.heading,
    headingLevel: d.headingLevel,
    startLine: d.startLine,
    endLine: d.endLine,
    contentHash: d.contentHash,
  };
}

