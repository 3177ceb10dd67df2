/**
 * Orama's persistence plugin (@orama/plugin-data-persistence) against our own index file, on the
 * same database: the benchmark corpus indexed through Store with 768-d vectors, saved by
 * Store.save and by each of the plugin's formats, then loaded back to a searchable database.
 *
 *   bun scripts/bench/persistence.ts [--sizes 20000,100000] [--reps 3] [--write] [--json FILE] [--from FILE]   (or `bun run bench -- --persistence`)
 *
 * Every save and every load runs in a new `bun` process of its own, so its peak RSS is its own
 * and nothing is left warm in the heap; the page cache is warm (each file has been written just
 * before). Reps go round-robin over the variants, so a change in the machine's load while the run
 * goes on falls on every variant alike. `--write` puts the section into docs/BENCHMARKS.md; `--json`
 * keeps the raw figures, which `--from` renders again without measuring.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
// The plugin's own msgpack codec (its dependency, not ours): the row that loads its file into our
// own create() must decode exactly what restoreFromFile decodes.
import { decode } from "@msgpack/msgpack";
import { create, load, search, type AnyOrama, type Results } from "@orama/orama";
import { persist, restore } from "@orama/plugin-data-persistence";
import { persistToFile, restoreFromFile } from "@orama/plugin-data-persistence/server";
import { chunkHash, chunkMarkdown, embeddingText } from "../../src/index/chunker.ts";
import { INDEX_FILE, Store } from "../../src/index/store.ts";
import { compactIndex } from "../../src/index/engine/compact-index.ts";
import { createTokenizer } from "../../src/index/tokenizer.ts";
import { fakeEmbedding } from "../../test/helpers/ollama-double.ts";
import { generateCorpus, loadPool, makeQueries } from "./corpus.ts";
import { loadAverage, machine, type Machine } from "./machine.ts";
import { pinnedBun, vmHwmKiB } from "./proc.ts";

const REPO = resolve(import.meta.dir, "..", "..");
const MODEL = "nomic-embed-text";
const DIM = 768;
const DEFAULT_SIZES = [20_000, 100_000];
const DEFAULT_REPS = 3;
/** Large sizes cost many times more per rep: one rep fewer keeps the section within a few minutes on a shared machine. */
const LARGE = 50_000;
const repsAt = (chunks: number, reps: number) => (chunks > LARGE ? Math.max(1, reps - 1) : reps);
const QUERIES = 10;
const TOP = 5;
/** The `search.similarity` default search.ts asks for (Orama's own default would drop most real matches). */
const SIMILARITY = 0.35;
const SECTION_TITLE = "## Orama's persistence plugin, re-measured";

type VariantId = "ours" | "json" | "binary" | "binary-file" | "binary-file-own" | "dpack" | "seqproto";

interface Variant {
  id: VariantId;
  label: string;
  /** Another variant's file is loaded (this one saves nothing of its own). */
  loadsFileOf?: VariantId;
  /** Formats that make the whole database one string: past this many chunks it nears JSC's string limit and takes gigabytes of RSS. */
  maxChunks?: number;
}

const STRING_FORMATS_UP_TO = LARGE;

const VARIANTS: Variant[] = [
  { id: "ours", label: "ours: `Store.save` / `Store.open`" },
  { id: "json", label: "plugin `json`: `persist` / `restore`", maxChunks: STRING_FORMATS_UP_TO },
  { id: "binary", label: "plugin `binary` (msgpack as hex): `persist` / `restore`", maxChunks: STRING_FORMATS_UP_TO },
  { id: "binary-file", label: "plugin `binary` (raw msgpack), `/server`: `persistToFile` / `restoreFromFile`" },
  { id: "binary-file-own", label: "the same msgpack file, decoded and `load()`ed into `create()` with our options", loadsFileOf: "binary-file" },
  { id: "dpack", label: "plugin `dpack`: `persist` / `restore`" },
  { id: "seqproto", label: "plugin `seqproto`: `persist` / `restore`" },
];

const FILE_NAME: Record<Exclude<VariantId, "ours" | "binary-file-own">, string> = {
  json: "db.json",
  binary: "db.hex",
  "binary-file": "db.msp",
  dpack: "db.dpack",
  seqproto: "db.seqp",
};

