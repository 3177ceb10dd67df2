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
 * one buffer, reused for the next once it is written. Since v11 the fixed fields and the strings'
 * lengths are columns, so a load takes them whole instead of walking the strings document by
 * document (that walk was the largest part of a cold search's load):
 *
 *   u32 count n | u32 sources s | n × u32 each: internal id, start line, end line, source index,
 *   and the UTF-8 byte lengths of the id, the content hash, the heading and the text | s × u32:
 *   the sources' byte lengths | n × u8 heading level | n × u8 flags | pad to 4 | the strings back to
 *   back, UTF-8: the sources, then per document its id, content hash, heading and text
 *
 * Little-endian, as every platform Bun runs on. flags bit 0: the document's embedding field is
 * null (its vector is in the block; see insertChunk).
 */
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The u32 columns, in order. */
const ID = 0;
const START = 1;
const END = 2;
const SOURCE = 3;
const ID_LEN = 4;
const HASH_LEN = 5;
const HEAD_LEN = 6;
const TEXT_LEN = 7;
const U32_COLUMNS = 8;

/** Where the parts of a section of `n` documents and `s` sources start. */
function partsOf(n: number, s: number): { column: (k: number) => number; sourceLens: number; levels: number; flags: number; strings: number } {
  const sourceLens = 8 + 4 * U32_COLUMNS * n;
  const levels = sourceLens + 4 * s;
  const flags = levels + n;
  const end = flags + n;
  return { column: (k) => 8 + 4 * k * n, sourceLens, levels, flags, strings: end + ((4 - (end % 4)) % 4) };
}

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
  /** Bytes `from`…`to` set to 0 (a section's padding). */
  zero(from: number, to: number): void {
    this.buf.fill(0, from, to);
  }
  u8At(at: number, x: number): void {
    this.view.setUint8(at, x);
  }
  u32At(at: number, x: number): void {
    this.view.setUint32(at, x, true);
  }
  /** A string's UTF-8 at the end; returns its byte length. */
  str(x: string): number {
    // The room reserved holds the longest UTF-8 form, so nothing is cut; lone surrogates become
    // U+FFFD, as TextEncoder makes them.
    const written = this.buf.write(x, this.at, "utf8");
    this.at += written;
    return written;
  }
  /** A loaded document's text, copied from the index file it was loaded from, never decoded; returns where in the section it went. */
  storedText(d: StoredDoc): number {
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

/** Upper bound of a string's UTF-8 length (a UTF-16 code unit is at most 3 bytes). */
const strRoom = (x: string) => 3 * x.length;

export function encodeDocs(docs: Record<number, Doc>, ids: Uint32Array, w: DocWriter, textAt?: Float64Array): Uint8Array {
  const sourceIndex = new Map<string, number>();
  let room = 0;
  for (const id of ids) {
    const d = docs[id]!;
    if (!sourceIndex.has(d.source)) {
      sourceIndex.set(d.source, sourceIndex.size);
      room += strRoom(d.source);
    }
    room += strRoom(d.id) + strRoom(d.contentHash) + strRoom(d.heading) + (d instanceof StoredDoc ? d.textBytes : strRoom(d.text));
  }
  const n = ids.length;
  const at = partsOf(n, sourceIndex.size);
  w.reset(at.strings + room);
  w.u32At(0, n);
  w.u32At(4, sourceIndex.size);
  w.zero(at.flags + n, at.strings);
  w.at = at.strings;
  let k = 0;
  for (const source of sourceIndex.keys()) w.u32At(at.sourceLens + 4 * k++, w.str(source));
  const col = (c: number, i: number, x: number) => w.u32At(at.column(c) + 4 * i, x);
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    const d = docs[id]!;
    col(ID, i, id);
    col(START, i, d.startLine);
    col(END, i, d.endLine);
    col(SOURCE, i, sourceIndex.get(d.source)!);
    w.u8At(at.levels + i, d.headingLevel);
    w.u8At(at.flags + i, d.embedding === null ? 1 : 0);
    col(ID_LEN, i, w.str(d.id));
    col(HASH_LEN, i, w.str(d.contentHash));
    col(HEAD_LEN, i, w.str(d.heading));
    if (d instanceof StoredDoc) {
      const placed = w.storedText(d);
      if (textAt) textAt[id] = placed;
      col(TEXT_LEN, i, d.textBytes);
    } else col(TEXT_LEN, i, w.str(d.text));
  }
  return w.bytes();
}

/** A section's columns (copies), its sources, and where each document's strings start in the file. */
interface Section {
  n: number;
  cols: Uint32Array[];
  levels: Uint8Array;
  flags: Uint8Array;
  sources: string[];
  /** File offset of each document's id; its content hash, heading and text follow it back to back. */
  at: Float64Array;
}

/**
 * `n` u32 from byte `at` of `bytes`, copied (the section's own offset in its buffer may not be
 * aligned). Into an ArrayBuffer made first: asking a new typed array for its buffer makes the
 * engine copy it to one (milliseconds over a large index's sections).
 */
function u32s(bytes: Uint8Array, at: number, n: number): Uint32Array {
  const buffer = new ArrayBuffer(4 * n);
  new Uint8Array(buffer).set(bytes.subarray(at, at + 4 * n));
  return new Uint32Array(buffer);
}

/** Whether `b` continues a UTF-8 character (so no string may start at it). */
const continues = (b: number) => (b & 0xc0) === 0x80;

/**
 * A documents section (found at byte `sectionAt` of the file), checked whole: its sizes add up, its
 * sources are there, its strings are UTF-8 and none starts inside a character (so each string is
 * UTF-8 on its own). Throws a plain Error on bytes that do not hold together.
 */
function readSection(bytes: Uint8Array, sectionAt: number): Section {
  const len = bytes.byteLength;
  if (len < 8) throw new Error("a documents section is cut short");
  const view = new DataView(bytes.buffer, bytes.byteOffset, len);
  const n = view.getUint32(0, true);
  const s = view.getUint32(4, true);
  const parts = partsOf(n, s);
  if (parts.strings > len) throw new Error("a documents section is cut short");
  const cols = Array.from({ length: U32_COLUMNS }, (_, k) => u32s(bytes, parts.column(k), n));
  const sourceLens = u32s(bytes, parts.sourceLens, s);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, len);
  // Every string's start and the section's end: the lengths must add up to the bytes there are.
  let cursor = parts.strings;
  const start = (k: number) => {
    if (cursor > len) throw new Error("a documents section is cut short");
    if (cursor < len && continues(buf[cursor]!)) throw new Error("a document's text is not UTF-8");
    cursor += k;
  };
  const sources: string[] = [];
  const spans: number[] = [];
  for (let i = 0; i < s; i++) {
    spans.push(cursor);
    start(sourceLens[i]!);
  }
  const at = new Float64Array(n);
  const [src, idLen, hashLen, headLen, textLen] = [cols[SOURCE]!, cols[ID_LEN]!, cols[HASH_LEN]!, cols[HEAD_LEN]!, cols[TEXT_LEN]!];
  for (let i = 0; i < n; i++) {
    if (src[i]! >= s) throw new Error("a document names a source its section does not hold");
    at[i] = sectionAt + cursor;
    start(idLen[i]!);
    start(hashLen[i]!);
    start(headLen[i]!);
    start(textLen[i]!);
  }
  if (cursor > len) throw new Error("a documents section is cut short");
  if (cursor < len) throw new Error("a documents section has bytes past its documents");
  if (!isUtf8(buf.subarray(parts.strings, len))) throw new Error("a document's text is not UTF-8");
  for (let i = 0; i < s; i++) sources.push(buf.toString("utf8", spans[i]!, spans[i]! + sourceLens[i]!));
  return { n, cols, levels: bytes.slice(parts.levels, parts.levels + n), flags: bytes.slice(parts.flags, parts.flags + n), sources, at };
}

