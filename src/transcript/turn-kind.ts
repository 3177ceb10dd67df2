/**
 * The one decision of whether a turn is worth a note, shared by `import`, the drainer (behind the
 * Stop hook) and the turn accounting: a local command, a prompt nobody answered, or a throwaway
 * prompt whose answer did nothing become no memory, so the prompt hook can never inject them.
 */

/**
 * - `work`: a turn to capture.
 * - `local-command`: a command Claude Code runs itself (`/exit`, `/clear`, `/compact`, `/model`…),
 *   or a slash command no model answered.
 * - `no-reply`: no model answered the prompt (interrupted at once, an API error, the session killed).
 * - `trivial`: a prompt like "ok" or "thanks" answered with words only (no tool call, so no file touched).
 */
export type TurnKind = "work" | "local-command" | "no-reply" | "trivial";

export const NOT_TURN_KINDS = ["local-command", "no-reply", "trivial"] as const;
export type SkipKind = (typeof NOT_TURN_KINDS)[number];

/** What the decision reads of a turn; a field left undefined is not known (then the turn is kept). */
export interface TurnFacts {
  /** `command` for a slash command (its text is `/name args`). */
  kind: "prompt" | "command";
  userText: string;
  /** A model answered (text or a tool call); Claude Code's own `<synthetic>` lines do not count. */
  replied?: boolean;
  toolCount?: number;
}

/**
 * Commands Claude Code handles without asking the model. A plugin's or user's command (`/review`,
 * `/memsearch:recent`) expands into a prompt the model acts on: it is work when answered.
 */
const LOCAL_COMMANDS = new Set([
  "exit", "quit", "clear", "reset", "new", "compact", "model", "mcp", "help", "cost", "status", "config",
  "settings", "resume", "login", "logout", "permissions", "allowed-tools", "doctor", "context", "usage",
  "export", "vim", "theme", "ide", "hooks", "agents", "add-dir", "memory", "release-notes", "bug",
  "feedback", "terminal-setup", "privacy-settings", "upgrade", "plugin", "plugins", "statusline",
  "output-style", "rewind", "checkpoint", "todos", "tasks", "bashes", "fast", "rename", "sandbox",
  "stats", "install-github-app", "migrate-installer", "extra-usage", "keybindings", "copy", "effort",
]);

const TRIVIAL = new Set(["ok", "okay", "yes", "no", "y", "n", "thanks", "thank you", "continue", "go on", "go ahead", "proceed", "lgtm", "sure", "do it", "next"]);

/** A prompt too short or too generic to search memory for, or to be a memory on its own. */
export function isTrivialPrompt(prompt: string): boolean {
  const p = prompt.trim();
  if (p.length < 10) return true;
  if (p.startsWith("/")) return true;
  return TRIVIAL.has(p.toLowerCase().replace(/[.!?\s]+$/g, ""));
}

/** The name of a slash command (`/exit` → `exit`), undefined for any other text. */
export function commandName(text: string): string | undefined {
  return /^\/([\w:.-]+)(?:\s|$)/.exec(text.trim())?.[1]?.toLowerCase();
}

/** Whether a prompt is one of Claude Code's local commands (`/clear`, `/exit`…). */
export function isLocalCommand(text: string): boolean {
  const name = commandName(text);
  return name !== undefined && LOCAL_COMMANDS.has(name);
}

export function turnKind(t: TurnFacts): TurnKind {
  if (t.kind === "command" || commandName(t.userText) !== undefined) {
    if (isLocalCommand(t.userText)) return "local-command";
    if (t.kind === "command" && t.replied === false) return "local-command";
  }
  if (t.replied === false) return "no-reply";
  if (t.kind === "prompt" && t.toolCount === 0 && t.replied === true && isTrivialPrompt(t.userText) && commandName(t.userText) === undefined) return "trivial";
  return "work";
}

/** How a skipped turn is named to a person. */
export const SKIP_LABELS: Record<SkipKind, { one: string; many: string }> = {
  "local-command": { one: "local command", many: "local commands" },
  "no-reply": { one: "turn without a reply", many: "turns without a reply" },
  trivial: { one: "trivial prompt with a words-only reply", many: "trivial prompts with a words-only reply" },
};

/** `2 local commands, 1 turn without a reply`, or "" when nothing was skipped. */
export function describeSkips(counts: Partial<Record<SkipKind, number>>): string {
  return NOT_TURN_KINDS.filter((k) => (counts[k] ?? 0) > 0)
    .map((k) => `${counts[k]} ${counts[k] === 1 ? SKIP_LABELS[k].one : SKIP_LABELS[k].many}`)
    .join(", ");
}
