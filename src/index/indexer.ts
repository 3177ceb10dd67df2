import { statSync } from "node:fs";
import { anchorsIn } from "../core/anchor.ts";
import { dirname } from "node:path";
import { dataFiles } from "../core/project.ts";
import { isDirectory } from "../core/fsutil.ts";
import { chunkHash, chunkMarkdown, embeddingText } from "./chunker.ts";
import type { Config } from "../core/config.ts";
import type { ProjectPlaces } from "../core/places.ts";
import { EmbedderError, type OllamaEmbedder } from "./embedder.ts";
import { errCode, MemsearchError } from "../core/errors.ts";
import { oneLine } from "../core/text.ts";
import { readMarkdown, scanPaths, type ScanOptions, type SkipReason } from "./scanner.ts";
import { forgottenTurns, withoutForgotten, type ForgottenTurns } from "./forgotten.ts";
import { sweepIndexTemps, type FileRecord } from "./format.ts";
import { peekIndexFiles, sweepStaleSegments } from "./disk.ts";
import { SCHEMA_VERSION, Store } from "./store.ts";
import type { StoredChunk } from "./types.ts";

/** What embeds documents; null when embeddings are turned off. */
export type DocumentEmbedder = Pick<OllamaEmbedder, "embedDocuments" | "model" | "reportedDim">;

export interface IndexRequest {
  paths: string[];
  indexDir: string;
  config: Config;
  embedder: DocumentEmbedder | null;
  force?: boolean;
  /**
   * Save the index when done (default). The warm process keeps its store in memory and saves
   * on its own schedule: a save at 20k chunks costs seconds, too much for every turn.
   */
  persist?: boolean;
  /**
   * When the index may be merged into a new base after this run's segment (segments.ts): "due"
   * once past the merge threshold (`memsearch index`; the watch process merges on its own), "hard"
   * only past the hard bound (the default: `remember`, `forget`, `import`), "never" (the drainer, on
   * a hook's time).
   */
  merge?: "due" | "hard" | "never";
  /** Extra ignore rules given on the command line (after config values). */
  ignoreFiles?: string[];
  exclude?: string[];
  /**
   * Claude Code's curated files of the project (real paths, already vetted: regular files, inside
   * the project or its Claude Code memory folder). Given, it is the whole set: a curated file
   * indexed before and not listed now leaves the index. Absent, curated files are left as they are.
   */
  curated?: string[];
  /**
   * The project's places (core/places.ts): a file outside them is neither indexed nor kept, so an
   * index copied or committed from elsewhere loses what it named there. Absent: no such check
   * (tests of the indexer alone).
   */
  places?: ProjectPlaces;
}

export interface IndexReport {
  /** Chunks added or replaced in this run. */
  indexedChunks: number;
  removedChunks: number;
  totalChunks: number;
  totalFiles: number;
  /** Files read and chunked this run (changed or new). */
  indexedFiles: number;
  failedFiles: { path: string; error: string }[];
  /** Chunks embedded in this run, and chunks the index still holds without a vector. */
  embedded: number;
  missingVectors: number;
  vectors: "on" | "off";
  /**
   * Length of the vectors the index holds after the run; absent while it holds none. A run with
   * nothing to embed never asks Ollama, so a model that changed size shows only against this.
   */
  dimension?: number;
  /** One line on why vectors are off or incomplete (Ollama down, model missing…). */
  embedderWarning?: string;
  /** Why the existing index was thrown away and rebuilt, as the start of a sentence. */
  rebuilt?: string;
  /**
   * Files left out: named directly but not markdown, or not UTF-8 text (a binary file named
   * .md). Listed on every run while they are there; `named` when given as a path of their own.
   */
  skippedFiles: { path: string; reason: SkipReason; named: boolean }[];
  /**
   * Files indexed without what could not be text: `cleaned` sections lost control characters or
   * unreadable bytes, `dropped` ones were mostly such bytes and left out. Listed on every run
   * while they are there, as skipped files are.
   */
  cleanedFiles: { path: string; cleaned: number; dropped: number }[];
  /** Every path given was a file, and every one was skipped: nothing could be indexed. */
  everyPathSkipped?: boolean;
  /**
   * Notes the user forgot that are back in the markdown (a pull, a checkout), left out of the
   * index: listed on every run while they are there, as skipped files are.
   */
  forgottenBack?: { path: string; turns: string[] }[];
}

