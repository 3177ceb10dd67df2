/** OpenCode (`opencode-ai` 1.x): a generated JS plugin that runs memsearch's hooks, sessions in SQLite. */
import { existsSync } from "node:fs";
import type { AgentAdapter } from "../types.ts";
import { parseOpencodeHookInput } from "./hook.ts";
import { opencodeConfigDir, opencodeDataDir, opencodeWired, planOpencodeInstall } from "./install.ts";
import { checkProjectSession, databaseVersion, listSessions, parseSessionKey, projectSessions, readSession } from "./sessions.ts";
import { renderToolsThenWords } from "../render.ts";

export const opencode: AgentAdapter = {
  name: "opencode",
  label: "OpenCode",
  parseHookInput: parseOpencodeHookInput,
  // The plugin reads the neutral shape itself (plugin.ts): `hookSpecificOutput.additionalContext` goes onto the system prompt.
  formatOutput: (out) => ({ ...out }),
  findStoppedTurn: async (path, q) => (await import("./db.ts")).findStoppedOpencodeTurn(path, q),
  planInstall: planOpencodeInstall,
  wired: opencodeWired,
  // Its home folder, or its command on PATH (installed, not yet run once).
  present: (env = process.env) => existsSync(opencodeConfigDir(env)) || existsSync(opencodeDataDir(env)) || Bun.which("opencode", { PATH: env.PATH ?? "" }) !== null,
  // One database for every session: each session is named `<database>#<session id>` (sessions.ts).
  transcripts: {
    claims: (path, env) => parseSessionKey(path, env) !== undefined,
    check: checkProjectSession,
    read: readSession,
    render: (t) => renderToolsThenWords(t, "OpenCode"),
    projectFiles: projectSessions,
    list: (env) => listSessions(env),
    version: databaseVersion,
    // Loaded only by the hub and the watch process: a hook never starts the thread.
    offThread: {
      list: async (env) => (await import("./off-thread.ts")).listSessionsOffThread(env),
      projectFiles: async (root, env) => (await import("./off-thread.ts")).listSessionsOffThread(env, root),
      read: async (path, env) => (await import("./off-thread.ts")).readSessionOffThread(path, env),
    },
  },
};