/**
 * The documents of a section, added to `out` as Orama's documents store holds them, their texts left
 * in the file (`texts`, the section starting at byte `sectionAt`). Without `texts`, the texts are
 * decoded into the documents. Throws on bytes that do not hold together.
 */
export function decodeDocs(bytes: Uint8Array, texts: TextFile | undefined, sectionAt: number, out: Record<string, Doc>): void {
  const sec = readSection(bytes, sectionAt);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [ids, start, end, src, idLen, hashLen, headLen, textLen] = sec.cols as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  for (let i = 0; i < sec.n; i++) {
    // Checked to be UTF-8 with readSection: plain decoding.
    let a = sec.at[i]! - sectionAt;
    const str = (k: number) => buf.toString("utf8", a, (a += k));
    const id = str(idLen[i]!);
    const contentHash = str(hashLen[i]!);
    const heading = str(headLen[i]!);
    const source = sec.sources[src[i]!]!;
    const doc: Doc = texts
      ? new StoredDoc(id, source, heading, sec.levels[i]!, start[i]!, end[i]!, contentHash, texts, sectionAt + a, textLen[i]!)
      : { id, source, heading, text: str(textLen[i]!), headingLevel: sec.levels[i]!, startLine: start[i]!, endLine: end[i]!, contentHash };
    if (sec.flags[i]! & 1) doc.embedding = null;
    out[ids[i]!] = doc;
  }
}

