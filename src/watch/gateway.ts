import type { Context } from "../core/context.ts";
import { indexStamp } from "../core/project.ts";
import { normalJit } from "../core/jit.ts";
import { projectPlaces } from "../core/places.ts";
import type { IndexSummary } from "../index/format.ts";
import type { Healed, HealOptions } from "../index/heal.ts";
import type { IndexReport } from "../index/indexer.ts";
import type { SearchResponse } from "../index/search.ts";
import type { StoredChunk } from "../index/types.ts";
import { askWatch, readWatchInfo, type WatchInfo } from "./client.ts";
import { healOf, LocalEngine, unanswered, WarmEngine, type Heal, type Loaded, type NotesQuery } from "./engine.ts";
import { WATCH_TIMEOUTS } from "./protocol.ts";

/**
 * The one way to the project's index for everything that reads it (search, recall, expand,
 * stats, the hooks, doctor) or asks for it to change (re-index, stop). Each call decides here,
 * and only here, whether the watch process answers (its index is in memory and freshest) or the
 * index file is loaded in this process; what loading it had to repair travels back as a `heal`
 * for the command to put in words.
 *
 * The modules behind a cold load (Orama, the ollama client) are imported only on that path: a
 * hook answered by the watch process never pays for them.
 */

export type { Heal, NotesQuery };

export type Searched =
  | { kind: "results"; response: SearchResponse; heal: Heal; from: "watch" | "here" }
  /** No index, and no markdown to build one from. */
  | { kind: "nothing-indexed" }
  /** The reader may not load the index itself, and the watch process did not answer. */
  | { kind: "unanswered"; why: string };

/**
 * Who is reading, and so what it can afford. `cli`: a command; it waits for the watch process,
 * then loads the index itself. `prompt`: the UserPromptSubmit hook; it never waits on a lock or
 * loads a large index inside its budget, and never loads when a watch process exists but is slow.
 */
export type Reader = "cli" | "prompt";

/** A cold load of a larger index does not fit in the prompt hook's budget. */
const PROMPT_COLD_INDEX_LIMIT = 12 * 1024 * 1024;
const PROMPT_LOCK_TIMEOUT_MS = 1_500;

/** Whether a watch process of this project is running (its PID file names a live process). */
export function watchRunning(dataDir: string): WatchInfo | undefined {
  return readWatchInfo(dataDir);
}

/** What the caller read of the project a moment ago (the prompt hook), so that it is not read again. */
export interface AlreadyRead {
  watchRunning: boolean;
  /** The index file's head and manifest (peekIndex), undefined when there is none. */
  head: IndexSummary | undefined;
}

/**
 * Search the notes. `useWatch: false` skips the watch process (it runs with the project's own
 * settings, so a search with other embedding flags must load the index here).
 */
export async function searchIndex(ctx: Context, q: NotesQuery, opts: { reader?: Reader; useWatch?: boolean; cache?: LoadedIndexes; read?: AlreadyRead } = {}): Promise<Searched> {
  const reader = opts.reader ?? "cli";
  const { dataDir } = ctx.project;
  const watch = opts.useWatch !== false && (opts.read ? opts.read.watchRunning : readWatchInfo(dataDir) !== undefined);
  if (watch) {
    const r = await new WarmEngine(dataDir, reader === "prompt" ? WATCH_TIMEOUTS.promptSearch : WATCH_TIMEOUTS.search).search(q);
    if (!unanswered(r)) return { kind: "results", ...r, from: "watch" };
    if (reader === "prompt") return { kind: "unanswered", why: r.unanswered };
  }
  // The index file's reader is loaded only here, past the watch process: a warm search never needs it.
  if (reader === "prompt" && ((opts.read ? opts.read.head : (await import("../index/format.ts")).peekIndex(ctx.project.indexDir))?.bytes ?? 0) > PROMPT_COLD_INDEX_LIMIT) {
    return { kind: "unanswered", why: "no watch process, and the index is too large to load inside the hook's budget" };
  }
  // With embeddings off, this one search needs no vector: most of the file is left unread. Not for
  // a loaded index a caller keeps (the hub's), which may serve more than searches.
  const keywordsOnly = !opts.cache && ctx.config["embedding.provider"] === "none";
  // This one search checks the vector block in the scan that scores it (read once, not twice); a
  // loaded index a caller keeps is checked at load.
  const deferVectorCheck = !opts.cache && !keywordsOnly;
  const found = await localEngine(ctx, opts.cache, { ...(reader === "prompt" ? { lockTimeoutMs: PROMPT_LOCK_TIMEOUT_MS } : {}), ...(keywordsOnly ? { keywordsOnly } : {}), ...(deferVectorCheck ? { deferVectorCheck } : {}) }, "hard", opts.read && { head: opts.read.head }).search(q);
  return found === "nothing-indexed" ? { kind: "nothing-indexed" } : { kind: "results", ...found, from: "here" };
}

/** One chunk by its hash (or a unique prefix of it). Errors (not found, ambiguous) are the same typed errors either way. */
export async function readChunk(ctx: Context, hash: string, opts: { cache?: LoadedIndexes } = {}): Promise<{ chunk: StoredChunk; heal: Heal }> {
  const { dataDir } = ctx.project;
  if (readWatchInfo(dataDir)) {
    const r = await new WarmEngine(dataDir).chunk(hash);
    if (!unanswered(r)) return r;
  }
  return localEngine(ctx, opts.cache).chunk(hash);
}

/**
 * The index's head (counts, model, size), from the file: no Orama. An index that cannot be used
 * is rebuilt from the markdown first, so stats never reports a broken index as empty.
 */
