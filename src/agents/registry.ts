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

/** Every other agent's transcripts as the conversation index reads them (Claude Code's it reads itself). */
export function transcriptSources(env: NodeJS.ProcessEnv = process.env): TranscriptSource[] {
  return Object.values(AGENTS).flatMap((a) => {
    const t = a.transcripts;
    if (!t) return [];
    const version = t.version;
    return [{ agent: a.name, list: () => t.list(env), read: (path: string) => t.read(path, env), ...(version ? { version: () => version(env) } : {}) }];
  });
}

/**
 * Every other agent's transcripts of the project at `root`, each with its listing's stamp, for
 * `import` and the turn accounting (Claude Code's they find themselves). Which transcripts are the
 * project's is the adapter's rule (`projectFiles`); what changes when one does is its listing's.
 */
export function projectTranscripts(root: string, env: NodeJS.ProcessEnv = process.env): ProjectTranscripts[] {
  return Object.values(AGENTS).flatMap((a) => {
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
  });
}
