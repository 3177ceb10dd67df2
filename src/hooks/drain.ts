import { homedir } from "node:os";
import { loadContext, type Context } from "../core/context.ts";
import { oneLine } from "../core/errors.ts";
import { refreshIndex } from "../watch/gateway.ts";
import { drainPending, type AgentReader } from "../memory/capture.ts";
import { agentOrDefault, checkQueuedTranscript } from "../agents/registry.ts";
import type { AgentAdapter } from "../agents/types.ts";
import { summarizeTurn, summarizerOptions } from "../memory/summarizer.ts";
import { debugLog, recordProblem, type HookOutput } from "./runtime.ts";

/**
 * The drainer: `memsearch hook drain`, started by the hooks in a session and process group of its
 * own so that it outlives Claude Code (which ends its hooks at teardown). It writes a note for
 * every queued turn of the project it is started in, then brings the index up to date.
 */
export async function drain(): Promise<HookOutput> {
  const ctx = loadContext({}, process.cwd());
  const { project, config } = ctx;
  const report = await drainPending({
    memoryDir: project.memoryDir,
    dataDir: project.dataDir,
    readerFor: (name) => projectReader(agentOrDefault(name), project.root),
    summarize: (turn) => summarizeTurn(turn, summarizerOptions(config, { ledger: { dataDir: project.dataDir, purpose: "summary" }, paths: { root: project.root, home: homedir() } })),
  });
  debugLog("drain", report.ran ? "drained" : "another drainer holds the queue", report);
  // The last one wins the status line: the newest problem is the one worth acting on.
  for (const p of report.problems) recordProblem(project.dataDir, p);
  if (report.written > 0) await indexMemory(ctx);
  return {};
}

/**
 * The agent's reader, for this project's transcripts only. The queue lives in the project, so a
 * cloned repository can ship an entry naming another project's transcript on this machine: read,
 * it would become a note here, in a file the project may commit. A refused path is never read as
 * a transcript, and the turn is written from what the hooks recorded in the entry (data of this
 * project already).
 */
function projectReader(agent: AgentAdapter, root: string): AgentReader {
  const told = new Set<string>();
  return {
    label: agent.label,
    findStoppedTurn: async (path, q) => {
      try {
        checkQueuedTranscript(path, root);
      } catch (e) {
        // Looked for again until the wait ends, like a transcript not written yet: a session's
        // file can name its folder only once its first line is in.
        if (!told.has(path)) debugLog("drain", `not reading the queued turn's transcript: ${oneLine(e)}`);
        told.add(path);
        throw e;
      }
      return agent.findStoppedTurn(path, q);
    },
  };
}

async function indexMemory(ctx: Context): Promise<void> {
  try {
    // Never a merge on a hook's time: the watch process merges in the background.
    await refreshIndex(ctx, "never");
  } catch (e) {
    recordProblem(ctx.project.dataDir, `indexing after a turn failed: ${oneLine(e)}`);
  }
}