const GC_EVERY_CHUNKS = 2_500;

interface PendingFile {
  path: string;
  mtimeMs: number;
  size: number;
  damaged?: FileRecord["damaged"];
  leftOut?: FileRecord["leftOut"];
  chunks: StoredChunk[];
  curated: boolean;
}

/**
 * Bring the index in line with the markdown under `paths`. The markdown is never written.
 * Unchanged files cost a stat; unchanged chunks keep their vectors; a chunk whose content
 * was embedded before (moved, renamed, re-numbered) reuses the cached vector.
 */
export async function indexPaths(req: IndexRequest): Promise<IndexReport> {
  // Temp files of writers killed mid-save; a no-op run never saves, so the sweep is here too.
  if (req.persist !== false) {
    sweepIndexTemps(req.indexDir);
    sweepStaleSegments(req.indexDir);
  }
  if (!req.force) {
    const scan = scanFor(req);
    const unchanged = noChangeReport(req, scan, req.embedder?.model ?? req.config["embedding.model"]);
    if (unchanged) return unchanged;
    return (await indexInto(req, undefined, scan)).report;
  }
  return (await indexInto(req)).report;
}

export type Scan = ReturnType<typeof scanPaths> & {
  /** The curated files of this run (a subset of `files`); undefined when the request named none. */
  curated?: Set<string>;
};

/** What a scan leaves out: the same for a whole scan and for the one file a watcher saw change. */
export function scanOptionsFor(req: Pick<IndexRequest, "indexDir" | "config" | "ignoreFiles" | "exclude">): ScanOptions {
  return {
    noLinksIn: [dataFiles(dirname(req.indexDir)).memoryDir],
    ignoreFiles: dedupe([...req.config["indexing.ignore_files"], ...(req.ignoreFiles ?? [])]),
    exclude: dedupe([...req.config["indexing.exclude"], ...(req.exclude ?? [])]),
  };
}

export function scanFor(req: Pick<IndexRequest, "paths" | "indexDir" | "config" | "ignoreFiles" | "exclude" | "curated" | "places">): Scan {
  const scan: Scan = scanPaths(req.paths, scanOptionsFor(req));
  if (req.places) scan.files = scan.files.filter((f) => req.places!.allows(f.path));
  if (!req.curated) return scan;
  scan.curated = new Set();
  const listed = new Set(scan.files.map((f) => f.path));
  for (const path of req.curated) {
    let st;
    try {
      st = statSync(path);
    } catch {
      continue; // gone since it was found: it leaves the index with the stale ones
    }
    if (!st.isFile() || (req.places && !req.places.allows(path))) continue;
    scan.curated.add(path);
    if (!listed.has(path)) scan.files.push({ path, root: path, mtimeMs: st.mtimeMs, size: st.size });
  }
  scan.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return scan;
}

/** A file whose record says another kind than this run gives it (curated or note) is read again. */
function kindChanged(known: FileRecord, path: string, scan: Scan): boolean {
  return scan.curated !== undefined && (known.curated === true) !== scan.curated.has(path);
}

/**
 * Index into `store` when given (the warm process keeps its store in memory), else into the
 * index on disk. Returns the store so the caller can keep using it.
 */
