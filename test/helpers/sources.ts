/**
 * Transcript sources as the registry gives them (src/agents/registry.ts), for a test's own folders:
 * Claude Code's below a projects folder of the test's, and another agent's from a reader of the
 * test's own.
 */
import { conversationSource } from "../../src/agents/claude/conversation.ts";
import { claudeProjectTranscripts } from "../../src/agents/claude/transcripts.ts";
import type { IndexSource } from "../../src/conversations/ingest.ts";
import type { ProjectTranscripts, TranscriptSource, TranscriptStamp, Turn } from "../../src/transcript/types.ts";

/** Claude Code's transcripts of the project at `root` below `projectsDir`, as import and the turn accounting read them. */
export function claudeProject(root: string, projectsDir: string, warn?: (m: string) => void): ProjectTranscripts {
  return claudeProjectTranscripts(root, { projectsDir, warn });
}

/** Claude Code's transcripts below `projectsDir` as the conversation index reads them. */
export function claudeIndex(projectsDir: string) {
  return conversationSource({ projectsDir });
}

/** Another agent's transcripts, each read whole by `read`. */
export function wholeSource(o: { agent: string; label?: string; files: TranscriptStamp[]; read: (path: string) => Promise<{ sessionId?: string; turns: Turn[] }>; render?: (t: Turn) => string }): ProjectTranscripts {
  return {
    agent: o.agent,
    label: o.label ?? o.agent,
    files: o.files,
    async listTurns(path) {
      const r = await o.read(path);
      return { path, sessionId: r.sessionId ?? path, turns: r.turns, unanswered: 0 };
    },
    readTurns: async (list, from, to) => list.turns.slice(from, to + 1),
    render: o.render ?? (() => ""),
    exists: () => true,
  };
}

/** The source the registry gives `agent` when its transcripts are listed and read whole (every agent's but Claude Code's). */
export function rereadSource(sources: readonly IndexSource[], agent: string): TranscriptSource {
  const s = sources.find((x) => x.agent === agent);
  if (!s || !("read" in s)) throw new Error(`no listed source for ${agent}`);
  return s;
}
