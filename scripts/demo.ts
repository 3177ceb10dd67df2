/**
 * The README's first command: build the binary, index the sample memory shipped in the repo
 * into a throwaway data folder, and search it — with no Ollama (BM25), as on a fresh machine.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "./build.ts";

const bin = await build();
const dataDir = mkdtempSync(join(tmpdir(), "memsearch-demo-"));
const env = { ...process.env, MEMSEARCH_DIR: dataDir };
const root = join(import.meta.dir, "..");

async function step(args: string[]): Promise<void> {
  console.log(`\n$ memsearch ${args.map((a) => (a.includes(" ") ? JSON.stringify(a) : a)).join(" ")}`);
  const p = Bun.spawn([bin, ...args], { cwd: root, env, stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) process.exit(1);
}

console.log(`Built ${bin}`);
await step(["--version"]);
await step(["index", "sample/memory"]);
await step(["search", "why did checkout requests time out", "--top-k", "2"]);
await step(["search", "deploy health check port", "--json-output", "--top-k", "1"]);
console.log(`\n(index written to ${dataDir}; Ollama absent, so search ran on BM25 alone)`);
