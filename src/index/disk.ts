/**
 * The index on disk as a whole: the base (format.ts), the manifest and the segments after it
 * (segments.ts). Opening the two consistently, the segments to replay and what was lost, the file
 * records a no-op re-index compares, the full check stats relies on, the stamp a long-lived reader
 * reloads by, and reset. No engine: what only needs these never loads one.
 */
import { closeSync, lstatSync, rmSync } from "node:fs";
import { join } from "node:path";
import { IndexDamagedError, NotFoundError } from "../core/errors.ts";
import {
  checksumProblem,
  damagedParts,
  INDEX_FILE,
  MANIFEST_FILE,
  openIndexFile,
  otherVersion,
  readLayout,
  readManifest,
  SCHEMA_VERSION,
  sizeProblem,
  summaryOf,
  sweepIndexTemps,
  unreadable,
  withIndexFile,
  type FileRecord,
  type IndexFile,
  type IndexSummary,
  type Manifest,
  type SegmentEntry,
  type Swept,
} from "./format.ts";
import { readSegment, removeSegments, strayingSegments, type Segment } from "./segments.ts";

type ManifestRead = ReturnType<typeof readManifest>;

/**
 * The base and the manifest, read so that they belong together when they can: a merge replaces the
 * base, then the manifest, so a reader between the two renames meets a manifest of another base and
 * reads both again (twice at most; after that the base alone is the index, as a merge killed between
 * the two leaves it). Throws as openIndexFile does.
 */
export function openBase(indexDir: string): { file: IndexFile; manifest: ManifestRead } {
  for (let attempt = 0; ; attempt++) {
    const manifest = readManifest(indexDir);
    const file = openIndexFile(join(indexDir, INDEX_FILE));
    if (!manifest || "damaged" in manifest || manifest.baseId === file.head.id || attempt >= 2) return { file, manifest };
    closeSync(file.fd);
    Bun.sleepSync(5 * (attempt + 1));
  }
}

/** A manifest of `baseId` with no segments yet. */
export function emptyManifest(baseId: string): Manifest {
  return { v: 1, baseId, segments: [], counts: { chunks: 0, files: 0, vectors: 0 }, updatedAt: "" };
}

/**
 * The segments to replay after the base `baseId`, in order, what is already known to be lost (a
 * damaged manifest, segments of this base the manifest does not name), and the manifest the store
 * holds from now on. A manifest of another base is no loss: its segments are in the base or were
 * superseded by it.
 */
export function segmentsOf(indexDir: string, baseId: string, manifest: ManifestRead): { entries: SegmentEntry[]; lost: string[]; current: Manifest } {
  const lost: string[] = [];
  const ours = manifest && !("damaged" in manifest) && manifest.baseId === baseId ? manifest : undefined;
  if (manifest && "damaged" in manifest) lost.push(manifest.damaged);
  const torn = strayingSegments(indexDir, ours ?? emptyManifest(baseId)).torn;
  if (torn.length) lost.push(`${torn.length === 1 ? "a segment" : `${torn.length} segments`} written but never named by the manifest`);
  return { entries: ours?.segments ?? [], lost, current: ours ?? emptyManifest(baseId) };
}

/** A segment, its vectors checked to be of the index's dimension. */
export function readSegmentFor(indexDir: string, entry: SegmentEntry, baseId: string, dim: number | null): Segment {
  const seg = readSegment(indexDir, entry, baseId);
  if (seg.vectors.length && seg.dim !== dim) throw new IndexDamagedError(`segment ${entry.seq} holds ${seg.dim}-d vectors in an index of ${dim ?? "no"} dimensions`);
  return seg;
}

/**
 * The figures and the per-file records after every segment: what a no-op re-index compares with
 * the markdown. With `verify`, undefined unless every part's checksum is right and no segment is
 * lost (a no-op run must not vouch for a damaged index).
 */
