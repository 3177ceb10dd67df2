/**
 * The index file's parts after its head and layout (format.ts): the engine's state sections and the
 * vector block, written whole (writeIndexFile, atomically) and read part by part, each checked
 * against the CRC-32 the head records for it.
 */
import { deserialize, serialize } from "bun:jsc";
import { closeSync, fstatSync } from "node:fs";
import { IndexDamagedError } from "../core/errors.ts";
import { atomicWrite, openOwnFile, writeAt } from "../core/fsutil.ts";
import { blockStart, checksumProblem, crc32, crcOfRange, encodeLayout, expectedSize, HEAD_SPACE, MAGIC, readExactly, readLayout, rowsTableBytes, rowsTableOf, SCHEMA_VERSION, sealHead, sizeProblem, tailOf, type Head, type IndexFile, type Layout, type RowsTable, type StoreMeta } from "./format.ts";
import { codeStride, quantizeRow } from "./engine/codes.ts";

/**
 * One section of the search engine's state, and what it holds (the store's business): a
 * structured-clone value, or, for the documents, bytes the store encodes itself. Raw bytes may be
 * a view of a buffer the store reuses for the next section: they are written before it is made.
 */
export type StateSection = { kind: "ids" | "index" | "freq"; value: unknown } | { kind: "docs"; bytes: Uint8Array; placed?: (at: number) => void };

/** Sections stored as the store's own bytes, read back as bytes (not decoded as a clone). */
const RAW_KINDS: ReadonlySet<string> = new Set<StateSection["kind"]>(["docs"]);

/** Everything an index file holds, as plain data: what store.ts makes of Orama, and gets back. */
export interface IndexContent {
  meta: StoreMeta;
  /** The new base's id (segments.ts newBaseId). */
  id: string;
  /** Documents in the state. */
  count: number;
  layout: Layout;
  /** The vectors' internal ids, magnitudes and content hashes, in block order. */
  rows: { ids: ArrayLike<number>; magnitudes: ArrayLike<number>; hashes: string[] };
  /** Serialized and written one at a time, each dropped before the next is made. */
  sections: Iterable<StateSection>;
  /** How many sections there can be at most: the head's room is reserved for their entries before they are made. */
  sectionsAtMost: number;
  /**
   * The vectors' Float32 bytes, in `rows.ids` order, each `meta.dim` floats long, in pieces of
   * whole rows (views of the vector block: written as they come, never gathered; their codes are
   * made and written as they pass).
   */
  vectors: Iterable<Uint8Array>;
}

/**
 * Write the whole file atomically (temp file and rename), the head last since it records the sizes.
 * A raw section's `placed` is told the byte offset it is written at. With `reopen`, returns a
 * descriptor of the file just written, opened for reading once it is renamed into place (see
 * reopenWritten), or undefined when it could not be checked to be that file.
 */
