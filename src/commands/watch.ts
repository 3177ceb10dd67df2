import { existsSync } from "node:fs";
import { makeDataDir } from "../core/project.ts";
import { resolve } from "node:path";
import { loadContext } from "../core/context.ts";
import { MemsearchError, NotFoundError, oneLine } from "../core/errors.ts";
import type { IndexReport } from "../index/indexer.ts";
import { readWatchInfo } from "../watch/client.ts";
import { followSessions, followsSessions } from "../watch/lifetime.ts";
import { withFileLock } from "../core/lock.ts";
import { releaseStart } from "../watch/starting.ts";
import { curatedFiles } from "../agents/curated.ts";
import { checkFlag, embeddingFlags, embeddingOverrides, jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { notice, print, printJsonLine } from "./output.ts";
import { indexNotices } from "./index-cmd.ts";

const PENDING_SWEEP_MS = 60_000;
/** How often the watch process brings the user's conversation index (`recall`) up to date. */
const TRANSCRIPTS_EVERY_MS = 30_000;

export const watchCommand = command({
  command: "watch [paths..]",
  describe: "Index, then keep the index warm and re-index on changes (one per project; serves fast searches)",
  flags: {
    ...embeddingFlags,
    paths: { positional: true, type: "string", array: true, default: [] },
    "debounce-ms": { type: "number", describe: "Quiet time before re-indexing a changed file (default 1500)" },
    ...jsonFlag,
  },
  run: async (a) => {
    // A process that runs on: with --json, one JSON object a line per event (as rg --json prints).
    const say: Say = (event, text) => (a.jsonOutput ? printJsonLine(event) : print(text));
    const ctx = loadContext({ ...embeddingOverrides(a), "watch.debounce_ms": checkFlag("--debounce-ms", "watch.debounce_ms", a.debounceMs) });
    const own = !a.paths.length;
    const paths = own ? [ctx.project.memoryDir] : a.paths.map((p) => resolve(p));
    if (own) makeDataDir(ctx.project.dataDir, ctx.project.memoryDir);
    for (const p of paths) if (!existsSync(p)) throw new NotFoundError(`path not found: ${p}`);
    makeDataDir(ctx.project.dataDir);
    // As for `index`: a path outside the project is recorded as the user's, so the index keeps it.
    if (!own) await (await import("../core/places.ts")).nameOutsidePaths(ctx.project, paths);
    const daemon = await serve(ctx, paths, own, say);
    // Serving: the marker of the hook that started this process holds no start any more.
    releaseStart(ctx.project.watchStarting, process.pid);
    const stop = stopper(daemon, say);
    process.on("SIGINT", () => stop());
    process.on("SIGTERM", () => stop());
    // Started by a hook: leave once no Claude Code session of the project is alive (a session
    // killed with its terminal never runs SessionEnd). Started by hand: run until stopped.
    if (followsSessions()) followSessions({ dataDir: ctx.project.dataDir, daemon, leave: stop, log: (m) => notice(`Error: ${m}`) });
    daemon.watchFiles();
    if (own) await keepUp(ctx);
    await daemon.reindex("initial");
    say({ event: "watching", paths, pid: process.pid }, `Watching ${paths.length} path(s) for changes... (Ctrl+C to stop)`);
    await new Promise(() => {});
  },
});

type Say = (event: Record<string, unknown>, text: string) => void;
type Ctx = ReturnType<typeof loadContext>;
type Daemon = InstanceType<Awaited<typeof import("../watch/daemon.ts")>["Daemon"]>;

/**
 * The watch process for `paths`, serving once it has claimed the project: checked and claimed
 * under a lock, since two sessions starting at once must not both serve. Watching the project's
 * own memory (`own`), Claude Code's curated files are indexed and kept current too; turned off,
 * the set is empty, so those indexed before leave the index.
 */
async function serve(ctx: Ctx, paths: string[], own: boolean, say: Say): Promise<Daemon> {
  const { Daemon } = await import("../watch/daemon.ts");
  const { newSkips, newCleans, newForgotten } = saidOnce();
  const curated = own ? { find: () => (ctx.config["indexing.curated"] ? curatedForWatch(ctx.project.root) : { files: [], watchDirs: [], memoryDirs: [] }) } : undefined;
  const daemon = new Daemon(ctx, paths, {
    onIndexed: (r, trigger) => {
      for (const line of indexNotices({ ...r, skippedFiles: newSkips(r), cleanedFiles: newCleans(r), forgottenBack: newForgotten(r) }, ctx.config["embedding.model"])) notice(line);
      if (r.indexedChunks || r.removedChunks) say({ event: "indexed", trigger, indexedChunks: r.indexedChunks, removedChunks: r.removedChunks, totalChunks: r.totalChunks }, `Indexed ${r.indexedChunks} chunks${trigger === "initial" ? "" : ` (${trigger})`}.`);
    },
    onError: (m) => notice(`Error: ${m}`),
  }, curated);
  await withFileLock(ctx.project.watchLock, async () => {
    const other = readWatchInfo(ctx.project.dataDir);
    if (other) throw new MemsearchError(`a watch process is already running for this project (pid ${other.pid})`);
    await daemon.listen();
  });
  return daemon;
}

/** A skipped, cleaned or forgotten-and-back file is reported by every re-index: said once per file and reason. */
function saidOnce() {
  const said = new Set<string>();
  const firstTime = (key: string) => {
    if (said.has(key)) return false;
    said.add(key);
    return true;
  };
  return {
    newSkips: (r: IndexReport) => r.skippedFiles.filter((f) => firstTime(`${f.reason} ${f.path}`)),
    newCleans: (r: IndexReport) => r.cleanedFiles.filter((f) => firstTime(`cleaned ${f.cleaned} ${f.dropped} ${f.path}`)),
    newForgotten: (r: IndexReport) => (r.forgottenBack ?? []).filter((f) => firstTime(`forgotten ${f.turns.join(" ")} ${f.path}`)),
  };
}

/** Stops once: a watch process another one has taken over from must not close its server (that would unlink the other's socket); it only saves. */
function stopper(daemon: Daemon, say: Say): (why?: string, ownSocket?: boolean) => void {
  let stopping = false;
  return (why, ownSocket = true) => {
    if (stopping) return;
    stopping = true;
    say({ event: "stopping", reason: why ?? null }, why ? `Stopping watcher: ${why}.` : "\nStopping watcher.");
    void (ownSocket ? daemon.close() : daemon.saveNow()).finally(() => process.exit(0));
  };
}

/**
 * While the project's own memory is watched: the turns a killed drainer left queued get their
 * notes as the session goes on, and the conversation index (in the home, shared by every project)
 * is kept current, so a recall during a session is fast (an unchanged transcript costs one stat).
 * Their own errors are said and never stop the watcher.
 */
async function keepUp(ctx: Ctx): Promise<void> {
  const { kickDrainer } = await import("../hooks/drainer.ts");
  const sweep = () => {
    try {
      kickDrainer(ctx);
    } catch (e) {
      notice(`Error: could not start the drainer: ${oneLine(e)}`);
    }
  };
  sweep();
  setInterval(sweep, PENDING_SWEEP_MS);
  if (process.env.MEMSEARCH_NO_TRANSCRIPT_INDEX === "1") return;
  const [{ keepTranscriptsIndexed }, { recordProblem }, { transcriptSources }] = await Promise.all([import("../conversations/keeper.ts"), import("../hooks/runtime.ts"), import("../agents/registry.ts")]);
  // A heal is said in the log and in the next SessionStart status line.
  const said = (line: string) => {
    notice(line);
    recordProblem(ctx.project.dataDir, line);
  };
  keepTranscriptsIndexed(TRANSCRIPTS_EVERY_MS, transcriptSources(process.env, { offThread: true }), (m) => notice(`Error: conversation index: ${m}`), said, ctx.config["conversations.archive_days"]);
}

function curatedForWatch(root: string) {
  const found = curatedFiles(root);
  return { files: found.files.map((f) => f.path), watchDirs: found.watchDirs, memoryDirs: found.memoryDirs };
}