export async function indexInto(req: IndexRequest, given?: Store, scanned?: Scan): Promise<{ report: IndexReport; store: Store }> {
  const { config } = req;
  const model = req.embedder?.model ?? config["embedding.model"];
  const scan = scanned ?? scanFor(req);
  // A writer reads no vector block: the rows it needs (the embedding cache) are read one at a time.
  let { store, rebuilt, segmentsLost } = req.force
    ? { store: Store.empty(req.indexDir, model), rebuilt: undefined as string | undefined, segmentsLost: undefined as string | undefined }
    : given && given.meta.model === model
      ? { store: given, rebuilt: undefined as string | undefined, segmentsLost: undefined as string | undefined }
      : Store.open(req.indexDir, model, { lazyVectors: "write" });
  rebuilt ??= segmentsLost;

  const report: IndexReport = { ...emptyReport(scan.files.length, req.embedder !== null), rebuilt };
  const forgotten = forgottenTurns(req.indexDir);
  if (req.places) report.removedChunks += store.dropSources(req.places.allows).chunks;
  for (const source of staleSources(store.sources(), scan, store.meta.files)) report.removedChunks += store.removeFile(source);

  const pending: PendingFile[] = [];
  for (const f of scan.files) {
    const known = store.meta.files[f.path];
    if (isCurrent(known, f, forgotten) && !kindChanged(known!, f.path, scan)) continue;
    const curated = scan.curated?.has(f.path) ?? store.isCurated(f.path);
    try {
      const md = readMarkdown(f.path);
      if (md === undefined) {
        report.removedChunks += store.skipFile(f.path, { ...f, curated }, "binary");
        continue;
      }
      // A forgotten note brought back (a pull, a checkout) stays out; a note's section, never a curated file's.
      const kept = curated ? { text: md.text, turns: [] as string[] } : withoutForgotten(md.text, forgotten);
      const leftOut = kept.turns.length ? leftOutOf(md.text, kept.turns) : undefined;
      const chunks = chunkMarkdown(kept.text, f.path, {
        maxChunkSize: config["chunking.max_chunk_size"],
        overlapLines: config["chunking.overlap_lines"],
      }).map((c) => ({ ...c, chunkHash: chunkHash(c, model) }));
      const damaged = md.cleaned || md.dropped ? { cleaned: md.cleaned, dropped: md.dropped } : undefined;
      pending.push({ path: f.path, mtimeMs: f.mtimeMs, size: f.size, damaged, leftOut, chunks, curated });
    } catch (e) {
      report.failedFiles.push({ path: f.path, error: errCode(e) ?? oneLine(e) });
    }
  }
  // Work out which contents need a vector: new chunks, plus old ones stored while Ollama was down.
  const fresh = new Map<string, Float32Array>();
  const vectorOf = (h: string) => fresh.get(h) ?? store.vectorForContent(h);
  const needed = new Map<string, string>(); // contentHash → text to embed
  if (req.embedder) {
    for (const p of pending) for (const c of p.chunks) if (!vectorOf(c.contentHash)) needed.set(c.contentHash, embeddingText(c.content));
    for (const c of store.chunksMissingVectors()) if (!vectorOf(c.contentHash)) needed.set(c.contentHash, embeddingText(c.content));
  }

  if (req.embedder && needed.size > 0) {
    const result = await embedAll(req.embedder, needed, store.dim);
    if (result.dimensionChange) {
      // Same model name, other vector size (re-pulled or replaced model): never mix, rebuild.
      rebuilt = `Ollama now returns ${result.dimensionChange}-d vectors for '${model}' but the index held ${store.dim}-d ones`;
      const again = await indexInto({ ...req, force: true });
      return { report: { ...again.report, rebuilt }, store: again.store };
    }
    if (result.vectors.size > 0 && store.dim === null) store.setDimension(result.dim!, result.vectors);
    for (const [h, v] of result.vectors) fresh.set(h, v);
    report.embedded = result.vectors.size;
    if (result.error) report.embedderWarning = result.error.message;
  }
  let sinceGc = 0;
  for (const p of pending) {
    const { added, removed } = store.replaceFile(p.path, p, p.chunks, vectorOf);
    report.indexedChunks += added;
    report.removedChunks += removed;
    report.indexedFiles++;
    // Orama's inserts leave garbage faster than the collector returns it.
    sinceGc += added;
    if (sinceGc >= GC_EVERY_CHUNKS) {
      Bun.gc(true);
      sinceGc = 0;
    }
  }
  // Old chunks of unchanged files that just got their vector.
  if (report.embedded > 0) {
    for (const c of store.chunksMissingVectors()) {
      const v = fresh.get(c.contentHash);
      const rec = store.meta.files[c.source];
      if (v && rec) store.replaceFile(c.source, rec, chunksOf(store, rec.chunks), vectorOf);
    }
  }
  // Unchanged files whose stat moved (touched, copied back) only update their stat.
  for (const f of scan.files) store.touchFile(f.path, f);

  report.totalChunks = store.size;
  report.missingVectors = req.embedder ? store.missingVectorCount : 0;
  if (store.dim !== null) report.dimension = store.dim;
  Object.assign(report, skipsOf(scan, store.meta.files));
  if (store.isDirty && req.persist !== false) {
    // The chunk texts and vectors are in the store now; let the copies go before the save,
    // the moment of peak memory (with the collections above and a save in sections, a
    // 20k-chunk build went from 600 to about 465 MiB).
    pending.length = 0;
    needed.clear();
    fresh.clear();
    if (report.indexedChunks >= GC_EVERY_CHUNKS) Bun.gc(true);
    store.save({ merge: req.merge !== "never" && store.mergeDue(req.merge ?? "hard") });
  }
  return { report, store };
}

