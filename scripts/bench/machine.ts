/** The machine a run was made on, for the report: numbers mean little without it. */
import { readFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  os: string;
  bun: string;
  load: string;
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (m) return m[1]!.trim();
  } catch {}
  return cpus()[0]?.model ?? "unknown";
}

function osName(): string {
  try {
    const m = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync("/etc/os-release", "utf8"));
    if (m) return `${m[1]} (Linux ${release()})`;
  } catch {}
  return `${process.platform} ${release()}`;
}

/** 1/5/15-minute load averages: other work on a 2-core box shows up in every figure. */
export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(" / ");
}

export function machine(bunVersion: string): Machine {
  return { cpu: cpuModel(), cores: cpus().length, ramGiB: Math.round(totalmem() / 2 ** 30), os: osName(), bun: bunVersion, load: loadAverage() };
}
