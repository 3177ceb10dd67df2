import { loadContext } from "../core/context.ts";
import { oneLine } from "../core/text.ts";
import { LATEST_PROMPT, recordPrompt } from "../memory/pending.ts";
import { recallForPrompt, skippedPrompt, type PromptRecall, type PromptRecallDeps, type PromptRecallRequest } from "../recall/for-prompt.ts";
import { curatedFromRepository } from "../agents/curated.ts";
import { isTrivialPrompt } from "../transcript/turn-kind.ts";
import { debugLog, hookCwd, PROMPT_HOOK_BUDGET_MS, startWatch, type HookInput, type HookOutput } from "./runtime.ts";

/**
 * Whether a prompt was typed by a person: `user` (the interactive composer) or `sdk` (`claude -p`,
 * the Agent SDK); absent from Claude Code before 2.1.240. Loop and schedule wake-ups, system turns
 * and poll events get no memory (they are still captured), and so does a source we do not know yet.
 */
export function typedByPerson(source: string | undefined): boolean {
  return source === undefined || source === "user" || source === "sdk";
}

/**
 * UserPromptSubmit: the prompt is kept for the Stop hook, then recall for a prompt
 * (recall/for-prompt.ts) decides what memory it gets.
 */
export async function userPromptSubmit(input: HookInput): Promise<HookOutput> {
  // performance.now() counts from the process start, a little before the budget's timer began.
  const deadline = PROMPT_HOOK_BUDGET_MS;
  const prompt = input.prompt ?? "";
  const ctx = loadContext({}, hookCwd(input));
  remember(input, prompt, ctx.project.dataDir, ctx.config["summarizer.provider"] === "off");
  const req: PromptRecallRequest = { prompt, session: input.session_id, promptId: input.prompt_id, source: input.source, agent: input.agent, deadline };
  const deps: PromptRecallDeps = {
    ctx,
    debug: (what) => debugLog("user-prompt-submit", what),
    wakeWatch: () => startWatch(ctx.project.dataDir, ctx.project.root),
    curatedFromRepository,
  };
  if (!typedByPerson(input.source)) return output(skippedPrompt(req, deps, `source ${input.source}: not typed by a person`));
  if (isTrivialPrompt(prompt)) return output(skippedPrompt(req, deps, "trivial prompt"));
  return output(await recallForPrompt(req, deps));
}

function output(r: PromptRecall): HookOutput {
  return {
    ...(r.systemMessage ? { systemMessage: r.systemMessage } : {}),
    ...(r.context ? { hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: r.context } } : {}),
  };
}

/**
 * The prompt on disk under its prompt id, for the Stop hook: the transcript may not hold the turn
 * when Stop fires, and then the note is written from what the hooks saw. Trivial prompts too:
 * they are turns all the same.
 */
function remember(input: HookInput, prompt: string, dataDir: string, off: boolean): void {
  if (!input.session_id || !prompt || off) return;
  try {
    // An agent with no prompt id (Copilot CLI) has its session's latest prompt kept: its Stop carries no text of its own.
    recordPrompt(dataDir, { sessionId: input.session_id, promptId: input.prompt_id ?? LATEST_PROMPT, prompt, at: new Date().toISOString(), source: input.source });
  } catch (e) {
    debugLog("user-prompt-submit", "could not record the prompt", oneLine(e));
  }
}
