import pkg from "../../package.json" with { type: "json" };
import { loadContext, type Context } from "../core/context.ts";
import { ignoredLine } from "../core/config.ts";
import { embedderFor } from "../index/embedder.ts";
import { ollamaTimeoutMs } from "../core/ollama-client.ts";
import { oneLine, UnsafeDataError } from "../core/errors.ts";
import { peekIndex } from "../index/format.ts";
import { noteDate, noteStamp, previousSession, readDailyTexts, type DailyText } from "../memory/journal.ts";
import { RECENT_DAYS, recentSessions, SESSION_START_CHARS } from "../memory/recent.ts";
import { recordSessionStart } from "../memory/injections.ts";
import { provenance, type Provenance } from "../memory/seen.ts";
import { neutralise } from "../core/frame.ts";
import { registerSession } from "../watch/sessions.ts";
import { recordProject } from "../memory/projects.ts";
import { timeAgo } from "../core/text.ts";
import { clipRedacted, sanitize } from "../core/redact.ts";
import { anchorFirstPrompt } from "../agents/registry.ts";
import { kickDrainer } from "./drainer.ts";
import { debugLog, hookCwd, startWatch, takeProblem, unsafeDataNotice, type HookInput, type HookOutput } from "./runtime.ts";

/**
 * SessionStart: a one-line status for the user, the recent memory for Claude, and the warm
 * watch process for fast recall during the session.
 */
export async function sessionStart(input: HookInput): Promise<HookOutput> {
  const cwd = hookCwd(input);
  let ctx;
  try {
    ctx = loadContext({}, cwd);
  } catch (e) {
    if (e instanceof UnsafeDataError) return { systemMessage: unsafeDataNotice(e) };
    return { systemMessage: `[memsearch v${pkg.version}] config error: ${oneLine(e)}` };
  }
  const { project, config } = ctx;
  const warnings = startBackground(ctx, input.session_id);

  let embedding = "off (BM25 only)";
  const embedder = embedderFor(config, "query");
  // The probe may take its whole budget; the rest is read from disk meanwhile.
  const probing = embedder?.probe(ollamaTimeoutMs(config, "session-start"));
  // The registry behind `memsearch projects` and the hub: a failure here is only logged.
  try {
    const r = await recordProject(project.root, project.dataDir, { timeoutMs: 1_000 });
    if (r.setAside) debugLog("session-start", `projects registry was unreadable; moved to ${r.setAside}`);
  } catch (e) {
    debugLog("session-start", "could not record the project", oneLine(e));
  }
  // The newest daily files both the status line and the context come from, read once.
  const days = readDailyTexts(project.memoryDir, RECENT_DAYS);
  // Which notes this machine wrote: the others came with the repository and are labelled so.
  const ours = provenance();
  let lastSession: string | undefined;
  try {
    lastSession = await lastSessionPhrase(days, input.session_id, new Date(), ours);
  } catch (e) {
    debugLog("session-start", "could not read the last session", oneLine(e));
  }
  if (probing) {
    const probe = await probing;
    embedding = `ollama/${config["embedding.model"]} ${probe.ok ? "ready" : "unavailable"}`;
    if (!probe.ok) warnings.push(`${probe.reason.message}; keyword search only`);
  }
  const head = peekIndex(project.indexDir);
  const chunks = head ? `${head.chunks} chunks` : "not indexed yet";
  const problem = takeProblem(project.dataDir);
  if (problem) warnings.push(problem);
  const ignored = ignoredLine(ctx.resolved.ignored, ".memsearch.toml");
  if (ignored) warnings.push(ignored);

  const status = [
    `[memsearch v${pkg.version}] embedding: ${embedding}`,
    `memory: ${chunks}`,
    `recall: ${config["hooks.recall"]}`,
    ...(lastSession ? [lastSession] : []),
    ...warnings.map((w) => `WARNING: ${w}`),
  ].join(" | ");

  const context = recentContext(ctx, days, input.session_id, ours);
  const out: HookOutput = { systemMessage: status };
  if (context) out.hookSpecificOutput = { hookEventName: "SessionStart", additionalContext: context };
  return out;
}

/**
 * The session on record, the watch process, and a drainer for turns a killed one left queued (they
 * are written now, not whenever the next turn ends). Returns what the status line must warn about.
 */
function startBackground(ctx: Context, sessionId: string | undefined): string[] {
  const { project } = ctx;
  const warnings: string[] = [];
  // Register before looking for a running watch process (see watch/lifetime.ts): it lives as
  // long as a registered Claude Code process does.
  if (sessionId) {
    try {
      const rec = registerSession(project.dataDir, sessionId);
      debugLog("session-start", `registered session as claude pid ${rec.pid}`);
    } catch (e) {
      warnings.push(`could not register the session: ${oneLine(e)}`);
    }
  }
  try {
    const w = startWatch(project.dataDir, project.root);
    debugLog("session-start", w.started ? `started watch pid ${w.pid}` : `watch already running pid ${w.pid}`);
  } catch (e) {
    warnings.push(`could not start the watch process: ${oneLine(e)}`);
  }
  try {
    kickDrainer(ctx);
  } catch (e) {
    debugLog("session-start", "could not start the drainer", oneLine(e));
  }
  return warnings;
}

/** What the last-session phrase keeps of a request. */
const LAST_SESSION_CHARS = 100;

/**
 * `Last session (2h ago): "…"`: the previous session of the project (not the one starting, which
 * may be resuming, nor one this machine never saw: a note that came with the repository is not our
 * last session), when it was last active, and the first request it began with, from its
 * transcript's head when the transcript is still there, else its first note's first bullet.
 * Redacted before it is clipped, like everything shown from a transcript, and neutralised.
 */
export async function lastSessionPhrase(notes: string | DailyText[], currentSession?: string, now = new Date(), ours: Provenance = provenance()): Promise<string | undefined> {
  const prev = previousSession(notes, { exclude: currentSession, ours });
  if (!prev) return undefined;
  // Notes may come with a cloned repository: the anchor's agent follows it to a transcript of its own only.
  const request = (prev.first.anchor ? await anchorFirstPrompt(prev.first.anchor) : undefined) ?? prev.first.bullets[0];
  const when = noteDate(prev.last);
  const ago = when ? timeAgo(when, now) : undefined;
  const label = ago ?? noteStamp(prev.last);
  if (!request) return `Last session (${label})`;
  return `Last session (${label}): "${clipRedacted(request, LAST_SESSION_CHARS, (t) => neutralise(oneLine(sanitize(t))))}"`;
}

/**
 * The newest sessions' notes (memory/recent.ts) within `hooks.session_start_lines` and the hook's
 * context limit, and, on the injection log, which turns they hold: the prompt hook does not give
 * a note this session already has.
 */
function recentContext(ctx: Context, days: DailyText[], sessionId: string | undefined, ours: Provenance): string | undefined {
  const recent = recentSessions(days, { lines: ctx.config["hooks.session_start_lines"], chars: SESSION_START_CHARS, exclude: sessionId, ours });
  if (recent.text && sessionId) {
    try {
      recordSessionStart(ctx.project.dataDir, sessionId, recent.turns);
    } catch (e) {
      debugLog("session-start", "could not record the context given", oneLine(e));
    }
  }
  return recent.text;
}
