/**
 * core/self.ts: how the running binary was installed, from where it lies, so `uninstall` removes
 * it the way it came (npm's packages through npm, a file as a file, nothing for a source run).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installation } from "../../src/core/self.ts";

const root = mkdtempSync(join(tmpdir(), "ms-self-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const file = (...parts: string[]) => {
  const p = join(root, ...parts);
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, "");
  return p;
};

test("npm install -g memsearch: the platform package under the main one, removed through npm with its prefix", () => {
  const bin = file("g", "lib", "node_modules", "memsearch", "node_modules", "memsearch-linux-x64", "bin", "memsearch");
  file("g", "bin", "memsearch");
  expect(installation(bin, [bin])).toEqual({ kind: "npm-global", binary: bin, prefix: join(root, "g"), packages: ["memsearch", "memsearch-linux-x64"] });
});

test("both tarballs installed side by side with -g: the same prefix, both packages", () => {
  const bin = file("t", "lib", "node_modules", "memsearch-darwin-arm64", "bin", "memsearch");
  file("t", "bin", "memsearch");
  expect(installation(bin, [bin])).toEqual({ kind: "npm-global", binary: bin, prefix: join(root, "t"), packages: ["memsearch", "memsearch-darwin-arm64"] });
});

test("a project's dependency is the project's to remove", () => {
  const bin = file("proj", "node_modules", "memsearch-linux-arm64", "bin", "memsearch");
  expect(installation(bin, [bin])).toEqual({ kind: "npm-local", binary: bin, project: join(root, "proj") });
});

test("install.sh's file, a download, a build: one file; a run through Bun: nothing installed", () => {
  const bin = file("home", ".local", "bin", "memsearch");
  expect(installation(bin, [bin])).toEqual({ kind: "file", binary: bin });
  // A folder merely named like a platform package is not npm's without node_modules around it.
  const look = file("memsearch-linux-x64", "bin", "memsearch");
  expect(installation(look, [look]).kind).toBe("file");
  expect(installation("/usr/local/bin/bun", ["/usr/local/bin/bun", "/src/cli.ts"])).toEqual({ kind: "source", command: ["/usr/local/bin/bun", "/src/cli.ts"] });
});
