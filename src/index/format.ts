/**
 * The index file's layout: bytes to plain data and back (store.ts makes Orama of the data and
 * gives it back). Since v10 the file is the base of the index, and the changes since it are
 * segments after it (segments.ts), which the manifest at the end of this file names. Kept apart from store.ts so that what only needs the head (stats, status
 * lines, the prompt hook) or the file list (no-op re-index) never loads Orama.
 *
 *   MAGIC | u32 head length | head JSON | layout JSON | Orama state sections | pad to 4 |
 *   Float32 vectors | rows table | content hashes JSON | int8 codes
 *
 * The head is small and fixed in size whatever the index holds (a reserved, space-padded
 * region, written last because it records the sizes of what follows); the layout (per-file
 * chunk lists) grows with the index and is read only when needed. The Orama state is stored in
 * sections, serialized and written one at a time, so saving never holds the whole serialized state
 * in memory. After the vectors, per row: the rows table (binary columns: the internal id, the
 * magnitude, the figures that bound a cosine from the codes, a CRC-32 of the row's floats), the
 * content hashes (read only to keep vectors as an embedding cache) and the row's int8 codes
 * (engine/codes.ts), which a command's search scans instead of the floats, reading the floats of
 * the few rows the codes cannot rule out.
 *
 * The head records the file's byte length and a CRC-32 of each part after it (layout, state,
 * vectors), so a truncated file or bytes damaged anywhere are caught on load, and the vectors
 * of a file whose other parts are damaged can still be trusted as an embedding cache. The head
 * ends with a CRC-32 of itself (`headCrc`), checked whenever it is read, by peekIndex too: a
 * changed figure in it (a chunk or file count) is damage, never the truth.
 */
