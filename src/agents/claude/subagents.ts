/**
 * Subagent transcripts: Claude Code 2.x writes each subagent (Task/Agent tool, compaction agent)
 * to `<session>/subagents/agent-<id>.jsonl` beside `<session>.jsonl` (files.ts knows the
 * layout). Their lines are all sidechain lines; read on their own they are the main thread of that file.
 */
import { statSync } from "node:fs";
import { basename } from "node:path";
import { listTranscripts, subagentDir } from "./files.ts";
import { readTranscript, type ReadOptions } from "./reader.ts";
import type { SubagentFile, Transcript } from "./types.ts";

export { subagentDir };

/** Subagent files of a session (regular files only), sorted by name; empty when there are none. */
export async function listSubagents(sessionPath: string): Promise<SubagentFile[]> {
  const out: SubagentFile[] = [];
  for (const path of listTranscripts(subagentDir(sessionPath)).files) {
    const m = /^agent-(.+)\.jsonl$/.exec(basename(path));
    if (!m) continue;
    try {
      out.push({ agentId: m[1]!, path, compaction: m[1]!.startsWith("acompact"), size: statSync(path).size });
    } catch {
      // vanished meanwhile
    }
  }
  return out;
}

/** Read one subagent file (its sidechain lines are its main thread). */
export function readSubagent(path: string, opts: ReadOptions = {}): Promise<Transcript> {
  return readTranscript(path, { ...opts, subagent: true });
}
