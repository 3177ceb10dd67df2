/**
 * Which Copilot CLI sessions memsearch reads for a project: `events.jsonl` files in
 * `$COPILOT_HOME/session-state/<session id>/`, plain files (a link could point anywhere), whose
 * session started in the project (its `session.start` line's `context.cwd`, by the rule every
 * agent shares: the git top level).
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { realOr } from "../../core/project.ts";
import { ForeignTranscriptError, projectOfCwd, sameProject } from "../../transcript/files.ts";
import { firstJsonLine, requirePlainTranscript, transcriptPath } from "../files.ts";

const HEAD_BYTES = 64 * 1024;
export const EVENTS_FILE = "events.jsonl";
export const COPILOT_LABEL = "Copilot CLI";

/** The folder Copilot CLI keeps its settings and sessions in. */
export function copilotHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.COPILOT_HOME || join(env.HOME || homedir(), ".copilot");
}

export function sessionStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(copilotHome(env), "session-state");
}

/** True when the path is a session's events file of Copilot CLI, as written or with its links resolved (a home reached through a link). */
export function isCopilotEventsPath(path: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const abs = resolve(path);
  if (basename(abs) !== EVENTS_FILE) return false;
  const dir = sessionStateDir(env);
  const dirs = [resolve(dir), realOr(dir)];
  // Exactly `<session-state>/<session id>/events.jsonl`: nothing deeper is a session's.
  return [abs, realOr(abs)].some((p) => dirs.includes(dirname(dirname(p))));
}

/** The folder the session started in (its first line, `session.start`), undefined when it has none. */
export function sessionCwd(path: string): string | undefined {
  const o = firstJsonLine(path, HEAD_BYTES) as { type?: unknown; data?: { context?: { cwd?: unknown } } } | undefined;
  const cwd = o?.type === "session.start" ? o.data?.context?.cwd : undefined;
  return typeof cwd === "string" && cwd.startsWith("/") && !cwd.includes("\0") ? cwd : undefined;
}

/** Throws unless `path` is a Copilot CLI session of this project (of any project with `anyProject`). */
export function checkProjectSession(path: string, root: string, o: { env?: NodeJS.ProcessEnv; anyProject?: boolean } = {}): void {
  const abs = transcriptPath(path);
  if (!isCopilotEventsPath(abs, o.env)) throw new ForeignTranscriptError(`refused: ${path} is not a Copilot CLI session (not ${join(sessionStateDir(o.env), "<session>", EVENTS_FILE)})`);
  requirePlainTranscript(abs, path);
  if (o.anyProject) return;
  let cwd: string | undefined;
  try {
    cwd = sessionCwd(abs);
  } catch {}
  if (!cwd || !sameProject(projectOfCwd(cwd), root)) throw new ForeignTranscriptError(`refused: ${path} is another project's Copilot CLI session (this project: ${root})`, true);
}

/** Every session's events file on this machine, by session id. */
export function allSessions(env: NodeJS.ProcessEnv = process.env): string[] {
  let ids: string[];
  try {
    ids = readdirSync(sessionStateDir(env)).sort();
  } catch {
    return [];
  }
  return ids.map((id) => join(sessionStateDir(env), id, EVENTS_FILE));
}
