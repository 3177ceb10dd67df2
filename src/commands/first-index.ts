import { existsSync } from "node:fs";
import type { Context } from "../core/context.ts";
import { projectPlaces } from "../core/places.ts";
import { curatedFiles } from "../agents/curated.ts";
import { LoadedIndexes } from "../watch/gateway.ts";

export interface FirstIndex {
  chunks: number;
  /** Built in memory, not written: the project has no data folder, and a read makes none (issue 32). */
  held?: LoadedIndexes;
}

/**
 * A project without an index yet, whose only memory is Claude Code's curated one (its memory
 * folder's MEMORY.md, the CLAUDE.md files): the first `search` or `recall` indexes it with the
 * memory folder, as `memsearch index` would, instead of saying nothing is indexed. Without
 * embedding (a command never waits on a model): the next index run adds the vectors. In a project
 * with no `.memsearch/` the index is built in memory for this command and nothing is written.
 * Undefined when there was nothing to do here (an index exists, no curated file, or curated
 * indexing is off: the memory folder alone is built by the index's own heal).
 */
export async function indexCuratedFirst(ctx: Context): Promise<FirstIndex | undefined> {
  const { project, config } = ctx;
  if (!config["indexing.curated"] || existsSync(project.indexFile)) return undefined;
  const curated = curatedFiles(project.root, { env: ctx.env }).files.map((f) => f.path);
  if (!curated.length) return undefined;
  const places = projectPlaces(project, ctx.env);
  if (!existsSync(project.dataDir)) {
    const { indexInto } = await import("../index/indexer.ts");
    const { report, store } = await indexInto({ paths: [], indexDir: project.indexDir, config, embedder: null, curated, places, persist: false });
    return { chunks: report.totalChunks, held: new LoadedIndexes().hold(ctx, store) };
  }
  const [{ indexPaths }, { withIndexLock }] = await Promise.all([import("../index/indexer.ts"), import("../core/lock.ts")]);
  return withIndexLock(project.indexDir, async () => {
    if (existsSync(project.indexFile)) return undefined; // built meanwhile (the watch process, another command)
    const paths = existsSync(project.memoryDir) ? [project.memoryDir] : [];
    const report = await indexPaths({ paths, indexDir: project.indexDir, config, embedder: null, curated, places });
    return { chunks: report.totalChunks };
  });
}

/** The line saying so. */
export function firstIndexLine(first: FirstIndex): string {
  const n = `${first.chunks} chunk${first.chunks === 1 ? "" : "s"}`;
  if (first.held) return `memsearch: there was no index yet; searched Claude Code's curated memory (${n}) without writing one here ('memsearch index' keeps it)`;
  return `memsearch: there was no index yet; indexed ${n} (the memory folder and Claude Code's curated memory) first`;
}
