#!/usr/bin/env bun
/**
 * Entry point. yargs costs ~12 ms to load, more than the rest of start-up together, so the
 * two calls that must be fast skip it: `--version`, and `hook <event>` (which runs on every
 * prompt). Everything else goes through the yargs command tree in main.ts.
 */
import pkg from "../package.json" with { type: "json" };

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`memsearch, version ${pkg.version}\n`);
} else if (argv[0] === "hook" && argv.length === 2 && !argv[1]!.startsWith("-")) {
  const { runHookEvent } = await import("./hooks/events.ts");
  await runHookEvent(argv[1]!);
} else {
  const { main } = await import("./main.ts");
  await main(argv);
}