// ---------------------------------------------------------------------------------------------
// What a child process reports

interface Top {
  text: string[];
  vector: string[];
}

interface BuildOut {
  chunks: number;
  vectors: number;
  buildMs: number;
  reference: Top;
}

interface StepOut {
  ms: number;
  /** Peak RSS of the step (VmHWM, reset just before it for saves), KiB. */
  hwmKiB: number;
  /** Loads: the first text and vector query right after, and their top hits. */
  queryMs?: number;
  top?: Top;
  fileBytes?: number;
  /** Loads: whether the database still tokenizes with our tokenizer (restore() drops it). */
  ourTokenizer?: boolean;
}

type Task = { kind: "build"; dir: string; chunks: number } | { kind: "save" | "load"; dir: string; variant: VariantId };

// ---------------------------------------------------------------------------------------------
// Inside a child

const ownPeakKiB = () => vmHwmKiB(process.pid) ?? NaN;

/** Start a new peak-RSS window (Linux: writing 5 to clear_refs resets VmHWM to the current RSS). */
function resetHwm(): void {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {}
}

function queries(): { text: string[]; vectors: Float32Array[] } {
  const text = makeQueries(loadPool(), QUERIES, 31);
  return { text, vectors: text.map((q) => Float32Array.from(fakeEmbedding(`search_query: ${q}`, DIM))) };
}

/** The Orama database inside a Store: the plugin is handed exactly what the product holds. */
function dbOf(store: Store): AnyOrama {
  return (store as unknown as { engine: { db: AnyOrama } }).engine.db;
}

/** Top hits of each query, asked of Orama the way Store.searchText / searchVector ask. */
function topHits(db: AnyOrama, q: ReturnType<typeof queries>): Top {
  const ids = (r: Results<{ id: string }>) => r.hits[0]?.document.id ?? "(none)";
  return {
    text: q.text.map((term) => ids(search(db, { term, properties: ["text"], limit: TOP }) as Results<{ id: string }>)),
    vector: q.vectors.map((value) => ids(search(db, { mode: "vector", vector: { value, property: "embedding" }, similarity: SIMILARITY, limit: TOP, includeVectors: false } as never) as Results<{ id: string }>)),
  };
}

/** The corpus of the main benchmark, chunked and embedded as the index build does, into a Store. */
function build(dir: string, chunks: number): BuildOut {
  const started = performance.now();
  const files = generateCorpus({ chunks, pool: loadPool() });
  const store = Store.empty(dir, MODEL, DIM);
  for (const f of files) {
    const path = join("/bench/memory", f.name);
    const cs = chunkMarkdown(f.text, path).map((c) => ({ ...c, chunkHash: chunkHash(c, MODEL) }));
    const vecs = new Map(cs.map((c) => [c.contentHash, Float32Array.from(fakeEmbedding(`search_document: ${embeddingText(c.content)}`, DIM))]));
    store.replaceFile(path, { mtimeMs: 0, size: f.text.length }, cs, (h) => vecs.get(h));
  }
  store.save();
  const buildMs = performance.now() - started;
  return { chunks: store.size, vectors: store.vectorCount, buildMs, reference: topHits(dbOf(store), queries()) };
}

function openOurs(dir: string): Store {
  const { store, rebuilt, missing } = Store.open(join(dir, "ours"), MODEL);
  if (rebuilt || missing) throw new Error(`Store.open did not load the index: ${rebuilt ?? "missing"}`);
  return store;
}

/** Our options, as store.ts creates a database (its newDb is not exported). */
function ownDb(): AnyOrama {
  return create({ schema: { source: "enum", text: "string", embedding: `vector[${DIM}]` } as never, sort: { enabled: false }, components: { tokenizer: createTokenizer(), index: compactIndex() } }) as AnyOrama;
}

