/**
 * Where the cold paths spend their time, step by step, in one process:
 *   bun scripts/bench/profile.ts --project DIR --query "words" [--build]
 * `open` repeats Store.open's decode steps one at a time (read, header, JSON.parse, Orama load,
 * vector views) and then times the real Store.open; `search` times the text and vector sides
 * of one query on the loaded store; `--build` times the index build's steps (chunk, embed
 * through OLLAMA_HOST, insert, save) on a scratch copy of the index. Prints one JSON object.
 */
import { create, load } from "@orama/orama";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chunkHash, chunkMarkdown, embeddingText } from "../../src/core/chunker.ts";
import { loadConfig } from "../../src/core/config.ts";
import { OllamaEmbedder } from "../../src/core/embedder.ts";
import { searchChunks } from "../../src/core/search.ts";
import { INDEX_FILE, Store } from "../../src/core/store.ts";
import { createTokenizer, tokenize } from "../../src/core/tokenizer.ts";
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

/** The decode of store.ts, split into its steps (the file layout is documented on Store). */
function openSteps(indexDir: string): Steps {
  const steps: Steps = {};
  const bytes = timed(steps, "read file", () => readFileSync(join(indexDir, INDEX_FILE)));
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = 16 + 4;
  const len = buf.readUInt32LE(16);
  const header = timed(steps, "parse header JSON", () => JSON.parse(buf.toString("utf8", start, start + len)));
  const raw = timed(steps, "parse Orama JSON", () => JSON.parse(buf.toString("utf8", start + len, start + len + header.jsonBytes)));
  steps["Orama JSON MiB"] = header.jsonBytes / 1048576;
  steps["vector block MiB"] = (header.vectorIds.length * (header.meta.dim ?? 0) * 4) / 1048576;
  const db = timed(steps, "create db", () =>
    create({ schema: { source: "enum", heading: "string", text: "string", embedding: `vector[${header.meta.dim}]` } as never, sort: { enabled: false }, components: { tokenizer: createTokenizer() } }),
  );
  timed(steps, "Orama load()", () => load(db as never, raw));
  return steps;
}

function searchSteps(store: Store, query: string, dim: number): Steps {
  const steps: Steps = {};
  const terms = tokenize(query);
  const vec = Float32Array.from(fakeEmbedding(`search_query: ${query}`, dim));
  // Twice each: the first call pays for JIT warm-up, as a fresh CLI process does.
  for (const run of ["1st", "2nd"]) {
    timed(steps, `text search (${run})`, () => store.searchText(terms.join(" "), 20));
    timed(steps, `vector search (${run})`, () => store.searchVector(vec, 20, 0.35));
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
  if (process.argv.includes("--build")) out["index build"] = await buildSteps(join(project, ".memsearch", "memory"));
  out["open, step by step"] = openSteps(indexDir);
  Bun.gc(true);
  const open: Steps = {};
  const { store } = timed(open, "Store.open (whole)", () => Store.open(indexDir, MODEL));
  open["RSS MiB"] = rssMiB();
  out["Store.open"] = open;
  out["Orama search"] = searchSteps(store, query, store.dim ?? 768);
  out["searchChunks (whole query)"] = await fusedSearch(store, query, store.dim ?? 768, project);
  for (const steps of Object.values(out)) for (const k of Object.keys(steps)) steps[k] = Math.round(steps[k]! * 10) / 10;
  process.stdout.write(JSON.stringify(out) + "\n");
}

if (import.meta.main) await main();
