import type { Context } from "../core/context.ts";
import { MemsearchError, VectorsDamagedError } from "../core/errors.ts";
import { projectPlaces } from "../core/places.ts";
import type { Healed } from "../index/heal.ts";
import type { IndexReport } from "../index/indexer.ts";
import type { IndexSummary } from "../index/format.ts";
import type { QueryEmbedder, SearchResponse } from "../index/search.ts";
import type { Store } from "../index/store.ts";
import type { StoredChunk } from "../index/types.ts";
import { askWatch } from "./client.ts";
import { WATCH_TIMEOUTS } from "./protocol.ts";

/**
 * What a reader asks of a project's notes index, whoever holds it: the watch process over its
 * socket (`WarmEngine`), or this process with the index loaded (`LocalEngine`). The watch process
 * serves its socket through a LocalEngine of its own, so a search or a chunk is answered by the
 * same code whichever side holds the index. Which engine a reader uses is the gateway's choice.
 */

/** What opening the index had to do first, from whichever process opened it. */
export type Heal = Pick<Healed, "rebuilt" | "built" | "otherModel" | "dropped">;

export interface NotesQuery {
  query: string;
  topK: number;
  sourcePrefix?: string;
  /** The prompt gate's cosine background too (SearchRequest.background). */
  background?: boolean;
}

/** The watch process gave no usable answer (`why`, in a few words); the gateway decides what then. */
export interface Unanswered {
  unanswered: string;
}

export interface NotesEngine {
  search(q: NotesQuery): Promise<{ response: SearchResponse; heal: Heal } | "nothing-indexed" | Unanswered>;
  chunk(hash: string): Promise<{ chunk: StoredChunk; heal: Heal } | Unanswered>;
  /** Bring the index up to date with the markdown: the report when it ran here, "queued" when handed to the watch process. */
  refresh(): Promise<IndexReport | "queued" | Unanswered>;
  stats(): Promise<{ chunks: number; vectors: number; lastError?: string } | Unanswered>;
}

/** An index ready to use and what opening it had to repair (`nothingIndexed`: no index and no markdown; `store` is empty). */
export interface Loaded {
  store: Store;
  heal: Heal;
  nothingIndexed?: boolean;
}

export function healOf(h: Healed): Heal {
  return {
    ...(h.rebuilt ? { rebuilt: h.rebuilt } : {}),
    ...(h.built ? { built: h.built } : {}),
    ...(h.otherModel ? { otherModel: h.otherModel } : {}),
    ...(h.dropped ? { dropped: h.dropped } : {}),
  };
}

/**
 * The index in this process. `load` opens it (or returns the copy its owner holds); `refresh`
 * re-indexes the way its owner does (a CLI under the index lock, the watch process in its queue).
 * Orama and the ollama client are imported only when a search needs them, so a hook answered by
 * the watch process never pays for them.
 */
export class LocalEngine implements NotesEngine {
  constructor(
    private ctx: Context,
    /**
     * `load(checked)`: with `checked`, the vector block is checked at load, whatever the source's
     * options defer. `loadsFromFile`: a load reads the index file (not a copy held in memory), so
     * the query is sent to be embedded before it starts; `peeked`: the file's head as the caller
     * read it a moment ago (the prompt hook), not read again to decide that.
     */
    private source: { load(checked?: boolean): Promise<Loaded>; refresh(): Promise<IndexReport | "queued" | Unanswered>; loadsFromFile?: boolean; peeked?: { head: IndexSummary | undefined } },
  ) {}

  async search(q: NotesQuery): Promise<{ response: SearchResponse; heal: Heal } | "nothing-indexed"> {
    const [{ searchChunks }, { embedderFor }] = await Promise.all([import("../index/search.ts"), import("../index/embedder.ts")]);
    const queryEmbedder = embedderFor(this.ctx.config, "query");
    const embedder = queryEmbedder && this.source.loadsFromFile ? await this.earlyEmbedding(queryEmbedder, q.query.trim()) : queryEmbedder;
    const once = async (loaded: Loaded) => {
      // An index of another model is read for its keywords only: a query vector would not compare.
      return { response: await searchChunks({ ...q, store: loaded.store, config: this.ctx.config, embedder: loaded.heal.otherModel ? null : embedder }), heal: loaded.heal };
    };
    try {
      const loaded = await this.source.load();
      if (loaded.nothingIndexed) return "nothing-indexed";
      return await once(loaded);
    } catch (e) {
      // A search that checks the vector block when it first reads it (Store.open's
      // deferVectorCheck: in its scan, or as a load that takes out chunks keeps their vectors)
      // found it damaged and ranked nothing: opened again, checked at load, the damage is found
      // there and healed as any other, with its notice.
      if (!(e instanceof VectorsDamagedError)) throw e;
      const again = await this.source.load(true);
      if (again.nothingIndexed) return "nothing-indexed";
      return once(again);
    }
  }

