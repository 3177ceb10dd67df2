/**
 * Transcript reader benchmark: `memsearch transcript` (turn listing) on the largest real fixture
 * and on a ~100 MB file made by concatenating fixtures, against reading the same file once with
 * `wc -l`, in the same run. Every measurement is a fresh process; the median of a few runs.
 *
 *   bun scripts/bench-transcript.ts [bigMB]      (binary: $MEMSEARCH_BIN or dist/memsearch)
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { FIXTURES, realTranscripts } from "../test/helpers/fixtures.ts";
import { join, relative, resolve } from "node:path";

const REPO = resolve(import.meta.dir, "..");
const RUNS = 5;

export interface BenchRow {
  name: string;
  /** Median wall time of the memsearch run. */
  ms: number;
  /** Median wall time of `wc -l` on the same file. */
  baselineMs: number;
  ratio: number;
}

/** Concatenate the fixtures (repeatedly) into `path` until it holds at least `mb` MiB. */
function buildBigFile(path: string, mb: number, files: string[]): number {
  writeFileSync(path, "");
  const want = mb * 1024 * 1024;
  let size = 0;
  const contents = files.map((f) => {
    const b = readFileSync(f);
    return b.length && b[b.length - 1] !== 10 ? Buffer.concat([b, Buffer.from("\n")]) : b;
  });
  while (size < want) {
    for (const c of contents) {
      appendFileSync(path, c);
      size += c.length;
      if (size >= want) break;
    }
  }
  return size;
}

async function timeOnce(argv: string[]): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { stdout: "ignore", stderr: "pipe", env: { ...process.env, TZ: "UTC" } });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${err.trim()}`);
  return ms;
}

async function median(argv: string[], runs = RUNS): Promise<number> {
  await timeOnce(argv); // warm the page cache and the binary
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) xs.push(await timeOnce(argv));
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)]!;
}

async function row(name: string, argv: string[], file: string): Promise<BenchRow> {
  const ms = await median(argv);
  const baselineMs = await median(["wc", "-l", file]);
  return { name, ms: round(ms), baselineMs: round(baselineMs), ratio: round(ms / baselineMs) };
}

const round = (x: number) => Math.round(x * 10) / 10;

export async function benchTranscript(opts: { bigMB?: number; bin?: string } = {}): Promise<BenchRow[]> {
  const bin = opts.bin ?? process.env.MEMSEARCH_BIN ?? join(REPO, "dist/memsearch");
  if (!existsSync(bin)) throw new Error(`binary not found: ${bin} (build it with 'bun run build', or set MEMSEARCH_BIN)`);
  const files = realTranscripts(FIXTURES);
  if (!files.length) throw new Error(`no fixtures under ${FIXTURES}`);
  const largest = files.map((f) => [statSync(f).size, f] as const).sort((a, b) => b[0] - a[0])[0]!;
  const mb = opts.bigMB ?? 100;
  const dir = mkdtempSync(join(tmpdir(), "ms-bench-transcript-"));
  try {
    const big = join(dir, "big-session.jsonl");
    const size = buildBigFile(big, mb, files);
    const largestName = `${relative(FIXTURES, largest[1])} (${(largest[0] / 1e6).toFixed(1)} MB)`;
    const bigName = `${(size / 1024 / 1024).toFixed(0)} MiB concatenated`;
    // The files are not under Claude Code's projects folder: read as files the user names.
    return [
      // Process start-up alone, for reading the small-file figure.
      await row("start-up only: memsearch --version", [bin, "--version"], largest[1]),
      await row(`list turns: ${largestName}`, [bin, "transcript", "--any-file", largest[1]], largest[1]),
      await row(`list turns: ${bigName}`, [bin, "transcript", "--any-file", big], big),
      await row(`last turn:  ${bigName}`, [bin, "transcript", "--any-file", big, "--last-turn"], big),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatTable(rows: BenchRow[]): string {
  const w = Math.max(...rows.map((r) => r.name.length), 4);
  const head = `${"case".padEnd(w)}  ${"memsearch ms".padStart(12)}  ${"wc -l ms".padStart(9)}  ${"ratio".padStart(6)}`;
  const lines = rows.map((r) => `${r.name.padEnd(w)}  ${r.ms.toFixed(1).padStart(12)}  ${r.baselineMs.toFixed(1).padStart(9)}  ${r.ratio.toFixed(1).padStart(6)}`);
  return [head, "-".repeat(head.length), ...lines].join("\n");
}

if (import.meta.main) {
  const arg = process.argv[2];
  const rows = await benchTranscript(arg ? { bigMB: Number(arg) } : {});
  console.log(formatTable(rows));
}
