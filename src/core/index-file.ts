/**
 * The index file's layout. Kept apart from store.ts so that what only needs the head (stats,
 * status lines, the prompt hook) or the file list (no-op re-index) never loads Orama.
 *
 *   MAGIC | u32 head length | head JSON | layout JSON | Orama state sections | pad to 4 | Float32 vectors
 *
 * The head is small and fixed in size whatever the index holds (a reserved, space-padded
 * region, written last because it records the sizes of what follows); the layout (per-file
 * chunk lists, per-vector ids, magnitudes, content hashes) grows with the index and is read
 * only when needed. The Orama state is stored in sections, serialized and written one at a
 * time, so saving never holds the whole serialized state in memory.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import { MemsearchError } from "./errors.ts";

export const MAGIC = "MEMSEARCH-INDEX\n";
export const INDEX_FILE = "index.bin";
/** Bytes reserved for the head beyond its per-section entries. */
export const HEAD_SPACE = 2048;

/** What we remember per markdown file so an unchanged file costs one stat. */
export interface FileRecord {
  mtimeMs: number;
  size: number;
  chunks: string[];
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
}

export interface Layout {
  files: Record<string, FileRecord>;
  /** Internal ids of the vectors, in block order. */
  vectorIds: number[];
  magnitudes: number[];
  /** Content hash of each vector, so the vectors survive as an embedding cache if the rest cannot be read. */
  vectorHashes: string[];
}

export interface IndexFile {
  fd: number;
  size: number;
  head: Head;
  layoutAt: number;
  /** Byte offset where the Orama state starts. */
  bodyAt: number;
}

export function openIndexFile(path: string): IndexFile {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw new MemsearchError(`cannot read index ${path}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  try {
    const size = fstatSync(fd).size;
    const prefix = Buffer.alloc(MAGIC.length + 4);
    if (readSync(fd, prefix, 0, prefix.length, 0) !== prefix.length || prefix.toString("latin1", 0, MAGIC.length) !== MAGIC) throw new Error("not a memsearch index");
    const len = prefix.readUInt32LE(MAGIC.length);
    if (prefix.length + len > size) throw new Error("truncated header");
    const head = JSON.parse(readText(fd, prefix.length, len)) as Head;
    const layoutAt = prefix.length + len;
    return { fd, size, head, layoutAt, bodyAt: layoutAt + head.layoutBytes };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

export function readLayout(file: IndexFile): Layout {
  return JSON.parse(readText(file.fd, file.layoutAt, file.head.layoutBytes)) as Layout;
}

function readText(fd: number, at: number, len: number): string {
  const buf = Buffer.allocUnsafe(len);
  if (readSync(fd, buf, 0, len, at) !== len) throw new Error("truncated index file");
  return buf.toString("utf8");
}

export function blockStart(file: Pick<IndexFile, "head" | "bodyAt">): number {
  const end = file.bodyAt + file.head.jsonBytes;
  return end + ((4 - (end % 4)) % 4);
}

export function expectedSize(file: Pick<IndexFile, "head" | "bodyAt">): number {
  return blockStart(file) + file.head.vectorCount * (file.head.meta.dim ?? 0) * 4;
}

export interface IndexSummary {
  schemaVersion: number;
  model: string;
  dim: number | null;
  updatedAt: string;
  chunks: number;
  files: number;
  vectors: number;
  bytes: number;
  /** Cheap signs the rest can be read: the sizes add up and this Bun wrote it. */
  loadable: boolean;
}

function withIndexFile<T>(indexDir: string, fn: (f: IndexFile) => T): T | undefined {
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

function summaryOf(f: IndexFile): IndexSummary {
  return {
    ...f.head.meta,
    chunks: f.head.count,
    files: f.head.fileCount,
    vectors: f.head.vectorCount,
    bytes: f.size,
    loadable: f.head.runtime === Bun.version && expectedSize(f) === f.size,
  };
}

/** The head only: what stats, status lines and hooks need, at the same cost for any index size. */
export function peekIndex(indexDir: string): IndexSummary | undefined {
  return withIndexFile(indexDir, summaryOf);
}

/** The head and the per-file records: what a no-op re-index compares with the markdown. */
export function peekIndexFiles(indexDir: string): (IndexSummary & { fileRecords: Record<string, FileRecord> }) | undefined {
  return withIndexFile(indexDir, (f) => ({ ...summaryOf(f), fileRecords: readLayout(f).files }));
}

/** Remove the index file (reset); true when there was one. */
export function removeIndex(indexDir: string): boolean {
  const path = join(indexDir, INDEX_FILE);
  const had = existsSync(path);
  rmSync(path, { force: true });
  return had;
}