/**
 * The documents of a loaded index for a command's search, decoded one at a time when first asked
 * for: a search reads a hundred of them, and decoding every one at load (an object and three
 * strings per chunk) was the largest part of a cold search's load after the process itself
 * (docs/BENCHMARKS.md). Each section is still checked whole when it is read (readSection), so a
 * file that does not hold together is refused at load as before; a document's strings are then
 * read back from the file through `texts` (the descriptor the load checked), never from memory
 * kept for them.
 */
export class LazyDocs {
  private sources: string[] = [];
  /** Per entry (the documents of every section, in order): its columns, and where its strings are in the file. */
  private n = 0;
  private cols: Uint32Array[] = Array.from({ length: U32_COLUMNS }, () => new Uint32Array(0));
  private level = new Uint8Array(0);
  private flags = new Uint8Array(0);
  private at = new Float64Array(0);
  /** Internal id → entry + 1 while it is not decoded (0 once decoded, replaced or removed). */
  private entryOf = new Uint32Array(0);
  private pendingCount = 0;
  private scratch = Buffer.allocUnsafe(256);

  constructor(private readonly texts: TextFile) {}

  /** One documents section (`bytes`, found at byte `sectionAt` of the file), checked (readSection) and indexed. */
  addSection(bytes: Uint8Array, sectionAt: number): void {
    const sec = readSection(bytes, sectionAt);
    const first = this.n;
    this.room(sec.n);
    sec.cols.forEach((c, k) => this.cols[k]!.set(c, first));
    this.level.set(sec.levels, first);
    this.flags.set(sec.flags, first);
    this.at.set(sec.at, first);
    const src = this.cols[SOURCE]!;
    for (let i = 0; i < sec.n; i++) src[first + i]! += this.sources.length;
    this.sources.push(...sec.sources);
    const ids = sec.cols[ID]!;
    for (let i = 0; i < sec.n; i++) this.index(ids[i]!, first + i);
    this.n += sec.n;
  }

  private room(more: number): void {
    const need = this.n + more;
    if (need <= this.at.length) return;
    const cap = Math.max(need, Math.ceil(this.at.length * 1.5));
    const grow = <T extends Uint32Array | Uint8Array | Float64Array>(a: T, make: (k: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.cols = this.cols.map((c) => grow(c, (k) => new Uint32Array(k)));
    this.level = grow(this.level, (k) => new Uint8Array(k));
    this.flags = grow(this.flags, (k) => new Uint8Array(k));
    this.at = grow(this.at, (k) => new Float64Array(k));
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
    const c = this.cols;
    const idLen = c[ID_LEN]![e]!;
    const hashLen = c[HASH_LEN]![e]!;
    const span = idLen + hashLen + c[HEAD_LEN]![e]!;
    if (this.scratch.byteLength < span) this.scratch = Buffer.allocUnsafe(span * 2);
    this.texts.readInto(this.at[e]!, span, this.scratch);
    // Checked to be UTF-8 when the section was read, through this descriptor: plain decoding.
    const s = this.scratch;
    const chunkId = s.toString("utf8", 0, idLen);
    const hash = s.toString("utf8", idLen, idLen + hashLen);
    const heading = s.toString("utf8", idLen + hashLen, span);
    const doc = new StoredDoc(chunkId, this.sources[c[SOURCE]![e]!]!, heading, this.level[e]!, c[START]![e]!, c[END]![e]!, hash, this.texts, this.at[e]! + span, c[TEXT_LEN]![e]!);
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

