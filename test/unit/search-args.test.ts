import { expect, test } from "bun:test";
import yargs from "yargs";
import { globalFlags } from "../../src/commands/common.ts";
import { applyFlags, withRest } from "../../src/commands/declare.ts";
import { parseSearchFast, searchCommand } from "../../src/commands/search.ts";

const PLAIN = [
  ["redis pool"],
  ["redis", "-k", "3", "-j"],
  ["--top-k=8", "--json-output", "q", "--source-prefix", "/m/"],
  ["q", "-m", "bge-m3", "--provider", "none", "--batch-size", "16", "--base-url=http://h:1"],
  ["q", "--color=never", "--no-json-output"],
  ["redis", "pool", "--limit", "2", "--json"],
  ["-k", "1", "--", "-x", "--json"],
];

test("plain search forms are parsed without yargs", () => {
  expect(parseSearchFast(PLAIN[0]!)).toEqual({ query: ["redis pool"], jsonOutput: false });
  expect(parseSearchFast(PLAIN[1]!)).toEqual({ query: ["redis"], limit: 3, jsonOutput: true });
  expect(parseSearchFast(PLAIN[2]!)).toEqual({ query: ["q"], limit: 8, jsonOutput: true, sourcePrefix: "/m/" });
  expect(parseSearchFast(PLAIN[3]!)).toEqual({ query: ["q"], model: "bge-m3", provider: "none", batchSize: 16, baseUrl: "http://h:1", jsonOutput: false });
  // Several words need no quotes; after `--` every word is the query's, flags included.
  expect(parseSearchFast(PLAIN[5]!)).toEqual({ query: ["redis", "pool"], limit: 2, jsonOutput: true });
  expect(parseSearchFast(PLAIN[6]!)).toEqual({ query: ["-x", "--json"], limit: 1, jsonOutput: false });
  // No query at all: the command's own sentence says what is missing (not yargs' count of arguments).
  expect(parseSearchFast([])).toEqual({ jsonOutput: false });
});

/** What yargs hands the search handler, without the aliases and kebab-case twins it adds. */
async function viaYargs(argv: string[]): Promise<Record<string, unknown>> {
  let got: Record<string, unknown> = {};
  const cli = yargs(["search", ...argv]).parserConfiguration({ "populate--": true }).strict().exitProcess(false);
  await applyFlags(cli, globalFlags)
    .command({ ...searchCommand, handler: (a) => void (got = a) })
    .fail((msg) => {
      throw new Error(msg);
    })
    .parseAsync();
  // The table's own keys: yargs adds every alias (topK, json) and kebab-case twin beside them.
  const keys = new Set(Object.keys({ ...globalFlags, ...searchCommand.flags }).map((k) => k.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())));
  return Object.fromEntries(Object.entries(withRest(searchCommand.flags, got)).filter(([k]) => keys.has(k)));
}

test("the fast path reads a plain line exactly as yargs does", async () => {
  for (const argv of PLAIN) expect(parseSearchFast(argv) as Record<string, unknown>).toEqual(await viaYargs(argv));
});

test("anything else is left to yargs (validation and messages stay in one place)", () => {
  const others = [
    ["--help"],
    ["q", "-k"],
    ["q", "-k", "many"],
    ["q", "-k", "-1"],
    ["q", "-k", "3", "-k", "4"],
    ["q", "--provider", "openai"],
    ["q", "--json-output=yes"],
    ["-j", "true", "q"],
    ["q", "--source-prefix", "-x"],
    ["q", "--topK", "3"],
    ["-x", "q"],
  ];
  for (const argv of others) expect(parseSearchFast(argv)).toBeUndefined();
});
