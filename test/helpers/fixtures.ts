import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** The real Claude Code transcripts in shared/ (beside the repository, locally and in CI). */
export const FIXTURES = resolve(import.meta.dir, "../../../shared/fixtures/transcripts");

/** Every .jsonl file below `dir`, subagent files included, in a stable order. */
export function jsonlFiles(dir = FIXTURES): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...jsonlFiles(p));
    else if (name.endsWith(".jsonl")) out.push(p);
  }
  return out;
}
