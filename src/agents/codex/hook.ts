import * as v from "valibot";
import { field, HookFields, Id, sessionStartSource, type NeutralHookInput } from "../types.ts";

/**
 * The JSON Codex CLI sends every hook on stdin (0.169; codex-rs/hooks/schema): Claude Code's field
 * names, with `turn_id` where Claude Code has `prompt_id`, and a `transcript_path` that is null
 * for an ephemeral session. `source` is SessionStart's (startup, resume, clear): Codex does not say
 * who sent a prompt, so prompts count as typed.
 */
const CodexHookInput = v.object({ ...HookFields.entries, turn_id: field(Id) });

export function parseCodexHookInput(raw: Record<string, unknown>): NeutralHookInput {
  const { turn_id, source, hook_event_name, ...rest } = v.parse(CodexHookInput, raw);
  return {
    agent: "codex",
    ...rest,
    hook_event_name,
    prompt_id: turn_id,
    // A prompt's source field is Claude Code's.
    ...sessionStartSource(hook_event_name, source),
  };
}
