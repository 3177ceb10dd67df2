/**
 * Every agent memsearch serves, by name, and what the rest of memsearch asks of them all: each
 * agent's transcripts as the conversation index reads them (`transcriptSources`), a project's as
 * `import`, the turn accounting and the hub read them (`projectTranscripts`), and which agent's a
 * transcript or a note's anchor is. The parts below never name an agent: they get these.
 */
import { InputError } from "../core/errors.ts";
import { agentOf, type Anchor } from "../core/anchor.ts";
import { claude } from "./claude/index.ts";
import { codex } from "./codex/index.ts";
import { copilot } from "./copilot/index.ts";
import { gemini } from "./gemini/index.ts";
import { opencode } from "./opencode/index.ts";
import type { AgentAdapter, AgentTranscripts } from "./types.ts";
import type { IndexSource } from "../conversations/ingest.ts";
import type { ProjectTranscripts, TranscriptStamp, TurnList } from "../transcript/types.ts";
import { AGENT_NAMES } from "./names.ts";
import { ForeignTranscriptError } from "../transcript/files.ts";

/** Every agent memsearch serves, by the name written on notes and given to `--agent`; the first is the one a name-less note was with. */
export const AGENTS: Readonly<Record<(typeof AGENT_NAMES)[number], AgentAdapter>> = { claude, codex, gemini, opencode, copilot };

/** The agent of a note, a queue entry or a transcript that names none (everything written before agents were named). */
const DEFAULT_ADAPTER: AgentAdapter = claude;

/** The adapter of a name, undefined for any other. */
export function adapterOf(name: string): AgentAdapter | undefined {
  return Object.hasOwn(AGENTS, name) ? AGENTS[name as keyof typeof AGENTS] : undefined;
}
export { AGENT_NAMES };

/** The adapter of a name given by a person or a hook command; a clear error for any other. */
export function agentNamed(name: string): AgentAdapter {
  const a = adapterOf(name);
  if (!a) throw new InputError(`unknown agent "${name}" (one of ${AGENT_NAMES.join(", ")})`);
  return a;
}

/** The adapter of a name read back from a file (a queue entry, a note): the default agent's for a name this version does not know. */
export function agentOrDefault(name?: string): AgentAdapter {
  return (name && adapterOf(name)) || DEFAULT_ADAPTER;
}

/** The agent whose transcripts hold this path, by where it is; undefined when none claims it. */
export function transcriptAgent(path: string, env: NodeJS.ProcessEnv = process.env): AgentAdapter | undefined {
  return Object.values(AGENTS).find((a) => a.transcripts.claims(path, env));
}

/**
 * Throws unless the transcript a queued turn names may be read for the project `root`, when the
 * entry is not one this machine queued (an entry's mark, memory/pending.ts): it may have come with
 * a cloned repository. The path must be in the folder of the agent the entry names, and one of
 * the project's transcripts by that agent's own check (as `memsearch transcript` applies it). A
 * path outside every agent's folder is refused: what it records of itself (its working folder)
 * is the repository's word, and the entry's own prompt and reply still make the note.
 */
export function checkQueuedTranscript(path: string, root: string, agentName: string | undefined, env: NodeJS.ProcessEnv = process.env): void {
  const owner = transcriptAgent(path, env);
  if (!owner) throw new ForeignTranscriptError(`refused: ${path} is in no agent's folder`);
  const named = agentOrDefault(agentName);
  if (owner !== named) throw new ForeignTranscriptError(`refused: ${path} is ${owner.label}'s, the queued turn says ${named.label}'s`);
  owner.transcripts.check(path, root, { env });
}

/** The agent that reads a transcript path: the one whose transcripts hold it, else the default agent (whose reader refuses a path outside its folder, or reads any file when told to). */
export function transcriptReader(path: string, env: NodeJS.ProcessEnv = process.env): AgentAdapter {
  return transcriptAgent(path, env) ?? DEFAULT_ADAPTER;
}

/**
 * Every agent's transcripts as the conversation index reads them. `offThread`: for a process that
 * answers requests meanwhile (the hub, the watch process), an agent's reads that could be slow
 * (OpenCode's database) go to a thread of their own.
 */
