/**
 * What the adapters share, pinned where it was once written four times: the hook input's
 * fields checked one by one (each agent taking only those it sends), SessionStart's source, and
 * how a turn of another agent is labelled for the summariser.
 */
import { describe, expect, test } from "bun:test";
import { renderRolloutTurn } from "../../src/agents/codex/rollout.ts";
import { renderChatTurn, type ChatTurn } from "../../src/agents/gemini/chat.ts";
import { renderOpencodeTurn, type OpencodeTurn } from "../../src/agents/opencode/db.ts";
import { agentNamed } from "../../src/agents/registry.ts";
import { agentLastTurn, agentTurns } from "../../src/agents/turn.ts";
import type { ToolCall } from "../../src/transcript/types.ts";

const parse = (agent: string, raw: Record<string, unknown>) => agentNamed(agent).parseHookInput(raw);

describe("the hook input of every agent", () => {
  const good = { session_id: "s-1", hook_event_name: "Stop", transcript_path: "/t/x.jsonl", cwd: "/p", prompt: "hi" };
  for (const agent of ["claude", "codex", "gemini", "opencode", "copilot"]) {
    test(`${agent}: a field of the wrong type or size is dropped on its own, the rest kept`, () => {
      const n = parse(agent, { ...good, session_id: 7, cwd: "/p\0x", transcript_path: "x".repeat(5000) });
      expect(n.agent).toBe(agent);
      expect(n.session_id).toBeUndefined();
      expect(n.cwd).toBeUndefined();
      expect(n.transcript_path).toBeUndefined();
      expect(n.hook_event_name).toBe("Stop");
      expect(n.prompt).toBe("hi");
      expect(parse(agent, { ...good, session_id: "y".repeat(300) }).session_id).toMatch(/^y{40}-[0-9a-f]+$/);
    });
  }

  test("each agent takes only the fields it sends, under the neutral names", () => {
    const all = { ...good, prompt_id: "p", turn_id: "t", reason: "exit", last_assistant_message: "bye", prompt_response: "resp", stop_hook_active: true };
    const claude = parse("claude", all);
    expect([claude.prompt_id, claude.reason, claude.last_assistant_message, claude.stop_hook_active]).toEqual(["p", "exit", "bye", true]);
    const codex = parse("codex", all);
    expect([codex.prompt_id, codex.reason, codex.last_assistant_message, codex.stop_hook_active]).toEqual(["t", "exit", "bye", true]);
    const gemini = parse("gemini", { ...all, prompt_response: undefined });
    expect([gemini.prompt_id, gemini.reason, gemini.last_assistant_message, gemini.stop_hook_active]).toEqual([undefined, "exit", undefined, true]);
    expect(parse("gemini", all).last_assistant_message).toBe("resp");
    const opencode = parse("opencode", all);
    expect([opencode.prompt_id, opencode.reason, opencode.last_assistant_message, opencode.stop_hook_active]).toEqual(["p", undefined, "bye", undefined]);
    // Copilot CLI names no turn in its hooks and sends no answer: the drainer finds the turn by the stop hook's time.
    const copilot = parse("copilot", all);
    expect([copilot.prompt_id, copilot.reason, copilot.last_assistant_message, copilot.stop_hook_active]).toEqual([undefined, "exit", undefined, true]);
  });

  test("the source is kept at SessionStart only, but for Claude Code, which says who sent a prompt", () => {
    for (const agent of ["codex", "gemini", "opencode", "copilot"]) {
      expect(parse(agent, { hook_event_name: "SessionStart", source: "resume" }).source).toBe("resume");
      expect(parse(agent, { hook_event_name: "UserPromptSubmit", source: "hook" }).source).toBeUndefined();
      expect(parse(agent, { hook_event_name: "SessionStart", source: "" }).source).toBeUndefined();
    }
    expect(parse("claude", { hook_event_name: "UserPromptSubmit", source: "hook" }).source).toBe("hook");
  });
});

describe("another agent's turn labelled for the summariser", () => {
  const ls: ToolCall = { id: "c1", name: "shell", input: "ls", output: "a.txt", outputChars: 5 };
  const cat: ToolCall = { id: "c2", name: "shell", input: "cat b", unpaired: true };
  const bad: ToolCall = { id: "c3", name: "shell", input: "", output: "", outputChars: 0, isError: true };
  const turn = {
    id: "u1",
    userText: "look",
    assistantTexts: ["first", "then"],
    tools: [ls, cat, bad],
    items: [{ kind: "assistant" as const, text: "first" }, { kind: "tool" as const, call: ls }, { kind: "tool" as const, call: cat }, { kind: "assistant" as const, text: "then" }, { kind: "tool" as const, call: bad }],
    complete: true,
    line: 1,
  };
  const tools = (agent: string) => [`[${agent} calls tool]: shell ls`, "[Tool output]: a.txt", `[${agent} calls tool]: shell cat b`, "[Tool output]: (no result in the transcript)", `[${agent} calls tool]: shell`, "[Tool error]: (empty)"];

  test("Codex: in the order it wrote them", () => {
    expect(renderRolloutTurn(turn).split("\n")).toEqual(["[User]: look", "[Codex]: first", ...tools("Codex").slice(0, 4), "[Codex]: then", ...tools("Codex").slice(4)]);
  });

  test("Gemini CLI and OpenCode: the tool calls, then the agent's words", () => {
    expect(renderChatTurn(turn as ChatTurn).split("\n")).toEqual(["[User]: look", ...tools("Gemini CLI"), "[Gemini CLI]: first", "[Gemini CLI]: then"]);
    expect(renderOpencodeTurn({ ...turn, sessionId: "ses_1" } as OpencodeTurn).split("\n")).toEqual(["[User]: look", ...tools("OpenCode"), "[OpenCode]: first", "[OpenCode]: then"]);
  });
});

describe("whether another agent's turn is worth a note", () => {
  const t = (userText: string, assistantTexts: string[], tools: ToolCall[] = []) => ({ id: "t1", userText, assistantTexts, tools, items: [], complete: true });
  const call: ToolCall = { id: "c1", name: "bash", input: "ls", output: "a" };
  test("the drainer gets the kind Claude Code's turn would have: trivial, no reply, or work", () => {
    expect(agentLastTurn(t("thanks", ["You're welcome."]), "s", "").turnKind).toBe("trivial");
    expect(agentLastTurn(t("ok", [], [call]), "s", "").turnKind).toBe("work");
    expect(agentLastTurn(t("explain the retry policy", []), "s", "").turnKind).toBe("no-reply");
    expect(agentLastTurn(t("explain the retry policy", ["It backs off."]), "s", "").turnKind).toBe("work");
  });
  test("the transcript views' turns say whether a model answered", () => {
    const [a, b] = agentTurns([{ ...t("hi there friend", []), line: 1 }, { ...t("go", ["ok"]), line: 2 }]);
    expect([a!.replied, b!.replied]).toEqual([false, true]);
  });
});
