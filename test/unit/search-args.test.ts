import { expect, test } from "bun:test";
import { parseSearchFast } from "../../src/commands/search-run.ts";

test("plain search forms are parsed without yargs", () => {
  expect(parseSearchFast(["redis pool"])).toEqual({ query: "redis pool", jsonOutput: false });
  expect(parseSearchFast(["redis", "-k", "3", "-j"])).toEqual({ query: "redis", topK: 3, jsonOutput: true });
  expect(parseSearchFast(["--top-k=8", "--json-output", "q", "--source-prefix", "/m/"])).toEqual({ query: "q", topK: 8, jsonOutput: true, sourcePrefix: "/m/" });
});

test("anything else is left to yargs (validation and messages stay in one place)", () => {
  for (const argv of [[], ["--help"], ["a", "b"], ["q", "-k"], ["q", "-k", "many"], ["q", "-m", "bge-m3"], ["q", "--provider", "none"], ["q", "--json-output=yes"], ["-x", "q"]]) {
    expect(parseSearchFast(argv)).toBeUndefined();
  }
});