  /**
   * The query's embedding (an HTTP round trip and the model's work, tens of milliseconds on a CPU)
   * sent now, to run while the index file loads, when the file's head says it holds vectors of this
   * model (else the search would not ask, and a request left in flight would hold the process open
   * until it ends); the embedder returned answers that query with it.
   */
  private async earlyEmbedding(embedder: QueryEmbedder & { model: string }, query: string): Promise<QueryEmbedder> {
    const head = this.source.peeked ? this.source.peeked.head : (await import("../index/format.ts")).peekIndex(this.ctx.project.indexDir);
    if (!query || !head || head.vectors === 0 || head.model !== embedder.model) return embedder;
    const early = embedder.embedQuery(query);
    // Awaited by the search, or by nobody when the load finds the index unusable: never unhandled.
    early.catch(() => {});
    return { embedQuery: (text, timeoutMs) => (text === query ? early : embedder.embedQuery(text, timeoutMs)) };
  }

  async chunk(hash: string): Promise<{ chunk: StoredChunk; heal: Heal }> {
    const [loaded, { resolveChunk }] = await Promise.all([this.source.load(), import("../index/expand.ts")]);
    // The file list came from the index file: a chunk is opened only from this project's places.
    return { chunk: resolveChunk(loaded.store, hash, projectPlaces(this.ctx.project, this.ctx.env).allows), heal: loaded.heal };
  }

  refresh(): Promise<IndexReport | "queued" | Unanswered> {
    return this.source.refresh();
  }

  async stats(): Promise<{ chunks: number; vectors: number }> {
    const { store } = await this.source.load();
    return { chunks: store.size, vectors: store.vectorCount };
  }
}

/**
 * The project's watch process, over its socket. A typed error it reports is raised here as the
 * same error, exit code intact, except for a search, whose failure the prompt hook words itself.
 */
export class WarmEngine implements NotesEngine {
  constructor(
    private dataDir: string,
    private searchTimeoutMs: number = WATCH_TIMEOUTS.search,
  ) {}

  async search(q: NotesQuery): Promise<{ response: SearchResponse; heal: Heal } | Unanswered> {
    const r = await askWatch(this.dataDir, { op: "search", ...q }, this.searchTimeoutMs);
    if (!r) return { unanswered: "the watch process gave no usable answer in time" };
    if (!r.ok) return { unanswered: `the watch process failed: ${r.error}` };
    return { response: { results: r.results, mode: r.mode, ...(r.warning ? { warning: r.warning } : {}), ...(r.background ? { background: r.background } : {}) }, heal: r.rebuilt ? { rebuilt: r.rebuilt } : {} };
  }

  async chunk(hash: string): Promise<{ chunk: StoredChunk; heal: Heal } | Unanswered> {
    const r = await askWatch(this.dataDir, { op: "chunk", hash }, WATCH_TIMEOUTS.chunk);
    if (!r) return { unanswered: "no answer in time" };
    if (!r.ok) throw new MemsearchError(r.error, r.exitCode ?? 1);
    return { chunk: r.chunk, heal: r.rebuilt ? { rebuilt: r.rebuilt } : {} };
  }

  async refresh(): Promise<"queued" | Unanswered> {
    const r = await askWatch(this.dataDir, { op: "index" }, WATCH_TIMEOUTS.index);
    return r?.ok ? "queued" : { unanswered: r ? r.error : "no answer in time" };
  }

  async stats(): Promise<{ chunks: number; vectors: number; lastError?: string } | Unanswered> {
    const r = await askWatch(this.dataDir, { op: "ping" }, WATCH_TIMEOUTS.ping);
    if (!r) return { unanswered: "no answer in time" };
    if (!r.ok) return { unanswered: r.error };
    return { chunks: r.chunks, vectors: r.vectors, ...(r.lastError ? { lastError: r.lastError } : {}) };
  }
}

export const unanswered = (r: object): r is Unanswered => "unanswered" in r;
