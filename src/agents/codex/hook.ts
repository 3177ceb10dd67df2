import * as v from "valibot";
import { field, Id, Path, type NeutralHookInput } from "../types.ts";

/**
 * The JSON Codex CLI sends every hook on stdin (0.169; codex-rs/hooks/schema): Claude Code's field
 * names, with `turn_id` where Claude Code has `prompt_id`, and a `transcript_path` that is null
 * for an ephemeral session. `source` is SessionStart's (startup, resume, clear): Codex does not say
 * who sent a prompt, so prompts count as typed.
 */
const CodexHookInput = v.object({
  session_id: field(Id),
  turn_id: field(Id),
  hook_event_name: field(Id),
  source: field(Id),
  reason: field(Id),
  transcript_path: field(Path),
  cwd: field(Path),
  prompt: field(v.string()),
  last_assistant_message: field(v.string()),
  stop_hook_active: field(v.boolean()),
});

export function parseCodexHookInput(raw: Record<string, unknown>): NeutralHookInput {
  const { turn_id, source, hook_event_name, ...rest } = v.parse(CodexHookInput, raw);
  return {
    agent: "codex",
    ...rest,
    hook_event_name,
    prompt_id: turn_id,
    // Only SessionStart's source means something here; a prompt's source field is Claude Code's.
    ...(hook_event_name === "SessionStart" && source ? { source } : {}),
  };
}
