import * as v from "valibot";
import { field, HookFields, Id, sessionStartSource, type NeutralHookInput } from "../types.ts";
import { sessionKey, SessionId } from "./session-key.ts";

/**
 * The JSON memsearch's OpenCode plugin (plugin.ts) sends each hook on stdin. OpenCode itself has
 * no shell hooks: the plugin runs inside it, so these are OpenCode's ids as the plugin saw them
 * (`ses_…`, the user message's `msg_…` as the prompt id) and the path of OpenCode's database as
 * the transcript. Checked all the same: the plugin file lives in the user's config and could be
 * edited or stale.
 */
const OpencodeHookInput = v.object({ ...v.omit(HookFields, ["reason", "stop_hook_active"]).entries, prompt_id: field(Id) });

export function parseOpencodeHookInput(raw: Record<string, unknown>): NeutralHookInput {
  const { source, hook_event_name, ...rest } = v.parse(OpencodeHookInput, raw);
  // The turn's transcript is its session in the database (sessions.ts): the name the note's anchor
  // carries, which `memsearch transcript` opens; the bare database would name every session at once.
  const { transcript_path: db, session_id } = rest;
  const transcript_path = db && v.is(SessionId, session_id) ? sessionKey(db, session_id) : db;
  return {
    agent: "opencode",
    ...rest,
    ...(transcript_path !== undefined ? { transcript_path } : {}),
    hook_event_name,
    // Prompts reach the plugin through `chat.message`, typed or piped to `opencode run`: they count as typed.
    ...sessionStartSource(hook_event_name, source),
  };
}