async function save(dir: string, variant: VariantId): Promise<StepOut> {
  const store = openOurs(dir);
  const db = dbOf(store);
  Bun.gc(true);
  resetHwm();
  const t = performance.now();
  let path: string;
  if (variant === "ours") {
    store.save();
    path = join(dir, "ours", INDEX_FILE);
  } else if (variant === "binary-file") {
    path = await persistToFile(db, "binary", join(dir, FILE_NAME[variant]));
  } else if (variant === "binary-file-own") {
    throw new Error("saves nothing of its own");
  } else {
    const data = await persist(db, variant);
    path = join(dir, FILE_NAME[variant]);
    writeFileSync(path, typeof data === "string" ? data : new Uint8Array(data as ArrayBuffer));
  }
  const ms = performance.now() - t;
  return { ms, hwmKiB: ownPeakKiB(), fileBytes: statSync(path).size };
}

async function loadStep(dir: string, variant: VariantId): Promise<StepOut> {
  const q = queries();
  const t = performance.now();
  let db: AnyOrama;
  if (variant === "ours") {
    db = dbOf(openOurs(dir));
  } else if (variant === "binary-file") {
    db = (await restoreFromFile("binary", join(dir, FILE_NAME[variant]))) as AnyOrama;
  } else if (variant === "binary-file-own") {
    db = ownDb();
    load(db, decode(readFileSync(join(dir, FILE_NAME["binary-file"]))) as never);
  } else {
    const path = join(dir, FILE_NAME[variant]);
    // Read back as persist() returned it: json and binary are strings, dpack a Buffer, seqproto bytes.
    const data = variant === "json" || variant === "binary" ? readFileSync(path, "utf8") : readFileSync(path);
    db = (await restore(variant, data)) as AnyOrama;
  }
  const ms = performance.now() - t;
  const tq = performance.now();
  let top: Top;
  try {
    top = topHits(db, q);
  } catch (e) {
    throw new Error(`restored in ${Math.round(ms)} ms, then a query failed: ${firstLine(e)}`);
  }
  const queryMs = performance.now() - tq;
  const tokenizer = (db as unknown as { tokenizer: { tokenize: (s: string) => string[] } }).tokenizer;
  // Our tokenizer drops stop words; Orama's default (what restore() creates) keeps them.
  const ourTokenizer = !tokenizer.tokenize("the okapi").includes("the");
  return { ms, hwmKiB: ownPeakKiB(), queryMs, top, ourTokenizer };
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? `${e.name === "Error" ? "" : `${e.name}: `}${e.message}` : String(e);
  return text.split("\n")[0]!.slice(0, 200);
}

