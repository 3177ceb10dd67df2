import { archiveStats, type ArchiveStats } from "../conversations/archive.ts";
import { transcriptDbPath } from "../conversations/db.ts";
import { loadContext } from "../core/context.ts";
import { indexStats } from "../watch/gateway.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { healNotices } from "./notices.ts";
import { notice, print, printJson } from "./output.ts";
import { accountTurns, notTurnTotal, turnsLine, type TurnAccount } from "../memory/accounting.ts";
import { userFiles, type ProjectPaths } from "../core/project.ts";
import { projectTranscripts } from "../agents/registry.ts";
import { DEFAULT_AGENT } from "../core/anchor.ts";

/** The turn accounting, or undefined when the project has no session yet. */
async function turnCounts(p: Pick<ProjectPaths, "root" | "memoryDir" | "dataDir">, cacheFile: string): Promise<TurnAccount | undefined> {
  const a = await accountTurns({ root: p.root, memoryDir: p.memoryDir, dataDir: p.dataDir, cacheFile, sources: projectTranscripts(p.root) });
  return a.sessions.length ? a : undefined;
}
import { costLines, modelCosts } from "./costs.ts";

export const statsCommand = command({
  command: "stats",
  describe: "Show what the project's index holds",
  flags: jsonFlag,
  run: async (a) => {
    const ctx = loadContext();
    const { head: meta, heal } = await indexStats(ctx);
    const archive = archiveStats(transcriptDbPath());
    const keepDays = ctx.config["conversations.archive_days"];
    for (const line of healNotices(heal, ctx.config["embedding.model"])) notice(line);
    const data = {
      total_chunks: meta?.chunks ?? 0,
      files: meta?.files ?? 0,
      vectors: meta?.vectors ?? 0,
      embedding_model: meta?.model ?? ctx.config["embedding.model"],
      dimension: meta?.dim ?? null,
      index_path: ctx.project.indexDir,
      index_bytes: meta?.bytes ?? 0,
      updated_at: meta?.updatedAt ?? null,
      memory_dir: ctx.project.memoryDir,
      turns: (await turnCounts(ctx.project, userFiles().turnsCache)) ?? null,
      conversation_archive: archive
        ? {
            transcripts: archive.transcripts,
            messages: archive.messages,
            session_rows: archive.sessionRows,
            chars: archive.chars,
            oldest_deleted_at: archive.oldestGoneAt !== undefined ? new Date(archive.oldestGoneAt).toISOString() : null,
            keep_days: keepDays || null,
          }
        : null,
    };
    const costs = modelCosts(ctx.project.dataDir);
    if (a.jsonOutput) return printJson({ ...data, model_calls: costs });
    const turns = data.turns;
    print(
      [
        `Total indexed chunks: ${data.total_chunks}`,
        `Files: ${data.files}`,
        `Chunks with vectors: ${data.vectors}${data.dimension ? ` (${data.embedding_model}, ${data.dimension}-d)` : ""}`,
        `Index: ${data.index_path} (${(data.index_bytes / 1048576).toFixed(1)} MiB${data.updated_at ? `, updated ${data.updated_at}` : ", not built yet"})`,
        `Turns: ${turns ? turnsLine(turns) : "no session of this project yet"}`,
        ...(turns?.sessions ?? []).map((s) => `  ${s.agent === DEFAULT_AGENT ? "" : `${s.label} `}session ${s.sessionId.slice(0, 8)} (${(s.first ?? "").slice(0, 16).replace("T", " ")}): ${s.turns} turns, ${s.noted} noted${s.queued ? `, ${s.queued} queued` : ""}${s.running ? `, ${s.running} running` : ""}${s.missing ? `, ${s.missing} missing` : ""}${notTurnTotal(s) ? `, ${notTurnTotal(s)} not turns to capture` : ""}`),
        ...costLines(costs),
        archiveLine(archive, keepDays),
      ].join("\n"),
    );
  },
});

/** What the conversation index keeps of transcripts Claude Code deleted (all projects: the index is the user's). */
function archiveLine(a: ArchiveStats | undefined, keepDays: number): string {
  const keep = keepDays > 0 ? `kept ${keepDays} days after their last activity` : "kept without limit (conversations.archive_days)";
  if (!a) return "Conversation archive: no conversation index yet";
  if (a.transcripts === 0) return `Conversation archive: empty (deleted transcripts are ${keep})`;
  const since = a.oldestGoneAt !== undefined ? `, oldest deleted ${new Date(a.oldestGoneAt).toISOString().slice(0, 10)}` : "";
  return `Conversation archive: ${a.transcripts} deleted transcript${a.transcripts === 1 ? "" : "s"}, ${a.messages} message${a.messages === 1 ? "" : "s"}, ${a.sessionRows} session row${a.sessionRows === 1 ? "" : "s"}, ${size(a.chars)} of text${since}; ${keep}`;
}

function size(chars: number): string {
  return chars < 1048576 ? `${(chars / 1024).toFixed(1)} KiB` : `${(chars / 1048576).toFixed(1)} MiB`;
}
