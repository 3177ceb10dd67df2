import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * The transcript fixtures, inside the repository: hand-made edge cases at the top, and real
 * Claude Code transcripts in one folder per source repository (see the README there).
 */
export const FIXTURES = resolve(import.meta.dir, "../fixtures/transcripts");

/** The folders of real Claude Code transcripts below FIXTURES, named after their sources. */
export const REAL_SOURCES = ["claude-code-log", "episodic-memory", "spotter"] as const;

/** Every .jsonl file below `dir`, subagent files included, in a stable order. */
export function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...jsonlFiles(p));
    else if (name.endsWith(".jsonl")) out.push(p);
  }
  return out;
}

/** Every real transcript below `root` (subagent files included, synthetic ones not), in a stable order. */
export function realTranscripts(root = FIXTURES): string[] {
  return REAL_SOURCES.flatMap((source) => jsonlFiles(join(root, source)));
}
