/**
 * Fresh-process measurements: wall time from spawn to exit, and peak RSS. Peak RSS comes from
 * GNU time (`-f %M`, the kernel's ru_maxrss of exactly that child) when it is installed; Bun's
 * own Subprocess.resourceUsage() reported the same figure for unrelated processes here, so it
 * is not trusted. Without GNU time, /proc/<pid>/status VmHWM is polled (may miss a late peak).
 *
 * GNU time itself adds 7–10 ms to a spawn here, as much as `bun -e 0` takes, so it would squash
 * every ratio to the baselines: a series makes one extra run under it for the RSS (which also
 * warms the page cache) and times the other runs bare.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The project's pinned bun for baselines and helpers, so they match the one compiled into the binary. */
export function pinnedBun(): string {
  const local = resolve(import.meta.dir, "..", "..", "node_modules", ".bin", "bun");
  return existsSync(local) ? local : process.execPath;
}

const GNU_TIME = "/usr/bin/time";
const hasGnuTime = existsSync(GNU_TIME);
let scratch: string | undefined;
let seq = 0;

/** Where GNU time writes its figures; made on first use, so importing this module leaves nothing behind. */
function rssFileName(): string {
  scratch ??= mkdtempSync(join(tmpdir(), "ms-bench-rss-"));
  return join(scratch, `${seq++}.txt`);
}

export interface Sample {
  ms: number;
  /** Peak resident set of the process, KiB; undefined if it could not be read. */
  rssKiB?: number;
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  /** Measure peak RSS (under GNU time, or by polling): costs wall time, so timed runs leave it off. */
  rss?: boolean;
}

export function rssMethod(): string {
  return hasGnuTime ? "GNU time %M (ru_maxrss)" : "polled /proc/<pid>/status VmHWM";
}

/** Fields of a live process's /proc status, in KiB (undefined when it is gone or one is missing). */
function statusKiB<K extends string>(pid: number, fields: Record<K, string>): Record<K, number> | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const out = {} as Record<K, number>;
  for (const [key, name] of Object.entries(fields) as [K, string][]) {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
    if (!m) return undefined;
    out[key] = Number(m[1]);
  }
  return out;
}

/**
 * What a live process holds now, KiB: resident in all, its private (anonymous) pages, and the
 * pages of files it maps (the binary's, mostly: one copy in the page cache for every process).
 */
export function residentKiB(pid: number): { rss: number; anon: number; file: number } | undefined {
  return statusKiB(pid, { rss: "VmRSS", anon: "RssAnon", file: "RssFile" });
}

/** VmHWM (peak RSS) of a live process, KiB. */
export function vmHwmKiB(pid: number): number | undefined {
  return statusKiB(pid, { hwm: "VmHWM" })?.hwm;
}

/** Run `cmd` once as a new process and measure it. */
export async function runOnce(cmd: string[], opts: RunOptions): Promise<Sample> {
  const wrapped = hasGnuTime && opts.rss === true;
  const rssFile = wrapped ? rssFileName() : "";
  const argv = wrapped ? [GNU_TIME, "-f", "%M", "-o", rssFile, ...cmd] : cmd;
  const start = performance.now();
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  let polledKiB: number | undefined;
  const poll = wrapped || !opts.rss ? undefined : setInterval(() => (polledKiB = Math.max(polledKiB ?? 0, vmHwmKiB(proc.pid) ?? 0)), 5);
  const timer = setTimeout(() => proc.kill(9), opts.timeoutMs ?? 600_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const ms = performance.now() - start;
  clearTimeout(timer);
  if (poll) clearInterval(poll);
  return { ms, rssKiB: wrapped ? readGnuTimeRss(rssFile) : polledKiB, code, stdout, stderr };
}

/**
 * `cmd` run by bash, which times it with $EPOCHREALTIME and prints the milliseconds: a timer outside
 * this process, to check that runOnce's spawn-to-exit time is what a user's shell sees.
 */
export async function shellTimed(cmd: string[], cwd: string, env: Record<string, string>): Promise<Sample> {
  const quoted = cmd.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const script = `s=$EPOCHREALTIME; ${quoted} >/dev/null 2>&1; c=$?; e=$EPOCHREALTIME; echo "$c $s $e"`;
  const r = await runOnce(["bash", "-c", script], { cwd, env });
  const [code, start, end] = r.stdout.trim().split(" ").map(Number);
  return { ms: (end! - start!) * 1000, code: code ?? 1, stdout: "", stderr: r.stderr };
}

/** GNU time writes "Command exited with non-zero status N" before the figure on failures: take the last number. */
function readGnuTimeRss(file: string): number | undefined {
  try {
    const lines = readFileSync(file, "utf8").trim().split("\n");
    rmSync(file, { force: true });
    const n = Number(lines[lines.length - 1]);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

export function cleanupScratch(): void {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
}

// ---------------------------------------------------------------------------------------------
// Series and percentiles

/** Nearest-rank percentile: with 5 samples p95 is the slowest, which is what a user would notice. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Measurement {
  label: string;
  n: number;
  p50: number;
  p95: number;
  /** Largest peak RSS over the runs, MiB. */
  rssMiB?: number;
  /** Runs that failed their check, with the first reason. */
  failures: number;
  firstFailure?: string;
  note?: string;
  /** Which baseline this row is compared with in the report ("bun-size": the `bun -e 0` runs interleaved at the same size). */
  ratioTo?: "bun" | "bun-size" | "fts";
}

export type Check = (s: Sample) => string | undefined;

/**
 * `n` timed runs of `run(i, false)`, after one run `run(n, true)` that measures peak RSS (pass
 * `rssEachRun` for one-off runs where a few ms do not matter). `check` returns a reason when a
 * run's result is wrong: a command that fails fast must not look fast. Runs are sequential, as
 * concurrent runs would share the 2 cores.
 */
export async function series(label: string, n: number, run: (i: number, rss: boolean) => Promise<Sample>, check: Check = exitedZero, rssEachRun = false): Promise<Measurement & { samples: Sample[] }> {
  const rssRun = rssEachRun ? undefined : await run(n, true);
  const samples: Sample[] = [];
  for (let i = 0; i < n; i++) samples.push(await run(i, rssEachRun));
  return summarize(label, samples, check, rssRun);
}

/** Percentiles of `samples`, the largest peak RSS seen, and the failures. */
export function summarize(label: string, samples: Sample[], check: Check = exitedZero, rssRun?: Sample): Measurement & { samples: Sample[] } {
  let failures = 0;
  let firstFailure: string | undefined;
  for (const s of rssRun ? [rssRun, ...samples] : samples) {
    const why = check(s);
    if (why) {
      failures++;
      firstFailure ??= why;
    }
  }
  const ms = samples.map((s) => s.ms);
  const rss = [rssRun, ...samples].map((s) => s?.rssKiB).filter((x): x is number => x !== undefined);
  return {
    label,
    n: samples.length,
    p50: percentile(ms, 50),
    p95: percentile(ms, 95),
    rssMiB: rss.length ? Math.max(...rss) / 1024 : undefined,
    failures,
    firstFailure,
    samples,
  };
}

export function exitedZero(s: Sample): string | undefined {
  return s.code === 0 ? undefined : `exit ${s.code}: ${(s.stderr || s.stdout).trim().split("\n")[0]?.slice(0, 160)}`;
}
