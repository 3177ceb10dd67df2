/**
 * Where one run of the compiled binary spends its CPU, from Bun's own sampling profiler
 * (`BUN_OPTIONS=--cpu-prof-md`, honoured by compiled executables too). The hot functions by
 * self time say whether a slow command is parsing, loading, searching or starting up, without
 * the benchmark knowing anything of the index format.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runOnce, type RunOptions } from "./proc.ts";

export interface HotFunction {
  selfPct: number;
  selfMs: number;
  fn: string;
  where: string;
}

export interface CpuProfile {
  wallMs: number;
  sampledMs: number;
  top: HotFunction[];
}

/** "1.03s", "20.5ms", "986us" → ms. */
function toMs(s: string): number {
  const m = /^([\d.]+)(s|ms|us)$/.exec(s.trim());
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === "s" ? 1000 : m[2] === "ms" ? 1 : 0.001);
}

/** The "Hot Functions (Self Time)" table of Bun's markdown profile. */
export function parseHotFunctions(md: string, limit: number): { sampledMs: number; top: HotFunction[] } {
  const duration = /^\| ([\d.]+(?:s|ms|us)) \| \d+ \|/m.exec(md);
  const section = md.split("## Hot Functions (Self Time)")[1]?.split("\n## ")[0] ?? "";
  const top: HotFunction[] = [];
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    // | Self% | Self | Total% | Total | Function | Location |
    if (cells.length < 8 || !/^[\d.]+%$/.test(cells[1]!)) continue;
    top.push({ selfPct: parseFloat(cells[1]!), selfMs: toMs(cells[2]!), fn: cells[5]!.replace(/`/g, ""), where: cells[6]!.replace(/`/g, "") });
    if (top.length >= limit) break;
  }
  return { sampledMs: duration ? toMs(duration[1]!) : NaN, top };
}

/** Run `cmd` once under the profiler; undefined if no profile was written. */
export async function cpuProfile(cmd: string[], opts: RunOptions, limit = 8): Promise<CpuProfile | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "ms-bench-prof-"));
  try {
    const s = await runOnce(cmd, { ...opts, env: { ...opts.env, BUN_OPTIONS: `--cpu-prof-md --cpu-prof-dir=${dir}` } });
    const file = readdirSync(dir).find((f) => f.endsWith(".md"));
    if (s.code !== 0 || !file) return undefined;
    return { wallMs: s.ms, ...parseHotFunctions(readFileSync(join(dir, file), "utf8"), limit) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
