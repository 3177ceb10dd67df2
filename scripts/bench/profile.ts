/**
 * Where the cold paths spend their time, step by step, in one process:
 *   bun scripts/bench/profile.ts --project DIR --query "words" [--build]
 * Only public entry points of src/ are timed (the index format changes; this must not break):
 * reading the index file, Store.open as a whole, the text and vector sides of one query, the
 * whole searchChunks; `--build` times the index build's steps (chunk, embed through
 * OLLAMA_HOST, insert, save) on a scratch index. `--scan` times only the first vector search of a
 * store opened as a cold search opens it (what a cold search pays), `--no-kernel` with the
 * WebAssembly kernels off (the JS loops scan): the benchmark's row of what the float kernel saves.
 * Prints one JSON object.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chunkHash, chunkMarkdown, embeddingText } from "../../src/index/chunker.ts";
import { loadConfig } from "../../src/core/config.ts";
import { OllamaEmbedder } from "../../src/index/embedder.ts";
import { searchChunks } from "../../src/index/search.ts";
import { INDEX_FILE, Store } from "../../src/index/store.ts";
import { setKernels } from "../../src/index/engine/kernels.ts";
import { rankingTerms } from "../../src/index/tokenizer.ts";
import { fakeEmbedding } from "../../test/helpers/ollama-double.ts";

const MODEL = "nomic-embed-text";
type Steps = Record<string, number>;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** Milliseconds of `fn`, recorded under `name`. */
function timed<T>(steps: Steps, name: string, fn: () => T): T {
  const t = performance.now();
  const v = fn();
  steps[name] = (steps[name] ?? 0) + performance.now() - t;
  return v;
}

async function timedAsync<T>(steps: Steps, name: string, fn: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const v = await fn();
  steps[name] = (steps[name] ?? 0) + performance.now() - t;
  return v;
}

const rssMiB = () => Math.round(process.memoryUsage().rss / 1048576);

function searchSteps(store: Store, query: string, dim: number): Steps {
  const steps: Steps = {};
  const terms = store.selectiveTerms(rankingTerms(query).map((t) => t.stem));
  const vec = Float32Array.from(fakeEmbedding(`search_query: ${query}`, dim));
  // Twice each: the first call pays for JIT warm-up, as a fresh CLI process does.
  for (const run of ["1st", "2nd"]) {
    timed(steps, `text search (${run})`, () => store.searchText(terms, 50));
    timed(steps, `vector search (${run})`, () => store.searchVector(vec, 50, 0.35));
  }
  return steps;
}

async function fusedSearch(store: Store, query: string, dim: number, projectRoot: string): Promise<Steps> {
  const steps: Steps = {};
  const config = loadConfig({ projectRoot, env: {}, flags: {} }).values;
  const embedder = { embedQuery: async (q: string) => Float32Array.from(fakeEmbedding(`search_query: ${q}`, dim)) };
  await timedAsync(steps, "searchChunks hybrid", () => searchChunks({ query, topK: 5, store, config, embedder }));
  await timedAsync(steps, "searchChunks BM25", () => searchChunks({ query, topK: 5, store, config, embedder: null }));
  return steps;
}

/** The index build's steps on a scratch index, so the project's own index is untouched. */
async function buildSteps(memoryDir: string): Promise<Steps> {
  const steps: Steps = {};
  const files = readdirSync(memoryDir).filter((f) => f.endsWith(".md"));
  const chunks = timed(steps, "chunk markdown", () =>
    files.flatMap((f) => chunkMarkdown(readFileSync(join(memoryDir, f), "utf8"), join(memoryDir, f)).map((c) => ({ ...c, chunkHash: chunkHash(c, MODEL) }))),
  );
  const embedder = new OllamaEmbedder({ host: process.env.OLLAMA_HOST!, model: MODEL, batchSize: 64, timeoutMs: 60_000 });
  const vectors = await timedAsync(steps, "embed (HTTP to OLLAMA_HOST)", () => embedder.embedDocuments(chunks.map((c) => embeddingText(c.content))));
  const byHash = new Map(chunks.map((c, i) => [c.contentHash, vectors[i]!]));
  const dir = mkdtempSync(join(tmpdir(), "ms-profile-"));
  const store = Store.empty(dir, MODEL, vectors[0]!.length);
  timed(steps, "Orama insert", () => {
    for (const f of files) {
      const path = join(memoryDir, f);
      store.replaceFile(path, { mtimeMs: 0, size: 0 }, chunks.filter((c) => c.source === path), (h) => byHash.get(h));
    }
  });
  steps["RSS after insert MiB"] = rssMiB();
  timed(steps, "save (encode + write)", () => store.save());
  rmSync(dir, { recursive: true, force: true });
  return steps;
}

async function main(): Promise<void> {
  const project = arg("project");
  const query = arg("query") ?? "connection pool timeout";
  if (!project) throw new Error("--project DIR is required");
  const indexDir = join(project, ".memsearch", "index");
  const out: Record<string, Steps> = {};
  if (process.argv.includes("--no-kernel")) setKernels(false);
  if (process.argv.includes("--scan")) {
    // Opened as a command's search opens it (heal.ts): the rows read from the file as they are scored.
    const { store } = Store.open(indexDir, MODEL, { lazyVectors: "search" });
    const vec = Float32Array.from(fakeEmbedding(`search_query: ${query}`, store.dim ?? 768));
    const steps: Steps = {};
    timed(steps, "vector search (1st)", () => store.searchVector(vec, 50, 0.35));
    process.stdout.write(JSON.stringify(steps) + "\n");
    return;
  }
  if (process.argv.includes("--build")) out["index build"] = await buildSteps(join(project, ".memsearch", "memory"));
  const open: Steps = {};
  // The file read alone first: the floor any loader of this file pays (page cache warm).
  timed(open, "read index file", () => readFileSync(join(indexDir, INDEX_FILE)).byteLength);
  Bun.gc(true);
  const { store, rebuilt } = timed(open, "Store.open (whole)", () => Store.open(indexDir, MODEL));
  if (rebuilt) throw new Error(`Store.open did not load the index: ${rebuilt}`);
  open["RSS MiB"] = rssMiB();
  open["chunks"] = store.size;
  open["vectors"] = store.vectorCount;
  out["Store.open"] = open;
  out["Orama search"] = searchSteps(store, query, store.dim ?? 768);
  out["searchChunks (whole query)"] = await fusedSearch(store, query, store.dim ?? 768, project);
  for (const steps of Object.values(out)) for (const k of Object.keys(steps)) steps[k] = Math.round(steps[k]! * 10) / 10;
  process.stdout.write(JSON.stringify(out) + "\n");
}

if (import.meta.main) await main();
