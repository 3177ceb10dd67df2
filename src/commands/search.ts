import type { CommandModule } from "yargs";
import { embeddingFlags, jsonFlag } from "./common.ts";
import { action } from "./output.ts";
import { MAX_TOP_K, runSearch, type SearchArgs } from "./search-run.ts";

export const searchCommand: CommandModule<{}, SearchArgs> = {
  command: "search <query>",
  describe: "Search memory (hybrid BM25 + vectors; BM25 alone when Ollama is unavailable)",
  builder: (y) =>
    jsonFlag(embeddingFlags(y))
      .positional("query", { type: "string", demandOption: true })
      .option("top-k", { alias: "k", type: "number", describe: `Number of results, 1 to ${MAX_TOP_K} (default 5)` })
      .option("source-prefix", { type: "string", describe: "Only chunks whose source path starts with this" }) as never,
  handler: action(runSearch),
};
