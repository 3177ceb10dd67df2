/**
 * The Codex CLI adapter's reading: rollouts in both layouts (real 0.169 files and a hand-written
 * older one) into the neutral turn, its hook input into the neutral one, and the agent on a note.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentOf, formatAnchor, parseAnchor } from "../../src/core/anchor.ts";
import { findStoppedRolloutTurn, parseRollout } from "../../src/agents/codex/rollout.ts";
import { checkProjectRollout, isCodexRolloutPath } from "../../src/agents/codex/files.ts";
import { readTranscriptText, TRANSCRIPT_READ_MAX } from "../../src/agents/files.ts";
import { AGENTS, agentNamed, agentOrDefault } from "../../src/agents/registry.ts";
import { appendTurnNote, notesIn } from "../../src/memory/journal.ts";
import { REPO } from "../helpers/cli.ts";

const FIX = join(REPO, "test/fixtures/codex");
const fixture = (name: string) => readFileSync(join(FIX, name), "utf8");

describe("Codex rollouts → the neutral turn", () => {
  test("paginated (0.169): the typed prompt and the reply, by Codex's turn id; developer, environment and our injected context dropped", () => {
    const r = parseRollout(fixture("paginated-0.169.jsonl"));
    expect(r.sessionId).toBe("01a2178f-3555-7e81-b21c-8e2abc92c752");
    expect(r.turns.length).toBe(1);
    const t = r.turns[0]!;
    expect(t.id).toBe("01a2178f-35dc-78c0-987f-b6c79cdadb6a");
    expect(t.userText).toBe("Remind me which scheduler runs the nightly jobs please");
    expect(t.assistantTexts).toEqual(["We picked the Zanzibar scheduler for the nightly jobs."]);
    expect(t.complete).toBe(true);
    // The file holds our SessionStart context as a developer message: it never reads as the user's words.
    expect(fixture("paginated-0.169.jsonl")).toContain("Recent memory (memsearch)");
    expect(JSON.stringify(r)).not.toContain("Recent memory");
    expect(JSON.stringify(r)).not.toContain("environment_context");
  });

  test("paginated with a tool call: the command and its output, once", () => {
    const [t] = parseRollout(fixture("paginated-tool-0.169.jsonl")).turns;
    expect(t!.userText).toBe("RUNTOOL show me what the fixture folder holds");
    expect(t!.tools.length).toBe(1);
    expect(t!.tools[0]!.input).toContain("echo fixture-tool-output");
    expect(t!.tools[0]!.output).toContain("fixture-tool-output");
    expect(t!.assistantTexts).toEqual(["The folder holds the fixture."]);
  });

  test("older layout (user_message / agent_message): two turns, the shell call paired with its output, AGENTS.md and a cut last line skipped", () => {
    const r = parseRollout(fixture("legacy.jsonl"));
    expect(r.turns.map((t) => t.userText)).toEqual(["Why does the cron job for the ledger export fail?", "Move it to 04:30 then."]);
    const [a, b] = r.turns;
    expect(a!.assistantTexts).toEqual(["The ledger export runs at 03:00 before the database backup finishes."]);
    expect(a!.tools).toEqual([expect.objectContaining({ name: "shell", input: "crontab -l", output: "0 3 * * * ledger-export", unpaired: false })]);
    expect(b!.assistantTexts).toEqual(["Moved the ledger export to 04:30."]);
    expect(JSON.stringify(r)).not.toContain("planted-injected-word");
    expect(JSON.stringify(r)).not.toContain("always run the linter");
    // Distinct ids for turns without Codex's own.
    expect(new Set(r.turns.map((t) => t.id)).size).toBe(2);
  });

  test("a model-input-only rollout (no events) is read from its messages, scaffolding dropped", () => {
    const only = fixture("legacy.jsonl")
      .split("\n")
      .filter((l) => !l.includes('"event_msg"'))
      .join("\n");
    const r = parseRollout(only);
    expect(r.turns.map((t) => t.userText)).toEqual(["Why does the cron job for the ledger export fail?", "Move it to 04:30 then."]);
    expect(JSON.stringify(r)).not.toContain("planted-injected-word");
  });

  test("the stop hook's turn is found by its turn id, redacted; an unknown id finds nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "codex-rollout-"));
    const file = join(dir, "rollout.jsonl");
    writeFileSync(file, fixture("paginated-0.169.jsonl").replaceAll("nightly jobs please", "nightly jobs please, key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"));
    const found = await findStoppedRolloutTurn(file, { promptId: "01a2178f-35dc-78c0-987f-b6c79cdadb6a", redact: (s) => s.replace(/sk-ant-[\w-]+/g, "[REDACTED]") });
    expect(found?.complete).toBe(true);
    expect(found?.turn.userText).toContain("[REDACTED]");
    expect(found?.turn.text).toContain("[Codex]: We picked the Zanzibar scheduler");
    expect(await findStoppedRolloutTurn(file, { promptId: "other" })).toBeUndefined();
  });

  test("a rollout too large to read whole is refused before it is read (the drainer then writes the note from what the hooks saw)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "codex-rollout-"));
    const file = join(dir, "rollout.jsonl");
    writeFileSync(file, fixture("paginated-0.169.jsonl"));
    truncateSync(file, TRANSCRIPT_READ_MAX + 1);
    expect(findStoppedRolloutTurn(file, { promptId: "01a2178f-35dc-78c0-987f-b6c79cdadb6a" })).rejects.toThrow(/is 257 MiB, over the 256 MiB memsearch reads of one transcript/);
    const small = join(dir, "small.jsonl");
    writeFileSync(small, "0123456789\n");
    expect(readTranscriptText(small)).toBe("0123456789\n");
    expect(() => readTranscriptText(small, 10)).toThrow(/over the 0 MiB/);
  });
});

describe("Codex hook input", () => {
  test("turn_id is the turn's id; a prompt's source is not Codex's to say; fields of the wrong type dropped", () => {
    const input = agentNamed("codex").parseHookInput({ session_id: "s", turn_id: "t1", hook_event_name: "UserPromptSubmit", prompt: "hi", transcript_path: null, cwd: 3, model: "m" });
    expect(input).toEqual({ agent: "codex", session_id: "s", prompt_id: "t1", hook_event_name: "UserPromptSubmit", prompt: "hi", transcript_path: undefined, cwd: undefined, reason: undefined, last_assistant_message: undefined, stop_hook_active: undefined });
    expect(agentNamed("codex").parseHookInput({ hook_event_name: "SessionStart", source: "resume" }).source).toBe("resume");
  });

  test("Claude Code's input reads as before, named claude", () => {
    const input = AGENTS.claude!.parseHookInput({ session_id: "s", prompt_id: "p", source: "sdk", prompt: "x" });
    expect(input).toMatchObject({ agent: "claude", session_id: "s", prompt_id: "p", source: "sdk" });
  });

  test("an unknown agent is a clear error by name, Claude Code's reader when read back from a file", () => {
    expect(() => agentNamed("cursor")).toThrow(/unknown agent "cursor" \(one of claude, codex\b/);
    expect(agentOrDefault("cursor").name).toBe("claude");
    expect(agentOrDefault(undefined).name).toBe("claude");
  });
});

describe("the agent on a note", () => {
  test("the anchor carries a non-default agent; Claude Code's anchor keeps the reference's format; old anchors read as claude", () => {
    const codex = formatAnchor({ session: "s", turn: "t", transcript: "/r o.jsonl", agent: "codex" });
    expect(codex).toBe("<!-- session:s turn:t transcript:/r%20o.jsonl agent:codex -->");
    expect(parseAnchor(codex)).toEqual({ session: "s", turn: "t", transcript: "/r o.jsonl", agent: "codex" });
    expect(formatAnchor({ session: "s", turn: "t", transcript: "/x", agent: "claude" })).toBe("<!-- session:s turn:t transcript:/x -->");
    const old = parseAnchor("<!-- session:s turn:t transcript:/x -->");
    expect(old).toEqual({ session: "s", turn: "t", transcript: "/x" });
    expect(agentOf(old)).toBe("claude");
  });

  test("a Codex turn's note says so in its heading and anchor; a Claude Code note is written as before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "codex-note-"));
    const now = new Date(2026, 10, 26, 9, 30);
    await appendTurnNote({ memoryDir: dir, sessionId: "cx", turnUuid: "t1", transcriptPath: "/r.jsonl", bullets: ["used codex"], agent: "codex", now });
    await appendTurnNote({ memoryDir: dir, sessionId: "cl", turnUuid: "t2", transcriptPath: "/c.jsonl", bullets: ["used claude"], agent: "claude", now });
    const text = readFileSync(join(dir, "2026-11-26.md"), "utf8");
    expect(text).toContain("### 09:30 (agent: codex)\n<!-- session:cx turn:t1 transcript:/r.jsonl agent:codex -->");
    expect(text).toContain("### 09:30\n<!-- session:cl turn:t2 transcript:/c.jsonl -->");
    const notes = notesIn(text, "2026-11-26.md");
    expect(notes.map((n) => agentOf(n.anchor))).toEqual(["codex", "claude"]);
    expect(notes[0]!.time).toBe("09:30");
  });
});

describe("which rollouts a project may open", () => {
  const setup = () => {
    const home = mkdtempSync(join(tmpdir(), "codex-files-"));
    const codexHome = join(home, ".codex");
    const day = join(codexHome, "sessions", "2026", "11", "26");
    mkdirSync(day, { recursive: true });
    const project = join(home, "proj");
    mkdirSync(join(project, ".git"), { recursive: true });
    const text = fixture("paginated-0.169.jsonl").replaceAll("/tmp/h12-cx/proj", project);
    const mine = join(day, "rollout-mine.jsonl");
    writeFileSync(mine, text);
    return { home, codexHome, day, project, mine, text, env: { HOME: home, CODEX_HOME: codexHome } };
  };

  test("a plain rollout started in this project: yes; in another project: only with anyProject", () => {
    const s = setup();
    expect(() => checkProjectRollout(s.mine, s.project, { env: s.env })).not.toThrow();
    const other = join(s.day, "rollout-other.jsonl");
    writeFileSync(other, s.text.replaceAll(s.project, "/elsewhere"));
    expect(() => checkProjectRollout(other, s.project, { env: s.env })).toThrow("another project's rollout");
    expect(() => checkProjectRollout(other, s.project, { env: s.env, anyProject: true })).not.toThrow();
  });

  test("a link in the sessions folder, a file outside it, a path climbing out of it: refused", () => {
    const s = setup();
    const outside = join(s.home, "rollout-planted.jsonl");
    writeFileSync(outside, s.text);
    symlinkSync(outside, join(s.day, "rollout-link.jsonl"));
    expect(() => checkProjectRollout(join(s.day, "rollout-link.jsonl"), s.project, { env: s.env })).toThrow("not a plain file");
    expect(() => checkProjectRollout(outside, s.project, { env: s.env })).toThrow("not a Codex rollout");
    expect(() => checkProjectRollout(join(s.day, "..", "..", "..", "..", "..", "rollout-planted.jsonl"), s.project, { env: s.env })).toThrow("not a Codex rollout");
    expect(isCodexRolloutPath(s.mine, s.env)).toBe(true);
  });
});
