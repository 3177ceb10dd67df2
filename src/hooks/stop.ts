import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { loadContext, type Context } from "../core/context.ts";
import { resolveOllamaHost } from "../core/embedder.ts";
import { oneLine } from "../core/errors.ts";
import { refreshMemoryIndex } from "../core/refresh.ts";
import { appendTurnNote } from "../memory/journal.ts";
import { summarizeTurn } from "../memory/summarizer.ts";
import { extractLastTurn } from "../transcript/last-turn.ts";
import { debugLog, recordProblem, type HookInput, type HookOutput } from "./runtime.ts";

/** Transcripts shorter than this hold no finished turn worth a note. */
const MIN_LINES = 3;

/**
 * Stop (async): summarise the turn that just ended and append it to today's memory file,
 * then get it indexed. A turn is never lost: without a summariser the notes are extracted.
 */
export async function stop(input: HookInput): Promise<HookOutput> {
  if (input.stop_hook_active === true) return {};
  const path = input.transcript_path;
  if (!path || !existsSync(path)) {
    debugLog("stop", "no transcript", path);
    return {};
  }
  if (!hasLines(path, MIN_LINES)) return {};
  const ctx = loadContext({}, input.cwd || process.cwd());
  const { config, project } = ctx;
  if (config["summarizer.provider"] === "off") return {};

  const turn = await extractLastTurn(path, { lastAssistantMessage: input.last_assistant_message });
  if (!turn) {
    debugLog("stop", "no user turn in transcript");
    return {};
  }
  const summary = await summarizeTurn(turn, {
    provider: config["summarizer.provider"] as "claude" | "ollama" | "extract",
    claudeModel: config["summarizer.model"],
    ollamaHost: safeHost(config["embedding.host"]),
    ollamaModel: config["summarizer.ollama_model"],
    timeoutMs: config["summarizer.timeout_ms"],
  });
  debugLog("stop", `summary by ${summary.provider}${summary.fallbackReason ? ` (fallback: ${summary.fallbackReason})` : ""}`, summary.bullets);
  let written;
  try {
    written = await appendTurnNote({
      memoryDir: project.memoryDir,
      sessionId: input.session_id || turn.sessionId,
      turnUuid: turn.turnUuid,
      transcriptPath: path,
      bullets: summary.bullets,
    });
  } catch (e) {
    // Disk full, no permission: the next session's status line says so (this hook is async).
    recordProblem(project.dataDir, `a turn could not be written to memory: ${oneLine(e)}`);
    throw e;
  }
  debugLog("stop", written.appended ? `appended to ${written.file}` : "turn already recorded");
  if (summary.fallbackReason) recordProblem(project.dataDir, `summariser fell back to a plain extract (${summary.fallbackReason})`);
  if (written.appended) await indexMemory(ctx);
  return {};
}

async function indexMemory(ctx: Context): Promise<void> {
  try {
    await refreshMemoryIndex(ctx);
  } catch (e) {
    recordProblem(ctx.project.dataDir, `indexing after a turn failed: ${oneLine(e)}`);
  }
}

function safeHost(configured: string): string {
  try {
    return resolveOllamaHost(configured);
  } catch {
    return "http://127.0.0.1:11434";
  }
}

/** At least `n` lines, reading only the start of the file. */
function hasLines(path: string, n: number): boolean {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(256 * 1024);
    const len = readSync(fd, buf, 0, buf.length, 0);
    let lines = 0;
    for (let i = 0; i < len; i++) if (buf[i] === 10 && ++lines >= n) return true;
    return len === buf.length;
  } finally {
    closeSync(fd);
  }
}
