/**
 * One Claude Code turn captured through memsearch's own hooks, as Claude Code would run them: its
 * transcript written the way Claude Code writes it, then the prompt, stop and session-end hooks.
 * For the cross-agent checks of the other agents' suites (a fact from Claude Code recalled there).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "./cli.ts";

export async function captureClaudeTurn(o: { root: string; env: Record<string, string | undefined>; prompt: string; reply: string; session?: string }): Promise<void> {
  const session = o.session ?? "c1a0de00-0000-4000-8000-0000000000ab";
  const promptId = `p-${session.slice(0, 8)}`;
  const dir = join(o.env.HOME!, ".claude", "projects", "-proj");
  mkdirSync(dir, { recursive: true });
  const transcript = join(dir, `${session}.jsonl`);
  const line = (x: object) => JSON.stringify({ sessionId: session, cwd: o.root, isSidechain: false, ...x }) + "\n";
  const now = new Date().toISOString();
  writeFileSync(
    transcript,
    line({ type: "user", uuid: `u-${session}`, promptId, timestamp: now, message: { role: "user", content: o.prompt } }) +
      line({ type: "assistant", uuid: `a-${session}`, timestamp: now, message: { id: `m-${session}`, role: "assistant", content: [{ type: "text", text: o.reply }] } }),
  );
  const input = { session_id: session, prompt_id: promptId, transcript_path: transcript, cwd: o.root };
  // No Claude Code process runs these hooks (the test does): no watch process to live for it.
  const env = { ...o.env, MEMSEARCH_NO_WATCH: "1" };
  await run(["hook", "user-prompt-submit"], { cwd: o.root, env, stdin: JSON.stringify({ ...input, hook_event_name: "UserPromptSubmit", prompt: o.prompt }) });
  await run(["hook", "stop"], { cwd: o.root, env, stdin: JSON.stringify({ ...input, hook_event_name: "Stop", last_assistant_message: o.reply }) });
  await run(["hook", "session-end"], { cwd: o.root, env, stdin: JSON.stringify({ ...input, hook_event_name: "SessionEnd", reason: "exit" }) });
}

/**
 * A note written by hand after the Claude Code turn: SessionStart then gives this newest note
 * whole and the Claude Code session in brief, so that the fact reaches the other agent through
 * its prompt hook (a note SessionStart gives whole is not given again by the prompt hook).
 */
export async function laterHandNote(o: { root: string; env: Record<string, string | undefined> }): Promise<void> {
  const r = await run(["remember", "The staging proxy listens on port 8443."], { cwd: o.root, env: { ...o.env, MEMSEARCH_NO_WATCH: "1" } });
  if (r.code !== 0) throw new Error(`remember failed: ${r.stderr}`);
}