export function writeIndexFile(path: string, c: IndexContent, opts: { reopen?: boolean; vectorsAt?: (at: number) => void } = {}): number | undefined {
  const { files, ...rest } = c.meta;
  const layoutBytes = Buffer.from(encodeLayout(c.layout));
  const sections: number[] = [];
  const kinds: StateSection["kind"][] = [];
  const prefix = Buffer.alloc(MAGIC.length + 4);
  prefix.write(MAGIC, 0, "latin1");
  const headSpace = HEAD_SPACE + 48 * c.sectionsAtMost;
  prefix.writeUInt32LE(headSpace, MAGIC.length);
  // Checksums of the parts, summed as they stream out (the head records them).
  const crc = { layout: crc32(layoutBytes), sections: [] as number[], vectors: 0, rows: 0, hashes: 0, codes: 0 };
  const dim = c.meta.dim ?? 0;
  const n = c.rows.ids.length;
  const hashBytes = Buffer.from(JSON.stringify(c.rows.hashes));
  const table = rowsTableOf(new Uint8Array(new ArrayBuffer(rowsTableBytes(n))), n);
  table.ids.set(c.rows.ids);
  table.magnitudes.set(c.rows.magnitudes);
  let used = 0;
  // Where each raw section was written, to check it again through the descriptor reopened.
  const raw: { at: number; len: number; crc: number }[] = [];
  let written: { dev: number; ino: number } | undefined;
  function* parts(fd: number): Generator<Uint8Array> {
    yield prefix;
    yield Buffer.alloc(headSpace, 0x20); // the head goes here once the sizes are known
    yield layoutBytes;
    used = prefix.length + headSpace + layoutBytes.length;
    for (const section of c.sections) {
      const bytes = "bytes" in section ? section.bytes : new Uint8Array(serialize(section.value));
      const sum = crc32(bytes);
      if ("bytes" in section) {
        section.placed?.(used);
        raw.push({ at: used, len: bytes.byteLength, crc: sum });
      }
      sections.push(bytes.byteLength);
      kinds.push(section.kind);
      used += bytes.byteLength;
      crc.sections.push(sum);
      yield bytes;
    }
    // Pad so the Float32 block starts 4-byte aligned and can be read straight into a Float32Array.
    const pad = Buffer.alloc((4 - (used % 4)) % 4, 0x20);
    used += pad.length;
    opts.vectorsAt?.(used);
    yield pad;
    const vectorBytes = n * dim * 4;
    // The codes go after the rows table and the hashes, whose sizes are known: each piece's codes
    // are written there as the piece passes (their CRC-32 summed in order, as the pieces come).
    const codesAt = used + vectorBytes + rowsTableBytes(n) + hashBytes.byteLength;
    const stride = codeStride(dim);
    let written = 0;
    for (const piece of c.vectors) {
      const first = written / (dim * 4);
      const count = piece.byteLength / (dim * 4);
      if (!Number.isInteger(first) || !Number.isInteger(count) || first + count > n) throw new Error("index vectors: a piece is not whole rows of the block");
      // A piece not 4-byte aligned in its buffer (none of ours is) is copied to be read as floats.
      const floats = piece.byteOffset % 4 ? new Float32Array(piece.slice().buffer) : new Float32Array(piece.buffer, piece.byteOffset, count * dim);
      const codes = new Int8Array(new ArrayBuffer(count * stride));
      for (let k = 0; k < count; k++) {
        const r = first + k;
        quantizeRow(floats, k * dim, dim, table.magnitudes[r]!, codes, k * stride, table, r);
        table.crc[r] = crc32(piece.subarray(k * dim * 4, (k + 1) * dim * 4));
      }
      const codeBytes = new Uint8Array(codes.buffer);
      writeAt(fd, codeBytes, codesAt + first * stride);
      crc.codes = crc32(codeBytes, crc.codes);
      written += piece.byteLength;
      crc.vectors = crc32(piece, crc.vectors);
      yield piece;
    }
    // A file whose head promised other sizes would be refused on every load: fail the save instead.
    if (written !== vectorBytes) throw new Error(`index vectors: ${written} bytes given for ${vectorBytes}`);
    const tableBytes = new Uint8Array(table.magnitudes.buffer, 0, rowsTableBytes(n));
    crc.rows = crc32(tableBytes);
    crc.hashes = crc32(hashBytes);
    yield tableBytes;
    yield hashBytes;
    used += written + tableBytes.byteLength + hashBytes.byteLength + n * stride;
  }
  atomicWrite(path, parts, (fd) => {
    const head: Omit<Head, "headCrc"> = {
      meta: rest,
      id: c.id,
      count: c.count,
      fileCount: Object.values(files).filter((f) => !f.skipped).length,
      vectorCount: n,
      layoutBytes: layoutBytes.byteLength,
      jsonBytes: sections.reduce((a, b) => a + b, 0),
      sections,
      kinds,
      runtime: Bun.version,
      hashesBytes: hashBytes.byteLength,
      fileBytes: used,
      crc,
    };
    const text = Buffer.from(sealHead(head));
    if (text.length > headSpace) throw new Error(`index head larger than the ${headSpace} bytes reserved`);
    writeAt(fd, Buffer.concat([text, Buffer.alloc(headSpace - text.length, 0x20)]), prefix.length);
    if (opts.reopen) {
      const st = fstatSync(fd);
      written = { dev: st.dev, ino: st.ino };
    }
  });
  return written && reopenWritten(path, written, used, raw);
}

