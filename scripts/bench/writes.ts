/**
 * What a change costs the index (issue 34): for `memsearch remember`, `memsearch forget` and an
 * `import` of 1,000 turns with no watch process, and for a turn the watch process re-indexes, the
 * time and the bytes written to the index folder. The bytes are counted from the folder itself: every
 * file that is new or changed between two listings (name, inode, size, mtime), counted whole (a file
 * written twice between two listings counts once, so listings are taken around each change).
 */
import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Store } from "../../src/index/store.ts";
import { percentile, summarize, type Measurement, type Sample } from "./proc.ts";

/** The index folder's files: name → inode:size:mtime. */
export function listing(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {}
  for (const n of names) {
    if (n.endsWith(".lock")) continue;
    try {
      const st = statSync(join(dir, n));
      if (st.isFile()) out.set(n, `${st.ino}:${st.size}:${st.mtimeMs}`);
    } catch {}
  }
  return out;
}

/** Bytes of the files new or changed since `before`. */
export function bytesWritten(dir: string, before: Map<string, string>): number {
  let bytes = 0;
  for (const [n, v] of listing(dir)) if (before.get(n) !== v) bytes += Number(v.split(":")[1]);
  return bytes;
}

/** The index folder's size on disk (base, manifest, segments). */
export function indexBytes(dir: string): number {
  let bytes = 0;
  for (const v of listing(dir).values()) bytes += Number(v.split(":")[1]);
  return bytes;
}

export const kib = (b: number) => (b >= 10 * 1048576 ? `${(b / 1048576).toFixed(0)} MiB` : b >= 1048576 ? `${(b / 1048576).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);

/** p50 and max of bytes, for a note. */
export function bytesNote(bytes: number[]): string {
  if (!bytes.length) return "index bytes written: –";
  return `index bytes written p50 ${kib(percentile(bytes, 50))} (max ${kib(Math.max(...bytes))})`;
}

type Run = (args: string[], rss: boolean, extra?: Record<string, string>, stdin?: string) => Promise<Sample>;

/** Words no corpus note holds, so each remembered note is its own. */
function noteText(i: number): string {
  return `Bench note ${i}: the capybara relay ${randomUUID().slice(0, 8)} drains its outbox every ${7 + i} minutes; ticket CR-${1000 + i}.`;
}

/**
 * remember × n, then forget × n (each of those notes again), then one import of `turns` turns, each a
 * new process with no watch process; the time of each and the bytes it wrote to the index folder.
 */
export async function writeRows(run: Run, indexDir: string, n: number, importDir: string, turns: number): Promise<Measurement[]> {
  const rows: Measurement[] = [];
  const remembered: string[] = [];
  const samples: Sample[] = [];
  const bytes: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = listing(indexDir);
    const s = await run(["remember", noteText(i), "-j"], false);
    bytes.push(bytesWritten(indexDir, before));
    samples.push(s);
    try {
      remembered.push(JSON.parse(s.stdout).turn);
    } catch {}
  }
  rows.push({ ...summarize("remember (no watch process)", samples), note: `${bytesNote(bytes)}; a note of its own, indexed in the same process` });
  const fSamples: Sample[] = [];
  const fBytes: number[] = [];
  for (const turn of remembered) {
    const before = listing(indexDir);
    fSamples.push(await run(["forget", turn], false));
    fBytes.push(bytesWritten(indexDir, before));
  }
  rows.push({ ...summarize("forget (no watch process)", fSamples), note: `${bytesNote(fBytes)}; one of the notes above` });
  const before = listing(indexDir);
  const imported = await run(["import", importDir, "-j"], false);
  const written = bytesWritten(indexDir, before);
  let count = "";
  try {
    count = `${JSON.parse(imported.stdout).written} turns written`;
  } catch {}
  rows.push({ ...summarize(`import of ${turns.toLocaleString("en-US")} turns (no watch process)`, [imported]), note: `index bytes written ${kib(written)}; ${count}; extract summaries, vectors from the double` });
  return rows;
}

/** The index on disk against a freshly merged copy of it (the merge done in this process, on a copy). */
export function onDiskRatio(indexDir: string, work: string, model: string): string {
  const copy = mkdtempSync(join(work, "merged-"));
  try {
    cpSync(indexDir, copy, { recursive: true });
    const { store, rebuilt } = Store.open(copy, model);
    if (rebuilt) return `–`;
    const segments = store.segmentCount;
    store.save({ merge: true });
    return `${(indexBytes(indexDir) / indexBytes(copy)).toFixed(2)}× a freshly merged one (${segments} segments)`;
  } catch (e) {
    return `– (${(e as Error).message})`;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

export type { Measurement };
