import { expect, test } from "bun:test";
import yargs from "yargs";
import { globalFlags } from "../../src/commands/common.ts";
import { applyFlags } from "../../src/commands/declare.ts";
import { parseSearchFast, searchCommand } from "../../src/commands/search.ts";

const PLAIN = [
  ["redis pool"],
  ["redis", "-k", "3", "-j"],
  ["--top-k=8", "--json-output", "q", "--source-prefix", "/m/"],
  ["q", "-m", "bge-m3", "--provider", "none", "--batch-size", "16", "--base-url=http://h:1"],
  ["q", "--no-color", "--no-json-output"],
];

test("plain search forms are parsed without yargs", () => {
  expect(parseSearchFast(PLAIN[0]!)).toEqual({ query: "redis pool", jsonOutput: false });
  expect(parseSearchFast(PLAIN[1]!)).toEqual({ query: "redis", topK: 3, jsonOutput: true });
  expect(parseSearchFast(PLAIN[2]!)).toEqual({ query: "q", topK: 8, jsonOutput: true, sourcePrefix: "/m/" });
  expect(parseSearchFast(PLAIN[3]!)).toEqual({ query: "q", model: "bge-m3", provider: "none", batchSize: 16, baseUrl: "http://h:1", jsonOutput: false });
});

/** What yargs hands the search handler, without the aliases and kebab-case twins it adds. */
async function viaYargs(argv: string[]): Promise<Record<string, unknown>> {
  let got: Record<string, unknown> = {};
  const cli = yargs(["search", ...argv]).strict().exitProcess(false);
  await applyFlags(cli, globalFlags)
    .command({ ...searchCommand, handler: (a) => void (got = a) })
    .fail((msg) => {
      throw new Error(msg);
    })
    .parseAsync();
  return Object.fromEntries(Object.entries(got).filter(([k]) => k.length > 1 && !k.includes("-") && k !== "$0"));
}

test("the fast path reads a plain line exactly as yargs does", async () => {
  for (const argv of PLAIN) expect(parseSearchFast(argv) as Record<string, unknown>).toEqual(await viaYargs(argv));
});

test("anything else is left to yargs (validation and messages stay in one place)", () => {
  const others = [
    [],
    ["--help"],
    ["a", "b"],
    ["q", "-k"],
    ["q", "-k", "many"],
    ["q", "-k", "-1"],
    ["q", "-k", "3", "-k", "4"],
    ["q", "--provider", "openai"],
    ["q", "--json-output=yes"],
    ["-j", "true", "q"],
    ["q", "--source-prefix", "-x"],
    ["q", "--topK", "3"],
    ["--", "q"],
    ["-x", "q"],
  ];
  for (const argv of others) expect(parseSearchFast(argv)).toBeUndefined();
});
