import { existsSync, rmSync, unlinkSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { createServer, type Server, type Socket } from "node:net";
import pkg from "../../package.json" with { type: "json" };
import { checkData, type Context } from "../core/context.ts";
import { projectPlaces } from "../core/places.ts";
import { embedderFor } from "../index/embedder.ts";
import { MemsearchError, oneLine } from "../core/errors.ts";
import { indexInto, scanOptionsFor, type IndexReport } from "../index/indexer.ts";
import { shouldIndexPath } from "../index/scanner.ts";
import { withIndexLock } from "../core/lock.ts";
import { processStartTime } from "../core/processes.ts";
import { openOrRebuild, type Healed } from "../index/heal.ts";
import type { Store } from "../index/store.ts";
import { indexStamp } from "../core/project.ts";
import { ensureSocketDir, readWatchInfo, socketPath, writeWatchInfo } from "./client.ts";
import { LocalEngine } from "./engine.ts";
import { checkRequest, type WatchFailure, type WatchReply, type WatchRequest } from "./protocol.ts";

/**
 * Quiet time after the last change before a merge that is due runs (segments.ts): a merge writes the
 * whole index (seconds at 100k chunks), so never while turns are coming in, and never on a hook's time.
 */
const MERGE_DELAY_MS = 10_000;
/** How long a request's re-index may read only the files the watcher saw change before it scans them all again. */
const FULL_SCAN_EVERY_MS = 60_000;
/** Quiet time after the last load, re-index, save or request before the heap is collected. */
const SETTLE_MS = 1_000;

/**
 * Where the project's curated files are (Claude Code's memory folder, CLAUDE.md files): found by
 * the caller, which knows Claude Code's folders; a walk of the project, so never on every turn.
 */
export interface CuratedSource {
  /** `watchDirs`: project folders holding a CLAUDE.md; `memoryDirs`: the memory folder and its topic folders (any markdown). */
  find(): { files: string[]; watchDirs: string[]; memoryDirs: string[] };
}

/**
 * How often the project is walked again for curated files (a new nested CLAUDE.md, a memory folder
 * Claude Code made mid-session): a small project's walk costs milliseconds and is repeated soon, a
 * monorepo's costs more and is repeated a few hundred times its length apart, within these bounds.
 */
const CURATED_REWALK_MS = { min: 15_000, max: 120_000, timesWalk: 300 };
const CURATED_NAME = /(^|[\\/])CLAUDE(\.local)?\.md$/;

export interface DaemonEvents {
  onIndexed?: (report: IndexReport, trigger: string) => void;
  onError?: (message: string) => void;
}

/**
 * The warm process behind `memsearch watch`: keeps the project's index in memory, re-indexes
 * changed markdown after a quiet period, and answers searches over a local socket.
 * It re-reads the index file when another writer (a CLI `index`) replaced it.
 */
export class Daemon {
  private store: Store | undefined;
  private loadedStat = "";
  private timers = new Map<string, ReturnType<typeof setTimeout>>();
  private watchers: FSWatcher[] = [];
  private curatedWatchers = new Map<string, FSWatcher>();
  /** The curated files of the last walk; undefined until the first (or without a source). */
  private curated: string[] | undefined;
  private curatedDirs: string[] = [];
  private memoryDirs = new Set<string>();
  private rewalkTimer: ReturnType<typeof setTimeout> | undefined;
  private lastWalkMs = 0;
  private server: Server | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private settleTimer: ReturnType<typeof setTimeout> | undefined;
  lastError: string | undefined;
  /** What the socket serves: the same engine a CLI uses on a loaded index, over the index held here. */
  private engine: LocalEngine;

  constructor(
    private ctx: Context,
    private paths: string[],
    private events: DaemonEvents = {},
    private curatedSource?: CuratedSource,
  ) {
    this.engine = new LocalEngine(ctx, {
      load: async () => {
        const { store, rebuilt } = await this.load();
        return { store, heal: rebuilt ? { rebuilt } : {} };
      },
      refresh: async () => (await this.reindex("request")) ?? { unanswered: this.lastError ?? "the re-index failed" },
    });
  }

  /** Changes with every save, ours or another writer's: the base or the manifest. */
  private statKey(): string {
    return indexStamp(this.ctx.project.indexDir);
  }

  /**
   * The in-memory store, reloaded if the file on disk was replaced by someone else. A file
   * that cannot be used is rebuilt from the markdown first (openOrRebuild, under the index
   * lock, which the caller may hold already: `locked`), without embedding so searches are
   * answered at once; the vectors it could not keep are added by a re-index right after (or by
   * the one the caller is running). A missing index is left to the initial re-index.
   */
  private async current(locked = false): Promise<Store> {
    return (await this.load(locked)).store;
  }

  /** current(), and what a rebuild it had to do was about, to pass on to whoever asked. */
  private async load(locked = false): Promise<{ store: Store; rebuilt?: Healed["rebuilt"] }> {
    const key = this.statKey();
    if (this.store && key === this.loadedStat) return { store: this.store };
    const healed = await openOrRebuild(this.ctx, { paths: this.paths, otherModel: "rebuild", locked, buildMissing: false, lowPeak: true, ...(this.curated ? { curated: this.curated } : {}) });
    this.store = healed.store;
    this.loadedStat = healed.rebuilt || healed.dropped ? this.statKey() : key;
    if (healed.dropped && healed.report) this.events.onIndexed?.(healed.report, `left out ${healed.dropped.chunks} chunks of ${healed.dropped.files} files outside the project`);
    if (healed.rebuilt && healed.report) {
      this.events.onIndexed?.(healed.report, "rebuilt");
      if (!locked && healed.rebuilt.missingVectors > 0) void this.reindex("vectors");
    }
    return { store: healed.store, rebuilt: healed.rebuilt };
  }

  /**
   * What a re-index asked for over the socket (the drainer's, after a note) reads: the markdown
   * files the watcher saw change since the last re-index, when it saw any, they all still exist, and
   * a whole scan ran less than FULL_SCAN_EVERY_MS ago; else undefined, a whole scan (every file's
   * stat, deleted files pruned, curated files refreshed). At 100k chunks the whole scan is most of a
   * turn's index work; the debounced file event still runs one in the background, as before.
   */
  private changedOnly(trigger: string): string[] | undefined {
    const changed = [...this.changed];
    this.changed.clear();
    const partial = trigger === "request" && changed.length > 0 && Date.now() - this.lastFullScan < FULL_SCAN_EVERY_MS && changed.every((f) => existsSync(f));
    if (!partial) this.lastFullScan = Date.now();
    return partial ? changed : undefined;
  }

  /** Markdown files the watcher saw change since the last re-index. */
  private changed = new Set<string>();
  private lastFullScan = 0;

  /** Re-index under the index lock; runs one at a time. */
  reindex(trigger: string): Promise<IndexReport | undefined> {
    const next = this.running.then(async () => {
      try {
        checkData(this.ctx.project);
        // The walk happens before the lock: a monorepo's takes a while, and nobody needs to wait for it.
        if (trigger === "initial" || trigger === "curated") this.walkCurated();
        const only = this.changedOnly(trigger);
        const report = await withIndexLock(this.ctx.project.indexDir, async () => {
          const scope = only ? { paths: only } : { paths: this.paths, ...(this.curated ? { curated: this.curated } : {}) };
          const { report, store } = await indexInto(
            { ...scope, indexDir: this.ctx.project.indexDir, config: this.ctx.config, embedder: embedderFor(this.ctx.config), persist: false, places: projectPlaces(this.ctx.project, this.ctx.env) },
            await this.current(true),
          );
          this.store = store;
          // A turn's change is one small segment: written at once, whatever the index's size.
          if (store.isDirty) this.write(store);
          if (store.mergeDue("due")) this.scheduleMerge();
          return report;
        });
        this.lastError = undefined;
        this.events.onIndexed?.(report, trigger);
        this.settle();
        return report;
      } catch (e) {
        this.failed(e);
        return undefined;
      }
    });
    this.running = next;
    return next;
  }

  /**
   * Merge the segments into a new base a while after the last change (the timer starts again with
   * each one), in the queue of re-indexes and under the index lock: a merge is a whole-index write,
   * off every hook's path. Until then readers replay the segments, which is the same index.
   */
  private scheduleMerge(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => void this.mergeNow(), MERGE_DELAY_MS);
    this.saveTimer.unref?.();
  }

  /** Merge now, when one is due (tests and the benchmark call it; the timer does otherwise). */
  mergeNow(): Promise<void> {
    clearTimeout(this.saveTimer);
    const next = this.running.then(() => this.saveNow(true));
    this.running = next;
    return next;
  }

  /** Write what is not written yet (a segment), or, with `merge` and when one is due, a new base. */
  async saveNow(merge = false): Promise<void> {
    const store = this.store;
    if (!store || (!store.isDirty && !(merge && store.mergeDue("due")))) return;
    try {
      checkData(this.ctx.project);
      await withIndexLock(this.ctx.project.indexDir, async () => {
        // Another writer saved since we loaded it: it indexed the same markdown, so keep theirs
        // and reload rather than overwrite.
        if (this.statKey() !== this.loadedStat) {
          this.store = undefined;
          return;
        }
        this.write(store, merge && store.mergeDue("due"));
      });
    } catch (e) {
      this.failed(e);
    }
  }

  /** Save (a segment, or with `merge` a new base), and remember what we wrote so it is not taken for someone else's. */
  private write(store: Store, merge = false): void {
    store.save({ merge });
    this.loadedStat = this.statKey();
    this.settle();
  }

  /**
   * Collect the heap once the process has been quiet a while. A load, a re-index and a save
   * leave their garbage (the file's sections, the serialized state) and JSC grows its heap
   * rather than collect, so the process kept memory it no longer used until the next collection
   * (figures in docs/BENCHMARKS.md); the collection's time is spent when nobody waits.
   */
  private settle(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => Bun.gc(true), SETTLE_MS);
    this.settleTimer.unref?.();
  }

  private failed(e: unknown): void {
    this.lastError = oneLine(e);
    this.events.onError?.(this.lastError);
  }

  /** Debounced per path: a burst of writes to one file costs one re-index. */
  private schedule(path: string): void {
    const ms = this.ctx.config["watch.debounce_ms"];
    clearTimeout(this.timers.get(path));
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        void this.reindex(path);
      }, ms),
    );
  }

  /**
   * Walk the project for its curated files again, and watch the folders holding them (each one
   * alone, not the whole tree: a monorepo's thousands of folders are walked, never all watched).
   * Returns whether the set of files changed.
   */
  walkCurated(): boolean {
    if (!this.curatedSource) return false;
    let found;
    const t0 = performance.now();
    try {
      found = this.curatedSource.find();
      this.lastWalkMs = performance.now() - t0;
    } catch (e) {
      this.events.onError?.(`finding Claude Code's curated files: ${oneLine(e)}`);
      return false;
    }
    const changed = this.curated === undefined || found.files.join("\n") !== this.curated.join("\n");
    this.curated = found.files;
    this.curatedDirs = [...new Set([...found.watchDirs, ...found.memoryDirs])];
    this.memoryDirs = new Set(found.memoryDirs);
    if (this.watching) this.watchCurated();
    return changed;
  }

  private watching = false;

  private scheduleRewalk(): void {
    const { min, max, timesWalk } = CURATED_REWALK_MS;
    this.rewalkTimer = setTimeout(() => {
      if (this.walkCurated()) void this.reindex("curated-walk");
      this.scheduleRewalk();
    }, Math.min(max, Math.max(min, this.lastWalkMs * timesWalk)));
    this.rewalkTimer.unref?.();
  }

  private watchCurated(): void {
    const wanted = new Set(this.curatedDirs);
    for (const [dir, w] of this.curatedWatchers) {
      if (wanted.has(dir)) continue;
      w.close();
      this.curatedWatchers.delete(dir);
    }
    for (const dir of wanted) {
      if (this.curatedWatchers.has(dir)) continue;
      try {
        const w = watch(dir, (_event, name) => {
          const file = name ? String(name) : "";
          // A CLAUDE.md, or any markdown of the memory folder.
          if (!file || CURATED_NAME.test(file) || (/\.md$/i.test(file) && this.memoryDirs.has(dir))) this.schedule("curated");
        });
        w.on("error", () => {
          w.close();
          this.curatedWatchers.delete(dir);
        });
        this.curatedWatchers.set(dir, w);
      } catch {
        // Gone or unreadable: the next walk finds what is there.
      }
    }
  }

  watchFiles(): void {
    this.watching = true;
    if (this.curatedSource) {
      this.watchCurated();
      this.scheduleRewalk();
    }
    // Named to the indexer, a file is indexed: one the whole scan leaves out stays out here too.
    // Built once, not on every event of the folder (most are not even Markdown).
    const leftOut = scanOptionsFor({ indexDir: this.ctx.project.indexDir, config: this.ctx.config });
    for (const p of this.paths) {
      const w = watch(p, { recursive: true }, (_event, name) => {
        const file = name ? join(p, String(name)) : p;
        if (name && shouldIndexPath(file, [p], leftOut)) this.changed.add(file);
        if (/\.(md|markdown)$/i.test(file) || !name) this.schedule(file);
      });
      w.on("error", (e) => this.events.onError?.(`watching ${p}: ${oneLine(e)}`));
      this.watchers.push(w);
    }
  }

  async handle(req: WatchRequest): Promise<WatchReply<WatchRequest["op"]> | WatchFailure> {
    switch (req.op) {
      case "ping": {
        const { chunks, vectors } = await this.engine.stats();
        return { ok: true, pid: process.pid, version: pkg.version, chunks, vectors, ...(this.lastError ? { lastError: this.lastError } : {}) };
      }
      case "search": {
        // No waiting for a running re-index: its store changes happen in one synchronous step
        // after embedding, so a search sees the state before or after, and a slow Ollama during
        // indexing cannot stall a prompt. A rebuild this search caused travels back with it.
        const found = await this.engine.search({ query: req.query, topK: req.topK, sourcePrefix: req.sourcePrefix, background: req.background });
        // Not met here: this engine's loader serves the empty index until the first re-index fills it.
        if (found === "nothing-indexed") return { ok: true, results: [], mode: "bm25" };
        return { ok: true, ...found.response, ...(found.heal.rebuilt ? { rebuilt: found.heal.rebuilt } : {}) };
      }
      case "chunk": {
        const { chunk, heal } = await this.engine.chunk(req.hash);
        return { ok: true, chunk, ...(heal.rebuilt ? { rebuilt: heal.rebuilt } : {}) };
      }
      case "index": {
        const p = this.reindex("request");
        if (!req.wait) return { ok: true, queued: true };
        const report = await p;
        return report ? { ok: true, report: { ...report } } : { ok: false, error: this.lastError ?? "the re-index failed" };
      }
      case "stop":
        // Answer first: the caller (SessionEnd) has 1.5 s; saving a large index takes longer.
        setTimeout(() => this.close().then(() => process.exit(0)), 10);
        return { ok: true };
    }
  }

  /** Listen on the project's socket. The caller has made sure, under the watch lock, that no other watch process serves it. */
  async listen(): Promise<string> {
    const sock = socketPath(this.ctx.project.dataDir);
    ensureSocketDir(sock);
    if (process.platform !== "win32") {
      try {
        unlinkSync(sock); // left by a process that died; the PID check ran before us
      } catch {}
    }
    this.server = createServer((conn) => this.serve(conn));
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(sock, () => resolve());
    });
    const startTime = processStartTime(process.pid);
    writeWatchInfo(this.ctx.project.dataDir, { pid: process.pid, socket: sock, startedAt: new Date().toISOString(), version: pkg.version, ...(startTime ? { startTime } : {}) });
    return sock;
  }

  private serve(conn: Socket): void {
    let buf = "";
    conn.on("data", async (d) => {
      buf += d.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl < 0) {
        if (buf.length > 1_000_000) conn.destroy();
        return;
      }
      const line = buf.slice(0, nl);
      buf = "";
      let res: WatchReply<WatchRequest["op"]> | WatchFailure;
      try {
        const checked = checkRequest(JSON.parse(line));
        res = "request" in checked ? await this.handle(checked.request) : { ok: false, error: checked.problem, exitCode: 2 };
      } catch (e) {
        // Typed errors travel to the client, which raises them as its own (exit codes intact).
        res = { ok: false, error: oneLine(e), exitCode: e instanceof MemsearchError ? e.exitCode : 1 };
      }
      conn.end(JSON.stringify(res) + "\n");
      this.settle();
    });
    conn.on("error", () => {});
  }

  /**
   * Stop answering and remove the socket at once (closing unlinks the socket path, so this must
   * run before another watch process may claim the project). Used by lifetime.ts.
   */
  stopListening(): void {
    this.server?.close();
    this.server = undefined;
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.close();
    for (const w of this.curatedWatchers.values()) w.close();
    clearTimeout(this.rewalkTimer);
    clearTimeout(this.settleTimer);
    for (const t of this.timers.values()) clearTimeout(t);
    this.server?.close();
    await this.running;
    await this.saveNow();
    const info = readWatchInfo(this.ctx.project.dataDir);
    if (info?.pid === process.pid) rmSync(this.ctx.project.watchPid, { force: true });
  }
}
