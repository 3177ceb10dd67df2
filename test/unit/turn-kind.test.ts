import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { listTurns, readTranscript } from "../../src/agents/claude/reader.ts";
import { describeSkips, isLocalCommand, turnKind } from "../../src/transcript/turn-kind.ts";
import { FIXTURES } from "../helpers/fixtures.ts";

describe("turnKind: is a turn worth a note", () => {
  test("Claude Code's own commands are local commands whatever answered them; a plugin's answered command is work", () => {
    for (const c of ["/exit", "/clear", "/compact", "/model sonnet", "/mcp", "/quit"]) expect(turnKind({ kind: "command", userText: c, replied: true, toolCount: 0 })).toBe("local-command");
    expect(turnKind({ kind: "command", userText: "/review src/app.ts", replied: true, toolCount: 0 })).toBe("work");
    expect(turnKind({ kind: "command", userText: "/review src/app.ts", replied: false, toolCount: 0 })).toBe("local-command");
    // What the hooks recorded of a `/clear` (no transcript turn): its text says what it is.
    expect(turnKind({ kind: "prompt", userText: "/clear" })).toBe("local-command");
    expect(isLocalCommand("/usr/bin/env is missing")).toBe(false);
  });

  test("no model reply is no turn; a trivial prompt counts only when its reply ran a tool", () => {
    expect(turnKind({ kind: "prompt", userText: "Port the retry helper to the Go client", replied: false, toolCount: 0 })).toBe("no-reply");
    expect(turnKind({ kind: "prompt", userText: "Ok nice!", replied: true, toolCount: 0 })).toBe("trivial");
    expect(turnKind({ kind: "prompt", userText: "thanks", replied: true, toolCount: 0 })).toBe("trivial");
    expect(turnKind({ kind: "prompt", userText: "yes", replied: true, toolCount: 1 })).toBe("work");
    expect(turnKind({ kind: "prompt", userText: "Why does the importer skip the first session?", replied: true, toolCount: 0 })).toBe("work");
    // Unknown facts (what the hooks saw while the transcript lagged) keep the turn.
    expect(turnKind({ kind: "prompt", userText: "ok" })).toBe("work");
  });

  test("local-commands.jsonl: the index and the full read agree on every turn's kind, and synthetic replies are no reply", async () => {
    const path = join(FIXTURES, "local-commands.jsonl");
    const index = await listTurns(path);
    const full = await readTranscript(path);
    const kinds = index.turns.map((t) => [t.userText.slice(0, 12), turnKind(t)]);
    expect(kinds).toEqual([
      ["Rename the r", "work"],
      ["Ok nice!", "trivial"],
      ["/compact", "local-command"],
      ["Explain why ", "no-reply"],
      ["yes", "work"],
      ["Now port the", "no-reply"],
      ["/exit", "local-command"],
    ]);
    expect(full.turns.map((t) => turnKind(t))).toEqual(index.turns.map((t) => turnKind(t)));
    // The `/clear` nobody answered never became a turn: the reader counts it.
    expect(index.stats.skipped["user:local-command"]).toBe(1);
  });

  test("skips are named for a person", () => {
    expect(describeSkips({ "local-command": 2, "no-reply": 1, trivial: 0 })).toBe("2 local commands, 1 turn without a reply");
    expect(describeSkips({})).toBe("");
  });
});
