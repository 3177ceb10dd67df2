#!/usr/bin/env bun
/**
 * Entry point. Loading and running yargs costs more than the rest of start-up together, so the
 * calls that must be fast skip it: `--version`, `hook <event>` (runs on every prompt) and plain
 * `search` (the recall skill's first step). Everything else, and any search its table's plain
 * forms do not cover, goes through the yargs command tree in main.ts.
 */
import pkg from "../package.json" with { type: "json" };
import { hotPathJit } from "./core/jit.ts";

const argv = process.argv.slice(2);
const version = argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V");
// Every `hook …` but a request for help (no agent's hook line holds one): a hook answers with
// JSON and exits 0 whatever else its line holds.
const hookEvent = argv[0] === "hook" && !argv.includes("--help") && !argv.includes("-h");
// The detached drainer and every other command keep the normal JIT (core/jit.ts).
if ((hookEvent && argv[1] !== "drain") || argv[0] === "search" || version) hotPathJit();
if (version) {
  const { writeOut } = await import("./core/stdio.ts");
  writeOut(`memsearch, version ${pkg.version}\n`);
} else if (hookEvent) {
  // `hook <event> --agent <name>`: another agent's hooks (Codex CLI…) run the same handlers.
  const { hookArgs, runHookEvent } = await import("./hooks/events.ts");
  const { event, agent, ignored } = hookArgs(argv.slice(1));
  await runHookEvent(event, agent, ignored);
} else {
  // Not for hooks (above): they answer in JSON and run on every prompt, so they never load colour.
  const { useColor, colorArgs } = await import("./commands/color.ts");
  const args = colorArgs(argv);
  let ready = true;
  try {
    await useColor(args);
  } catch (e) {
    const { fail } = await import("./commands/output.ts");
    process.exitCode = fail(e);
    ready = false;
  }
  if (ready && !(args[0] === "search" && (await fastSearch(args.slice(1))))) {
    const { main } = await import("./main.ts");
    await main(args);
  }
}

/** `search` in its plain forms skips yargs too: it is what the memory-recall skill runs. */
async function fastSearch(args: string[]): Promise<boolean> {
  const { parseSearchFast } = await import("./commands/search.ts");
  const parsed = parseSearchFast(args);
  if (!parsed) return false;
  const [{ action }, { runSearch }] = await Promise.all([import("./commands/output.ts"), import("./commands/search-run.ts")]);
  await action(runSearch)(parsed);
  return true;
}
