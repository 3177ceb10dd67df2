/**
 * A broken index heals itself. The index is a cache of the markdown: whatever command meets an
 * index it cannot use (damaged, cut short, not an index, a directory, another format version)
 * rebuilds it from the markdown, under the index lock, and carries on with its answer; one whose
 * base and some segments are whole but others lost (segments.ts) keeps what is whole, reads again
 * the markdown files the lost ones touched, and writes a new base. Whether
 * a file can be used is decided by Store.open (checksums, sizes, version, the loaded state's
 * shape); what to do about it is decided here, once, for every command. Never prints.
 *
 * A rebuild costs no embedding: the vectors whose checksum holds are carried over from the old
 * file, and the chunks still without one are keyword-searchable at once and get their vectors
 * from the next index run (the watch process starts one itself), as when Ollama was down.
 * A command never waits minutes on a model to answer a search.
 */
import { realpathSync } from "node:fs";
import { isDirectory, isRegularFile } from "../core/fsutil.ts";
import type { Context } from "../core/context.ts";
import { projectPlaces, type ProjectPlaces } from "../core/places.ts";
import { isInside } from "../core/project.ts";
import type { IndexReport } from "./indexer.ts";
import { LockTimeoutError, withIndexLock } from "../core/lock.ts";
import { Store, type OpenResult } from "./store.ts";

export interface HealOptions {
  /** Markdown to (re)build from. Default: the memory folder, plus the files the old index listed elsewhere. */
  paths?: string[];
  /**
   * An index built with another embedding model: "read" it for keywords only, untouched
   * (default: search, stats, expand, the prompt hook, so `search -m other` destroys nothing),
   * or "rebuild" it for this model (the watch process, which indexes for it).
   */
  otherModel?: "read" | "rebuild";
  /** The caller holds the index lock already. */
  locked?: boolean;
  /** How long to wait for the index lock before a rebuild (LockTimeoutError past it). */
  lockTimeoutMs?: number;
  /** Build an index that does not exist yet from the markdown (default true). */
  buildMissing?: boolean;
  /** Claude Code's curated files to (re)build with, when the caller knows them (the watch process). */
  curated?: string[];
  /** Load for the lowest peak memory rather than the quickest load (Store.open's `lowPeak`: the watch process). */
  lowPeak?: boolean;
  /**
   * Open it without its vectors, for a search with embeddings turned off (Store.open's
   * `keywordsOnly`). A rebuild still opens the whole file, so no vector it could carry is lost.
   */
  keywordsOnly?: boolean;
  /**
   * For a command's one search: the vector block's CRC-32 checked by the search's scan rather than
   * at load (Store.open's `deferVectorCheck`). Only the first, read-only open: an open under the
   * index lock, for writing, checks it at load as before.
   */
  deferVectorCheck?: boolean;
}

export interface Healed {
  store: Store;
  /** The index could not be used and was rebuilt from the markdown; `missingVectors` chunks wait for the next index run. */
  rebuilt?: { reason: string; chunks: number; missingVectors: number };
  /** There was no index; one was built from the markdown. */
  built?: { chunks: number; missingVectors: number };
  /** There is no index and none was built (no markdown, or not asked to): `store` is empty. */
  nothingIndexed?: boolean;
  /** The index was built with this other embedding model: it is read for keywords only. */
  otherModel?: string;
  /**
   * The index named files outside this project's places (copied with the project, or committed
   * elsewhere): their chunks were taken out, and the project's own markdown indexed in their stead.
   */
  dropped?: { files: number; chunks: number; example: string };
  /** The index run behind `rebuilt`, `built` or `dropped`. */
  report?: IndexReport;
}

/**
 * The project's index, ready to use: loaded as it is when it can be; otherwise rebuilt (or
 * built, when there was none) from the markdown under the index lock, saved, and returned
 * with what happened so the command can say so in one line. Throws typed errors only
 * (LockTimeoutError, StorageError…), for what a rebuild cannot get past.
 */