/** Prints one JSON line: the step's figures, or `{error}` (then exits 1). */
async function child(task: Task): Promise<void> {
  try {
    const out = task.kind === "build" ? build(join(task.dir, "ours"), task.chunks) : task.kind === "save" ? await save(task.dir, task.variant) : await loadStep(task.dir, task.variant);
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ error: firstLine(e) })}\n`);
    process.exitCode = 1;
  }
}

// ---------------------------------------------------------------------------------------------
// The parent: one new process per step

interface VariantResult {
  id: VariantId;
  label: string;
  save: number[];
  saveRssMiB?: number;
  fileBytes?: number;
  load: number[];
  loadRssMiB?: number;
  queryMs: number[];
  /** Queries whose top hit differed from the original database's, summed over the loads. */
  textMismatches: number;
  vectorMismatches: number;
  ourTokenizer?: boolean;
  error?: string;
  /** Not run at this size, and why. */
  skipped?: string;
}

interface SizeResult {
  chunks: number;
  vectors: number;
  buildS: number;
  queries: number;
  reps: number;
  variants: VariantResult[];
}

export interface PersistenceResult {
  date: string;
  machine: Machine;
  loadAfter: string;
  reps: number;
  elapsedS: number;
  plugin: string;
  sizes: SizeResult[];
}

async function runChild<T>(bun: string, task: Task, timeoutMs: number): Promise<{ ok: true; out: T } | { ok: false; error: string }> {
  const proc = Bun.spawn([bun, import.meta.path, "--child", JSON.stringify(task)], { stdout: "pipe", stderr: "pipe", cwd: REPO });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill(9);
  }, timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  const line = stdout.trim().split("\n").pop() ?? "";
  const parsed = line.startsWith("{") ? (JSON.parse(line) as T & { error?: string }) : undefined;
  if (code === 0 && parsed && !parsed.error) return { ok: true, out: parsed };
  if (timedOut) return { ok: false, error: `no answer in ${timeoutMs / 1000} s` };
  if (proc.signalCode) return { ok: false, error: `killed by ${proc.signalCode}` };
  return { ok: false, error: parsed?.error ?? `exit ${code}: ${stderr.trim().split("\n").pop()?.slice(0, 160)}` };
}

const median = (xs: number[]) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const maxMiB = (kib: number[]) => (kib.length ? Math.max(...kib) / 1024 : undefined);

async function measureSize(bun: string, work: string, chunks: number, reps: number, log: (l: string) => void): Promise<SizeResult> {
  const dir = mkdtempSync(join(work, `persist-${chunks}-`));
  try {
    log(`  ${chunks} chunks: building the index through Store`);
    const built = await runChild<BuildOut>(bun, { kind: "build", dir, chunks }, 900_000);
    if (!built.ok) throw new Error(`building ${chunks} chunks failed: ${built.error}`);
    const ref = built.out.reference;
    const results = new Map<VariantId, VariantResult & { saveKiB: number[]; loadKiB: number[] }>(
      VARIANTS.map((v) => [
        v.id,
        {
          id: v.id,
          label: v.label,
          save: [],
          load: [],
          queryMs: [],
          textMismatches: 0,
          vectorMismatches: 0,
          saveKiB: [],
          loadKiB: [],
          skipped: v.maxChunks !== undefined && chunks > v.maxChunks ? `not run above ${v.maxChunks.toLocaleString("en-US")} chunks: the whole database as one string` : undefined,
        },
      ]),
    );
    // A step that fails once (a format broken under Bun) is not tried again.
    const limit = 120_000 + chunks * 15;
    for (let rep = 0; rep < reps; rep++) {
      for (const v of VARIANTS) {
        const r = results.get(v.id)!;
        if (r.error || r.skipped || v.loadsFileOf) continue;
        const s = await runChild<StepOut>(bun, { kind: "save", dir, variant: v.id }, limit);
        if (!s.ok) {
          r.error = `save: ${s.error}`;
          continue;
        }
        r.save.push(s.out.ms);
        r.saveKiB.push(s.out.hwmKiB);
        r.fileBytes = s.out.fileBytes;
      }
      log(`    save rep ${rep + 1}/${reps} done`);
    }
    for (const v of VARIANTS) if (v.loadsFileOf) results.get(v.id)!.fileBytes = results.get(v.loadsFileOf)!.fileBytes;
    for (let rep = 0; rep < reps; rep++) {
      for (const v of VARIANTS) {
        const r = results.get(v.id)!;
        const source = results.get(v.loadsFileOf ?? v.id)!;
        if (r.skipped) continue;
        if (r.error || source.error) {
          r.error ??= source.error;
          continue;
        }
        const l = await runChild<StepOut>(bun, { kind: "load", dir, variant: v.id }, limit);
        if (!l.ok) {
          r.error = `load: ${l.error}`;
          continue;
        }
        r.load.push(l.out.ms);
        r.loadKiB.push(l.out.hwmKiB);
        r.queryMs.push(l.out.queryMs!);
        r.ourTokenizer = l.out.ourTokenizer;
        r.textMismatches += l.out.top!.text.filter((id, i) => id !== ref.text[i]).length;
        r.vectorMismatches += l.out.top!.vector.filter((id, i) => id !== ref.vector[i]).length;
      }
      log(`    load rep ${rep + 1}/${reps} done`);
    }
    return {
      chunks: built.out.chunks,
      vectors: built.out.vectors,
      buildS: built.out.buildMs / 1000,
      queries: ref.text.length,
      reps,
      variants: [...results.values()].map(({ saveKiB, loadKiB, ...r }) => ({ ...r, saveRssMiB: maxMiB(saveKiB), loadRssMiB: maxMiB(loadKiB) })),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchPersistence(opts: { bun: string; work: string; sizes?: number[]; reps?: number; log?: (l: string) => void }): Promise<PersistenceResult> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const started = performance.now();
  const reps = opts.reps ?? DEFAULT_REPS;
  const bunVersion = Bun.spawnSync([opts.bun, "--version"]).stdout.toString().trim();
  const mach = machine(bunVersion);
  const plugin = JSON.parse(readFileSync(join(REPO, "node_modules", "@orama", "plugin-data-persistence", "package.json"), "utf8")).version as string;
  const sizes: SizeResult[] = [];
  for (const n of opts.sizes ?? DEFAULT_SIZES) sizes.push(await measureSize(opts.bun, opts.work, n, repsAt(n, reps), log));
  return { date: new Date().toISOString().slice(0, 10), machine: mach, loadAfter: loadAverage(), reps, elapsedS: (performance.now() - started) / 1000, plugin, sizes };
}

// ---------------------------------------------------------------------------------------------
// The section of docs/BENCHMARKS.md

const fmt = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "–" : x >= 100 ? String(Math.round(x)) : x.toFixed(1));
const mib = (b: number | undefined) => (b === undefined ? "–" : (b / 1048576).toFixed(0));
const ratio = (x: number, base: number) => (Number.isFinite(x) && Number.isFinite(base) && base > 0 ? `${(x / base).toFixed(1)}×` : "–");

function sizeTable(s: SizeResult): string {
  const ours = s.variants.find((v) => v.id === "ours")!;
  const o = { save: median(ours.save), load: median(ours.load), bytes: ours.fileBytes ?? NaN };
  const head = ["variant", "save ms", "save peak RSS MiB", "file MiB", "size vs ours", "load to searchable ms", "load vs ours", "load peak RSS MiB", "1st queries ms", "same top hit per load (text / vector)"];
  const rows = s.variants.map((v) => {
    if (v.skipped) return [v.label, ...head.slice(2).map(() => ""), v.skipped];
    if (v.error && !v.load.length) {
      const saved = v.save.length > 0;
      return [v.label, saved ? fmt(median(v.save)) : "–", saved ? fmt(v.saveRssMiB) : "–", saved ? mib(v.fileBytes) : "–", saved ? ratio(v.fileBytes ?? NaN, o.bytes) : "–", "–", "–", "–", "–", `**FAILED**: ${v.error.replace(/\|/g, "\\|")}`];
    }
    const perLoad = (missed: number) => (missed % v.load.length === 0 ? `${s.queries - missed / v.load.length}/${s.queries}` : `${v.load.length * s.queries - missed}/${v.load.length * s.queries} over ${v.load.length} loads`);
    const same = `${perLoad(v.textMismatches)} / ${perLoad(v.vectorMismatches)}${v.ourTokenizer === false ? " (our tokenizer lost)" : ""}`;
    return [
      v.label,
      v.save.length ? fmt(median(v.save)) : "(as above)",
      v.save.length ? fmt(v.saveRssMiB) : "",
      mib(v.fileBytes),
      v.id === "ours" ? "" : ratio(v.fileBytes ?? NaN, o.bytes),
      fmt(median(v.load)),
      v.id === "ours" ? "" : ratio(median(v.load), o.load),
      fmt(v.loadRssMiB),
      fmt(median(v.queryMs)),
      same,
    ];
  });
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n") + `\n\n${s.reps === 2 ? "Mean of 2 runs" : `Medians of ${s.reps} runs`} (a failed format is not retried; RSS is the largest seen); ratios are to our format in the same run.`;
}

/**
 * The verdict, from the figures. A plugin variant counts as comparable when it loads within a
 * quarter of our time and its file is within a quarter of our size; the plugin is ruled out only
 * when no variant is comparable at any size measured.
 */
function verdict(r: PersistenceResult): { ruledOut: boolean; slower: boolean; larger: boolean; sentences: string[] } {
  const sentences: string[] = [];
  let comparable = false;
  let slower = true;
  let larger = true;
  for (const s of r.sizes) {
    const ours = s.variants.find((v) => v.id === "ours")!;
    const oLoad = median(ours.load);
    const oBytes = ours.fileBytes ?? NaN;
    const working = s.variants.filter((v) => v.id !== "ours" && v.load.length && !v.error);
    const failed = s.variants.filter((v) => v.error).map((v) => `\`${v.id}\``);
    const n = s.chunks.toLocaleString("en-US");
    if (!working.length) {
      sentences.push(`${n} chunks: no plugin format loaded.`);
      continue;
    }
    for (const v of working) {
      const loadX = median(v.load) / oLoad;
      const sizeX = (v.fileBytes ?? NaN) / oBytes;
      if (loadX < 1.25 && sizeX < 1.25) comparable = true;
      if (!(loadX >= 1.25)) slower = false;
      if (!(sizeX >= 1.25)) larger = false;
    }
    const fastest = (vs: VariantResult[]) => vs.reduce((a, b) => (median(a.load) <= median(b.load) ? a : b));
    const best = fastest(working);
    const stock = working.filter((v) => v.id !== "binary-file-own");
    const bestStock = stock.length ? fastest(stock) : best;
    const smallest = working.reduce((a, b) => ((a.fileBytes ?? Infinity) <= (b.fileBytes ?? Infinity) ? a : b));
    const saved = working.filter((v) => v.save.length);
    const bestSave = saved.length ? saved.reduce((a, b) => (median(a.save) <= median(b.save) ? a : b)) : undefined;
    const wrong = working.filter((v) => v.textMismatches + v.vectorMismatches > 0).map((v) => `\`${v.id}\`${v.ourTokenizer === false ? " (its database tokenizes with Orama's default, not ours)" : ""}`);
    const slowestOurs = Math.max(...ours.load);
    const quickestPlugin = Math.min(...working.flatMap((v) => v.load));
    sentences.push(
      `${n} chunks: our file loads to a searchable store in ${fmt(oLoad)} ms (${mib(ours.fileBytes)} MiB). ` +
        `The fastest plugin path, ${bestStock.label}, takes ${fmt(median(bestStock.load))} ms (${ratio(median(bestStock.load), oLoad)})` +
        (best.id === bestStock.id ? "" : `; its msgpack loaded into our own \`create()\` ${fmt(median(best.load))} ms (${ratio(median(best.load), oLoad)})`) +
        `. ${quickestPlugin > slowestOurs ? `Every plugin load (quickest ${fmt(quickestPlugin)} ms) was slower than every one of ours (slowest ${fmt(slowestOurs)} ms).` : `The quickest plugin load, ${fmt(quickestPlugin)} ms, beat our slowest, ${fmt(slowestOurs)} ms.`}` +
        ` The smallest plugin file is ${mib(smallest.fileBytes)} MiB (${ratio(smallest.fileBytes ?? NaN, oBytes)}, \`${smallest.id}\`).` +
        (bestSave ? ` Saving: ours ${fmt(median(ours.save))} ms, the plugin's fastest ${fmt(median(bestSave.save))} ms (\`${bestSave.id}\`, ${ratio(median(bestSave.save), median(ours.save))}).` : "") +
        (wrong.length ? ` Some top hits differed from the original database's after ${wrong.join(", ")}.` : "") +
        (failed.length ? ` Failed under Bun ${r.machine.bun}: ${failed.join(", ")}.` : ""),
    );
  }
  return { ruledOut: !comparable, slower, larger, sentences };
}

