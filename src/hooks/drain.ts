import { homedir } from "node:os";
import { loadContext, type Context } from "../core/context.ts";
import { oneLine } from "../core/errors.ts";
import { refreshIndex } from "../watch/gateway.ts";
import { drainPending } from "../memory/capture.ts";
import { queuedHere, type PendingTurn } from "../memory/pending.ts";
import { agentOrDefault, checkQueuedTranscript } from "../agents/registry.ts";
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
    readerFor: (name) => agentOrDefault(name),
    checkTranscript: transcriptCheck(project.dataDir, project.root),
    summarize: (turn) => summarizeTurn(turn, summarizerOptions(config, { ledger: { dataDir: project.dataDir, purpose: "summary" }, paths: { root: project.root, home: homedir() } })),
  });
  debugLog("drain", report.ran ? "drained" : "another drainer holds the queue", report);
  // The last one wins the status line: the newest problem is the one worth acting on.
  for (const p of report.problems) recordProblem(project.dataDir, p);
  if (report.written > 0) await indexMemory(ctx);
  return {};
}

/**
 * What a queued turn may read. The queue lives in the project, so an entry may come with a cloned
 * repository (or a copied project) and name another project's transcript on this machine: read,
 * it would become a note here, in a file the project may commit. An entry this machine's Stop
 * hook queued for this folder carries its mark and is read as its agent named it; any other is
 * read only when its transcript is one of the project's, in its agent's folder
 * (`checkQueuedTranscript`). Refused, the turn is written from what the entry itself holds (data
 * of this project already).
 */
function transcriptCheck(dataDir: string, root: string): (entry: PendingTurn) => void {
  const told = new Set<string>();
  // Asked again on every look while a transcript lags: whether this machine queued the entry does not change.
  const ours = new WeakMap<PendingTurn, boolean>();
  return (entry) => {
    let here = ours.get(entry);
    if (here === undefined) ours.set(entry, (here = queuedHere(dataDir, entry)));
    if (here) return;
    const path = entry.transcriptPath!;
    try {
      checkQueuedTranscript(path, root, entry.agent);
    } catch (e) {
      // Looked at again until the wait ends, like a transcript not written yet.
      if (!told.has(path)) debugLog("drain", `not reading the transcript of a turn queued elsewhere: ${oneLine(e)}`);
      told.add(path);
      throw e;
    }
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
