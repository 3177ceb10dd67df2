/**
 * Where the loaded index's memory goes (issue 25): each structure the watch process holds, built
 * on its own from the benchmark corpus and measured as the growth of the heap it causes.
 *
 *   bun scripts/bench/heap.ts [--sizes 1000,20000,100000] [--dim 768]   (or `bun run bench -- --heap`)
 *
 * Every size runs in a new `bun` process. Inside it, each structure is built, the heap collected
 * (`Bun.gc(true)`), and the growth of JSC's heap (`bun:jsc` heapStats, which counts typed
 * arrays' backing stores) recorded while the structure is still referenced; then it is
 * dropped before the next. The parts:
 *   - the chunks' text, as the strings Orama's documents hold;
 *   - Orama's documents store (one object per chunk: id, source, heading, text, lines, hash);
 *   - the radix tree of the text field (one node per distinct prefix edge, a Set of chunk ids each),
 *     and the compact one that replaces it (compact-index.ts), built and as loaded from its saved form;
 *   - BM25's per-document token frequencies (one object per chunk, one key per distinct token);
 *   - BM25's other statistics (documents per token, tokens per chunk);
 *   - the radix tree if exact forms were indexed beside their stems (they are not, since v8);
 *   - the id maps (chunk hash ↔ internal id);
 *   - the vectors as Orama's map (one Float32Array per chunk), and as one Float32 block;
 *   - our own maps (per-file chunk lists, the embedding cache by content hash);
 *   - and the whole index as `Store.open` loads it from its file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { heapStats } from "bun:jsc";
import { radix } from "@orama/orama/trees";
import { CompactRadix } from "../../src/index/engine/compact-index.ts";
import { Store } from "../../src/index/store.ts";
import { eachWord, stem, tokenize } from "../../src/index/tokenizer.ts";
import type { StoredChunk } from "../../src/index/types.ts";
import { generateCorpus, loadPool } from "./corpus.ts";
import { pinnedBun } from "./proc.ts";

const MODEL = "nomic-embed-text";
export const DEFAULT_HEAP_SIZES = [1_000, 20_000, 100_000];
export const DEFAULT_HEAP_DIM = 768;

export interface HeapPart {
  part: string;
  /** Growth of JSC's heap, bytes. */
  bytes: number;
  /** How many of the thing there are (nodes, keys, vectors…). */
  count?: number;
}

export interface HeapSize {
  chunks: number;
  dim: number;
  textBytes: number;
  distinctTokens: number;
  postings: number;
  parts: HeapPart[];
  /** The whole index as Store.open loads it: heap growth, load time, file bytes. */
  loaded: { heapBytes: number; ms: number; fileBytes: number };
}

// ---------------------------------------------------------------------------------------------
// Inside a child

function used(): number {
  Bun.gc(true);
  Bun.gc(true);
  // heapSize counts the extra memory (typed arrays' backing stores, large strings) already.
  return heapStats().heapSize;
}

/** The heap growth `build` causes while what it returns is alive. */
function measure<T>(build: () => T): { bytes: number; value: T } {
  const before = used();
  const value = build();
  return { bytes: used() - before, value };
}

function chunksOf(n: number): StoredChunk[] {
  const files = generateCorpus({ chunks: n, pool: loadPool() });
  const out: StoredChunk[] = [];
  let k = 0;
  for (const f of files) {
    f.sections.forEach((content, i) => {
      const hash = (k++).toString(16).padStart(16, "0");
      out.push({ chunkHash: hash, contentHash: `c${hash.slice(1)}`, content, source: `/p/.memsearch/memory/${f.name}`, heading: content.slice(4, 9), headingLevel: 3, startLine: i * 8 + 1, endLine: i * 8 + 7 });
    });
  }
  return out;
}

/** A deterministic unit vector per chunk: what matters here is its size, not its direction. */
function vectorOf(i: number, dim: number): Float32Array {
  const v = new Float32Array(dim);
  let s = i + 1;
  let norm = 0;
  for (let j = 0; j < dim; j++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    v[j] = s / 4294967296 - 0.5;
    norm += v[j]! * v[j]!;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let j = 0; j < dim; j++) v[j]! *= scale;
  return v;
}