export function persistenceMarkdown(r: PersistenceResult): string {
  const m = r.machine;
  const v = verdict(r);
  const out = [
    SECTION_TITLE,
    "",
    `Measured on ${r.date} by \`scripts/bench/persistence.ts\` (${(r.elapsedS / 60).toFixed(1)} min; \`bun scripts/bench/persistence.ts --write\` or \`bun run bench -- --persistence\` re-measures it and rewrites this section), @orama/plugin-data-persistence ${r.plugin}.`,
    "",
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB; ${m.os}; Bun ${m.bun}. Load average at start ${m.load}, at end ${r.loadAfter}: other agents shared the CPU, so read the ratios (same run, same machine state) rather than the absolute figures.`,
    "- The database: the main benchmark's corpus (`scripts/bench/corpus.ts`) chunked and embedded as the index build does (768-d vectors of the Ollama double's `fakeEmbedding`, computed in-process), inserted through `Store`, saved by `Store.save`. Every other save starts from that file opened with `Store.open` and hands the plugin the Orama database inside the Store, so every variant holds the same documents, tokens and vectors.",
    "- Every save and every load is a new `bun` process; the time is in-process (module loading excluded): for a save, from the database in memory to the bytes on disk; ours writes a temp file, fsyncs and renames it (`Store.save`), the plugin's bytes are written without fsync. For a load, from nothing to a database that answers a query (ours: `Store.open`, with its CRC checks; the plugin: read the file, `restore`). Then the queries the original database was asked right after its build (" + QUERIES + " corpus phrases, each full-text and as a vector, `similarity` " + SIMILARITY + ") are run once: `1st queries` is their time, `same top hit` whether each one's first hit is the original's. Peak RSS is the process's VmHWM (for saves, reset after opening the index, so it is the save's own peak).",
    "- `json`, `binary`, `dpack` and `seqproto` go through the main entry's `persist(db, format)` and `restore(format, data)`, the bytes written and read with `node:fs`; the plugin's `/server` entry writes `binary` as raw msgpack instead of hex (`persistToFile` / `restoreFromFile`). The row after it decodes that msgpack file and `load()`s it into `create()` with our options, as `restore` should (it creates a database with a placeholder schema and Orama's default tokenizer: ours, with its stop words and CJK bigrams, is lost).",
    "",
  ];
  for (const s of r.sizes) {
    out.push(`### ${s.chunks.toLocaleString("en-US")} chunks × 768-d: our file against the plugin's formats (${s.vectors.toLocaleString("en-US")} vectors; ${s.queries} queries per load)`, "", sizeTable(s), "");
  }
  out.push("### Conclusion (persistence)", "", ...v.sentences.map((x) => `- ${x}`), "");
  out.push(
    v.ruledOut
      ? `Decision: no plugin format comes within a quarter of ours on both load time and file size (${[v.slower && "every one loads slower", v.larger && "every file is larger"].filter(Boolean).join(", ") || "each falls short on one"}), and \`restore\` drops our tokenizer and schema. memsearch does not use the plugin at run time; it is a devDependency, kept for this benchmark only.`
      : "A plugin format came within a quarter of ours on both load time and file size in this run: whether to use it is open (see the tables); nothing in the product uses it.",
    "",
  );
  return out.join("\n");
}