export async function indexStats(ctx: Context): Promise<{ head: IndexSummary | undefined; heal: Heal }> {
  const [{ checkIndex }, { peekIndex }] = await Promise.all([import("../index/disk.ts"), import("../index/format.ts")]);
  const checked = checkIndex(ctx.project.indexDir);
  if (checked.state === "ok") return { head: checked.file, heal: {} };
  if (checked.state === "missing") return { head: undefined, heal: {} };
  const { openOrRebuild } = await import("../index/heal.ts");
  const heal = healOf(await openOrRebuild(ctx, { buildMissing: false }));
  return { head: peekIndex(ctx.project.indexDir), heal };
}

/**
 * Bring the index up to date after writing to the memory folder: the watch process does it
 * when one runs (it holds the index already), else this process does, under the index lock,
 * appending a segment; `merge`: whether this process may merge the segments into a new base past
 * the hard bound (a command: "hard"), or never (the drainer, on a hook's time).
 * Returns the report when indexed here, undefined when handed to the watch process.
 */
export async function refreshIndex(ctx: Context, merge: "hard" | "never" = "hard"): Promise<IndexReport | undefined> {
  if (readWatchInfo(ctx.project.dataDir) && (await new WarmEngine(ctx.project.dataDir).refresh()) === "queued") return undefined;
  const report = await localEngine(ctx, undefined, {}, merge).refresh();
  return typeof report === "object" && !unanswered(report) ? report : undefined;
}

export type WatchState =
  | { running: false }
  | { running: true; pid: number; answered: false }
  | { running: true; pid: number; answered: true; chunks: number; vectors: number; lastError?: string };

/** Whether a watch process runs, and what it serves. */
export async function pingWatch(dataDir: string): Promise<WatchState> {
  const info = readWatchInfo(dataDir);
  if (!info) return { running: false };
  const r = await new WarmEngine(dataDir).stats();
  if (unanswered(r)) return { running: true, pid: info.pid, answered: false };
  return { running: true, pid: info.pid, answered: true, ...r };
}

/**
 * Stop the project's watch process. One that acknowledges saves its index and exits on its own
 * (a large index takes longer than a SessionEnd budget); one that does not answer is killed.
 */
export async function stopWatch(dataDir: string): Promise<{ stopped: "none" | "asked" | "killed"; pid?: number }> {
  const info = readWatchInfo(dataDir);
  if (!info) return { stopped: "none" };
  const ack = await askWatch(dataDir, { op: "stop" }, WATCH_TIMEOUTS.stop);
  if (ack?.ok) return { stopped: "asked", pid: info.pid };
  try {
    process.kill(info.pid, "SIGKILL");
  } catch {}
  return { stopped: "killed", pid: info.pid };
}

/**
 * Indexes kept in memory between calls, for a long-lived reader that has no watch process to ask
 * (the Memory Hub): one is loaded again only when its file changed, and the least recently used
 * goes when more than `max` are held.
 */
export class LoadedIndexes {
  private held = new Map<string, { stamp: string; healed: Healed }>();
  constructor(private max = 4) {}

  /** An index built in this process and never written (a read in a project with no data folder): served as if loaded. */
  hold(ctx: Context, store: Healed["store"]): this {
    this.held.set(ctx.project.dataDir, { stamp: indexStamp(ctx.project.indexDir), healed: { store } });
    return this;
  }

  async open(ctx: Context, opts: HealOptions = {}): Promise<Healed> {
    const key = ctx.project.dataDir;
    const hit = this.held.get(key);
    this.held.delete(key);
    if (hit && hit.stamp === indexStamp(ctx.project.indexDir)) {
      this.held.set(key, hit);
      // What loading it repaired was said when it was loaded.
      return { store: hit.healed.store, ...(hit.healed.otherModel ? { otherModel: hit.healed.otherModel } : {}) };
    }
    const { openOrRebuild } = await import("../index/heal.ts");
    const healed = await openOrRebuild(ctx, opts);
    if (healed.nothingIndexed) return healed;
    this.held.set(key, { stamp: indexStamp(ctx.project.indexDir), healed });
    while (this.held.size > this.max) this.held.delete(this.held.keys().next().value!);
    return healed;
  }
}


/**
 * The index loaded in this process (through `cache` when the caller keeps indexes between calls),
 * re-indexed under the index lock.
 */
function localEngine(ctx: Context, cache?: LoadedIndexes, opts: HealOptions = {}, merge: "hard" | "never" = "hard", peeked?: { head: IndexSummary | undefined }): LocalEngine {
  return new LocalEngine(ctx, {
    loadsFromFile: true,
    ...(peeked ? { peeked } : {}),
    load: async (checked = false): Promise<Loaded> => {
      normalJit();
      const { deferVectorCheck: _, ...atLoad } = opts;
      const how = checked ? atLoad : opts;
      const healed = cache ? await cache.open(ctx, how) : await (await import("../index/heal.ts")).openOrRebuild(ctx, how);
      return { store: healed.store, heal: healOf(healed), ...(healed.nothingIndexed ? { nothingIndexed: true } : {}) };
    },
    refresh: async () => {
      normalJit();
      const { project, config } = ctx;
      const [{ embedderFor }, { indexPaths }, { withIndexLock }] = await Promise.all([import("../index/embedder.ts"), import("../index/indexer.ts"), import("../core/lock.ts")]);
      return withIndexLock(project.indexDir, () => indexPaths({ paths: [project.memoryDir], indexDir: project.indexDir, config, embedder: embedderFor(config), places: projectPlaces(project, ctx.env), merge }));
    },
  });
}
