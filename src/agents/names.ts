/**
 * The agents' names alone, for the flags that take one (`--agent`): `search`'s fast path must not
 * load the adapters to know them. registry.ts holds the adapters under the same names.
 */
export const AGENT_NAMES = ["claude", "codex", "gemini", "opencode", "copilot"] as const;

/** Who a note can be from, for the flags that pick notes (`--agent`): an agent, or you (`memsearch remember`). */
export const NOTE_AGENTS = [...AGENT_NAMES, "you"] as const;