/** Where the persistence section stands in `doc`: from its title's line to the next `## ` (or the end). */
function sectionBounds(doc: string): { start: number; end: number | undefined } | undefined {
  const at = doc.indexOf(`\n${SECTION_TITLE}\n`);
  if (at < 0) return undefined;
  const next = doc.indexOf("\n## ", at + 1 + SECTION_TITLE.length);
  return { start: at + 1, end: next < 0 ? undefined : next + 1 };
}

/** `doc` with the persistence section replaced by `section` (appended when it has none). */
export function withSection(doc: string, section: string): string {
  const b = sectionBounds(doc);
  if (!b) return `${doc.replace(/\n*$/, "\n")}\n${section.replace(/\n*$/, "\n")}`;
  return `${doc.slice(0, b.start)}${section.replace(/\n*$/, "\n")}${b.end === undefined ? "" : doc.slice(b.end - 1)}`;
}

/** The section as it stands in `doc`, so a run of the main benchmark without `--persistence` keeps it. */
export function existingSection(doc: string): string | undefined {
  const b = sectionBounds(doc);
  return b && doc.slice(b.start, b.end);
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  if (value("child")) {
    await child(JSON.parse(value("child")!) as Task);
  } else {
    const sizes = value("sizes")?.split(",").map(Number) ?? DEFAULT_SIZES;
    const reps = Number(value("reps") ?? DEFAULT_REPS);
    if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(reps) || reps < 1) throw new Error("--sizes takes whole numbers, --reps a whole number");
    const work = mkdtempSync(join(tmpdir(), "ms-bench-persist-"));
    try {
      const from = value("from");
      const r = from ? (JSON.parse(readFileSync(resolve(from), "utf8")) as PersistenceResult) : await benchPersistence({ bun: pinnedBun(), work, sizes, reps });
      const section = persistenceMarkdown(r);
      process.stdout.write(`${section}\n`);
      if (value("json")) writeFileSync(resolve(value("json")!), JSON.stringify(r, null, 1));
      if (argv.includes("--write")) {
        const doc = join(REPO, "docs", "BENCHMARKS.md");
        mkdirSync(join(REPO, "docs"), { recursive: true });
        writeFileSync(doc, withSection(existsSync(doc) ? readFileSync(doc, "utf8") : "# Benchmarks\n", section));
        process.stderr.write(`Wrote the section into ${doc}\n`);
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}
