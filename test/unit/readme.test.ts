import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { keyDocs } from "../../src/core/config.ts";
import pkg from "../../package.json" with { type: "json" };

const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");

test("README's first lines are exactly the two commands of a fresh clone; its first screen then says what it is and Try it (install, import, hub)", () => {
  const lines = readme.split("\n");
  expect(lines.slice(0, 3)).toEqual(["# memsearch", "", "```sh"]);
  expect(lines.slice(3, 6).map((l) => l.replace(/\s+#.*$/, ""))).toEqual(["npm ci && npm run demo", "npm ci && npm test", "```"]);
  const screen = lines.slice(0, 30).join("\n");
  const blocks = [...screen.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim().split("\n").map((l) => l.replace(/\s+#.*$/, "")));
  expect(blocks).toHaveLength(2);
  const [clone, tryIt] = blocks as [string[], string[]];
  expect(screen.indexOf("memsearch gives your coding agent")).toBeLessThan(screen.indexOf("## Try it"));
  expect(screen.indexOf("## Try it")).toBeLessThan(screen.indexOf(tryIt[0]!));
  expect(tryIt[0]).toBe("npm install -g memsearch");
  // install, then import, then the hub, in that order
  const at = (cmd: string) => tryIt.findIndex((l) => l.startsWith(cmd));
  expect(at("memsearch install claude")).toBeGreaterThan(0);
  expect(at("memsearch import")).toBeGreaterThan(at("memsearch install claude"));
  expect(at("memsearch hub")).toBeGreaterThan(at("memsearch import"));
  expect(clone).toEqual(["npm ci && npm run demo", "npm ci && npm test"]);
  expect(screen).toMatch(/fresh clone \(Node \d+ or later/);
  expect(pkg.engines.node).toBe(`>=${/fresh clone \(Node (\d+) or later/.exec(screen)![1]}`);
  expect(readFileSync(join(import.meta.dir, "../../.ci/run"), "utf8")).toContain("npm ci && npm test");
});

test("the hooks' internals live in docs/HOOKS.md, which the README links", () => {
  expect(readme).toContain("[docs/HOOKS.md](docs/HOOKS.md)");
  const hooks = readFileSync(join(import.meta.dir, "../../docs/HOOKS.md"), "utf8");
  for (const event of ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]) expect(hooks).toContain(`**${event}**`);
  expect(readme).not.toContain("## Quick start");
});

test("README documents every configuration key with its default", () => {
  for (const k of keyDocs()) expect(readme).toContain(`| \`${k.key}\` | \`${JSON.stringify(k.default)}\` |`);
});
