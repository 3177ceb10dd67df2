/** Codex CLI (`@openai/codex`): Claude-style hooks through hooks.json, JSONL rollouts. */
import type { AgentAdapter } from "../types.ts";
import { parseCodexHookInput } from "./hook.ts";
import { allRollouts, checkProjectRollout, isCodexRolloutPath } from "./files.ts";
import { fileStamps, projectStamps, readTranscriptText } from "../files.ts";
import { findStoppedRolloutTurn, parseRollout, renderRolloutTurn, rolloutTurns } from "./rollout.ts";
import { sanitize } from "../../core/redact.ts";
import { existsSync } from "node:fs";
import { codexHome, codexWired, planCodexInstall } from "./install.ts";

export const codex: AgentAdapter = {
  name: "codex",
  label: "Codex CLI",
  parseHookInput: parseCodexHookInput,
  // Codex reads Claude Code's output shape: `hookSpecificOutput.additionalContext` becomes a developer message.
  formatOutput: (out) => ({ ...out }),
  findStoppedTurn: findStoppedRolloutTurn,
  planInstall: planCodexInstall,
  wired: codexWired,
  // Its home folder, or its command on PATH (installed, not yet run once).
  present: (env = process.env) => existsSync(codexHome(env)) || Bun.which("codex", { PATH: env.PATH ?? "" }) !== null,
  transcripts: {
    claims: isCodexRolloutPath,
    check: checkProjectRollout,
    async read(path) {
      const r = parseRollout(readTranscriptText(path), { redact: sanitize });
      return { sessionId: r.sessionId, cwd: r.cwd, turns: rolloutTurns(r) };
    },
    render: (t) => renderRolloutTurn(t),
    projectFiles: (root, env, listed) => projectStamps(listed, () => allRollouts(env), checkProjectRollout, root, env),
    list: (env) => fileStamps(allRollouts(env)),
  },
};