import { closeSync, fstatSync, lstatSync, readdirSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { IndexDamagedError, MemsearchError, NotFoundError } from "../core/errors.ts";
import { atomicWrite, errCode, openOwnFile } from "../core/fsutil.ts";
import { isAlive } from "../core/processes.ts";
import { INDEX_FILE, MANIFEST_FILE } from "../core/project.ts";
import { codeStride } from "./engine/codes.ts";

export const MAGIC = "MEMSEARCH-INDEX\n";
// Named with the project's other files; imported from here too, with the format it names.
export { INDEX_FILE, MANIFEST_FILE };
/** Bytes reserved for the head beyond its per-section entries. */
export const HEAD_SPACE = 2048;
/**
 * Bumped whenever the on-disk layout or the tokenizer changes: an index of another version is
 * rebuilt from the markdown (its vectors kept as an embedding cache when they can be read).
 * v6: the head records the file length and CRC-32s of its parts.
 * v7: the head carries a CRC-32 of itself.
 * v8: words are indexed as written and as their Porter stems, stop words included (tokenizer.ts).
 * v9: the compact text index (compact-index.ts): no per-chunk token frequencies, the radix tree
 *     as flat arrays with its postings in one Uint32Array; the documents as columns, their texts
 *     as one UTF-8 block per section.
 * v10: the file is the base of an index that may have segments after it (segments.ts): its head
 *     carries the id they name. An older memsearch would read the base alone and miss them.
 * v11: the vectors' ids, magnitudes and hashes leave the layout's JSON for the rows table and a
 *     part of their own; every row's int8 codes and a CRC-32 per row follow the vectors; the
 *     documents sections are columns (docs.ts); a file's chunk list and the id map are each one
 *     string (encodeLayout, load.ts).
 */
export const SCHEMA_VERSION = 11;

/** What we remember per markdown file so an unchanged file costs one stat. */
export interface FileRecord {
  mtimeMs: number;
  size: number;
  chunks: string[];
  /**
   * Set when the file is not indexed because it is not text: kept so an unchanged one is not read
   * again. "not-text" is the verdict of older versions (any NUL or bad byte), which is read again.
   */
  skipped?: "binary" | "not-text";
  /** Sections indexed without their control characters or unreadable bytes, and sections left out. */
  damaged?: { cleaned: number; dropped: number };
  /** Sections left out because their turn is on the forgotten list (index/forgotten.ts): read again once one of them is not. */
  leftOut?: { session: string; turn: string }[];
  /**
   * Claude Code's curated memory (its memory folder, CLAUDE.md files), not a memsearch note. An
   * index written before it existed lacks it, which reads as "a note": no format change needed.
   */
  curated?: true;
}

export interface StoreMeta {
  schemaVersion: number;
  model: string;
  /** Dimension of stored vectors; null until a vector has been stored. */
  dim: number | null;
  updatedAt: string;
  files: Record<string, FileRecord>;
}

export interface Head {
  meta: Omit<StoreMeta, "files">;
  /** Since v10: this base's id, which its segments and the manifest name (segments.ts). */
  id: string;
  count: number;
  fileCount: number;
  vectorCount: number;
  layoutBytes: number;
  /** Size of the serialized Orama state (the sum of `sections`). */
  jsonBytes: number;
  /** Sizes of its sections, in order, and what each holds. */
  sections: number[];
  kinds: string[];
  /** Bun version that wrote the Orama state (its structured-clone format is Bun's own). */
  runtime: string;
  /** Since v11: the content hashes' JSON after the rows table. */
  hashesBytes: number;
  /**
   * Since v6: the whole file's length, and CRC-32s of the layout, of each state section and of the
   * vector block; since v11, of the rows table, the hashes and the codes.
   */
  fileBytes: number;
  crc: { layout: number; sections: number[]; vectors: number; rows: number; hashes: number; codes: number };
  /** Since v7, always the last field: CRC-32 of the head's JSON up to it (see sealHead). */
  headCrc: number;
}

/** The parts a checksum covers (the head covers itself; the others are covered by the head). */
export type Part = "head" | "layout" | "state" | "vectors";

export interface Layout {
  files: Record<string, FileRecord>;
}

/** The rows table: per vector, in block order, its columns (views of one buffer). */
export interface RowsTable {
  /** Internal ids. */
  ids: Uint32Array;
  magnitudes: Float64Array;
  /** The figures of its codes (engine/codes.ts FigureColumns). */
  scale: Float64Array;
  err: Float64Array;
  norm: Float64Array;
  bounded: Uint8Array;
  /** CRC-32 of the row's floats: a row read alone is checked without reading the block. */
  crc: Uint32Array;
}

/** Bytes of the rows table of `n` rows: four f64 columns, two u32, one u8. */
export function rowsTableBytes(n: number): number {
  return n * 41;
}

/** The columns of a rows table of `n` rows over `bytes` (an ArrayBuffer's start: the f64 columns must be aligned). */
export function rowsTableOf(bytes: Uint8Array, n: number): RowsTable {
  const { buffer, byteOffset: o } = bytes;
  const f64 = (k: number) => new Float64Array(buffer, o + k * 8 * n, n);
  return { magnitudes: f64(0), scale: f64(1), err: f64(2), norm: f64(3), ids: new Uint32Array(buffer, o + 32 * n, n), crc: new Uint32Array(buffer, o + 36 * n, n), bounded: new Uint8Array(buffer, o + 40 * n, n) };
}

/** Where the parts after the vector block start, and where the file ends. */
export function tailOf(file: Pick<IndexFile, "head" | "bodyAt">): { vectorsAt: number; rowsAt: number; hashesAt: number; codesAt: number; end: number } {
  const { head } = file;
  const dim = head.meta.dim ?? 0;
  const n = head.vectorCount;
  const vectorsAt = blockStart(file);
  const rowsAt = vectorsAt + n * dim * 4;
  if (head.meta.schemaVersion !== SCHEMA_VERSION) return { vectorsAt, rowsAt, hashesAt: rowsAt, codesAt: rowsAt, end: rowsAt };
  const hashesAt = rowsAt + rowsTableBytes(n);
  const codesAt = hashesAt + head.hashesBytes;
  return { vectorsAt, rowsAt, hashesAt, codesAt, end: codesAt + (dim ? n * codeStride(dim) : 0) };
}

export interface IndexFile {
  fd: number;
  size: number;
  head: Head;
  layoutAt: number;
  /** Byte offset where the Orama state starts. */
  bodyAt: number;
}

/** CRC-32, continued from `seed` (the CRC of what came before): parts can be summed as they stream. */
export function crc32(bytes: Uint8Array, seed = 0): number {
  return Bun.hash.crc32(bytes, seed);
}

const HEAD_CRC_FIELD = ',"headCrc":';

/**
 * The head as written: its JSON with `headCrc` added last, the CRC-32 of the UTF-8 bytes of the
 * JSON without it. A reader checks the bytes before that field, closed with "}" (headChecksumOk).
 */
export function sealHead(head: Omit<Head, "headCrc"> | Head): string {
  return sealJson(head);
}

/** Any JSON object sealed as the head is (the segments' heads and the manifest are too: segments.ts). */
export function sealJson(value: object): string {
  const { headCrc: _, ...rest } = value as { headCrc?: number };
  const body = JSON.stringify(rest);
  return `${body.slice(0, -1)}${HEAD_CRC_FIELD}${crc32(Buffer.from(body))}}`;
}

/** The head's bytes (JSON and its padding) agree with the `headCrc` they end with. */
export function headChecksumOk(bytes: Buffer, head: { headCrc: number }): boolean {
  const at = bytes.lastIndexOf(HEAD_CRC_FIELD);
  if (at < 0) return false;
  return crc32(Buffer.concat([bytes.subarray(0, at), Buffer.from("}")])) === head.headCrc;
}

/**
 * Open an index file and read its head. A missing file throws NotFoundError; a file that is
 * not a readable index (a directory, garbage, a damaged or cut head) throws IndexDamagedError;
 * a file we may not read throws MemsearchError. The head is checked for shape and, in a
 * current-version file, against its own CRC-32 (a few KB: cheap enough for every peek); whether
 * the rest is there and intact is for sizeProblem / damagedParts.
 */
export function openIndexFile(path: string): IndexFile {
  let fd: number;
  try {
    fd = openOwnFile(path, "read");
  } catch (e) {
    const code = errCode(e);
    if (code === "ENOENT") throw new NotFoundError(`no index at ${path}`);
    if (code === "EISDIR") throw new IndexDamagedError("index.bin is a directory");
    if (code === "ELOOP") throw new IndexDamagedError("index.bin is a symbolic link");
    if (code === "ENOTREG") throw new IndexDamagedError("index.bin is not a regular file");
    throw new MemsearchError(`cannot read index ${path}: ${code ?? e}`);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new IndexDamagedError("index.bin is a directory");
    if (!st.isFile()) throw new IndexDamagedError("index.bin is not a regular file");
    const size = st.size;
    const prefix = Buffer.alloc(MAGIC.length + 4);
    if (readSync(fd, prefix, 0, prefix.length, 0) !== prefix.length || prefix.toString("latin1", 0, MAGIC.length) !== MAGIC) {
      throw new IndexDamagedError(size === 0 ? "empty file" : "not a memsearch index");
    }
    const len = prefix.readUInt32LE(MAGIC.length);
    if (prefix.length + len > size) throw new IndexDamagedError(`truncated: ${size} bytes, the header alone needs ${prefix.length + len}`);
    const bytes = Buffer.allocUnsafe(len);
    readExactly(fd, bytes, prefix.length);
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString("utf8"));
    } catch {
      throw new IndexDamagedError("damaged header");
    }
    const head = checkHead(raw);
    if (!head) throw new IndexDamagedError("damaged header");
    // An older head has no checksum of its own: it is rebuilt anyway, as another version.
    if (head.meta.schemaVersion === SCHEMA_VERSION && !headChecksumOk(bytes, head)) throw new IndexDamagedError(checksumProblem(["head"]));
    const layoutAt = prefix.length + len;
    return { fd, size, head, layoutAt, bodyAt: layoutAt + head.layoutBytes };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

const Count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

const Dim = v.nullable(v.pipe(Count, v.minValue(1)));

/** The figures every version's head holds. */
const Figures = {
  count: Count,
  fileCount: Count,
  vectorCount: Count,
  layoutBytes: Count,
  jsonBytes: Count,
  sections: v.array(Count),
  kinds: v.array(v.string()),
};

/** Enough of an older version's head to read its vectors, if anything. */
const HeadOfAnyVersion = v.looseObject({ meta: v.looseObject({ schemaVersion: Count, model: v.string(), dim: Dim }), ...Figures });

const CurrentHead = v.object({
  meta: v.object({ schemaVersion: v.literal(SCHEMA_VERSION), model: v.string(), dim: Dim, updatedAt: v.string() }),
  ...Figures,
  id: v.pipe(v.string(), v.regex(/^[0-9a-z]+$/)),
  runtime: v.string(),
  hashesBytes: Count,
  fileBytes: Count,
  crc: v.object({ layout: Count, sections: v.array(Count), vectors: Count, rows: Count, hashes: Count, codes: Count }),
  headCrc: Count,
});

/**
 * The head, when it has the shape its version promises and its sizes add up; undefined
 * otherwise. An older version's head is returned as far as it goes (the caller rebuilds it).
 */
function checkHead(raw: unknown): Head | undefined {
  const any = v.safeParse(HeadOfAnyVersion, raw);
  if (!any.success) return undefined;
  const h = any.output;
  if (h.kinds.length !== h.sections.length || h.sections.reduce((a, b) => a + b, 0) !== h.jsonBytes) return undefined;
  if (h.meta.schemaVersion !== SCHEMA_VERSION) return olderHead(h);
  const cur = v.safeParse(CurrentHead, raw);
  if (!cur.success || cur.output.crc.sections.length !== cur.output.sections.length) return undefined;
  return cur.output;
}

/**
 * An older head in today's shape. Nothing reads its checksums or file length (they are checked
 * only in a current-version file), so those are zero; only its vectors are ever used.
 */
function olderHead(h: v.InferOutput<typeof HeadOfAnyVersion>): Head {
  const str = (x: unknown) => (typeof x === "string" ? x : "");
  return {
    meta: { schemaVersion: h.meta.schemaVersion, model: h.meta.model, dim: h.meta.dim, updatedAt: str(h.meta.updatedAt) },
    count: h.count,
    fileCount: h.fileCount,
    vectorCount: h.vectorCount,
    layoutBytes: h.layoutBytes,
    jsonBytes: h.jsonBytes,
    sections: h.sections,
    kinds: h.kinds,
    id: "",
    runtime: str(h.runtime),
    hashesBytes: 0,
    fileBytes: 0,
    crc: { layout: 0, sections: [], vectors: 0, rows: 0, hashes: 0, codes: 0 },
    headCrc: 0,
  };
}

/** Why the file cannot hold what its head describes (cut short, grown, inconsistent head), or undefined. */
export function sizeProblem(file: IndexFile): string | undefined {
  const expected = expectedSize(file);
  const promised = file.head.meta.schemaVersion === SCHEMA_VERSION ? file.head.fileBytes : expected;
  if (expected !== promised) return "damaged header";
  if (file.size < promised) return `truncated: ${file.size} of ${promised} bytes`;
  if (file.size > promised) return `${file.size - promised} unexpected bytes at the end`;
  return undefined;
}

/**
 * The layout's JSON (v11): each file's chunk list as one comma-separated string of chunk hashes,
 * which JSON.parse reads three times faster than an array of as many strings (a cold search parses
 * the file list of every chunk).
 */
export function encodeLayout(layout: Layout): string {
  return JSON.stringify({ files: layout.files }, (key, value: unknown) => (key === "chunks" && Array.isArray(value) ? value.join(",") : value));
}

/** The layout; with `verify`, checked against its CRC-32 first (current-version files). */
export function readLayout(file: IndexFile, verify = false): Layout {
  const bytes = Buffer.allocUnsafe(file.head.layoutBytes);
  readExactly(file.fd, bytes, file.layoutAt);
  if (verify && file.head.meta.schemaVersion === SCHEMA_VERSION && crc32(bytes) !== file.head.crc.layout) throw new IndexDamagedError(checksumProblem(["layout"]));
  const layout = JSON.parse(bytes.toString("utf8")) as Layout;
  for (const rec of Object.values(layout.files ?? {}) as { chunks?: unknown }[]) if (typeof rec?.chunks === "string") rec.chunks = rec.chunks ? rec.chunks.split(",") : [];
  return layout;
}

/** Fill `buf` (or its `len` bytes from `offset`) from byte `at` of the file, or throw (the file is shorter than its head says). */
export function readExactly(fd: number, buf: Uint8Array, at: number, offset = 0, len = buf.byteLength - offset): void {
  let done = 0;
  while (done < len) {
    const n = readSync(fd, buf, offset + done, len - done, at + done);
    if (n <= 0) throw new IndexDamagedError(`truncated at byte ${at + done}`);
    done += n;
  }
}

export function blockStart(file: Pick<IndexFile, "head" | "bodyAt">): number {
  const end = file.bodyAt + file.head.jsonBytes;
  return end + ((4 - (end % 4)) % 4);
}

export function expectedSize(file: Pick<IndexFile, "head" | "bodyAt">): number {
  return tailOf(file).end;
}

/** CRC-32 of `len` bytes at `at`, read in slices (a verify of a large index holds one slice at a time). */
export function crcOfRange(fd: number, at: number, len: number, buf: Uint8Array): number {
  let crc = 0;
  for (let done = 0; done < len; ) {
    const part = buf.subarray(0, Math.min(buf.byteLength, len - done));
    readExactly(fd, part, at + done);
    crc = crc32(part, crc);
    done += part.byteLength;
  }
  return crc;
}

/**
 * Which parts of a current-version file fail their CRC-32, read from disk in 1 MiB slices (the
 * fastest size for a fresh process: larger buffers cost more in page faults); no Orama. Call
 * after sizeProblem() found nothing.
 */
export function damagedParts(file: IndexFile, parts: Part[] = ["layout", "state", "vectors"]): Part[] {
  const buf = new Uint8Array(Math.min(1 << 20, Math.max(file.size, 1)));
  const { head, fd } = file;
  const out: Part[] = [];
  if (parts.includes("layout") && crcOfRange(fd, file.layoutAt, head.layoutBytes, buf) !== head.crc.layout) out.push("layout");
  if (parts.includes("state")) {
    let at = file.bodyAt;
    for (let i = 0; i < head.sections.length; i++) {
      if (crcOfRange(fd, at, head.sections[i]!, buf) !== head.crc.sections[i]) {
        out.push("state");
        break;
      }
      at += head.sections[i]!;
    }
  }
  if (parts.includes("vectors")) {
    const t = tailOf(file);
    const pieces: [number, number, number][] = [
      [t.vectorsAt, t.rowsAt, head.crc.vectors],
      [t.rowsAt, t.hashesAt, head.crc.rows],
      [t.hashesAt, t.codesAt, head.crc.hashes],
      [t.codesAt, t.end, head.crc.codes],
    ];
    if (pieces.some(([from, to, crc]) => crcOfRange(fd, from, to - from, buf) !== crc)) out.push("vectors");
  }
  return out;
}

/** The one-line reason for a CRC failure, naming what was damaged. */
export function checksumProblem(parts: Part[]): string {
  const names = { head: "header", layout: "file list", state: "search index", vectors: "vectors" };
  return `checksum mismatch in the ${parts.map((p) => names[p]).join(" and ")}`;
}

/** Why an index is rebuilt, as the start of the one notice that says so. */
export function unreadable(detail: string): string {
  return `the index was unreadable (${detail})`;
}

export function otherVersion(version: number): string {
  return version < SCHEMA_VERSION ? `the index was in an older format (v${version}, now v${SCHEMA_VERSION})` : `the index was written by a newer memsearch (format v${version}; this one reads v${SCHEMA_VERSION})`;
}

export interface IndexSummary {
  schemaVersion: number;
  /** The base's id (segments name it). */
  id: string;
  /** Segments after the base the manifest names (their chunks are in the counts, their bytes in `bytes`). */
  segments: number;
  model: string;
  dim: number | null;
  updatedAt: string;
  chunks: number;
  files: number;
  vectors: number;
  bytes: number;
  /** Cheap signs the rest can be read: this version, the sizes add up and this Bun wrote it. */
  loadable: boolean;
}

export function withIndexFile<T>(indexDir: string, fn: (f: IndexFile) => T): T | undefined {
  let file: IndexFile | undefined;
  try {
    file = openIndexFile(join(indexDir, INDEX_FILE));
    return fn(file);
  } catch {
    return undefined;
  } finally {
    if (file) closeSync(file.fd);
  }
}

/**
 * The base's figures, and, when the manifest names this base, the figures after its segments (the
 * manifest keeps them) with their bytes.
 */
export function summaryOf(f: IndexFile, manifest?: ReturnType<typeof readManifest>): IndexSummary {
  const base: IndexSummary = {
    ...f.head.meta,
    id: f.head.id,
    segments: 0,
    chunks: f.head.count,
    files: f.head.fileCount,
    vectors: f.head.vectorCount,
    bytes: f.size,
    loadable: f.head.runtime === Bun.version && f.head.meta.schemaVersion === SCHEMA_VERSION && sizeProblem(f) === undefined,
  };
  if (!manifest || "damaged" in manifest || manifest.baseId !== f.head.id || !f.head.id) return base;
  const { chunks, files, vectors } = manifest.counts;
  return { ...base, chunks, files, vectors, updatedAt: manifest.updatedAt, segments: manifest.segments.length, bytes: f.size + manifest.segments.reduce((a, s) => a + s.bytes, 0) };
}

/** The head and the manifest only: what stats, status lines and hooks need, at the same cost for any index size. */
export function peekIndex(indexDir: string): IndexSummary | undefined {
  return withIndexFile(indexDir, (f) => summaryOf(f, readManifest(indexDir)));
}

export interface Swept {
  files: number;
  bytes: number;
}

/** A writer's temp file older than this is a leftover even if its PID is alive (reused). */
const TEMP_MAX_AGE_MS = 3600_000;

/**
 * Remove the temp files of index writes that will never finish: atomicWrite names them
 * `index.bin.tmp-<pid>-<random>`, and a writer killed mid-save (a drainer past its budget, a
 * closed terminal) leaves one the size of the index. One whose PID is dead, or that has not
 * been written to for an hour, is removed; a live writer's is left to become the index.
 */
export function sweepIndexTemps(indexDir: string, now = Date.now()): Swept {
  const out: Swept = { files: 0, bytes: 0 };
  let names: string[];
  try {
    names = readdirSync(indexDir);
  } catch {
    return out;
  }
  for (const name of names) {
    // The base's, the manifest's and the segments' (atomicWrite names them all so).
    const temp = /^(?:index\.bin|manifest\.json|seg-[0-9a-z]+-\d{6}\.bin)\.tmp-(\d+)-/.exec(name);
    if (!temp) continue;
    const pid = Number(temp[1]);
    const path = join(indexDir, name);
    let st;
    try {
      st = lstatSync(path);
    } catch {
      continue; // renamed into place or removed meanwhile
    }
    if (!st.isFile()) continue;
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && now - st.mtimeMs < TEMP_MAX_AGE_MS) continue;
    try {
      rmSync(path);
      out.files++;
      out.bytes += st.size;
    } catch {}
  }
  return out;
}

