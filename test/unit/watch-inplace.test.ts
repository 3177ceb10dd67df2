/**
 * The watch process's index rewritten in place, its size and time kept (bit rot, `rsync --inplace
 * -t`, a restore; issue 31). The watch process keeps int8 codes of a large index's vectors and
 * reads their floats from the file it loaded: unnoticed, it scored one row's codes against
 * another's floats and answered from other rows with no notice (25 of 25 queries changed), where a
 * cold search caught the damage. The file's stamp holds its inode and ctime too: the watch process
 * notices, rebuilds with a notice, and answers as a cold search of the same file does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadContext, type Context } from "../../src/core/context.ts";
import { embedderFor } from "../../src/index/embedder.ts";
import { blockStart, openIndexFile } from "../../src/index/format.ts";
import { openOrRebuild } from "../../src/index/heal.ts";
import { indexPaths } from "../../src/index/indexer.ts";
import { searchChunks } from "../../src/index/search.ts";
import { Daemon } from "../../src/watch/daemon.ts";
import { KERNEL_MIN_FLOATS } from "../../src/index/engine/kernels.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";

const DIM = 768;
/** Enough chunks for a cold block (the watch process's int8 codes): KERNEL_MIN_FLOATS at 768-d, and some. */
const CHUNKS = Math.ceil(KERNEL_MIN_FLOATS / DIM) + 100;
const PER_FILE = 100;
const WORDS = "otter heron quokka wombat kestrel lynx marten badger ibis tapir okapi dingo gecko koala lemur moose newt orca panda raven".split(" ");
const QUERIES = Array.from({ length: 25 }, (_, i) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} ${WORDS[(i * 11 + 5) % WORDS.length]}`);

let double: OllamaDouble;
let root: string;
let ctx: Context;
let daemon: Daemon | undefined;

beforeAll(async () => {
  double = await startOllamaDouble({ dim: DIM });
  root = mkdtempSync(join(tmpdir(), "ms-inplace-"));
  mkdirSync(join(root, ".git"));
  const memory = join(root, ".memsearch", "memory");
  mkdirSync(memory, { recursive: true });
  let n = 0;
  for (let f = 0; n < CHUNKS; f++) {
    const sections: string[] = [];
    for (let s = 0; s < PER_FILE && n < CHUNKS; s++, n++) sections.push(`### Note ${n}\n- ${WORDS[n % 20]} ${WORDS[(n * 3) % 20]} ${WORDS[(n * 7 + 1) % 20]} number ${n} in the ${WORDS[(n * 13 + 2) % 20]} ledger.\n`);
    writeFileSync(join(memory, `2026-01-${String(f + 1).padStart(2, "0")}.md`), `# Day ${f}\n\n${sections.join("\n")}`);
  }
  ctx = loadContext({ "embedding.host": double.host }, root, { HOME: root, MEMSEARCH_HOME: join(root, "home") });
  const report = await indexPaths({ paths: [memory], indexDir: ctx.project.indexDir, config: ctx.config, embedder: embedderFor(ctx.config) });
  expect(report.totalChunks).toBe(CHUNKS);
  expect(report.missingVectors).toBe(0);
}, 300_000);

afterAll(async () => {
  await daemon?.close();
  await double.stop();
  rmSync(root, { recursive: true, force: true });
});

type Answer = { hash: string; score: number }[];

async function warm(query: string): Promise<{ answer: Answer; rebuilt: boolean }> {
  const r = await daemon!.handle({ op: "search", query, topK: 5 });
  if (!r.ok || !("results" in r)) throw new Error(`watch search failed: ${JSON.stringify(r)}`);
  return { answer: r.results.map((x) => ({ hash: x.chunk.chunkHash, score: x.score })), rebuilt: "rebuilt" in r && r.rebuilt !== undefined };
}

/** A search of the index file as a command without a watch process makes it. */
async function cold(query: string): Promise<Answer> {
  const { store } = await openOrRebuild(ctx);
  const r = await searchChunks({ query, topK: 5, store, config: ctx.config, embedder: embedderFor(ctx.config, "query") });
  return r.results.map((x) => ({ hash: x.chunk.chunkHash, score: x.score }));
}

/** Swap vector rows in the file's block where they lie, then give the file back its size and times. */
function rewriteRowsInPlace(indexFile: string): void {
  const before = statSync(indexFile);
  const beforeNs = statSync(indexFile, { bigint: true }).mtimeNs;
  const f = openIndexFile(indexFile);
  const at = blockStart(f);
  const rows = f.head.vectorCount;
  closeSync(f.fd);
  const bytes = DIM * 4;
  const fd = openSync(indexFile, "r+");
  const a = Buffer.alloc(bytes);
  const b = Buffer.alloc(bytes);
  for (let i = 0; i + 1 < rows; i += 2) {
    readSync(fd, a, 0, bytes, at + i * bytes);
    readSync(fd, b, 0, bytes, at + (i + 1) * bytes);
    writeSync(fd, b, 0, bytes, at + i * bytes);
    writeSync(fd, a, 0, bytes, at + (i + 1) * bytes);
  }
  closeSync(fd);
  // To the nanosecond, as `rsync -t` or a restore give it back.
  const t = beforeNs;
  const stamp = `@${t / 1_000_000_000n}.${String(t % 1_000_000_000n).padStart(9, "0")}`;
  expect(Bun.spawnSync(["touch", "-m", "-d", stamp, indexFile]).exitCode).toBe(0);
  const after = statSync(indexFile);
  expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
}

describe("the watch process's index rewritten in place with its size and mtime kept", () => {
  test(
    "is noticed: the watch process rebuilds with a notice and then answers as a cold search of the same file",
    async () => {
      daemon = new Daemon(ctx, [ctx.project.memoryDir]);
      // Before: the warm answers are the cold ones.
      const differing = async () => {
        const w: Answer[] = [];
        for (const q of QUERIES) w.push((await warm(q)).answer);
        const c: Answer[] = [];
        for (const q of QUERIES) c.push(await cold(q));
        return QUERIES.filter((_q, i) => JSON.stringify(w[i]) !== JSON.stringify(c[i])).length;
      };
      expect(await differing()).toBe(0);
      rewriteRowsInPlace(ctx.project.indexFile);

      const first = await warm(QUERIES[0]!);
      expect(first.rebuilt).toBe(true);
      // Whatever the rebuild set going (the vectors it could not keep are embedded again) finishes first.
      await daemon.reindex("test");
      // Every warm answer first, then the cold ones: a cold search heals the file it meets, and the
      // watch process would then reload the healed file whatever it noticed.
      const changed = await differing();
      expect(`${changed} of ${QUERIES.length} queries answered otherwise than a cold search`).toBe(`0 of ${QUERIES.length} queries answered otherwise than a cold search`);
    },
    300_000,
  );
});