/**
 * The no-op re-index must cost a stat per file, not a load of the whole index: read the
 * index header and file list and compare, and check the file's checksums (a run that says
 * "nothing to do" must not vouch for a damaged index). Returns undefined when anything needs doing.
 */
function noChangeReport(req: IndexRequest, scan: Scan, model: string): IndexReport | undefined {
  // Compared first, checked after: a run with something to do must not read the whole index to learn it.
  const unverified = peekIndexFiles(req.indexDir);
  if (!unverified || !unchanged(req, scan, model, unverified)) return undefined;
  const head = peekIndexFiles(req.indexDir, { verify: true });
  if (!head || !head.loadable || !unchanged(req, scan, model, head)) return undefined;
  return { ...emptyReport(scan.files.length, req.embedder !== null), totalChunks: head.chunks, ...(head.dim !== null ? { dimension: head.dim } : {}), ...skipsOf(scan, head.fileRecords) };
}

/** Whether the index (its figures and file records) holds the markdown of `scan` as it is. */
function unchanged(req: IndexRequest, scan: Scan, model: string, head: NonNullable<ReturnType<typeof peekIndexFiles>>): boolean {
  if (head.model !== model || head.schemaVersion !== SCHEMA_VERSION) return false;
  if (req.embedder && head.vectors < head.chunks) return false;
  const forgotten = forgottenTurns(req.indexDir);
  for (const f of scan.files) {
    const known = head.fileRecords[f.path];
    if (!isCurrent(known, f, forgotten) || kindChanged(known!, f.path, scan)) return false;
  }
  if (staleSources(Object.keys(head.fileRecords), scan, head.fileRecords).length) return false;
  // A file named outside the project's places is taken out by a full run.
  return !req.places || Object.keys(head.fileRecords).every(req.places.allows);
}

/**
 * Whether the index holds a file as it is on disk. A file skipped as "not-text" was skipped by an
 * older version for a single NUL or bad byte: it is read again, and mostly indexed now. A file
 * whose forgotten sections were left out is read again once one of them is forgotten no more
 * (`memsearch forget --undo`).
 */
function isCurrent(known: FileRecord | undefined, f: { mtimeMs: number; size: number }, forgotten: ForgottenTurns): boolean {
  if (known === undefined || known.mtimeMs !== f.mtimeMs || known.size !== f.size || known.skipped === "not-text") return false;
  return !Array.isArray(known.leftOut) || known.leftOut.every((t) => typeof t?.turn === "string" && typeof t.session === "string" && forgotten(t.turn, t.session));
}

/** The session and turn of each section left out, from the anchors that named them. */
function leftOutOf(text: string, turns: string[]): FileRecord["leftOut"] {
  const wanted = new Set(turns);
  const out = new Map<string, { session: string; turn: string }>();
  for (const a of anchorsIn(text)) if (wanted.has(a.turn)) out.set(`${a.session}\t${a.turn}`, { session: a.session, turn: a.turn });
  return [...out.values()];
}

/** The files of this scan left out of the index or cleaned, and whether every path given was left out. */
function skipsOf(scan: ReturnType<typeof scanPaths>, records: Record<string, FileRecord>): Pick<IndexReport, "skippedFiles" | "cleanedFiles" | "everyPathSkipped" | "forgottenBack"> {
  const skippedFiles: IndexReport["skippedFiles"] = scan.notMarkdown.map((path) => ({ path, reason: "not-markdown" as const, named: true }));
  const cleanedFiles: IndexReport["cleanedFiles"] = [];
  const forgottenBack: NonNullable<IndexReport["forgottenBack"]> = [];
  for (const f of scan.files) {
    const rec = records[f.path];
    if (rec?.skipped) skippedFiles.push({ path: f.path, reason: "not-text", named: f.root === f.path });
    if (rec?.damaged) cleanedFiles.push({ path: f.path, ...rec.damaged });
    if (Array.isArray(rec?.leftOut) && rec.leftOut.length) forgottenBack.push({ path: f.path, turns: rec.leftOut.map((t) => String(t?.turn)) });
  }
  const named = new Set(skippedFiles.filter((s) => s.named).map((s) => s.path));
  return { skippedFiles, cleanedFiles, everyPathSkipped: scan.roots.length > 0 && scan.roots.every((r) => named.has(r)), ...(forgottenBack.length ? { forgottenBack } : {}) };
}