/**
 * Clear the way for writing a new index: something that is not a file where the index goes (a
 * directory, left by a tool or by hand) would make every save fail. The index folder holds
 * derived data only, so it is removed.
 */
export function clearIndexPath(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  // A symlink is left alone: the rename that saves the index replaces the link itself.
  if (!st.isFile() && !st.isSymbolicLink()) rmSync(path, { recursive: true, force: true });
}


// ---------------------------------------------------------------------------------------------
// The manifest: the base and the segments after it, in order (segments.ts says what they are).


export interface SegmentEntry {
  name: string;
  seq: number;
  bytes: number;
  crc: number;
  /** Chunks it removes (each a tombstone over bytes that stay on disk until a merge). */
  removed: number;
}

const ManifestSchema = v.object({
  v: v.literal(1),
  baseId: v.string(),
  segments: v.array(v.object({ name: v.pipe(v.string(), v.regex(/^seg-[0-9a-z]+-\d{6}\.bin$/)), seq: Count, bytes: Count, crc: Count, removed: Count })),
  counts: v.object({ chunks: Count, files: Count, vectors: Count }),
  updatedAt: v.string(),
  /**
   * The writer's local time zone (Date#getTimezoneOffset, minutes) when it wrote this: a reader
   * dates the notes' local times with it, and a cold search or prompt hook need not load the time
   * zone data (4–8 ms in a new process). Absent from older manifests: the reader then asks the zone.
   */
  utcOffsetMin: v.optional(v.pipe(v.number(), v.integer(), v.minValue(-1440), v.maxValue(1440))),
  headCrc: Count,
});

