/** Codex CLI (`@openai/codex`): Claude-style hooks through hooks.json, JSONL rollouts. */
import type { AgentAdapter } from "../types.ts";
import { parseCodexHookInput } from "./hook.ts";
import { existsSync } from "node:fs";
import { codexHome, codexWired, planCodexInstall } from "./install.ts";
import { findStoppedRolloutTurn } from "./rollout.ts";

export const codex: AgentAdapter = {
  name: "codex",
  label: "Codex CLI",
  parseHookInput: parseCodexHookInput,
  // Codex reads Claude Code's output shape: `hookSpecificOutput.additionalContext` becomes a developer message.
  formatOutput: (out) => ({ ...out }),
  findStoppedTurn: findStoppedRolloutTurn,
  planInstall: planCodexInstall,
  wired: codexWired,
  present: (env) => existsSync(codexHome(env)),
};
