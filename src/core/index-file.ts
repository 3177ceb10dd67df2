/**
 * The index file's layout and its header. Kept apart from store.ts so that the paths that only
 * need the header (stats, status lines, the prompt hook, no-op re-index) do not load Orama.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import { MemsearchError } from "./errors.ts";

export const MAGIC = "MEMSEARCH-INDEX\n";
export const INDEX_FILE = "index.bin";

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

export interface Header {
  meta: StoreMeta;
  count: number;
  /** Size of the serialized Orama state. */
  jsonBytes: number;
  /** Internal ids of the vectors, in block order. */
  vectorIds: number[];
  magnitudes: number[];
  /** Content hash of each vector, so the vectors survive as an embedding cache if the rest cannot be read. */
  vectorHashes: string[];
  /** Bun version that wrote the Orama state (its structured-clone format is Bun's own). */
  runtime: string;
}

export interface IndexFile {
  fd: number;
  size: number;
  header: Header;
  /** Byte offset where the Orama JSON starts. */
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
    const head = Buffer.alloc(MAGIC.length + 4);
    if (readSync(fd, head, 0, head.length, 0) !== head.length || head.toString("latin1", 0, MAGIC.length) !== MAGIC) throw new Error("not a memsearch index");
    const len = head.readUInt32LE(MAGIC.length);
    if (head.length + len > size) throw new Error("truncated header");
    const body = Buffer.alloc(len);
    readSync(fd, body, 0, len, head.length);
    return { fd, size, header: JSON.parse(body.toString("utf8")) as Header, bodyAt: head.length + len };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

export function blockStart(header: Header, bodyAt: number): number {
  const end = bodyAt + header.jsonBytes;
  return end + ((4 - (end % 4)) % 4);
}

export function expectedSize(header: Header, bodyAt: number): number {
  return blockStart(header, bodyAt) + header.vectorIds.length * (header.meta.dim ?? 0) * 4;
}

/** Read only the header: stats, status lines and no-op re-index must not load the whole index. */
export function peekIndex(indexDir: string): (StoreMeta & { chunks: number; vectors: number; bytes: number; loadable: boolean }) | undefined {
  let file: IndexFile | undefined;
  try {
    file = openIndexFile(join(indexDir, INDEX_FILE));
    const { header } = file;
    // Cheap signs the body can be read: the sizes add up and this Bun wrote it.
    const loadable = header.runtime === Bun.version && expectedSize(header, file.bodyAt) === file.size;
    return { ...header.meta, chunks: header.count, vectors: header.vectorIds.length, bytes: file.size, loadable };
  } catch {
    return undefined;
  } finally {
    if (file) closeSync(file.fd);
  }
}

/** Remove the index file (reset); true when there was one. */
export function removeIndex(indexDir: string): boolean {
  const path = join(indexDir, INDEX_FILE);
  const had = existsSync(path);
  rmSync(path, { force: true });
  return had;
}
