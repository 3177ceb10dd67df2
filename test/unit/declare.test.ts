import { expect, test } from "bun:test";
import yargs from "yargs";
import { applyFlags, flags, parsePlain } from "../../src/commands/declare.ts";

const table = flags({
  paths: { positional: true, type: "string", array: true, default: [] },
  level: { alias: "l", type: "number", default: 2 },
  mode: { type: "string", choices: ["fast", "slow"] },
  quiet: { type: "boolean" },
  tag: { type: "string", array: true },
});

/** yargs' reading of the same table, its aliases and kebab-case twins left out. */
function viaYargs(argv: string[]): Record<string, unknown> {
  let got: Record<string, unknown> = {};
  yargs(["run", ...argv])
    .strict()
    .exitProcess(false)
    .command("run [paths..]", "", (y) => applyFlags(y, table), (a) => void (got = a))
    .parseSync();
  return Object.fromEntries(Object.entries(got).filter(([k]) => k.length > 1 && k !== "$0"));
}

test("a table's plain lines parse as yargs parses them", () => {
  for (const argv of [[], ["a", "b", "-l", "5"], ["--mode=slow", "x", "--quiet"], ["--no-quiet", "--level", "0"]]) {
    expect(parsePlain(table, argv) as Record<string, unknown>).toEqual(viaYargs(argv));
  }
});

test("defaults are copies: one parse cannot change the next one's", () => {
  (parsePlain(table, [])!.paths as string[]).push("leaked");
  expect(parsePlain(table, [])!.paths).toEqual([]);
});

test("what yargs reads differently is left to it", () => {
  // An array flag takes every value up to the next flag; `--quiet false` sets the flag.
  for (const argv of [["--tag", "a", "b"], ["--quiet", "false"], ["--mode", "medium"], ["-l", "1.5"], ["--quiet=true"], ["-l", "1", "--level", "2"]]) {
    expect(parsePlain(table, argv)).toBeUndefined();
  }
});
