/** Stores and configuration built in a temp folder, for tests of ranking and of the prompt gate. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chunkHash, chunkMarkdown } from "../../src/index/chunker.ts";
import { loadConfig, type Config } from "../../src/core/config.ts";
import { Store } from "../../src/index/store.ts";

const MODEL = "m";

/** A store holding these markdown files (path → text), chunked as the indexer does; vectors from `vectorOf`. */
export function storeOf(files: Record<string, string>, vectorOf: (text: string) => Float32Array | undefined = () => undefined, dim: number | null = null): Store {
  const s = Store.empty(mkdtempSync(join(tmpdir(), "ms-rank-")), MODEL, dim);
  for (const [path, text] of Object.entries(files)) writeInto(s, path, text, vectorOf);
  return s;
}

/** Store one file's new text as a re-index does (`stat` stands for its mtime and size). */
export function writeInto(s: Store, path: string, text: string, vectorOf: (text: string) => Float32Array | undefined, stat = 1): void {
  const chunks = chunkMarkdown(text, path).map((c) => ({ ...c, chunkHash: chunkHash(c, MODEL) }));
  const byHash = new Map(chunks.map((c) => [c.contentHash, vectorOf(c.content)]));
  s.replaceFile(path, { mtimeMs: stat, size: stat }, chunks, (h) => byHash.get(h));
}

/** The defaults, with no user or project settings. */
export function testConfig(): Config {
  return loadConfig({ projectRoot: mkdtempSync(join(tmpdir(), "ms-rank-")), env: { MEMSEARCH_HOME: mkdtempSync(join(tmpdir(), "ms-rank-home-")) } }).values;
}