export type Manifest = Omit<v.InferOutput<typeof ManifestSchema>, "headCrc">;

/** The manifest, undefined when there is none, or why it cannot be read. */
export function readManifest(indexDir: string): Manifest | undefined | { damaged: string } {
  let bytes: Buffer;
  try {
    const fd = openOwnFile(join(indexDir, MANIFEST_FILE), "read");
    try {
      const size = fstatSync(fd).size;
      if (size > 16 << 20) return { damaged: "the index's manifest is too large" };
      bytes = Buffer.allocUnsafe(size);
      readExactly(fd, bytes, 0);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    if (errCode(e) === "ENOENT") return undefined;
    if (e instanceof IndexDamagedError) return { damaged: "the index's manifest is cut short" };
    if (["EISDIR", "ELOOP", "ENOTREG"].includes(errCode(e) ?? "")) return { damaged: "the index's manifest is not a regular file" };
    throw new MemsearchError(`cannot read the index's manifest in ${indexDir}: ${errCode(e) ?? e}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch {
    return { damaged: "the index's manifest is not JSON" };
  }
  const m = v.safeParse(ManifestSchema, raw);
  if (!m.success || !headChecksumOk(bytes, m.output)) return { damaged: "checksum mismatch in the index's manifest" };
  const { headCrc: _, ...manifest } = m.output;
  return manifest;
}

export function writeManifest(indexDir: string, m: Manifest): void {
  atomicWrite(join(indexDir, MANIFEST_FILE), sealJson(m));
}

