/** Last-turn extraction for the Stop hook. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NotFoundError, UnrecognisedFormatError } from "../../src/core/errors.ts";
import { extractLastTurn, LAST_TURN_OUTPUT_CHARS } from "../../src/agents/claude/last-turn.ts";

const FIX = join(import.meta.dir, "../fixtures/transcripts");
const fx = (name: string) => join(FIX, name);
const tmp = mkdtempSync(join(tmpdir(), "ms-lastturn-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const line = (o: unknown) => JSON.stringify(o) + "\n";
const u = (uuid: string, content: unknown, extra: object = {}) => line({ type: "user", uuid, sessionId: "s-1", timestamp: "2026-03-01T10:00:00Z", message: { role: "user", content }, ...extra });
const a = (uuid: string, id: string, block: unknown) => line({ type: "assistant", uuid, sessionId: "s-1", message: { id, role: "assistant", content: [block] } });

describe("extractLastTurn", () => {
  test("labels the last real user message through EOF", async () => {
    const t = await extractLastTurn(fx("split-assistant.jsonl"));
    expect(t).toBeDefined();
    expect(t!.sessionId).toBe("5e55a000-0000-4000-8000-000000000001");
    expect(t!.text).toBe(
      [
        "[User]: Rename the config loader and run the tests",
        "[Claude Code]: I'll rename it first.\n\nThen run the tests.",
        "[Claude Code calls tool]: Bash git mv src/config.ts src/settings.ts",
        "[Tool output]: (empty)",
        "[Claude Code calls tool]: Bash bun test ↵ --bail",
        "[Tool error]: error: 1 test failed",
        "[Claude Code]: One test failed; the import path needs updating.",
      ].join("\n"),
    );
    const firstUser = readFileSync(fx("split-assistant.jsonl"), "utf8").split("\n")[0]!;
    expect(t!.turnUuid).toBe(JSON.parse(firstUser).uuid);
  });

  test("a lagging transcript gets the hook's last_assistant_message appended", async () => {
    const msg = "Migration 002_users.sql adds the users table.";
    const t = await extractLastTurn(fx("lagging.jsonl"), { lastAssistantMessage: msg });
    expect(t!.userText).toBe("Which one adds the users table?");
    expect(t!.usedLastAssistantMessage).toBe(true);
    expect(t!.assistantTexts).toEqual([msg]);
    expect(t!.text.split("\n")).toEqual([
      "[User]: Which one adds the users table?",
      "[Claude Code calls tool]: Grep CREATE TABLE users in migrations",
      "[Tool output]: (no result in the transcript)",
      `[Claude Code]: ${msg}`,
    ]);
    const plain = await extractLastTurn(fx("lagging.jsonl"));
    expect(plain!.usedLastAssistantMessage).toBeUndefined();
    expect(plain!.text).not.toContain(msg);
  });

  test("the message is not added twice when the file already has it", async () => {
    const t = await extractLastTurn(fx("compaction.jsonl"), { lastAssistantMessage: "  Imports\nupdated. " });
    expect(t!.usedLastAssistantMessage).toBeUndefined();
    expect(t!.text.match(/Imports updated\./g)!.length).toBe(1);
  });

  test("a final text written only in part is completed from the message", async () => {
    const p = join(tmp, "partial.jsonl");
    writeFileSync(p, u("u1", "Summarise the plan") + a("a1", "m1", { type: "text", text: "The plan has three steps:" }));
    const t = await extractLastTurn(p, { lastAssistantMessage: "The plan has three steps: read, write, test." });
    expect(t!.assistantTexts).toEqual(["The plan has three steps: read, write, test."]);
  });

  test("tool output is clipped to 1000 chars with a visible marker", async () => {
    const p = join(tmp, "big-output.jsonl");
    const out = "line of output\n".repeat(500);
    writeFileSync(
      p,
      u("u1", "Dump the log") +
        a("a1", "m1", { type: "tool_use", id: "t1", name: "Bash", input: { command: "cat log" } }) +
        u("r1", [{ type: "tool_result", tool_use_id: "t1", content: out }]),
    );
    const t = await extractLastTurn(p);
    const outLine = t!.text.slice(t!.text.indexOf("[Tool output]: "));
    expect(outLine).toContain(`…[truncated, ${out.trim().length} chars total]`);
    expect(t!.tools[0]!.output!.length).toBeLessThanOrEqual(LAST_TURN_OUTPUT_CHARS + 40);
    expect(t!.tools[0]!.outputChars).toBe(out.trim().length);
  });

  test("session id falls back to the file name", async () => {
    const p = join(tmp, "abc-session.jsonl");
    writeFileSync(p, line({ type: "user", uuid: "u1", message: { role: "user", content: "hi there" } }) + line({ type: "assistant", uuid: "a1", message: { id: "m", role: "assistant", content: [{ type: "text", text: "hello" }] } }));
    const t = await extractLastTurn(p);
    expect(t!.sessionId).toBe("abc-session");
    expect(t!.turnUuid).toBe("u1");
  });

  test("no turn: empty file, or only meta / local commands / tool results", async () => {
    const empty = join(tmp, "empty.jsonl");
    writeFileSync(empty, "");
    expect(await extractLastTurn(empty)).toBeUndefined();
    const noTurn = join(tmp, "noturn.jsonl");
    writeFileSync(noTurn, u("u1", "<command-name>/mcp</command-name>") + u("u2", "<local-command-stdout>ok</local-command-stdout>") + u("u3", "skill body", { isMeta: true }));
    expect(await extractLastTurn(noTurn)).toBeUndefined();
  });

  test("errors stay typed: missing file, foreign format", async () => {
    expect(await extractLastTurn(join(tmp, "missing.jsonl")).catch((e) => e)).toBeInstanceOf(NotFoundError);
    expect(await extractLastTurn(fx("codex-rollout.jsonl")).catch((e) => e)).toBeInstanceOf(UnrecognisedFormatError);
  });

  test("injected memory never reaches the summariser text", async () => {
    const t = await extractLastTurn(fx("injected.jsonl"));
    expect(t!.text).toBe("[User]: What did we decide about caching last week?\n[Claude Code]: We chose a 5 minute TTL in Redis.");
  });

  test("a queued message and an interruption stay in the turn, labelled [User]", async () => {
    const p = join(tmp, "queued.jsonl");
    writeFileSync(
      p,
      u("u1", "Build it") +
        a("a1", "m1", { type: "text", text: "Building." }) +
        line({ type: "attachment", uuid: "q1", attachment: { type: "queued_command", prompt: "and run the tests" } }) +
        u("u2", [{ type: "text", text: "[Request interrupted by user]" }]),
    );
    const t = await extractLastTurn(p);
    expect(t!.text.split("\n")).toEqual(["[User]: Build it", "[Claude Code]: Building.", "[User]: and run the tests", "[User]: [Request interrupted by user]"]);
  });
});
