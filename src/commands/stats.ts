import { loadContext } from "../core/context.ts";
import { indexStats } from "../watch/gateway.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { healNotices } from "./notices.ts";
import { notice, print, printJson } from "./output.ts";
import { costLines, modelCosts } from "./costs.ts";

export const statsCommand = command({
  command: "stats",
  describe: "Show what the project's index holds",
  flags: jsonFlag,
  run: async (a) => {
    const ctx = loadContext();
    const { head: meta, heal } = await indexStats(ctx);
    for (const line of healNotices(heal, ctx.config["embedding.model"])) notice(line);
    const data = {
      total_chunks: meta?.chunks ?? 0,
      files: meta?.files ?? 0,
      vectors: meta?.vectors ?? 0,
      embedding_model: meta?.model ?? ctx.config["embedding.model"],
      dimension: meta?.dim ?? null,
      index_path: ctx.project.indexDir,
      index_bytes: meta?.bytes ?? 0,
      updated_at: meta?.updatedAt ?? null,
      memory_dir: ctx.project.memoryDir,
    };
    const costs = modelCosts(ctx.project.dataDir);
    if (a.jsonOutput) return printJson({ ...data, model_calls: costs });
    print(
      [
        `Total indexed chunks: ${data.total_chunks}`,
        `Files: ${data.files}`,
        `Chunks with vectors: ${data.vectors}${data.dimension ? ` (${data.embedding_model}, ${data.dimension}-d)` : ""}`,
        `Index: ${data.index_path} (${(data.index_bytes / 1048576).toFixed(1)} MiB${data.updated_at ? `, updated ${data.updated_at}` : ", not built yet"})`,
        ...costLines(costs),
      ].join("\n"),
    );
  },
});