export function heapChild(n: number, dim: number): HeapSize {
  const chunks = chunksOf(n);
  const tokens = chunks.map((c) => tokenize(c.content));
  const parts: HeapPart[] = [];
  const add = (part: string, bytes: number, count?: number) => parts.push({ part, bytes, count });
  const textBytes = chunks.reduce((a, c) => a + c.content.length, 0);
  const distinct = new Set<string>();
  let postings = 0;
  for (const t of tokens) {
    postings += t.length;
    for (const x of t) distinct.add(x);
  }

  // The chunk texts, copied out of the corpus's strings (a slice or concatenation would share their storage).
  const text = measure(() => chunks.map((c) => Buffer.from(c.content).toString()));
  add("chunk text (strings)", text.bytes, n);
  const texts = text.value;

  const docs = measure(() => chunks.map((c, i) => ({ id: c.chunkHash, source: c.source, heading: c.heading, text: texts[i], headingLevel: 3, startLine: c.startLine, endLine: c.endLine, contentHash: c.contentHash })));
  add("documents store (objects, text shared)", docs.bytes, n);
  docs.value = undefined as never;

  const tree = measure(() => {
    const root = new radix.RadixTree();
    tokens.forEach((ts, id) => {
      for (const t of ts) root.insert(t, id + 1);
    });
    return root;
  });
  let nodes = 0;
  const stack: radix.RadixNode[] = [tree.value];
  while (stack.length) {
    const node = stack.pop()!;
    nodes++;
    for (const c of node.c.values()) stack.push(c);
  }
  add("radix tree of the text field (Orama's)", tree.bytes, nodes);
  tree.value = undefined as never;

  const compact = measure(() => {
    const root = new CompactRadix();
    tokens.forEach((ts, id) => {
      for (const t of ts) root.insert(t, id + 1);
    });
    return root;
  });
  add("radix tree, compact (ours since v9), as built", compact.bytes, nodes);
  const saved = compact.value.toJSON();
  compact.value = undefined as never;
  // A copy of the saved form, as a load decodes it: the block its postings are views of is counted.
  const reloaded = measure(() => CompactRadix.fromJSON(structuredClone(saved)));
  add("radix tree, compact, as loaded (postings: views of one block)", reloaded.bytes, nodes);
  reloaded.value = undefined as never;

  const freq = measure(() => {
    const f: Record<number, Record<string, number>> = {};
    tokens.forEach((ts, id) => {
      const o: Record<string, number> = {};
      for (const t of ts) o[t] = 1 / ts.length;
      f[id + 1] = o;
    });
    return f;
  });
  add("BM25 per-chunk token frequencies (Orama's; none kept since v9)", freq.bytes, postings);
  freq.value = undefined as never;

  const stats = measure(() => {
    const occ: Record<string, number> = {};
    const lengths: Record<number, number> = {};
    tokens.forEach((ts, id) => {
      lengths[id + 1] = ts.length;
      for (const t of ts) occ[t] = (occ[t] ?? 0) + 1;
    });
    return { occ, lengths };
  });
  add("BM25 chunks per token, tokens per chunk", stats.bytes, distinct.size);
  stats.value = undefined as never;

  const ids = measure(() => {
    const toInternal = new Map<string, number>();
    const toId: string[] = [];
    chunks.forEach((c, i) => {
      toInternal.set(c.chunkHash, i + 1);
      toId.push(c.chunkHash);
    });
    return { toInternal, toId };
  });
  add("id maps (hash ↔ internal id)", ids.bytes, n);
  ids.value = undefined as never;

  // What the tree would hold if every word were indexed as written beside its stem (before v8).
  if (n <= 20_000) {
    const both = measure(() => {
      const root = new radix.RadixTree();
      chunks.forEach((c, id) => {
        const all = new Set<string>();
        eachWord(c.content, (w) => {
          all.add(w);
          all.add(stem(w));
        });
        for (const t of all) root.insert(t, id + 1);
      });
      return root;
    });
    add("radix tree with exact forms too (not indexed since v8; for comparison)", both.bytes);
    both.value = undefined as never;
  }

  if (dim) {
    const map = measure(() => {
      const vectors = new Map<number, [number, Float32Array]>();
      for (let i = 0; i < n; i++) vectors.set(i + 1, [1, vectorOf(i, dim)]);
      return vectors;
    });
    add(`vectors, Orama's map (one Float32Array each, ${dim}-d)`, map.bytes, n);
    map.value = undefined as never;
    const block = measure(() => {
      const b = new Float32Array(n * dim);
      for (let i = 0; i < n; i++) b.set(vectorOf(i, dim), i * dim);
      return b;
    });
    add(`vectors, one Float32 block (${dim}-d)`, block.bytes, n);
    block.value = undefined as never;
  }

  const ours = measure(() => {
    const files: Record<string, { mtimeMs: number; size: number; chunks: string[] }> = {};
    for (const c of chunks) (files[c.source] ??= { mtimeMs: 0, size: 0, chunks: [] }).chunks.push(c.chunkHash);
    const byContent = new Map<string, number>();
    chunks.forEach((c, i) => byContent.set(c.contentHash, i));
    return { files, byContent };
  });
  add("our maps (file records, embedding cache by content hash)", ours.bytes, n);
  ours.value = undefined as never;

  // The whole index, saved by Store and loaded back as every reader loads it.
  const dir = mkdtempSync(join(tmpdir(), "ms-heap-"));
  try {
    const store = Store.empty(dir, MODEL, dim || null);
    const bySource = new Map<string, StoredChunk[]>();
    for (const c of chunks) bySource.get(c.source)?.push(c) ?? bySource.set(c.source, [c]);
    let i = 0;
    const vec = new Map<string, Float32Array>();
    if (dim) for (const c of chunks) vec.set(c.contentHash, vectorOf(i++, dim));
    for (const [source, cs] of bySource) store.replaceFile(source, { mtimeMs: 0, size: 0 }, cs, (h) => vec.get(h));
    store.save();
    vec.clear();
    const fileBytes = Bun.file(join(dir, "index.bin")).size;
    texts.length = 0;
    // RSS is not measured here: memory freed by the parts before stays with the allocator. The
    // watch process's own RSS is in the main tables.
    const t = performance.now();
    const loaded = measure(() => Store.open(dir, MODEL));
    const ms = performance.now() - t;
    if (loaded.value.rebuilt || loaded.value.missing || loaded.value.store.size !== n) throw new Error("the saved index did not load");
    return { chunks: n, dim, textBytes, distinctTokens: distinct.size, postings, parts, loaded: { heapBytes: loaded.bytes, ms, fileBytes } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The parent: one process per size

export async function benchHeap(opts: { bun: string; sizes?: number[]; dim?: number; log?: (l: string) => void }): Promise<HeapSize[]> {
  const out: HeapSize[] = [];
  for (const n of opts.sizes ?? DEFAULT_HEAP_SIZES) {
    opts.log?.(`  heap breakdown at ${n} chunks`);
    const p = Bun.spawnSync([opts.bun, import.meta.path, "--child", String(n), String(opts.dim ?? DEFAULT_HEAP_DIM)], { stderr: "inherit" });
    const text = p.stdout.toString().trim();
    if (p.exitCode !== 0 || !text) throw new Error(`heap breakdown at ${n} chunks failed (exit ${p.exitCode})`);
    out.push(JSON.parse(text.split("\n").pop()!) as HeapSize);
  }
  return out;
}

const MiB = (b: number) => (b / 1048576).toFixed(1);

export function heapMarkdown(sizes: HeapSize[]): string {
  const lines = ["### Where the loaded index's memory goes (`scripts/bench/heap.ts`, JSC heap, each part built alone)", ""];
  const names = [...new Set(sizes.flatMap((s) => s.parts.map((p) => p.part)))];
  lines.push(`| part | ${sizes.map((s) => `${s.chunks.toLocaleString("en")} chunks MiB`).join(" | ")} | bytes per chunk (largest) |`);
  lines.push(`|---|${sizes.map(() => "---:").join("|")}|---:|`);
  const last = sizes[sizes.length - 1]!;
  for (const name of names) {
    const cells = sizes.map((s) => {
      const p = s.parts.find((x) => x.part === name);
      return p ? MiB(p.bytes) : "–";
    });
    const lp = [...sizes].reverse().map((s) => ({ s, p: s.parts.find((x) => x.part === name) })).find((x) => x.p)!;
    lines.push(`| ${name} | ${cells.join(" | ")} | ${Math.round(lp.p!.bytes / lp.s.chunks)} |`);
  }
  lines.push(`| **the whole index as \`Store.open\` loads it (heap)** | ${sizes.map((s) => `**${MiB(s.loaded.heapBytes)}**`).join(" | ")} | ${Math.round(last.loaded.heapBytes / last.chunks)} |`);
  lines.push(`| its load time, ms | ${sizes.map((s) => Math.round(s.loaded.ms)).join(" | ")} | |`);
  lines.push(`| index file | ${sizes.map((s) => MiB(s.loaded.fileBytes)).join(" | ")} | ${Math.round(last.loaded.fileBytes / last.chunks)} |`);
  lines.push(`| text indexed (characters, MiB) | ${sizes.map((s) => MiB(s.textBytes)).join(" | ")} | |`);
  lines.push(`| distinct tokens / postings | ${sizes.map((s) => `${s.distinctTokens.toLocaleString("en")} / ${s.postings.toLocaleString("en")}`).join(" | ")} | |`);
  lines.push("", `Vectors ${last.dim}-d. The parts overlap the whole only roughly: the whole shares strings between parts and holds Orama's own bookkeeping.`);
  return lines.join("\n");
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  if (value("child")) {
    process.stdout.write(`${JSON.stringify(heapChild(Number(value("child")), Number(argv[argv.indexOf("--child") + 2] ?? DEFAULT_HEAP_DIM)))}\n`);
  } else {
    const sizes = value("sizes")?.split(",").map(Number) ?? DEFAULT_HEAP_SIZES;
    const dim = Number(value("dim") ?? DEFAULT_HEAP_DIM);
    if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(dim) || dim < 0) throw new Error("--sizes takes whole numbers, --dim a whole number (0: no vectors)");
    const r = await benchHeap({ bun: pinnedBun(), sizes, dim, log: (l) => process.stderr.write(`${l}\n`) });
    if (argv.includes("--json")) process.stderr.write(`${JSON.stringify(r)}\n`);
    process.stdout.write(`${heapMarkdown(r)}\n`);
  }
}
