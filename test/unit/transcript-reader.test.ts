/** The reader on synthetic fixtures (test/fixtures/transcripts) and on broken inputs. */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError, NotFoundError, UnrecognisedFormatError } from "../../src/core/errors.ts";
import { parseLine, peekEntry, scanLines, toolUseIds } from "../../src/transcript/lines.ts";
import { EmptyTranscriptError, findTurn, listTurns, readTranscript, UNRECOGNISED_MESSAGE } from "../../src/agents/claude/reader.ts";
import { classifyUserText, commandText, stripInjected, summarizeToolInput } from "../../src/transcript/sanitize.ts";
import { listSubagents, readSubagent, subagentDir } from "../../src/agents/claude/subagents.ts";
import type { Transcript } from "../../src/agents/claude/types.ts";

const FIX = join(import.meta.dir, "../fixtures/transcripts");
const fx = (name: string) => join(FIX, name);
const tmp = mkdtempSync(join(tmpdir(), "ms-transcript-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tmpFile(name: string, content: string | Uint8Array): string {
  const p = join(tmp, name);
  writeFileSync(p, content);
  return p;
}

/** Every text a read holds, as one string (what it skipped left out or not). */
const everything = (t: Omit<Transcript, "stats"> & { stats?: Transcript["stats"] }) => JSON.stringify(t);

describe("images", () => {
  test("become placeholders in user content and in tool results; no base64 survives", async () => {
    const raw = readFileSync(fx("images.jsonl"), "utf8");
    expect(raw).toMatch(/[A-Za-z0-9+/]{1000,}/); // the fixture really holds base64
    const t = await readTranscript(fx("images.jsonl"));
    expect(t.turns.map((x) => x.userText)).toEqual(["What is wrong with this screenshot?\n\n[image: image/png]", "[image: image/webp]"]);
    expect(t.turns[0]!.tools[0]!.output).toBe("Screenshot of the page:\n[image: image/jpeg]");
    expect(everything(t)).not.toMatch(/[A-Za-z0-9+/]{100,}/);
  });
});

describe("truncated last line", () => {
  test("is counted as malformed; the call it would have answered is unpaired", async () => {
    const t = await readTranscript(fx("truncated.jsonl"));
    expect(t.stats.malformed).toBe(1);
    expect(t.turns.length).toBe(2);
    const last = t.turns[1]!.tools[0]!;
    expect(last).toMatchObject({ name: "Bash", input: "bun test test/e2e", unpaired: true });
    expect(last.output).toBeUndefined();
    expect(t.turns[0]!.tools[0]).toMatchObject({ output: "12 pass\n0 fail" });
    expect(t.turns[0]!.tools[0]!.unpaired).toBeUndefined();
  });
});

describe("interleaved garbage", () => {
  test("is skipped and counted, never fatal", async () => {
    const t = await readTranscript(fx("garbage.jsonl"));
    expect(t.turns.map((x) => [x.userText, x.assistantTexts])).toEqual([
      ["Explain the cache layer", ["The cache sits in front of the database."]],
      ["And the eviction policy?", ["LRU with a 5 minute TTL."]],
    ]);
    expect(t.stats.malformed).toBe(8);
    expect(t.stats.unknownTypes).toBe(1);
    expect(t.stats.skipped["brand-new-entry-type"]).toBe(1);
    expect(t.stats.unknownBlocks).toBe(3);
    expect((await listTurns(fx("garbage.jsonl"))).turns.length).toBe(2);
  });
});

describe("compaction", () => {
  test("boundary + isCompactSummary make a compaction, not a turn; summaries trusted by leafUuid", async () => {
    const t = await readTranscript(fx("compaction.jsonl"));
    expect(t.turns.map((x) => x.userText)).toEqual(["Refactor the store module into three files", "Thanks, now update the imports"]);
    expect(t.compactions.length).toBe(1);
    expect(t.compactions[0]).toMatchObject({ trigger: "auto", preTokens: 167117 });
    expect(t.compactions[0]!.summary).toContain("read.ts was written");
    // The compaction happened inside turn 1, between its tool calls.
    expect(t.turns[0]!.items.map((i) => i.kind)).toEqual(["tool", "tool", "compaction", "tool", "assistant"]);
    expect(t.turns[0]!.tools.every((c) => !c.unpaired)).toBe(true);
    expect(t.summaries).toEqual([{ summary: "Store refactor", leafUuid: expect.any(String) }]);
    expect(t.stats.untrustedSummaries).toBe(1);
  });
});

describe("subagents", () => {
  test("inline sidechain lines are not main-thread turns", async () => {
    const t = await readTranscript(fx("session-sub.jsonl"));
    expect(t.subagent).toBe(false);
    expect(t.turns.length).toBe(1);
    expect(t.stats.sidechain).toBe(4);
    expect(t.turns[0]!.tools.map((c) => [c.name, c.input])).toEqual([["Task", "Explore: Find loadConfig callers"]]);
    expect(t.turns[0]!.tools[0]!.output).toContain("Two callers");
  });

  test("subagent files are listed and read as their own main thread", async () => {
    const session = fx("session-sub.jsonl");
    expect(subagentDir(session)).toBe(join(FIX, "session-sub", "subagents"));
    const subs = await listSubagents(session);
    expect(subs.map((s) => [s.agentId, s.compaction])).toEqual([
      ["abc1234", false],
      ["acompact-5e1f", true],
    ]);
    const a = await readSubagent(subs[0]!.path);
    expect(a.subagent).toBe(true);
    expect(a.turns.map((x) => x.userText)).toEqual(["Search the repo for loadConfig callers"]);
    expect(a.turns[0]!.tools[0]).toMatchObject({ name: "Grep", input: "loadConfig in /home/dev/proj", output: "src/cli.ts:3\nsrc/core/context.ts:9" });
    // Its injected reminder (isMeta) is not captured.
    const c = await readTranscript(subs[1]!.path);
    expect(everything(c)).not.toContain("[memsearch");
    expect(await listSubagents(fx("images.jsonl"))).toEqual([]);
  });

  test("a subagent file is recognised by its content too, not only its path", async () => {
    const p = join(tmp, "renamed-agent.jsonl");
    copyFileSync(join(FIX, "session-sub/subagents/agent-abc1234.jsonl"), p);
    const t = await readTranscript(p);
    expect(t.subagent).toBe(true);
    expect(t.turns.length).toBe(1);
  });
});

describe("injected context", () => {
  test("attachments, system reminders, isMeta and marker paragraphs never reach captured text", async () => {
    const raw = readFileSync(fx("injected.jsonl"), "utf8");
    expect(raw).toContain("[memsearch]");
    expect(raw).toContain("hook_additional_context");
    const t = await readTranscript(fx("injected.jsonl"));
    const s = everything({ ...t, stats: undefined });
    expect(s).not.toContain("[memsearch");
    expect(s).not.toContain("<!-- session:");
    expect(s).not.toContain("system-reminder");
    expect(s).not.toContain("Redis cache TTL is 5 minutes"); // the meta entry's memory
    expect(t.turns.map((x) => x.userText)).toEqual(["Add a health check endpoint", "What did we decide about caching last week?"]);
    expect(t.turns[0]!.tools[0]!.output).toBe("The file /home/dev/proj/src/app.ts has been updated.");
    // A message queued while Claude worked is kept, inside the turn.
    expect(t.turns[0]!.items).toContainEqual({ kind: "user", text: "also return the version in the response" });
    expect(t.stats.attachments).toBe(3);
    expect(t.stats.meta).toBe(1);
  });

  test("stripInjected", () => {
    expect(stripInjected("keep\n\n<system-reminder>\nx [memsearch] y\n</system-reminder>\n\nalso keep")).toBe("keep\n\n\n\nalso keep");
    expect(stripInjected("a\n\n[memsearch] Memory available\n\nb")).toBe("a\n\nb");
    expect(stripInjected("a\n\n### 09:15\n<!-- session:x turn:y transcript:/z -->\n- note\n\nb")).toBe("a\n\nb");
    expect(stripInjected("unterminated <system-reminder> rest")).toBe("unterminated ");
    expect(stripInjected("plain text")).toBe("plain text");
    expect(stripInjected("q\n\n# Recent memory (memsearch)\nNotes from earlier sessions\n\nq2")).toBe("q\n\nq2");
  });
});

describe("assistant lines sharing a message.id", () => {
  test("are merged; repeated blocks count once; thinking is left out", async () => {
    const t = await readTranscript(fx("split-assistant.jsonl"));
    const turn = t.turns[0]!;
    expect(turn.assistantTexts).toEqual(["I'll rename it first.\n\nThen run the tests.", "One test failed; the import path needs updating."]);
    expect(turn.tools.map((c) => c.input)).toEqual(["git mv src/config.ts src/settings.ts", "bun test ↵ --bail"]);
    expect(turn.toolCount).toBe(2);
    expect(turn.tools[1]).toMatchObject({ isError: true, output: "error: 1 test failed" });
    const s = everything(t);
    expect(s).not.toContain("SECRET-THINKING");
    expect(s).not.toContain("REDACTED-BLOB");
    expect((await listTurns(fx("split-assistant.jsonl"))).turns[0]!.toolCount).toBe(2);
  });
});

describe("slash commands and other non-prompts", () => {
  test("local commands, bash mode, notifications and interruptions open no turn; a prompt command does", async () => {
    const t = await readTranscript(fx("commands.jsonl"));
    expect(t.turns.map((x) => [x.kind, x.userText])).toEqual([
      ["command", "/review src/app.ts"],
      ["prompt", "ok, ship it"],
    ]);
    expect(t.turns[0]!.items).toContainEqual({ kind: "user", text: "[Request interrupted by user for tool use]" });
    expect(t.stats.skipped["user:local-command"]).toBe(1); // /mcp
    expect(t.stats.skipped["user:notification"]).toBe(1);
    expect(everything(t)).not.toContain("Review the file given in the arguments"); // isMeta expansion
  });

  test("classifyUserText / commandText", () => {
    expect(classifyUserText("hello")).toBe("prompt");
    expect(classifyUserText("  ")).toBe("empty");
    expect(classifyUserText("<command-name>/mcp</command-name>")).toBe("command");
    expect(classifyUserText("<local-command-stdout>x</local-command-stdout>")).toBe("local");
    expect(classifyUserText("Caveat: The messages below were generated by the user while running local commands. DO NOT")).toBe("local");
    expect(classifyUserText("<bash-input>ls</bash-input>")).toBe("local");
    expect(classifyUserText("[Request interrupted by user]")).toBe("interrupt");
    expect(classifyUserText("<task-notification>x")).toBe("notification");
    expect(classifyUserText("This session is being continued from a previous conversation that ran out")).toBe("compact-summary");
    expect(commandText("<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>a b</command-args>")).toBe("/review a b");
    expect(commandText("<command-name>test-command</command-name><command-args></command-args>")).toBe("/test-command");
  });

  test("summarizeToolInput", () => {
    expect(summarizeToolInput("Bash", { command: "ls -la\n  && pwd", description: "x" })).toBe("ls -la ↵ && pwd");
    expect(summarizeToolInput("Grep", { pattern: "foo", path: "src" })).toBe("foo in src");
    expect(summarizeToolInput("Read", { file_path: "/a/b.ts" })).toBe("/a/b.ts");
    expect(summarizeToolInput("Task", { description: "Find x", prompt: "long", subagent_type: "Explore" })).toBe("Explore: Find x");
    expect(summarizeToolInput("TodoWrite", { todos: [{ content: "a", status: "done" }] })).toBe("1 todos: [done] a");
    expect(summarizeToolInput("mcp__x__y", { a: 1, b: [2] })).toBe('{"a":1,"b":[2]}');
    expect(summarizeToolInput("Bash", { command: "ab ".repeat(300) }).length).toBe(500);
    expect(summarizeToolInput("Write", { file_path: "", content: "QUJD".repeat(100) })).toBe("[base64 data, 400 chars]");
  });
});

describe("foreign formats exit 3", () => {
  for (const name of ["codex-rollout.jsonl", "openclaw.jsonl"]) {
    test(name, async () => {
      for (const read of [readTranscript, listTurns]) {
        const err = await read(fx(name)).catch((e) => e);
        expect(err).toBeInstanceOf(UnrecognisedFormatError);
        expect(err.exitCode).toBe(3);
        expect(err.message).toBe(UNRECOGNISED_MESSAGE);
      }
    });
  }

  test("JSON objects of no known kind are unrecognised too", async () => {
    const p = tmpFile("objects.jsonl", '{"a":1}\n{"b":2}\n');
    expect(await readTranscript(p).catch((e) => e)).toBeInstanceOf(UnrecognisedFormatError);
  });

  test("a foreign file is rejected from its first entries, without reading it all", async () => {
    const line = readFileSync(fx("codex-rollout.jsonl"), "utf8").split("\n")[3]! + "\n";
    const p = tmpFile("big-codex.jsonl", line.repeat(20000));
    const t0 = performance.now();
    expect(await listTurns(p).catch((e) => e)).toBeInstanceOf(UnrecognisedFormatError);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe("bad inputs get clear errors", () => {
  test("missing file", async () => {
    const p = join(tmp, "nope.jsonl");
    const err = await readTranscript(p).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toBe(`transcript not found: ${p}`);
    expect(err.exitCode).toBe(1);
  });

  test("directory", async () => {
    const err = await listTurns(tmp).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toContain("is a directory");
  });

  test("empty and blank files", async () => {
    for (const content of ["", "\n\n  \n"]) {
      const err = await readTranscript(tmpFile("empty.jsonl", content)).catch((e) => e);
      expect(err).toBeInstanceOf(EmptyTranscriptError);
      expect(err.message).toContain("transcript is empty");
    }
  });

  test("binary garbage", async () => {
    const bytes = new Uint8Array(5000).map((_, i) => (i * 7919) % 256);
    const err = await readTranscript(tmpFile("bin.jsonl", bytes)).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toContain("binary");
  });

  test("text without a single JSON line", async () => {
    const err = await readTranscript(tmpFile("text.jsonl", "hello\nworld\n[1]\n")).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toContain("not a JSONL transcript");
  });
});

describe("line scanning", () => {
  test("chunk boundaries, CRLF and a missing final newline do not change the lines", async () => {
    const text = readFileSync(fx("images.jsonl"), "utf8").replace(/\n/g, "\r\n") + "{\"type\":\"user\",\"tail\":\"é→\"}";
    const p = tmpFile("crlf.jsonl", text);
    const expected = text.split("\n");
    for (const chunkSize of [1, 7, 64, 4096, 1 << 20]) {
      const got: string[] = [];
      const offsets: number[] = [];
      const dec = new TextDecoder();
      const res = await scanLines(p, (b, s, e, off) => void (got.push(dec.decode(b.subarray(s, e))), offsets.push(off)), { chunkSize });
      expect(got).toEqual(expected);
      expect(res.lines).toBe(expected.length);
      let o = 0;
      expected.forEach((l, i) => {
        expect(offsets[i]).toBe(o);
        o += Buffer.byteLength(l) + 1;
      });
    }
  });

  test("lines over the limit are skipped and counted, the rest still read", async () => {
    const p = tmpFile("long.jsonl", `{"a":1}\n{"b":"${"x".repeat(5000)}"}\n{"c":3}\n`);
    for (const chunkSize of [100, 1 << 16]) {
      const got: string[] = [];
      const res = await scanLines(p, (b, s, e) => void got.push(Buffer.from(b.subarray(s, e)).toString()), { chunkSize, maxLineBytes: 1000 });
      expect(got).toEqual(['{"a":1}', '{"c":3}']);
      expect(res.oversized).toBe(1);
    }
  });

  test("range reads start and stop at the given offsets", async () => {
    const p = tmpFile("range.jsonl", "l1\nl2\nl3\nl4\n");
    const got: [string, number][] = [];
    await scanLines(p, (b, s, e, _o, n) => void got.push([Buffer.from(b.subarray(s, e)).toString(), n]), { start: 3, end: 9, linesBefore: 1 });
    expect(got).toEqual([
      ["l2", 2],
      ["l3", 3],
    ]);
  });

  test("parseLine accepts exactly one JSON object", () => {
    const enc = (s: string) => Buffer.from(s);
    const ok = (s: string) => parseLine(enc(s), 0, enc(s).length);
    expect(ok('{"a":1}')).toEqual({ a: 1 });
    expect(ok(' {"a":1}\r')).toEqual({ a: 1 });
    for (const bad of ['{"a":1}{"b":2}', '{"a":', "42", "[1]", '"s"', "x", ""]) expect(ok(bad)).toBeUndefined();
  });
});

/** All lines of all fixtures, real and synthetic. */
function allLines(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith(".jsonl")) out.push(...readFileSync(p, "utf8").split("\n"));
    }
  };
  walk(FIX); // synthetic files at the top, real transcripts in one folder per source
  return out;
}

describe("the peek never lies", () => {
  const lines = allLines();
  test("what it reports matches a full parse, on every fixture line", () => {
    let typed = 0;
    for (const line of lines) {
      const b = Buffer.from(line);
      const p = peekEntry(b, 0, b.length);
      let v: Record<string, any> | undefined;
      try {
        v = JSON.parse(line);
      } catch {
        continue;
      }
      if (!v || typeof v !== "object" || Array.isArray(v)) continue;
      if (p.type !== undefined) {
        typed++;
        expect(p.type).toBe(v.type);
      }
      if (p.sidechain !== undefined) expect(p.sidechain).toBe(v.isSidechain);
      const m = v.message;
      if (p.role !== undefined) expect(p.role).toBe(m?.role);
      if (p.content !== undefined) expect(p.content).toBe(typeof m?.content === "string" ? "string" : Array.isArray(m?.content) ? "array" : "other");
      if (p.firstBlock !== undefined) expect(p.firstBlock).toBe(m.content[0].type);
      if (v.type === "assistant" && Array.isArray(m?.content)) {
        const ids = toolUseIds(b, 0, b.length);
        if (ids) expect(ids).toEqual(m.content.filter((x: any) => x?.type === "tool_use").map((x: any) => x.id));
      }
    }
    expect(typed).toBeGreaterThan(lines.length / 2);
  });

  test("nested, escaped or bracketed look-alikes are not taken for top-level keys", () => {
    const cases = [
      '{"data":{"type":"progress"},"type":"user","message":{"role":"user","content":"hi"}}',
      '{"a\\"type":"progress","type":"user"}',
      '{"cwd":"/p{x}","type":"progress"}',
      '{"x":"\\"type\\":\\"progress\\"","type":"assistant"}',
      '{"type":"user","message":{"meta":{"content":[{"type":"tool_result"}]},"content":"real"}}',
      '{"type":"user","message":{"content":[{"x":{"type":"tool_result"},"type":"text","text":"hi"}]}}',
    ];
    for (const c of cases) {
      const b = Buffer.from(c);
      const p = peekEntry(b, 0, b.length);
      const v = JSON.parse(c);
      if (p.type !== undefined) expect(p.type).toBe(v.type);
      if (p.content !== undefined) expect(p.content).toBe(typeof v.message.content === "string" ? "string" : "array");
      if (p.firstBlock !== undefined) expect(p.firstBlock).toBe(v.message.content[0].type);
    }
  });

  test("toolUseIds is unsure rather than wrong", () => {
    const ids = (s: string) => toolUseIds(Buffer.from(s), 0, Buffer.byteLength(s));
    expect(ids('{"message":{"content":[{"type":"text","text":"say \\"tool_use\\""}]}}')).toEqual([]);
    expect(ids('{"message":{"content":[{"type":"tool_use","id":"t1","name":"x"}],"stop_reason":"tool_use"}}')).toEqual(["t1"]);
    expect(ids('{"message":{"content":[{"id":"t1","type":"tool_use"}]}}')).toBeUndefined();
    expect(ids('{"message":{"content":[{"type": "tool_use", "id": "t1"}]}}')).toBeUndefined();
    expect(ids('{"message":{"content":[{"type":"text","kind":"tool_use"}]}}')).toBeUndefined();
  });
});

describe("findTurn", () => {
  test("exact uuid, prefix, trailing dots; undefined otherwise", async () => {
    const t = await listTurns(fx("compaction.jsonl"));
    const u = t.turns[1]!.uuid;
    expect(findTurn(t.turns, u)).toBe(1);
    expect(findTurn(t.turns, u.slice(0, 8))).toBe(1);
    expect(findTurn(t.turns, u.slice(0, 12) + "...")).toBe(1);
    expect(findTurn(t.turns, u.toUpperCase())).toBe(1);
    expect(findTurn(t.turns, "zzzz")).toBeUndefined();
    expect(findTurn(t.turns, "")).toBeUndefined();
    // An exact match wins over an earlier prefix match; otherwise the first prefix match.
    const turns = [{ uuid: "abc-1" }, { uuid: "abc" }];
    expect(findTurn(turns, "abc")).toBe(1);
    expect(findTurn(turns, "ab")).toBe(0);
  });

  test("an entry uuid inside a turn locates that turn", async () => {
    const p = fx("lagging.jsonl");
    const tool = readFileSync(p, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.message?.content?.[0]?.tool_use_id === "toolu_l_1");
    const t = await listTurns(p, { locate: tool.uuid });
    expect(t.located).toBe(0);
  });
});

test("the mkdir in tmp works (sanity for the other tests)", () => {
  mkdirSync(join(tmp, "d"), { recursive: true });
  expect(statSync(join(tmp, "d")).isDirectory()).toBe(true);
});

describe("the line types Claude Code 2.1.3xx writes", () => {
  // Shapes as the real client wrote them in the real-client suite (payloads shortened, the system
  // prompt replaced): request records, prompt snapshots and hook attachments carry our own injected
  // memory and must never become text of a turn.
  const sid = "5e55a000-0000-4000-8000-0000000003a8";
  const base = { sessionId: sid, version: "2.1.328", cwd: "/home/dev/proj", isSidechain: false, userType: "external" };
  const injected = "# Recent memory (memsearch)\n- User asked about the flamingo parser";
  const blob = "x".repeat(60_000);
  const lines = [
    { type: "last-prompt", lastPrompt: "Remember the flamingo parser", sessionId: sid },
    { type: "mode", mode: "normal", sessionId: sid },
    { type: "permission-mode", permissionMode: "auto", sessionId: sid },
    { type: "atis-latch", sessionId: sid },
    { ...base, type: "attachment", uuid: "at-1", attachment: { type: "hook_additional_context", hookEvent: "SessionStart", hookName: "SessionStart:startup", content: [injected] } },
    { ...base, type: "attachment", uuid: "at-2", attachment: { type: "prompt_snapshot", content: injected + blob } },
    { ...base, type: "user", uuid: "u-1", promptId: "p-1", message: { role: "user", content: "Remember the flamingo parser caches 512 entries." } },
    { type: "api-request-shape", sessionId: sid, shape: { system: injected, tools: blob } },
    { type: "api-request-blob", sessionId: sid, blob: injected + blob },
    { type: "api-request", sessionId: sid, requestId: "req_1" },
    { ...base, type: "assistant", uuid: "a-1", message: { id: "msg_1", role: "assistant", content: [{ type: "text", text: "Noted." }] } },
    { ...base, type: "system", subtype: "stop_hook_summary", uuid: "s-1", hookCount: 1, hookInfos: [], hookErrors: [] },
    { ...base, type: "system", subtype: "turn_duration", uuid: "s-2", durationMs: 812 },
    { type: "tools-used", sessionId: sid, tools: ["Bash"] },
    { type: "cost-state", sessionId: sid },
    { type: "file-history-snapshot", messageId: "u-1", snapshot: {} },
    // An interactive session that edits a file (the plan file of plan mode) tracks it line by line.
    {
      type: "file-history-delta",
      messageId: "a-1",
      snapshotMessageId: "u-1",
      trackingPath: "/home/dev/.claude/plans/plan-the-billing-queue.md",
      backup: { backupFileName: null, version: 1, backupTime: "2026-11-26T12:09:00.557Z", realParentDir: "/home/dev/.claude/plans" },
      timestamp: "2026-11-26T12:09:00.558Z",
    },
  ];
  const file = () => tmpFile("client-2.1.328.jsonl", lines.map((l) => JSON.stringify(l)).join("\n") + "\n");

  test("are each read or skipped on purpose: one turn, its prompt id, none of the injected context", async () => {
    const t = await readTranscript(file());
    expect(t.stats.unknownTypes).toBe(0);
    expect(t.stats.malformed).toBe(0);
    expect(t.turns).toHaveLength(1);
    expect(t.turns[0]).toMatchObject({ uuid: "u-1", promptId: "p-1", userText: "Remember the flamingo parser caches 512 entries.", assistantTexts: ["Noted."] });
    expect(everything(t)).not.toContain("Recent memory (memsearch)");
    for (const type of ["api-request-blob", "api-request-shape", "api-request", "mode", "permission-mode", "atis-latch", "tools-used", "last-prompt", "cost-state", "file-history-delta"]) expect(t.stats.skipped[type]).toBe(1);
  });

  test("a turn is found by the prompt id the hooks were given", async () => {
    const index = await listTurns(file());
    expect(findTurn(index.turns, "p-1")).toBe(0);
  });
});
