import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { keyDocs } from "../../src/core/config.ts";

const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");

test("README opens with the two commands CI and users run", () => {
  const block = /```sh\n([\s\S]*?)```/.exec(readme)![1]!.trim().split("\n");
  expect(block.length).toBe(2);
  expect(block[0]).toStartWith("npm ci && npm run demo");
  expect(block[1]).toStartWith("npm ci && npm test");
  expect(readFileSync(join(import.meta.dir, "../../.ci/run"), "utf8")).toContain("npm ci && npm test");
});

test("README documents every configuration key with its default", () => {
  for (const k of keyDocs()) expect(readme).toContain(`| \`${k.key}\` | \`${JSON.stringify(k.default)}\` |`);
});
