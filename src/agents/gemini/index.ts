/** Gemini CLI (`@google/gemini-cli`): hooks in its settings.json, JSONL chats replayed from upserts. */
import { existsSync } from "node:fs";
import { sanitize } from "../../core/redact.ts";
import type { AgentAdapter } from "../types.ts";
import { allChats, chatProjectRoot, checkProjectChat, geminiHome, isGeminiChatPath } from "./files.ts";
import { fileStamps, projectStamps, readTranscriptText } from "../files.ts";
import { renderAgentTurn } from "../render.ts";
import { formatGeminiOutput, parseGeminiHookInput } from "./hook.ts";
import { geminiWired, planGeminiInstall } from "./install.ts";

export const gemini: AgentAdapter = {
  name: "gemini",
  label: "Gemini CLI",
  parseHookInput: parseGeminiHookInput,
  formatOutput: formatGeminiOutput,
  // Loaded when the drainer needs it: a prompt hook must not pay for the chat reader.
  findStoppedTurn: async (path, q) => (await import("./chat.ts")).findStoppedChatTurn(path, q),
  planInstall: planGeminiInstall,
  wired: geminiWired,
  // Its home folder, or its command on PATH (installed, not yet run once).
  present: (env = process.env) => existsSync(geminiHome(env)) || Bun.which("gemini", { PATH: env.PATH ?? "" }) !== null,
  transcripts: {
    claims: isGeminiChatPath,
    check: checkProjectChat,
    async read(path) {
      const { parseChat, chatTurns } = await import("./chat.ts");
      const chat = parseChat(readTranscriptText(path), { redact: sanitize });
      return { sessionId: chat.sessionId, cwd: chatProjectRoot(path), turns: chatTurns(chat) };
    },
    render: (t) => renderAgentTurn(t, "Gemini CLI"),
    projectFiles: (root, env, listed) => projectStamps(listed, () => allChats(env), checkProjectChat, root, env),
    list: (env) => fileStamps(allChats(env)),
  },
};