export function transcriptSources(env: NodeJS.ProcessEnv = process.env, o: { offThread?: boolean } = {}): IndexSource[] {
  return Object.values(AGENTS).map((a) => {
    const t = a.transcripts;
    if (t.source) return t.source(env);
    const version = t.version;
    const off = o.offThread ? t.offThread : undefined;
    const list = off ? () => off.list(env) : () => t.list(env);
    const read = off ? (path: string) => off.read(path, env) : (path: string) => t.read(path, env);
    return { agent: a.name, list, read, ...(version ? { version: () => version(env) } : {}) };
  });
}

/** A transcript read whole is its own listing: every turn with all it holds. */
function wholeTranscripts(a: AgentAdapter, read: (path: string) => Promise<{ sessionId?: string; turns: TurnList["turns"] }>): Pick<ProjectTranscripts, "agent" | "label" | "listTurns" | "readTurns" | "render"> {
  return {
    agent: a.name,
    label: a.label,
    async listTurns(path) {
      const r = await read(path);
      return { path, sessionId: r.sessionId ?? path, turns: r.turns, unanswered: 0 };
    },
    readTurns: async (list, from, to) => list.turns.slice(from, to + 1),
    render: a.transcripts.render,
  };
}

/** projectTranscripts for the hub: each agent's slow reads (OpenCode's database) on a thread of their own, its request loop free meanwhile. */
export async function projectTranscriptsOffThread(root: string, env: NodeJS.ProcessEnv = process.env): Promise<ProjectTranscripts[]> {
  const out: ProjectTranscripts[] = [];
  for (const a of Object.values(AGENTS)) {
    const off = a.transcripts.offThread;
    if (!off) {
      out.push(projectTranscriptsOf(a, root, env));
      continue;
    }
    const base = wholeTranscripts(a, (path) => off.read(path, env));
    try {
      const listed = await off.list(env);
      const names = new Set(listed.map((s) => s.path));
      out.push({ ...base, files: listed.length ? await off.projectFiles(root, env) : [], exists: (path: string) => names.has(path) });
    } catch (e) {
      out.push({ ...base, files: [], exists: () => true, problem: (e as Error)?.message ?? String(e) });
    }
  }
  return out;
}

/**
 * Every agent's transcripts of the project at `root`, each with its listing's stamp, for `import`
 * and the turn accounting. Which transcripts are the project's is the adapter's rule; what changes
 * when one does is its listing's. `warn`: what a listing could not read, said as it is found.
 */
export function projectTranscripts(root: string, env: NodeJS.ProcessEnv = process.env, o: { warn?: (msg: string) => void } = {}): ProjectTranscripts[] {
  return Object.values(AGENTS).map((a) => projectTranscriptsOf(a, root, env, o));
}

function projectTranscriptsOf(a: AgentAdapter, root: string, env: NodeJS.ProcessEnv, o: { warn?: (msg: string) => void } = {}): ProjectTranscripts {
  const t: AgentTranscripts = a.transcripts;
  if (t.project) return t.project(root, env, o);
  const base = wholeTranscripts(a, (path) => t.read(path, env));
  let listed: TranscriptStamp[];
  try {
    listed = t.list(env);
  } catch (e) {
    return { ...base, files: [], exists: () => true, problem: (e as Error)?.message ?? String(e) };
  }
  const mine = new Set(listed.length ? t.projectFiles(root, env, listed).map((s) => s.path) : []);
  const names = new Set(listed.map((s) => s.path));
  return { ...base, files: listed.filter((s) => mine.has(s.path)), exists: (path: string) => names.has(path) };
}

/**
 * Transcript files (or folders of them) a person named to `import`, read as the default agent's:
 * the only ones `import` reads by path. Throws NotFoundError for a path that does not exist.
 */
export async function namedTranscripts(paths: string[]): Promise<ProjectTranscripts[]> {
  const named = DEFAULT_ADAPTER.transcripts.named;
  return named ? [await named(paths)] : [];
}

/** The prompt id of the turn a note's anchor names, from the anchor's transcript when it is one of this project's; undefined when it cannot be known. */
export function anchorPromptId(root: string, env: NodeJS.ProcessEnv = process.env): (anchor: Anchor) => Promise<string | undefined> {
  return async (anchor) => {
    const t = agentOrDefault(agentOf(anchor)).transcripts;
    return t.promptIdOf?.(anchor.transcript, anchor.turn, root, env);
  };
}

/** A session's first request, from the head of the transcript a note's anchor names (the anchor's agent reads it); undefined when it cannot be read. */
export async function anchorFirstPrompt(anchor: Anchor): Promise<string | undefined> {
  return agentOrDefault(agentOf(anchor)).transcripts.firstPrompt?.(anchor.transcript);
}
