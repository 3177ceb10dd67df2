import { type Context } from "./context.ts";
import { embedderFor } from "./embedder.ts";
import { indexPaths, type IndexReport } from "./indexer.ts";
import { withIndexLock } from "./lock.ts";
import { askWarm, readWatchInfo } from "./warm.ts";

/**
 * Bring the index up to date after writing to the memory folder: the warm process does it
 * when one runs (it holds the index already), else this process does, under the index lock.
 * Returns the report when indexed here, undefined when handed to the warm process.
 */
export async function refreshMemoryIndex(ctx: Context): Promise<IndexReport | undefined> {
  const { project, config } = ctx;
  if (readWatchInfo(project.dataDir)) {
    const r = await askWarm(project.dataDir, { op: "index", wait: false }, 2_000);
    if (r?.ok) return undefined;
  }
  return withIndexLock(project.indexDir, () => indexPaths({ paths: [project.memoryDir], indexDir: project.indexDir, config, embedder: embedderFor(config) }));
}
