#!/usr/bin/env bun
/**
 * Entry point. yargs costs ~12 ms to load and ~20 ms to parse, more than the rest of start-up
 * together, so the calls that must be fast skip it: `--version`, `hook <event>` (runs on every
 * prompt) and plain `search` (the recall skill's first step). Everything else, and any search
 * with other flags, goes through the yargs command tree in main.ts.
 */
import pkg from "../package.json" with { type: "json" };

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`memsearch, version ${pkg.version}\n`);
} else if (argv[0] === "hook" && argv.length === 2 && !argv[1]!.startsWith("-")) {
  const { runHookEvent } = await import("./hooks/events.ts");
  await runHookEvent(argv[1]!);
} else if (!(argv[0] === "search" && (await fastSearch(argv.slice(1))))) {
  const { main } = await import("./main.ts");
  await main(argv);
}

/** `search` in its plain forms skips yargs too: it is what the memory-recall skill runs. */
async function fastSearch(args: string[]): Promise<boolean> {
  const { parseSearchFast, runSearch } = await import("./commands/search-run.ts");
  const parsed = parseSearchFast(args);
  if (!parsed) return false;
  const { action } = await import("./commands/output.ts");
  await action(runSearch)(parsed);
  return true;
}
