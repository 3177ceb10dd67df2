/**
 * The Gemini CLI adapter's reading: real 0.61 chats (and hand-written upserts, checkpoints and
 * rewinds) into the neutral turn, its hook input into the neutral one, its output in its own
 * shape, and its chats refused when they are another project's or not its chats at all.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chatTurns, findStoppedChatTurn, parseChat } from "../../src/agents/gemini/chat.ts";
import { checkProjectChat, isGeminiChatPath } from "../../src/agents/gemini/files.ts";
import { AGENTS } from "../../src/agents/registry.ts";
import { formatGeminiOutput, parseGeminiHookInput } from "../../src/agents/gemini/hook.ts";
import { agentNamed, transcriptAgent } from "../../src/agents/registry.ts";
import { ForeignTranscriptError } from "../../src/transcript/files.ts";
import { redactText } from "../../src/memory/pending.ts";
import { REPO } from "../helpers/cli.ts";

const FIX = join(REPO, "test/fixtures/gemini");
const fixture = (name: string) => readFileSync(join(FIX, name), "utf8");
const line = (o: object) => JSON.stringify(o);
const META = line({ sessionId: "s-1", projectHash: "h", startTime: "2026-11-26T10:00:00Z", lastUpdated: "2026-11-26T10:00:00Z", kind: "main" });
const user = (id: string, text: string) => line({ id, timestamp: "2026-11-26T10:00:01Z", type: "user", content: [{ text }] });
const model = (id: string, text: string, extra: object = {}) => line({ id, timestamp: "2026-11-26T10:00:02Z", type: "gemini", content: text, ...extra });

describe("Gemini CLI chats → the neutral turn", () => {
  test("a real 0.61 chat: the typed prompt without either hook context, the shell call with its result, the answer; the session context is no turn", () => {
    const text = fixture("tool-0.61.jsonl");
    expect(text).toContain("<hook_context>MEMCTX-SessionStart</hook_context>");
    const c = parseChat(text);
    expect(c.sessionId).toBe("86a69924-c921-40d9-889a-fe9a5ce87438");
    expect(c.turns.length).toBe(1);
    const t = c.turns[0]!;
    expect(t.id).toBe("45b28467-fde1-4ea8-80f0-dd2ee0d4c7f7");
    expect(t.userText).toBe("RUNTOOL please list things");
    expect(t.tools.length).toBe(1);
    expect(t.tools[0]!.name).toBe("run_shell_command");
    expect(t.tools[0]!.input).toBe("echo hi-marmalade");
    expect(t.tools[0]!.output).toContain("hi-marmalade");
    expect(t.assistantTexts.length).toBe(1);
    expect(t.complete).toBe(true);
    expect(JSON.stringify(c)).not.toContain("MEMCTX");
    expect(JSON.stringify(c)).not.toContain("session_context");
  });

  test("a real resumed chat: the checkpoint replaces every message before it; the resumed turn is read", () => {
    const c = parseChat(fixture("resumed-tool-0.61.jsonl"));
    expect(c.turns.map((t) => t.userText)).toEqual(["And what was the second thing we decided?"]);
    expect(c.turns[0]!.assistantTexts).toEqual(["The answer is 42."]);
  });

  test("an upsert replaces the message where it stands; $rewindTo drops it and all after; a cut line is skipped", () => {
    const text = [META, user("u1", "first question about the Larkspur queue"), model("g1", "draft"), model("g1", "Larkspur drains nightly."), user("u2", "second question"), model("g2", "second answer"), line({ $rewindTo: "u2" }), user("u3", "the question asked again"), model("g3", "the answer given again"), '{"id":"g4","type":"gem'].join("\n");
    const c = parseChat(text);
    expect(c.turns.map((t) => [t.userText, t.assistantTexts])).toEqual([
      ["first question about the Larkspur queue", ["Larkspur drains nightly."]],
      ["the question asked again", ["the answer given again"]],
    ]);
  });

  test("texts pass through the redaction given", () => {
    const c = parseChat([META, user("u1", "my key is sk-ant-api03-SECRETSECRETSECRETSECRETSECRET"), model("g1", "noted")].join("\n"), { redact: (s) => s.replace(/sk-ant-\S+/g, "[REDACTED]") });
    expect(c.turns[0]!.userText).toBe("my key is [REDACTED]");
  });

  test("the stopped turn: the last one when its prompt is the hook's; complete once the hook's answer is in the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gem-chat-"));
    const f = join(dir, "c.jsonl");
    writeFileSync(f, [META, user("u1", "old question"), model("g1", "old answer"), user("u2", "<hook_context>memory</hook_context>\n\nnew question")].join("\n"));
    expect(await findStoppedChatTurn(f, { prompt: "old question" })).toBeUndefined();
    const lagging = await findStoppedChatTurn(f, { prompt: "new question", lastAssistantMessage: "new answer" });
    expect(lagging?.turn.turnUuid).toBe("u2");
    expect(lagging?.complete).toBe(false);
    writeFileSync(f, [META, user("u1", "old question"), model("g1", "old answer"), user("u2", "new question"), model("g2", "new answer")].join("\n"));
    const done = await findStoppedChatTurn(f, { prompt: "new question", lastAssistantMessage: "new answer" });
    expect(done?.complete).toBe(true);
    expect(done?.turn.text).toContain("[Gemini CLI]: new answer");
    expect(chatTurns(parseChat(readFileSync(f, "utf8"))).map((t) => t.uuid)).toEqual(["u1", "u2"]);
    // A long prompt comes back from the queue clipped: still this turn, not another's.
    const long = `explain the Larkspur migration ${"in detail ".repeat(2000)}`;
    writeFileSync(f, [META, user("u1", "old question"), model("g1", "old answer"), user("u3", long), model("g3", "done")].join("\n"));
    expect((await findStoppedChatTurn(f, { prompt: redactText(long) }))?.turn.turnUuid).toBe("u3");
    expect(await findStoppedChatTurn(f, { prompt: redactText(`explain something else ${"in detail ".repeat(2000)}`) })).toBeUndefined();
  });
});

describe("Gemini CLI hooks", () => {
  test("the input: the prompt without the session start's context Gemini CLI prepends; the answer as the last message; source only at SessionStart", () => {
    const before = parseGeminiHookInput({ session_id: "s", hook_event_name: "BeforeAgent", cwd: "/p", transcript_path: "/t.jsonl", timestamp: "x", prompt: "<hook_context># Recent memory\n- a</hook_context>\n\nWhich broker?" });
    expect(before).toEqual({ agent: "gemini", session_id: "s", hook_event_name: "BeforeAgent", cwd: "/p", transcript_path: "/t.jsonl", prompt: "Which broker?" });
    const after = parseGeminiHookInput({ session_id: "s", hook_event_name: "AfterAgent", prompt: "Which broker?", prompt_response: "Quillfeather.", stop_hook_active: false, source: "user" });
    expect(after.last_assistant_message).toBe("Quillfeather.");
    expect(after.source).toBeUndefined();
    expect(parseGeminiHookInput({ hook_event_name: "SessionStart", source: "resume" }).source).toBe("resume");
    // A field of the wrong type is dropped alone.
    expect(parseGeminiHookInput({ session_id: 5, prompt: "ok then" })).toEqual({ agent: "gemini", prompt: "ok then" });
  });

  test("the output: additionalContext under Gemini CLI's event names, nothing else in hookSpecificOutput", () => {
    expect(formatGeminiOutput({ hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "m" } })).toEqual({ hookSpecificOutput: { hookEventName: "BeforeAgent", additionalContext: "m" } });
    expect(formatGeminiOutput({ systemMessage: "s", hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "c" } })).toEqual({ systemMessage: "s", hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "c" } });
    expect(formatGeminiOutput({ systemMessage: "s" })).toEqual({ systemMessage: "s" });
  });

  test("the registry knows it by name", () => {
    expect(agentNamed("gemini").label).toBe("Gemini CLI");
  });
});

describe("which Gemini CLI chats are this project's", () => {
  function home() {
    const h = mkdtempSync(join(tmpdir(), "gem-home-"));
    const root = mkdtempSync(join(tmpdir(), "gem-proj-"));
    const slot = join(h, ".gemini", "tmp", "proj");
    mkdirSync(join(slot, "chats"), { recursive: true });
    writeFileSync(join(slot, ".project_root"), root);
    const chat = join(slot, "chats", "session-1.jsonl");
    writeFileSync(chat, [META, user("u1", "q"), model("g1", "a")].join("\n"));
    return { env: { HOME: h }, root, slot, chat };
  }

  test("a chat of the project's slot is read; another project's, a link, a file outside the chats are refused", () => {
    const h = home();
    expect(isGeminiChatPath(h.chat, h.env)).toBe(true);
    expect(transcriptAgent(h.chat, h.env)?.name).toBe("gemini");
    expect(() => checkProjectChat(h.chat, h.root, { env: h.env })).not.toThrow();
    const other = mkdtempSync(join(tmpdir(), "gem-other-"));
    expect(() => checkProjectChat(h.chat, other, { env: h.env })).toThrow(ForeignTranscriptError);
    expect(() => checkProjectChat(h.chat, other, { env: h.env, anyProject: true })).not.toThrow();
    const link = join(h.slot, "chats", "link.jsonl");
    symlinkSync(h.chat, link);
    expect(() => checkProjectChat(link, h.root, { env: h.env })).toThrow("not a plain file");
    const outside = join(h.root, "x.jsonl");
    writeFileSync(outside, "");
    expect(isGeminiChatPath(outside, h.env)).toBe(false);
    expect(() => checkProjectChat(outside, h.root, { env: h.env })).toThrow(ForeignTranscriptError);
  });

  test("import lists this project's chats only, and renders a turn as Gemini CLI's", async () => {
    const h = home();
    const otherSlot = join(h.env.HOME, ".gemini", "tmp", "other");
    mkdirSync(join(otherSlot, "chats"), { recursive: true });
    writeFileSync(join(otherSlot, ".project_root"), mkdtempSync(join(tmpdir(), "gem-other-")));
    writeFileSync(join(otherSlot, "chats", "session-2.jsonl"), [META, user("u9", "elsewhere"), model("g9", "b")].join("\n"));
    symlinkSync(h.chat, join(h.slot, "chats", "link.jsonl"));
    const t = AGENTS.gemini.transcripts!;
    expect(t.projectFiles(h.root, h.env).map((f) => f.path)).toEqual([h.chat]);
    const { turns } = await t.read(h.chat);
    expect(t.render(turns[0]!)).toBe("[User]: q\n[Gemini CLI]: a");
  });

  test("without .project_root, the chat's project hash decides", () => {
    const h = home();
    writeFileSync(join(h.slot, ".project_root"), "");
    expect(() => checkProjectChat(h.chat, h.root, { env: h.env })).toThrow(ForeignTranscriptError);
    writeFileSync(h.chat, [line({ sessionId: "s", projectHash: createHash("sha256").update(h.root).digest("hex") }), user("u1", "q")].join("\n"));
    expect(() => checkProjectChat(h.chat, h.root, { env: h.env })).not.toThrow();
  });
});
