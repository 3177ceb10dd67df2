/**
 * Subagent transcripts: Claude Code 2.x writes each subagent (Task/Agent tool, compaction agent)
 * to `<session>/subagents/agent-<id>.jsonl` beside `<session>.jsonl`. Their lines are all sidechain
 * lines; read on their own they are the main thread of that file.
 */
import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { readTranscript, type ReadOptions } from "./reader.ts";
import type { SubagentFile, Transcript } from "./types.ts";

/** The folder holding a session's subagent files. */
export function subagentDir(sessionPath: string): string {
  return join(dirname(sessionPath), basename(sessionPath).replace(/\.jsonl$/i, ""), "subagents");
}

/** Subagent files of a session, sorted by name; empty when there are none. */
export async function listSubagents(sessionPath: string): Promise<SubagentFile[]> {
  const dir = subagentDir(sessionPath);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: SubagentFile[] = [];
  for (const name of names.sort()) {
    const m = /^agent-(.+)\.jsonl$/.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    try {
      const st = await stat(path);
      if (!st.isFile()) continue;
      out.push({ agentId: m[1]!, path, compaction: m[1]!.startsWith("acompact"), size: st.size });
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
