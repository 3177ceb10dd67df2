/**
 * Claude Code: the agent memsearch was built for. Its hook input is the neutral input's model, its
 * transcripts (`~/.claude/projects`, files.ts) are read by reader.ts into the neutral turn and by
 * conversation.ts into the conversation index, its curated memory is memory.ts's, and it is wired
 * through the plugin (plugin/), which Claude Code's own plugin manager installs (install.ts runs it).
 */
import * as v from "valibot";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { readJsonFile } from "../../core/json-file.ts";
import { field, HookFields, Id, type AgentAdapter, type NeutralHookInput, type WiredState } from "../types.ts";
import { claudeTranscripts } from "./transcripts.ts";
import { CLAUDE_LABEL } from "./summary.ts";

/** The JSON Claude Code sends every hook on stdin: the fields we use, each checked. */
const ClaudeHookInput = v.object({
  ...HookFields.entries,
  /** Since Claude Code 2.1.196: the same id at UserPromptSubmit and Stop, and on the transcript's user entry. */
  prompt_id: field(Id),
});

const Settings = v.object({ enabledPlugins: v.fallback(v.optional(v.record(v.string(), v.unknown())), undefined) });

function settingsPath(env: NodeJS.ProcessEnv): string {
  return join(env.HOME || homedir(), ".claude", "settings.json");
}

export const claude: AgentAdapter = {
  name: "claude",
  label: CLAUDE_LABEL,
  parseHookInput: (raw): NeutralHookInput => ({ agent: "claude", ...v.parse(ClaudeHookInput, raw) }),
  formatOutput: (out) => ({ ...out }),
  // Loaded when the drainer needs it: a prompt hook must not pay for the transcript reader.
  findStoppedTurn: async (path, q) => (await import("./last-turn.ts")).findStoppedTurn(path, q),
  transcripts: claudeTranscripts,
  // Loaded by doctor only: it reads the plugin's install.
  doctorCheck: async (env) => (await import("./doctor.ts")).pluginCheck(env),
  // The plugin's files ride in the binary: loaded only by `install`, never by a hook.
  planInstall: async (opts) => (await import("./install.ts")).planClaudeInstall(opts),
  // Its home folder, or its command on PATH (a fresh install has not made the folder yet).
  present: (env = process.env) => existsSync(join(env.HOME || homedir(), ".claude")) || Bun.which("claude", { PATH: env.PATH ?? "" }) !== null,
  wired(opts): WiredState {
    const env = opts.env ?? process.env;
    const path = settingsPath(env);
    const s = readJsonFile(path, Settings);
    const enabled = Object.entries(s?.enabledPlugins ?? {}).find(([k, on]) => k.startsWith("memsearch@") && on === true)?.[0];
    return enabled ? { wired: true, detail: `plugin ${enabled} enabled in ${path}` } : { wired: false, detail: `no memsearch plugin enabled in ${path}` };
  },
};
