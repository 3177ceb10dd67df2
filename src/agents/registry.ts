import { InputError } from "../core/errors.ts";
import { claude } from "./claude/index.ts";
import { codex } from "./codex/index.ts";
import { copilot } from "./copilot/index.ts";
import { gemini } from "./gemini/index.ts";
import { opencode } from "./opencode/index.ts";
import type { AgentAdapter } from "./types.ts";
import type { ProjectTranscripts, TranscriptSource } from "../transcript/types.ts";
import { AGENT_NAMES } from "./names.ts";

/** Every agent memsearch serves, by the name written on notes and given to `--agent`. */
export const AGENTS: Readonly<Record<(typeof AGENT_NAMES)[number], AgentAdapter>> = { claude, codex, gemini, opencode, copilot };

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

/** The adapter of a name read back from a file (a queue entry, a note): Claude Code's for a name this version does not know. */
export function agentOrDefault(name: string | undefined): AgentAdapter {
  return (name && adapterOf(name)) || claude;
}

/** The agent whose transcripts hold this path, when it is not Claude Code (whose files the transcript views read themselves). */
export function transcriptAgent(path: string, env: NodeJS.ProcessEnv = process.env): AgentAdapter | undefined {
  return Object.values(AGENTS).find((a) => a.transcripts?.claims(path, env));
}

/**
 * Every other agent's transcripts as the conversation index reads them (Claude Code's it reads
 * itself). `offThread`: for a process that answers requests meanwhile (the hub, the watch
 * process), an agent's reads that could be slow (OpenCode's database) go to a thread of their own.
 */
export function transcriptSources(env: NodeJS.ProcessEnv = process.env, o: { offThread?: boolean } = {}): TranscriptSource[] {
  return Object.values(AGENTS).flatMap((a) => {
    const t = a.transcripts;
    if (!t) return [];
    const version = t.version;
    const off = o.offThread ? t.offThread : undefined;
    const list = off ? () => off.list(env) : () => t.list(env);
    const read = off ? (path: string) => off.read(path, env) : (path: string) => t.read(path, env);
    return [{ agent: a.name, list, read, ...(version ? { version: () => version(env) } : {}) }];
  });
}

/** projectTranscripts for the hub: each agent's slow reads (OpenCode's database) on a thread of their own, its request loop free meanwhile. */
export async function projectTranscriptsOffThread(root: string, env: NodeJS.ProcessEnv = process.env): Promise<ProjectTranscripts[]> {
  const out: ProjectTranscripts[] = [];
  for (const a of Object.values(AGENTS)) {
    const t = a.transcripts;
    const off = t?.offThread;
    if (!t) continue;
    if (!off) {
      out.push(...projectTranscriptsOf(a, root, env));
      continue;
    }
    const base = { agent: a.name, label: a.label, read: (path: string) => off.read(path, env), render: t.render };
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
 * Every other agent's transcripts of the project at `root`, each with its listing's stamp, for
 * `import` and the turn accounting (Claude Code's they find themselves). Which transcripts are the
 * project's is the adapter's rule (`projectFiles`); what changes when one does is its listing's.
 */
export function projectTranscripts(root: string, env: NodeJS.ProcessEnv = process.env): ProjectTranscripts[] {
  return Object.values(AGENTS).flatMap((a) => projectTranscriptsOf(a, root, env));
}

function projectTranscriptsOf(a: AgentAdapter, root: string, env: NodeJS.ProcessEnv): ProjectTranscripts[] {
  const t = a.transcripts;
  if (!t) return [];
  const base = { agent: a.name, label: a.label, read: (path: string) => t.read(path, env), render: t.render };
  let listed;
  try {
    listed = t.list(env);
  } catch (e) {
    return [{ ...base, files: [], exists: () => true, problem: (e as Error)?.message ?? String(e) }];
  }
  const mine = new Set(listed.length ? t.projectFiles(root, env, listed).map((s) => s.path) : []);
  const names = new Set(listed.map((s) => s.path));
  return [{ ...base, files: listed.filter((s) => mine.has(s.path)), exists: (path: string) => names.has(path) }];
}
