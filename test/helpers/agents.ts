/**
 * Where the real agents' CLIs are: the folder the test command installs them into
 * (scripts/agents.ts, `.cache/agents/` unless MEMSEARCH_AGENTS_DIR), never the project's node_modules.
 */
export { agentModules } from "../../scripts/agents.ts";

/** What to do when one is missing. */
export const AGENTS_HINT = "run the tests through `npm test` (it installs the pinned agents' CLIs into .cache/agents/), or `bun scripts/agents.ts`";