export function peekIndexFiles(indexDir: string, opts: { verify?: boolean } = {}): (IndexSummary & { fileRecords: Record<string, FileRecord> }) | undefined {
  return withIndexFile(indexDir, (f) => {
    const manifest = readManifest(indexDir);
    const summary = summaryOf(f, manifest);
    if (opts.verify && !summary.loadable) return undefined;
    const files = readLayout(f, opts.verify).files; // throws on a CRC mismatch: undefined
    const { entries, lost } = segmentsOf(indexDir, f.head.id, manifest);
    if (opts.verify && lost.length) return undefined;
    for (const entry of entries) {
      let seg: Segment;
      try {
        seg = readSegmentFor(indexDir, entry, f.head.id, f.head.meta.dim);
      } catch (e) {
        if (opts.verify || !(e instanceof IndexDamagedError)) throw e;
        continue;
      }
      for (const op of seg.ops) {
        if (op[0] === "f") files[op[1]] = op[2];
        else if (op[0] === "x") delete files[op[1]];
      }
    }
    if (opts.verify && damagedParts(f, ["state", "vectors"]).length) return undefined;
    return { ...summary, fileRecords: files };
  });
}

/**
 * Everything about an index short of loading the engine: present, readable, this version, the
 * right size and every part's checksum right, every segment the manifest names whole. What stats
 * and the prompt hook's status rely on.
 */
export type IndexCheck = { state: "missing" } | { state: "ok"; file: IndexSummary } | { state: "unusable"; reason: string };

export function checkIndex(indexDir: string): IndexCheck {
  let file: IndexFile;
  let manifest: ManifestRead;
  try {
    ({ file, manifest } = openBase(indexDir));
  } catch (e) {
    if (e instanceof NotFoundError) return { state: "missing" };
    if (e instanceof IndexDamagedError) return { state: "unusable", reason: unreadable(e.reason) };
    throw e;
  }
  try {
    const version = file.head.meta.schemaVersion;
    if (version !== SCHEMA_VERSION) return { state: "unusable", reason: otherVersion(version) };
    const problem = sizeProblem(file);
    if (problem) return { state: "unusable", reason: unreadable(problem) };
    const bad = damagedParts(file);
    if (bad.length) return { state: "unusable", reason: unreadable(checksumProblem(bad)) };
    const { entries, lost } = segmentsOf(indexDir, file.head.id, manifest);
    for (const entry of entries) {
      try {
        readSegmentFor(indexDir, entry, file.head.id, file.head.meta.dim);
      } catch (e) {
        if (!(e instanceof IndexDamagedError)) throw e;
        lost.push(e.reason);
      }
    }
    if (lost.length) return { state: "unusable", reason: `the index was partly unreadable (${lost.join("; ")})` };
    return { state: "ok", file: summaryOf(file, manifest) };
  } catch (e) {
    if (e instanceof IndexDamagedError) return { state: "unusable", reason: unreadable(e.reason) };
    throw e;
  } finally {
    closeSync(file.fd);
  }
}

export { indexStamp } from "../core/project.ts";

/** What reset removed: the index (its size when there was one, segments included) and writers' leftovers. */
export interface Dropped {
  /** Bytes of the base and its segments, or undefined when there was no index. */
  indexBytes?: number;
  temps: Swept;
}

/** Remove the index (base, manifest, segments) and the temp files of interrupted writes (reset). */
export function removeIndex(indexDir: string): Dropped {
  const path = join(indexDir, INDEX_FILE);
  let indexBytes: number | undefined;
  try {
    indexBytes = lstatSync(path).size;
  } catch {}
  const segments = strayingSegments(indexDir, undefined).stale;
  for (const name of segments) {
    try {
      indexBytes = (indexBytes ?? 0) + lstatSync(join(indexDir, name)).size;
    } catch {}
  }
  rmSync(path, { force: true });
  rmSync(join(indexDir, MANIFEST_FILE), { force: true });
  removeSegments(indexDir, segments);
  return { indexBytes, temps: sweepIndexTemps(indexDir) };
}

/**
 * Remove the segment files no reader needs: those of another base than the one the index is now (a
 * merge's, or a full save's, whose writer died before removing them). The caller holds the index
 * lock; a reader still replaying them finds the index changed under it and opens it again
 * (Store.open). Segments of this base the manifest does not name are left for the heal path to see.
 */
export function sweepStaleSegments(indexDir: string): void {
  const id = withIndexFile(indexDir, (f) => f.head.id);
  if (!id) return;
  const m = readManifest(indexDir);
  const current = m && !("damaged" in m) && m.baseId === id ? m : emptyManifest(id);
  removeSegments(indexDir, strayingSegments(indexDir, current).stale);
}