function emptyReport(totalFiles: number, vectors: boolean): IndexReport {
  return { indexedChunks: 0, removedChunks: 0, totalChunks: 0, totalFiles, indexedFiles: 0, failedFiles: [], skippedFiles: [], cleanedFiles: [], embedded: 0, missingVectors: 0, vectors: vectors ? "on" : "off" };
}

/**
 * Indexed files gone from a scanned directory root, and curated files no longer curated (deleted,
 * or the memory folder moved) when this run lists the curated set; explicit file arguments never prune.
 */
function staleSources(sources: string[], scan: Scan, records: Record<string, FileRecord>): string[] {
  const seen = new Set(scan.files.map((f) => f.path));
  const dirRoots = scan.roots.filter((r) => isDirectory(r));
  return sources.filter((s) => !seen.has(s) && (dirRoots.some((r) => isUnder(s, r)) || (scan.curated !== undefined && records[s]?.curated === true)));
}

function chunksOf(store: Store, ids: string[]): StoredChunk[] {
  return ids.map((id) => store.getChunk(id)).filter((c): c is StoredChunk => c !== undefined);
}

interface EmbedResult {
  vectors: Map<string, Float32Array>;
  dim?: number;
  /** Set when Ollama answers consistently with another dimension than the index holds. */
  dimensionChange?: number;
  error?: EmbedderError;
}

/**
 * Embed in batches. The first failure that means "Ollama is not usable now" (down, model
 * missing, timeout, HTTP error) stops embedding for this run: what was embedded is kept,
 * the rest stays BM25-only and is filled in by a later run.
 */
async function embedAll(embedder: DocumentEmbedder, needed: Map<string, string>, storeDim: number | null): Promise<EmbedResult> {
  const hashes = [...needed.keys()];
  const out: EmbedResult = { vectors: new Map() };
  const step = 256;
  for (let i = 0; i < hashes.length; i += step) {
    const part = hashes.slice(i, i + step);
    let vecs: Float32Array[];
    try {
      vecs = await embedder.embedDocuments(part.map((h) => needed.get(h)!));
    } catch (e) {
      if (e instanceof EmbedderError) {
        out.error = e;
        return out;
      }
      throw e;
    }
    for (let j = 0; j < part.length; j++) {
      const v = vecs[j]!;
      if (out.dim === undefined) {
        out.dim = v.length;
        if (storeDim !== null && storeDim !== v.length) {
          // A real model change shows in the model's metadata too; a server that contradicts
          // its own metadata is broken, and its vectors are not let in.
          const reported = await embedder.reportedDim();
          if (reported !== undefined && reported !== v.length) {
            return { vectors: new Map(), error: new EmbedderError("dimension", `Ollama returned ${v.length}-d vectors but '${embedder.model}' reports ${reported} dimensions and the index holds ${storeDim}-d ones; vectors left out (check the model with 'ollama show ${embedder.model}')`) };
          }
          return { vectors: new Map(), dimensionChange: v.length };
        }
      } else if (v.length !== out.dim) {
        throw new MemsearchError(`Ollama returned vectors of different sizes (${out.dim} and ${v.length}) for one model; index left unchanged`);
      }
      out.vectors.set(part[j]!, v);
    }
  }
  return out;
}

function dedupe(xs: string[]): string[] {
  return [...new Set(xs)];
}


/** Path-boundary containment: `/a/docs2/x.md` is not under `/a/docs`. */
function isUnder(path: string, root: string): boolean {
  const r = root.endsWith("/") ? root : root + "/";
  return path === root || path.startsWith(r);
}