/**
 * The file just renamed to `path`, opened for reading, when it is the one written: the same inode
 * (not another writer's file renamed over it since), the size written and the raw sections' bytes
 * as their CRC-32s say (they are what a loaded store reads by offset). Undefined otherwise: the
 * save stands, the caller keeps reading what it read before.
 */
function reopenWritten(path: string, written: { dev: number; ino: number }, size: number, raw: { at: number; len: number; crc: number }[]): number | undefined {
  let fd: number;
  try {
    fd = openOwnFile(path, "read");
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (st.dev === written.dev && st.ino === written.ino && st.size === size) {
      const buf = new Uint8Array(Math.min(1 << 20, Math.max(1, ...raw.map((r) => r.len))));
      if (raw.every((r) => crcOfRange(fd, r.at, r.len, buf) === r.crc)) return fd;
    }
  } catch {}
  closeSync(fd);
  return undefined;
}

/**
 * The rows table of a current-version file (format.ts), checked against its CRC-32: throws
 * IndexDamagedError when it fails.
 */
export function readRowsTable(file: IndexFile): RowsTable {
  const n = file.head.vectorCount;
  // An ArrayBuffer first: the columns are views of it (a new Uint8Array's buffer would be a copy).
  const bytes = new Uint8Array(new ArrayBuffer(rowsTableBytes(n)));
  readExactly(file.fd, bytes, tailOf(file).rowsAt);
  if (crc32(bytes) !== file.head.crc.rows) throw new IndexDamagedError(checksumProblem(["vectors"]));
  return rowsTableOf(bytes, n);
}

/** The file's int8 codes of its rows, read into `into` (rows × code stride bytes); whether they passed their CRC-32. */
export function readCodesInto(file: IndexFile, into: Uint8Array): boolean {
  readExactly(file.fd, into, tailOf(file).codesAt);
  return crc32(into) === file.head.crc.codes;
}

/** The vectors' content hashes, in block order, checked against their CRC-32 (IndexDamagedError when not). */
export function readHashes(file: IndexFile): string[] {
  const t = tailOf(file);
  const bytes = Buffer.allocUnsafe(t.codesAt - t.hashesAt);
  readExactly(file.fd, bytes, t.hashesAt);
  if (crc32(bytes) !== file.head.crc.hashes) throw new IndexDamagedError(checksumProblem(["vectors"]));
  let hashes: unknown;
  try {
    hashes = JSON.parse(bytes.toString("utf8"));
  } catch {}
  if (!Array.isArray(hashes) || hashes.length !== file.head.vectorCount || !hashes.every((h) => typeof h === "string")) throw new IndexDamagedError("the vectors' hashes do not match the header");
  return hashes as string[];
}

/**
 * The vector block, its rows table and the file list, each checked against its CRC-32 first.
 * The block is read straight into the rows `room(dim, rows)` gives (a plain array by default; the
 * store gives the rows its vector scan reads, with room for more after the file's), so no
 * serialized bytes stay alive behind it. The room is the caller's to choose: this module is read
 * by every hook (peekIndex), which must not load the scan's kernel. Current-version files only.
 */
export function readVectorPart(file: IndexFile, room: (dim: number, rows: number) => Float32Array = (dim, rows) => new Float32Array(new ArrayBuffer(4 * dim * rows))): { layout: Layout; rows: RowsTable; block: Float32Array } {
  const { head, fd } = file;
  const wrongSize = sizeProblem(file);
  if (wrongSize) throw new IndexDamagedError(wrongSize);
  const dim = head.meta.dim ?? 0;
  const layout = readLayout(file, true);
  const rows = readRowsTable(file);
  const block = room(dim, head.vectorCount);
  const blockBytes = new Uint8Array(block.buffer, block.byteOffset, head.vectorCount * dim * 4);
  readExactly(fd, blockBytes, blockStart(file));
  if (crc32(blockBytes) !== head.crc.vectors) throw new IndexDamagedError(checksumProblem(["vectors"]));
  return { layout, rows, block };
}

