import * as v from "valibot";
import { field, HookFields, sessionStartSource, type NeutralHookInput, type NeutralHookOutput } from "../types.ts";

/**
 * The JSON Gemini CLI sends every hook on stdin (0.61; docs/hooks/reference.md): Claude Code's
 * field names for the session, the transcript and the folder; `prompt` at BeforeAgent and
 * AfterAgent, whose answer is `prompt_response`. There is no prompt id: the turn is named by its
 * prompt, which AfterAgent carries itself.
 */
const GeminiHookInput = v.object({ ...v.omit(HookFields, ["last_assistant_message"]).entries, prompt_response: field(v.string()) });

/** Context a hook gave Gemini CLI, which it writes into the prompt (and the chat) inside these tags. */
const HOOK_CONTEXT = /<hook_context>[\s\S]*?<\/hook_context>/g;

/**
 * A text without the hook context Gemini CLI put in it: in headless mode the session start's
 * context is prepended to the prompt every later hook is given, and it is our own memory, never
 * the user's words.
 */
export function stripHookContext(text: string): string {
  return text.replace(HOOK_CONTEXT, "").trim();
}

/** Gemini CLI's events, by the neutral (Claude Code) name the handlers answer under. */
export const GEMINI_EVENT: Record<string, string> = { SessionStart: "SessionStart", UserPromptSubmit: "BeforeAgent", Stop: "AfterAgent", SessionEnd: "SessionEnd" };

export function parseGeminiHookInput(raw: Record<string, unknown>): NeutralHookInput {
  const { source, hook_event_name, prompt, prompt_response, ...rest } = v.parse(GeminiHookInput, raw);
  return {
    agent: "gemini",
    ...rest,
    hook_event_name,
    ...(prompt !== undefined ? { prompt: stripHookContext(prompt) } : {}),
    ...(prompt_response !== undefined ? { last_assistant_message: prompt_response } : {}),
    ...sessionStartSource(hook_event_name, source),
  };
}

/**
 * The handler's answer as Gemini CLI reads it: `additionalContext` under the event's own name
 * (BeforeAgent appends it to the prompt, SessionStart prepends it); nothing else in
 * `hookSpecificOutput`, where AfterAgent would read `clearContext`.
 */
export function formatGeminiOutput(out: NeutralHookOutput): Record<string, unknown> {
  const { hookSpecificOutput: h, ...rest } = out;
  if (!h || h.additionalContext === undefined) return { ...rest };
  return { ...rest, hookSpecificOutput: { hookEventName: GEMINI_EVENT[h.hookEventName] ?? h.hookEventName, additionalContext: h.additionalContext } };
}