export async function openOrRebuild(ctx: Context, opts: HealOptions = {}): Promise<Healed> {
  const { indexDir } = ctx.project;
  const model = ctx.config["embedding.model"];
  const places = projectPlaces(ctx.project, ctx.env);
  // A command's search reads the vectors it scores from the file (Store.open's lazy "search"); the
  // watch process keeps its own cold block (lowPeak).
  const open = (keywordsOnly = false, deferVectorCheck = false) =>
    Store.open(indexDir, model, { anyModel: opts.otherModel !== "rebuild", lowPeak: opts.lowPeak, keywordsOnly, ...(opts.lowPeak || keywordsOnly ? {} : { lazyVectors: "search" as const, deferVectorCheck }) });
  // `first` is the store written to when the caller holds the lock already: then checked at load.
  const first = open(opts.keywordsOnly === true, opts.deferVectorCheck === true && !opts.locked);
  if (usable(first)) {
    const strays = first.store.dropSources(places.allows);
    if (!strays.sources.length) return asIs(first);
    return dropStrays(ctx, opts, places, first, strays, open);
  }
  if (first.missing && opts.buildMissing === false) return { store: first.store, nothingIndexed: true };
  // Nothing to build from: said before the lock, whose folder would be the first thing a read
  // (search, stats, doctor in a project without memory) ever made there.
  if (first.missing && !opts.curated?.length && (opts.paths ?? markdownOf(ctx, places)).length === 0) return { store: first.store, nothingIndexed: true };

  const heal = async (): Promise<Healed> => {
    // Another process may have rebuilt it while we waited for the lock.
    const now = opts.locked && !opts.keywordsOnly ? first : open();
    if (usable(now)) {
      const strays = now.store.dropSources(places.allows);
      return strays.sources.length ? reindexAfterDrop(ctx, opts, places, now, strays) : asIs(now);
    }
    if (now.missing && opts.buildMissing === false) return { store: now.store, nothingIndexed: true };
    // Lost segments: the store holds the base and every whole segment; the files whose stat the lost
    // ones would have moved are read again, and the save writes a new base without them.
    const sources = now.segmentsLost ? now.store.sources() : now.sources;
    const req = { paths: opts.paths ?? markdownOf(ctx, places, sources), indexDir, config: ctx.config, embedder: null, places, ...(opts.curated ? { curated: opts.curated } : {}) };
    const { indexInto, scanFor } = await indexer();
    const scan = scanFor(req);
    if (now.missing && scan.files.length === 0) return { store: now.store, nothingIndexed: true };
    const built = await indexInto(req, now.store, scan); // and saves it
    const { store } = built;
    // Indexed without an embedder, but vectors are on unless configured off: say what is missing.
    const vectorsOn = ctx.config["embedding.provider"] !== "none";
    const missingVectors = vectorsOn ? store.size - store.vectorCount : 0;
    const reason = now.rebuilt ?? now.segmentsLost!;
    const report: IndexReport = { ...built.report, vectors: vectorsOn ? "on" : "off", missingVectors, rebuilt: reason };
    if (now.missing) return { store, built: { chunks: store.size, missingVectors }, report };
    return { store, rebuilt: { reason, chunks: store.size, missingVectors }, report };
  };
  return opts.locked ? heal() : withIndexLock(indexDir, heal, opts.lockTimeoutMs);
}

type Strays = ReturnType<Store["dropSources"]>;

/**
 * A usable index that named files outside the project: taken out of the file for good, under the
 * index lock, from a fresh open (another writer may have changed it since `first` was read), and
 * the project's markdown indexed in their stead (a copied project's index named the old place's
 * files for every note). When the lock cannot be had in time, this load serves `first` with them
 * taken out, and the next writer drops them from the file.
 */
async function dropStrays(ctx: Context, opts: HealOptions, places: ProjectPlaces, first: OpenResult, strays: Strays, open: (keywordsOnly?: boolean) => OpenResult): Promise<Healed> {
  const inMemory = (): Healed => ({ ...asIs(first), dropped: droppedOf(strays) });
  const run = async (): Promise<Healed> => {
    const now = opts.locked && !opts.keywordsOnly ? first : open();
    if (!usable(now)) return inMemory(); // damaged meanwhile: the next load rebuilds it
    const again = now === first ? strays : now.store.dropSources(places.allows);
    return again.sources.length ? reindexAfterDrop(ctx, opts, places, now, again) : asIs(now);
  };
  try {
    return await (opts.locked ? run() : withIndexLock(ctx.project.indexDir, run, opts.lockTimeoutMs));
  } catch (e) {
    if (e instanceof LockTimeoutError) return inMemory();
    throw e;
  }
}

/** The strays are out of `now.store` (the caller holds the lock): index the project's markdown into it, and save. */
async function reindexAfterDrop(ctx: Context, opts: HealOptions, places: ProjectPlaces, now: OpenResult, strays: Strays): Promise<Healed> {
  const req = { paths: opts.paths ?? markdownOf(ctx, places, now.store.sources()), indexDir: ctx.project.indexDir, config: ctx.config, embedder: null, places, ...(opts.curated ? { curated: opts.curated } : {}) };
  const { indexInto, scanFor } = await indexer();
  const scan = scanFor(req);
  const built = await indexInto(req, now.store, scan); // and saves it

  return { ...asIs({ ...now, store: built.store }), dropped: droppedOf(strays), report: built.report };
}

/**
 * The indexer (and the markdown chunker and parser it loads) only when an index is (re)built: a
 * search over a usable index never pays for loading them.
 */
function indexer(): Promise<typeof import("./indexer.ts")> {
  return import("./indexer.ts");
}

function droppedOf(s: Strays): NonNullable<Healed["dropped"]> {
  return { files: s.sources.length, chunks: s.chunks, example: s.sources.sort()[0]! };
}

function usable(r: OpenResult): boolean {
  return !r.missing && !r.rebuilt && !r.segmentsLost;
}

function asIs(r: OpenResult): Healed {
  return r.otherModel ? { store: r.store, otherModel: r.otherModel } : { store: r.store };
}

/**
 * What to rebuild from: the memory folder, and the markdown files the old index listed outside it
 * that are still there, in this project's places (folders indexed by hand), so a rebuild loses
 * nothing it can find. Never files elsewhere: an index copied along with a project lists the old
 * location's files, and memory must not leak across projects.
 */
function markdownOf(ctx: Context, places: ProjectPlaces, sources: string[] = []): string[] {
  const { memoryDir } = ctx.project;
  const out = isDirectory(memoryDir) ? [memoryDir] : [];
  // Sources are real paths (the scanner resolves symlinks): compare with real paths.
  const memory = real(memoryDir);
  for (const s of sources) if (places.allows(s) && !isInside(s, memory) && isRegularFile(s)) out.push(s);
  return out;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
