/**
 * Claude Code's transcripts as every part reads an agent's: where they are and whether one is the
 * project's (files.ts), their turns listed cheaply and read by range (reader.ts: a session of
 * thousands of turns is never held whole), the conversation index's source that reads each file
 * from where it stopped (conversation.ts), and `memsearch transcript`'s detailed views.
 *
 * Loaded with the adapter by every hook: the reader and the conversation index's writer are loaded
 * only when a method that reads is called.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { NotFoundError } from "../../core/errors.ts";
import { realOr } from "../../core/project.ts";
import { sanitize } from "../../core/redact.ts";
import { isInside } from "../../transcript/files.ts";
import type { ProjectTranscripts, TranscriptStamp, Turn, TurnList } from "../../transcript/types.ts";
import type { AgentTranscripts, TurnsAround } from "../types.ts";
import { checkProjectTranscript, claudeProjectsDir, findProjectTranscripts, isProjectTranscript, listTranscripts } from "./files.ts";
import { CLAUDE_LABEL, LAST_TURN_OUTPUT_CHARS, renderTurnForSummary } from "./summary.ts";

const reader = () => import("./reader.ts");

/** Files as their listing gives them: a session file is named after its session; its inode is part of its stamp (a file replaced by one of the same size and time is another file). */
function stamps(paths: string[]): TranscriptStamp[] {
  const out: TranscriptStamp[] = [];
  for (const path of paths) {
    try {
      const st = statSync(path);
      out.push({ path, size: st.size, mtime: st.mtimeMs, session: basename(path, ".jsonl"), stamp: `${st.mtimeMs}:${st.size}:${st.ino}` });
    } catch {
      // vanished meanwhile
    }
  }
  return out;
}

/** A transcript's turns listed, with what they hold left out (readTurns reads it, by the turns' byte ranges). */
async function listed(path: string): Promise<TurnList> {
  const index = await (await reader()).listTurns(path);
  return { path, sessionId: index.sessionId, turns: index.turns, subagent: index.subagent, unanswered: index.stats.skipped["user:local-command"] ?? 0 };
}

/** Redacted by the reader, tool inputs and outputs before they are clipped (as the Stop hook's turn). */
const readTurns = async (list: TurnList, from: number, to: number): Promise<Turn[]> => (await reader()).readTurnRange(list, from, to, { maxOutput: LAST_TURN_OUTPUT_CHARS, redact: sanitize });

function projectTranscripts(files: TranscriptStamp[], folder: string, extra: Pick<ProjectTranscripts, "skipped" | "otherProjects"> = {}): ProjectTranscripts {
  return { agent: "claude", label: CLAUDE_LABEL, folder, files, listTurns: listed, readTurns, render: renderTurnForSummary, exists: (path) => existsSync(path), ...extra };
}

/** The project's session files below `projectsDir` (its subagents' files are part of them): `warn` says which could not be read. */
export function claudeProjectTranscripts(root: string, o: { projectsDir?: string; warn?: (msg: string) => void } = {}): ProjectTranscripts {
  const projectsDir = o.projectsDir ?? claudeProjectsDir();
  const found = findProjectTranscripts(root, projectsDir, o.warn);
  return projectTranscripts(stamps(found.files), projectsDir, { skipped: found.skipped, otherProjects: found.otherProjects });
}

/**
 * Named paths: files as given, folders as their regular `*.jsonl` files (the rest reported, never
 * opened). A missing one stops before anything is read.
 */
async function namedFiles(paths: string[]): Promise<{ files: string[]; skipped: { path: string; reason: string }[] }> {
  const out: string[] = [];
  const skipped: { path: string; reason: string }[] = [];
  for (const p of paths) {
    const abs = resolve(p);
    let st;
    try {
      st = await stat(abs);
    } catch {
      throw new NotFoundError(`transcript not found: ${p}`);
    }
    if (st.isDirectory()) {
      const listed = listTranscripts(abs);
      out.push(...listed.files);
      skipped.push(...listed.skipped);
    } else out.push(abs);
  }
  return { files: [...new Set(out)], skipped };
}

/** Every session file below the projects folder (their subagents' are part of them). */
function allSessionFiles(env: NodeJS.ProcessEnv): string[] {
  const projectsDir = claudeProjectsDir(env);
  let dirs: string[];
  try {
    dirs = readdirSync(projectsDir).sort();
  } catch {
    return [];
  }
  return dirs.flatMap((d) => listTranscripts(join(projectsDir, d), projectsDir).files);
}

async function around(path: string, id: string, context: number, o: { maxOutput: number }): Promise<TurnsAround> {
  const { findTurn, listTurns, readTurnRange } = await reader();
  const index = await listTurns(path, { locate: id.replace(/\.+$/, "").toLowerCase() });
  const target = findTurn(index.turns, id) ?? index.located;
  const ids = index.turns.map((t) => t.uuid);
  if (target === undefined) return { sessionId: index.sessionId, turnCount: index.turns.length, ids, from: 0, turns: [] };
  const from = Math.max(0, target - context);
  const to = Math.min(index.turns.length - 1, target + context);
  const turns = await readTurnRange(index, from, to, { maxOutput: o.maxOutput, redact: sanitize });
  return { sessionId: index.sessionId, target, turnCount: index.turns.length, ids, from, turns };
}

export const claudeTranscripts: AgentTranscripts = {
  claims: (path, env = process.env) => path.endsWith(".jsonl") && isInside(realOr(resolve(path)), realOr(claudeProjectsDir(env))),
  check: checkProjectTranscript,
  async read(path) {
    const t = await (await reader()).readTranscript(path, { redact: sanitize });
    return { sessionId: t.sessionId, turns: t.turns };
  },
  render: renderTurnForSummary,
  projectFiles: (root, env = process.env) => stamps(findProjectTranscripts(root, claudeProjectsDir(env)).files),
  list: (env = process.env) => stamps(allSessionFiles(env)),
  source: (env) => ({ agent: "claude", update: async (db, report, u) => (await import("./conversation.ts")).conversationSource({ env }).update(db, report, u) }),
  project: (root, env, o = {}) => claudeProjectTranscripts(root, { ...o, projectsDir: claudeProjectsDir(env) }),
  async named(paths) {
    const { files, skipped } = await namedFiles(paths);
    return projectTranscripts(stamps(files), claudeProjectsDir(), { skipped });
  },
  views: {
    async listing(path) {
      const index = await (await reader()).listTurns(path);
      const subagents = index.subagent ? [] : await (await import("./subagents.ts")).listSubagents(path);
      return { path: index.path, sessionId: index.sessionId, subagent: index.subagent, turns: index.turns, compactions: index.compactions.length, subagents };
    },
    around,
    lastTurn: async (path, lastAssistantMessage) => (await import("./last-turn.ts")).extractLastTurn(path, { lastAssistantMessage, redact: sanitize }),
  },
  async promptIdOf(transcript, turn, root, env) {
    if (!isProjectTranscript(transcript, root, { env })) return undefined;
    try {
      // By its exact uuid: a near match would put another turn's prompt id on the list.
      return (await (await reader()).listTurns(transcript)).turns.find((t) => t.uuid === turn)?.promptId;
    } catch {
      return undefined;
    }
  },
  // Notes may come with a cloned repository: an anchor is followed to a transcript only.
  firstPrompt: async (path) => (path.endsWith(".jsonl") ? await (await import("./first-prompt.ts")).firstPrompt(path) : undefined),
};
