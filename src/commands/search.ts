import { embeddingFlags, globalFlags, jsonFlag } from "./common.ts";
import { command, flags, parsePlain, type Args } from "./declare.ts";
import { MAX_TOP_K, runSearch } from "./search-run.ts";

const searchFlags = flags({
  ...embeddingFlags,
  ...jsonFlag,
  query: { positional: true, type: "string", demandOption: true },
  "top-k": { alias: "k", type: "number", describe: `Number of results, 1 to ${MAX_TOP_K} (default 5)` },
  "source-prefix": { type: "string", describe: "Only chunks whose source path starts with this" },
});

export type SearchArgs = Args<typeof searchFlags>;

export const searchCommand = command({
  command: "search <query>",
  describe: "Search memory (hybrid BM25 + vectors; BM25 alone when Ollama is unavailable)",
  flags: searchFlags,
  run: runSearch,
});

/**
 * `search` as cli.ts runs it without yargs (the memory-recall skill's first step, where yargs
 * would cost about half the time): the same table, plus the global flags yargs would add.
 */
export function parseSearchFast(argv: readonly string[]): SearchArgs | undefined {
  return parsePlain({ ...globalFlags, ...searchFlags }, argv);
}
