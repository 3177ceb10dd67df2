import * as v from "valibot";
import { field, HookFields, sessionStartSource, type NeutralHookInput, type NeutralHookOutput } from "../types.ts";

/**
 * The JSON Copilot CLI sends a hook named by its PascalCase event (1.0.102, the form install
 * writes): Claude Code's snake_case field names for the session, the folder, the prompt and the
 * transcript (Stop only). It has no prompt id and Stop carries neither the prompt nor the answer:
 * the turn is named by Stop's `timestamp`, which Copilot also writes on the stop hook's
 * `hook.start` event in the session's file (events.ts). SessionStart's `source` is `new` or
 * `resume`.
 */
const CopilotHookInput = v.object({
  ...v.omit(HookFields, ["last_assistant_message"]).entries,
  // When Copilot fired the hook: its `hook.start` event in events.jsonl carries the same time.
  timestamp: field(v.pipe(v.string(), v.maxLength(40), v.check((x) => Number.isFinite(Date.parse(x))))),
});

export function parseCopilotHookInput(raw: Record<string, unknown>): NeutralHookInput {
  const { source, hook_event_name, timestamp, ...rest } = v.parse(CopilotHookInput, raw);
  return { agent: "copilot", ...rest, hook_event_name, ...(timestamp ? { fired_at: timestamp } : {}), ...sessionStartSource(hook_event_name, source) };
}

/**
 * The handler's answer as Copilot CLI reads it: only a top-level `additionalContext` is honoured
 * (SessionStart: a user message of its own; UserPromptSubmit: inside the prompt's
 * `<system_reminder>`); `hookSpecificOutput` is ignored, and a `systemMessage` is neither shown
 * nor kept in `-p` mode, so neither is written.
 */
export function formatCopilotOutput(out: NeutralHookOutput): Record<string, unknown> {
  const context = out.hookSpecificOutput?.additionalContext;
  return context === undefined || context === "" ? {} : { additionalContext: context };
}
