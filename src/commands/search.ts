import { globalFlags } from "./common.ts";
import { command, parsePlain } from "./declare.ts";
import { runSearch, searchFlags, type SearchArgs } from "./search-run.ts";

export const searchCommand = command({
  command: "search [query..]",
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
