import type { CommandModule } from "yargs";
import { loadContext } from "../core/context.ts";
import { checkIndex, peekIndex } from "../core/index-file.ts";
import { jsonFlag } from "./common.ts";
import { healNotices } from "./notices.ts";
import { action, notice, print, printJson } from "./output.ts";

interface Args {
  jsonOutput: boolean;
}

export const statsCommand: CommandModule<{}, Args> = {
  command: "stats",
  describe: "Show what the project's index holds",
  builder: (y) => jsonFlag(y) as never,
  handler: action(async (a: Args) => {
    const ctx = loadContext();
    // The header, and the file's checksums: no Orama. An index that cannot be used is rebuilt
    // from the markdown first, so stats never reports a broken index as empty or not built.
    if (checkIndex(ctx.project.indexDir).state === "unusable") {
      const { openOrRebuild } = await import("../core/index-heal.ts");
      for (const line of healNotices(await openOrRebuild(ctx, { buildMissing: false }), ctx.config["embedding.model"])) notice(line);
    }
    const meta = peekIndex(ctx.project.indexDir);
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
    if (a.jsonOutput) return printJson(data);
    print(
      [
        `Total indexed chunks: ${data.total_chunks}`,
        `Files: ${data.files}`,
        `Chunks with vectors: ${data.vectors}${data.dimension ? ` (${data.embedding_model}, ${data.dimension}-d)` : ""}`,
        `Index: ${data.index_path} (${(data.index_bytes / 1048576).toFixed(1)} MiB${data.updated_at ? `, updated ${data.updated_at}` : ", not built yet"})`,
      ].join("\n"),
    );
  }),
};
