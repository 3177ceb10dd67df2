/**
 * The agents as the page names them: served as /assets/agents.js, written by the server from the
 * registry (hub/assets.ts), so the page holds no agent's name of its own.
 */
/** Each agent's name for people (`Codex CLI`), by the name a note or a hit gives (`codex`). */
export declare const AGENT_LABELS: Readonly<Record<string, string>>;
/** The agent of a note whose anchor names none (core/anchor.ts DEFAULT_AGENT): its notes carry no badge. */
export declare const DEFAULT_AGENT: string;
