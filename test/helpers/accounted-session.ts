/**
 * A project with one Claude Code session whose turns are in every state the turn accounting knows:
 * a noted turn, a queued one, a missing one (its note deleted), a `/clear` nobody answered, an
 * `/exit` answered only by Claude Code's `<synthetic>` line and an "Ok nice!" answered with words.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { appendTurnNote } from "../../src/memory/journal.ts";
import { enqueueTurn } from "../../src/memory/pending.ts";

export const SESSION = "acc0be11-0000-4000-8000-000000000001";
const DAY = "2026-02-10T12:00:00.000Z";
const at = (min: number) => new Date(Date.parse(DAY) + min * 60_000).toISOString();

export interface AccountedSession {
  transcript: string;
  /** Turn ids by state. */
  noted: string;
  queued: string;
  missing: string;
}

/** Writes the session under `<home>/.claude/projects/<slug of root>/` and the notes and queue in `root/.memsearch`. */
export async function accountedSession(root: string, home: string): Promise<AccountedSession> {
  const base = { parentUuid: null, isSidechain: false, userType: "external", cwd: root, sessionId: SESSION, version: "2.1.90" };
  const lines: unknown[] = [];
  let n = 0;
  const user = (uuid: string, content: unknown, min: number, promptId?: string) => lines.push({ ...base, type: "user", message: { role: "user", content }, uuid, timestamp: at(min), ...(promptId ? { promptId } : {}) });
  const reply = (content: unknown[], min: number, model = "claude-opus-4-6") => lines.push({ ...base, type: "assistant", message: { model, id: `m${++n}`, role: "assistant", content }, uuid: `a${n}`, timestamp: at(min) });
  const edit = (file: string, min: number) => {
    reply([{ type: "tool_use", id: `tu${n}`, name: "Edit", input: { file_path: join(root, file), old_string: "a", new_string: "b" } }], min);
    lines.push({ ...base, type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: `tu${n - 1}`, content: "updated" }] }, uuid: `r${n}`, timestamp: at(min) });
  };
  user("t-noted", "Set up the CI pipeline for the repository", 0, "p-noted");
  edit(".github/workflows/ci.yml", 0);
  reply([{ type: "text", text: "CI runs on every push." }], 0);
  user("t-clear", "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>", 2, "p-clear");
  user("t-missing", "Write the release notes for version 2", 4, "p-missing");
  edit("CHANGELOG.md", 4);
  reply([{ type: "text", text: "The release notes for version 2 are in CHANGELOG.md." }], 4);
  user("t-nice", "Ok nice!", 6, "p-nice");
  reply([{ type: "text", text: "Glad it helped." }], 6);
  user("t-queued", "Add the linter to the CI pipeline", 8, "p-queued");
  edit(".github/workflows/ci.yml", 8);
  reply([{ type: "text", text: "The linter runs in CI." }], 8);
  user("t-exit", "<command-name>/exit</command-name>\n<command-message>exit</command-message>\n<command-args></command-args>", 10, "p-exit");
  reply([{ type: "text", text: "No response requested." }], 10, "<synthetic>");

  const dir = join(home, ".claude", "projects", projectSlug(root));
  mkdirSync(dir, { recursive: true });
  const transcript = join(dir, `${SESSION}.jsonl`);
  writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const old = new Date(Date.parse(DAY) + 3600_000);
  utimesSync(transcript, old, old);

  const memoryDir = join(root, ".memsearch", "memory");
  await appendTurnNote({ memoryDir, sessionId: SESSION, turnUuid: "t-noted", transcriptPath: transcript, bullets: ["- Set up CI"], now: new Date(at(0)) });
  // The missing turn had a note once, in a file of its own day that was deleted.
  const gone = await appendTurnNote({ memoryDir, sessionId: SESSION, turnUuid: "t-missing", transcriptPath: transcript, bullets: ["- Release notes"], now: new Date(at(60 * 24)) });
  rmSync(gone.file);
  enqueueTurn(join(root, ".memsearch"), { sessionId: SESSION, promptId: "p-queued", transcriptPath: transcript, stoppedAt: at(8), lastAssistantMessage: "The linter runs in CI." });
  return { transcript, noted: "t-noted", queued: "t-queued", missing: "t-missing" };
}