/**
 * The vectors of an index file by content hash, as views of one block: the embedding cache an
 * unusable index leaves. Of a current-version file, each part checked; of an older one (v6–v10,
 * whose layout JSON held the ids and hashes and whose block ended the file), as far as it reads.
 * Throws when they cannot be read.
 */
export function carriedVectors(file: IndexFile): Map<string, Float32Array> {
  const { head, fd } = file;
  const dim = head.meta.dim ?? 0;
  let hashes: string[];
  let block: Float32Array;
  if (head.meta.schemaVersion === SCHEMA_VERSION) {
    block = readVectorPart(file).block;
    hashes = readHashes(file);
  } else {
    if (expectedSize(file) !== file.size) throw new IndexDamagedError("file size does not match the header");
    const old = readLayout(file) as Layout & { vectorHashes?: unknown };
    if (!Array.isArray(old.vectorHashes)) throw new IndexDamagedError("no vector hashes in the layout");
    hashes = old.vectorHashes.map((h) => (typeof h === "string" ? h : ""));
    const bytes = new ArrayBuffer(head.vectorCount * dim * 4);
    readExactly(fd, new Uint8Array(bytes), blockStart(file));
    block = new Float32Array(bytes);
  }
  return vectorsByContent(hashes, block, dim);
}

/**
 * The vector block streamed, for a load that keeps no float rows (a cold block, vector-block.ts):
 * `take(first, floats, n)` gets rows first…first + n − 1, STREAM_BYTES at most at a time, in one
 * reused buffer (valid during the call). Returns false when the block fails its CRC-32, checked as
 * it streams (the rows given are then to be dropped: readVectorPart tells the damage as before).
 * Only for a current-version file whose size sizeProblem found right.
 */
/** How much of the block a streamed load holds at once. */
const STREAM_BYTES = 4 << 20;

export function streamVectorBlock(file: IndexFile, take: (first: number, floats: Float32Array, n: number) => void): boolean {
  const { head, fd } = file;
  const dim = head.meta.dim ?? 0;
  if (head.meta.schemaVersion !== SCHEMA_VERSION || sizeProblem(file) || !dim) throw new IndexDamagedError("the vector block cannot be streamed");
  const perChunk = Math.max(1, Math.floor(STREAM_BYTES / (dim * 4)));
  const floats = new Float32Array(perChunk * dim);
  const bytes = new Uint8Array(floats.buffer);
  const at = blockStart(file);
  let crc = 0;
  for (let first = 0; first < head.vectorCount; first += perChunk) {
    const n = Math.min(perChunk, head.vectorCount - first);
    const part = bytes.subarray(0, n * dim * 4);
    readExactly(fd, part, at + first * dim * 4);
    crc = crc32(part, crc);
    take(first, floats, n);
  }
  return crc === head.crc.vectors;
}

/** The vectors of a block by content hash, as views of the block. */
export function vectorsByContent(hashes: string[], block: Float32Array, dim: number): Map<string, Float32Array> {
  const byContent = new Map<string, Float32Array>();
  if (dim) hashes.forEach((h, i) => h && i * dim < block.length && byContent.set(h, block.subarray(i * dim, (i + 1) * dim)));
  return byContent;
}

/**
 * The state sections, each checked against its CRC-32, then handed to `take` with what it holds:
 * a decoded clone, or the raw bytes of a raw kind, valid only during the call (every section is
 * read into the same buffer: a buffer per section left them all as garbage at once, which raised
 * a load's peak memory by the size of the state), and the byte offset in the file where the
 * section starts. Throws (a plain Error) on damage.
 */
export function readStateSections(file: IndexFile, take: (kind: StateSection["kind"], value: unknown, at: number) => void): void {
  const { head, bodyAt, fd } = file;
  let at = bodyAt;
  const buf = Buffer.allocUnsafe(Math.max(0, ...head.sections));
  head.sections.forEach((len, i) => {
    const bytes = buf.subarray(0, len);
    readExactly(fd, bytes, at);
    if (crc32(bytes) !== head.crc.sections[i]) throw new Error(checksumProblem(["state"]));
    const kind = head.kinds[i] as StateSection["kind"];
    take(kind, RAW_KINDS.has(kind) ? bytes : deserialize(bytes), at);
    at += len;
  });
}
