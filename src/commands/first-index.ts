import { existsSync } from "node:fs";
import type { Context } from "../core/context.ts";
import { projectPlaces } from "../core/places.ts";
import { findCuratedFiles } from "../transcript/claude-memory.ts";

/**
 * A project without an index yet, whose only memory is Claude Code's curated one (its memory
 * folder's MEMORY.md, the CLAUDE.md files): the first `search` or `recall` indexes it with the
 * memory folder, as `memsearch index` would, instead of saying nothing is indexed. Without
 * embedding (a command never waits on a model): the next index run adds the vectors. Returns the
 * chunks indexed, undefined when there was nothing to do here (an index exists, no curated file,
 * or curated indexing is off: the memory folder alone is built by the index's own heal).
 */
export async function indexCuratedFirst(ctx: Context): Promise<number | undefined> {
  const { project, config } = ctx;
  if (!config["indexing.curated"] || existsSync(project.indexFile)) return undefined;
  const curated = findCuratedFiles(project.root, { env: ctx.env }).files.map((f) => f.path);
  if (!curated.length) return undefined;
  const [{ indexPaths }, { withIndexLock }] = await Promise.all([import("../index/indexer.ts"), import("../core/lock.ts")]);
  return withIndexLock(project.indexDir, async () => {
    if (existsSync(project.indexFile)) return undefined; // built meanwhile (the watch process, another command)
    const paths = existsSync(project.memoryDir) ? [project.memoryDir] : [];
    const report = await indexPaths({ paths, indexDir: project.indexDir, config, embedder: null, curated, places: projectPlaces(project, ctx.env) });
    return report.totalChunks;
  });
}

/** The line saying so. */
export function firstIndexLine(chunks: number): string {
  return `memsearch: there was no index yet; indexed ${chunks} chunk${chunks === 1 ? "" : "s"} (the memory folder and Claude Code's curated memory) first`;
}
