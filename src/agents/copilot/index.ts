/** GitHub Copilot CLI (`@github/copilot`): Claude-style hooks in its settings.json, JSONL session events. */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { sanitize } from "../../core/redact.ts";
import { fileStamps, projectStamps, readTranscriptText } from "../files.ts";
import { renderAgentTurn } from "../render.ts";
import type { AgentAdapter } from "../types.ts";
import { allSessions, checkProjectSession, COPILOT_LABEL, copilotHome, isCopilotEventsPath } from "./files.ts";
import { formatCopilotOutput, parseCopilotHookInput } from "./hook.ts";
import { copilotWired, planCopilotInstall } from "./install.ts";

export const copilot: AgentAdapter = {
  name: "copilot",
  label: COPILOT_LABEL,
  parseHookInput: parseCopilotHookInput,
  formatOutput: formatCopilotOutput,
  // Loaded when the drainer needs it: a prompt hook must not pay for the events reader.
  findStoppedTurn: async (path, q) => (await import("./events.ts")).findStoppedEventsTurn(path, q),
  planInstall: planCopilotInstall,
  wired: copilotWired,
  // Its home folder, or its command on PATH (installed, not yet run once).
  present: (env = process.env) => existsSync(copilotHome(env)) || Bun.which("copilot", { PATH: env.PATH ?? "" }) !== null,
  transcripts: {
    claims: isCopilotEventsPath,
    check: checkProjectSession,
    async read(path) {
      const { parseEvents, eventsTurns } = await import("./events.ts");
      const s = parseEvents(readTranscriptText(path), { redact: sanitize });
      return { sessionId: s.sessionId ?? dirname(path).split("/").at(-1), cwd: s.cwd, turns: eventsTurns(s) };
    },
    render: (t) => renderAgentTurn(t, COPILOT_LABEL),
    projectFiles: (root, env, listed) => projectStamps(listed, () => allSessions(env), checkProjectSession, root, env),
    list: (env) => fileStamps(allSessions(env)),
  },
};
