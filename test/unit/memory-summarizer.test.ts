import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import * as v from "valibot";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  claudeArgs,
  extractBullets,
  firstSentence,
  parseBullets,
  relativePaths,
  summarizeTurn,
  type SummarizeOptions,
} from "../../src/memory/summarizer.ts";
import type { LastTurn } from "../../src/transcript/types.ts";
import { fakeClaudeCalls, processAlive, writeFakeClaude } from "../helpers/fake-claude.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";

const AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE";
const GH_TOKEN = "ghp_" + "aB3d".repeat(9);

function turn(over: Partial<LastTurn> = {}): LastTurn {
  const userText = over.userText ?? `Please fix the login bug. My key is ${AWS_KEY}, keep it out of notes.`;
  const assistantTexts = over.assistantTexts ?? ["Looking at the code.", "Fixed the null check in src/auth.ts. Tests pass now."];
  return {
    sessionId: "sess-1",
    turnUuid: "turn-1",
    userText,
    assistantTexts,
    tools: [],
    text:
      `[User]: ${userText}\n<private>do not store this</private>\n` +
      assistantTexts.map((t) => `[Claude Code]: ${t}`).join("\n") +
      `\n[Tool output]: export GITHUB_TOKEN=${GH_TOKEN}\n`,
    ...over,
  };
}

let dir: string;
let bin: string;
let log: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "memsearch-summ-"));
  bin = writeFakeClaude(dir);
  log = join(dir, "log");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function opts(mode: string, over: Partial<SummarizeOptions> = {}): SummarizeOptions {
  return {
    provider: "claude",
    claudeModel: "haiku",
    ollamaHost: "http://127.0.0.1:9",
    ollamaModel: "llama3.2",
    timeoutMs: 10_000,
    claudeBin: bin,
    env: { PATH: process.env.PATH, HOME: dir, CLAUDECODE: "1", FAKE_CLAUDE_MODE: mode, FAKE_CLAUDE_LOG: log },
    ...over,
  };
}

describe("claude provider", () => {
  test("runs claude -p with the turn on stdin, hooks disabled, and parses its bullets", async () => {
    const r = await summarizeTurn(turn(), opts("ok"));
    expect(r).toEqual({
      provider: "claude",
      bullets: ["- User asked the fake claude for a summary", "- Fake claude answered with two bullets"],
    });
    const [call] = fakeClaudeCalls(log);
    expect(call).toBeDefined();
    expect(call!.argv).toEqual(claudeArgs("haiku"));
    expect(call!.argv).toContain("-p");
    expect(call!.argv.join(" ")).toContain("--model haiku");
    expect(call!.argv).toEqual(["-p", "--strict-mcp-config", "--tools", "", "--model", "haiku", "--no-session-persistence", "--output-format", "json"]);
    expect(call!.env.MEMSEARCH_DISABLE).toBe("1");
    expect(call!.env.MEMSEARCH_NO_WATCH).toBe("1");
    expect(call!.env.CLAUDECODE).toBeUndefined();
    // The prompt: our instructions, then the sanitised turn.
    expect(call!.stdin).toContain("note-taker");
    expect(call!.stdin).toContain("Transcript:\n[User]: Please fix the login bug.");
    expect(call!.stdin).toContain("[REDACTED:aws-key]");
    expect(call!.stdin).toContain("GITHUB_TOKEN=[REDACTED:github-token]");
    expect(call!.stdin).toContain("[private]");
    expect(call!.stdin).not.toContain(AWS_KEY);
    expect(call!.stdin).not.toContain(GH_TOKEN);
    expect(call!.stdin).not.toContain("do not store this");
  });

  test("a turn over 200 KB goes through stdin, not argv", async () => {
    const big = "x".repeat(250_000);
    const r = await summarizeTurn(turn({ text: `[User]: summarise\n[Tool output]: ${big}` }), opts("ok"));
    expect(r.provider).toBe("claude");
    const [call] = fakeClaudeCalls(log);
    expect(call!.stdin.length).toBeGreaterThan(250_000);
    expect(call!.argv.join(" ").length).toBeLessThan(200);
  });

  test("keeps `- ` and `* ` lines only, at most 6, sanitised again", async () => {
    const many = await summarizeTurn(turn(), opts("many"));
    expect(many.bullets).toEqual(["- bullet 1", "- bullet 2", "- bullet 3", "- bullet 4", "- bullet 5", "- bullet 6"]);
    const reply = `Sure! Here are the notes:\n* User asked to rotate ${AWS_KEY}\n  - Claude Code ran \`npm test\`\nThat's all.`;
    const mixed = await summarizeTurn(turn(), opts("ok", { env: { ...opts("ok").env, FAKE_CLAUDE_REPLY: reply } }));
    expect(mixed).toEqual({
      provider: "claude",
      bullets: ["- User asked to rotate [REDACTED:aws-key]", "- Claude Code ran `npm test`"],
    });
  });

  test("claude missing from PATH falls back to the extract", async () => {
    const empty = join(dir, "empty-bin");
    mkdirSync(empty);
    const r = await summarizeTurn(turn(), opts("ok", { claudeBin: undefined, env: { PATH: empty } }));
    expect(r.provider).toBe("extract");
    expect(r.fallbackReason).toBe("claude not found on PATH");
    expect(r.bullets[0]).toBe("- User asked: Please fix the login bug. My key is [REDACTED:aws-key], keep it out of notes.");
  });

  test("a non-zero exit falls back with the status and the error line", async () => {
    const r = await summarizeTurn(turn(), opts("fail"));
    expect(r.provider).toBe("extract");
    expect(r.fallbackReason).toBe("claude exited with status 1: Invalid API key · Please run /login");
  });

  test("no bullets in the output falls back", async () => {
    const r = await summarizeTurn(turn(), opts("empty"));
    expect(r).toMatchObject({ provider: "extract", fallbackReason: "claude returned no bullets" });
  });

  test("a timeout kills claude and its children and falls back to the extract", async () => {
    const t0 = Date.now();
    const r = await summarizeTurn(turn(), opts("slow", { timeoutMs: 300 }));
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(r.provider).toBe("extract");
    expect(r.fallbackReason).toBe("claude timed out after 0.3s");
    const [call] = fakeClaudeCalls(log);
    expect(call!.childPid).toBeGreaterThan(0);
    await Bun.sleep(50);
    expect(processAlive(call!.pid)).toBe(false);
    expect(processAlive(call!.childPid!)).toBe(false);
  });

  test("a claude that ignores SIGTERM is killed anyway", async () => {
    const t0 = Date.now();
    const r = await summarizeTurn(turn(), opts("stubborn", { timeoutMs: 300 }));
    expect(Date.now() - t0).toBeLessThan(4_000);
    expect(r.fallbackReason).toBe("claude timed out after 0.3s");
    const [call] = fakeClaudeCalls(log);
    await Bun.sleep(50);
    expect(processAlive(call!.pid)).toBe(false);
    expect(processAlive(call!.childPid!)).toBe(false);
  });
});

describe("ollama provider", () => {
  let double: OllamaDouble;
  beforeAll(async () => {
    double = await startOllamaDouble({ chatReply: "- a\n- b", models: ["llama3.2"] });
  });
  afterAll(async () => {
    await double.stop();
  });
  beforeEach(() => {
    double.setMode("ok");
    double.requests.length = 0;
  });
  const ollama = (over: Partial<SummarizeOptions> = {}) =>
    opts("ok", { provider: "ollama", ollamaHost: double.host, timeoutMs: 2_000, ...over });

  test("chats with the model, sanitised input, and parses the bullets", async () => {
    const r = await summarizeTurn(turn(), ollama());
    expect(r).toEqual({ provider: "ollama", bullets: ["- a", "- b"] });
    const req = double.requests.find((q) => q.path === "/api/chat")!;
    expect(req.body.model).toBe("llama3.2");
    expect(req.body.stream).toBe(false);
    const sent = JSON.stringify(req.body.messages);
    expect(sent).toContain("note-taker");
    expect(sent).toContain("[REDACTED:aws-key]");
    expect(sent).not.toContain(AWS_KEY);
    expect(sent).not.toContain(GH_TOKEN);
  });

  test("an HTTP error falls back with a one-line reason", async () => {
    double.setMode("http-500");
    const r = await summarizeTurn(turn(), ollama());
    expect(r.provider).toBe("extract");
    expect(r.fallbackReason).toBe("ollama: HTTP 500: boom");
  });

  test("a non-JSON error body prints nothing to stdout", async () => {
    double.setMode("non-json-error");
    const log = spyOn(console, "log");
    try {
      const r = await summarizeTurn(turn(), ollama());
      expect(r.fallbackReason).toBe("ollama: HTTP 500: upstream exploded");
      expect(log).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
  });

  test("a slow server times out", async () => {
    double.setMode("slow");
    const r = await summarizeTurn(turn(), ollama({ timeoutMs: 200 }));
    expect(r).toMatchObject({ provider: "extract", fallbackReason: "ollama: timed out after 0.2s" });
  });

  test("a server that is down falls back", async () => {
    const r = await summarizeTurn(turn(), ollama({ ollamaHost: "http://127.0.0.1:9" }));
    expect(r).toMatchObject({ provider: "extract", fallbackReason: "ollama: not reachable at http://127.0.0.1:9" });
  });

  test("prose without bullets falls back", async () => {
    const prose = await startOllamaDouble({ chatReply: "<think>hmm</think>The user asked something." });
    try {
      const r = await summarizeTurn(turn(), ollama({ ollamaHost: prose.host }));
      expect(r).toMatchObject({ provider: "extract", fallbackReason: "ollama returned no bullets" });
    } finally {
      await prose.stop();
    }
  });
});

describe("extract", () => {
  test("request, tools, files and outcome, with secrets redacted", () => {
    const t = turn({
      tools: [
        { id: "1", name: "Bash", input: "npm test" },
        { id: "2", name: "Read", input: "/home/u/proj/src/auth.ts" },
        { id: "3", name: "Edit", input: "/home/u/proj/src/auth.ts" },
        { id: "4", name: "Bash", input: "npm test" },
        { id: "5", name: "Edit", input: '{"file_path":"/home/u/proj/test/auth.test.ts","old_string":"a"}' },
        { id: "6", name: "Grep", input: "nullCheck" },
        { id: "7", name: "Bash", input: "git diff" },
      ],
    });
    expect(extractBullets(t)).toEqual([
      "- User asked: Please fix the login bug. My key is [REDACTED:aws-key], keep it out of notes.",
      "- Tools run: Bash ×3, Read, Edit ×2, Grep",
      "- Files touched: src/auth.ts, test/auth.test.ts",
      "- Outcome: Fixed the null check in src/auth.ts.",
    ]);
  });

  test("the outcome is the reply's most informative sentence, not its first line", () => {
    const outcome = (...assistantTexts: string[]) => extractBullets(turn({ assistantTexts })).find((b) => b.startsWith("- Outcome: "));
    expect(outcome("Done! I renamed `retry` to `withBackoff` in src/net.ts and kept the three call sites compiling.")).toBe("- Outcome: I renamed `retry` to `withBackoff` in src/net.ts and kept the three call sites compiling.");
    expect(outcome("Perfect! As you can see, the `@repeat(3)` decorator ran the function three times.")).toBe("- Outcome: As you can see, the `@repeat(3)` decorator ran the function three times.");
    // A filler final message: the message before it says what happened.
    expect(outcome("The migration failed on the users table because of a NOT NULL column.", "The plan is ready.")).toBe("- Outcome: The migration failed on the users table because of a NOT NULL column.");
    // Headings and emphasis are markup; code blocks are no outcome; "Let me…" is an intention.
    expect(outcome("## Beads Created\n\nEpic `spotter-0p7`: Setup Code Quality tools")).toBe("- Outcome: Epic `spotter-0p7`: Setup Code Quality tools");
    expect(outcome("**Perfect!**\n```ts\nconst retry_with_backoff = 1;\n```\nAll 31 tests passed.")).toBe("- Outcome: All 31 tests passed.");
    expect(outcome("Let me explore the sync code in lib/sync.ex next. Sync now retries 3 times.")).toBe("- Outcome: Sync now retries 3 times.");
    expect(outcome("Bumped v1.2.3 in package.json, e.g. the lockfile too. Ok.")).toBe("- Outcome: Bumped v1.2.3 in package.json, e.g. the lockfile too.");
    // Nothing informative anywhere: the final message's first sentence, as before.
    expect(outcome("Done!")).toBe("- Outcome: Done!");
    expect(outcome("The plan is ready.")).toBe("- Outcome: The plan is ready.");
    // Deterministic: the earlier of two equally informative sentences.
    expect(outcome("Fixed src/a.ts today. Fixed src/b.ts today.")).toBe("- Outcome: Fixed src/a.ts today.");
  });

  test("a long one-sentence request is clipped, secrets never survive, empty parts are skipped", () => {
    const bullets = extractBullets(turn({ userText: `use ${AWS_KEY} ${"word ".repeat(100)}`, assistantTexts: [] }));
    expect(bullets).toHaveLength(1);
    expect(bullets[0]!.length).toBeLessThanOrEqual("- User asked: ".length + 320);
    expect(bullets[0]).toContain("[REDACTED:aws-key]");
    expect(bullets[0]).toEndWith("word…");
    // With no sentence end in the room, it still ends on a whole word.
    const ask = extractBullets(turn({ userText: `the ${"reques".repeat(40)} ${"once per request ".repeat(20)}`, assistantTexts: [] }))[0]!;
    expect(ask).toMatch(/ (once|per|request)…$/);
  });

  test("paths are the project's own (from its root, whatever the shell's folder), a file under the home is ~/…, never the user's home path", () => {
    const base = { root: "/home/ada/work/hive-mind", home: "/home/ada" };
    const t = turn({
      userText: "Fix the table in /home/ada/work/hive-mind/cli/lib/format.ts please",
      assistantTexts: ["The width was computed in /home/ada/work/hive-mind/cli/lib/format.ts because the plan in /home/ada/.claude/plans/p.md said so."],
      tools: [
        { id: "1", name: "Edit", input: JSON.stringify({ file_path: "/home/ada/work/hive-mind/cli/lib/format.ts" }) },
        { id: "2", name: "Read", input: "/home/ada/.claude/plans/p.md" },
        { id: "3", name: "Read", input: "/etc/hosts" },
      ],
    });
    const bullets = extractBullets(t, base);
    expect(bullets).toContain("- Files touched: cli/lib/format.ts, ~/.claude/plans/p.md, /etc/hosts");
    expect(bullets[0]).toBe("- User asked: Fix the table in cli/lib/format.ts please");
    expect(bullets.join("\n")).not.toContain("/home/ada");
    expect(bullets).toContain("- Outcome: The width was computed in cli/lib/format.ts because the plan in ~/.claude/plans/p.md said so.");
  });

  test("only whole path segments are the root or the home: a sibling folder, a longer name, a URL keep their text", () => {
    const base = { root: "/home/alice/app", home: "/home/alice" };
    expect(relativePaths("/home/alice/app-old/src/x.ts and /home/alice/application.md", base)).toBe("~/app-old/src/x.ts and ~/application.md");
    expect(relativePaths("see https://example.com/home/alice/apple or /home/alicex/y", base)).toBe("see https://example.com/home/alice/apple or /home/alicex/y");
    expect(relativePaths("(/home/alice/app/lib/a.ts) in `/home/alice/app`, cd /home/alice/app.", base)).toBe("(lib/a.ts) in `.`, cd ~/app.");
    expect(relativePaths("/app2/lib and /app/lib and /app", { root: "/app" })).toBe("/app2/lib and lib and .");
  });

  test("a model summariser reads the turn and writes its notes with the same paths", async () => {
    const t = turn({ userText: "look at /tmp/ms-root/src/a.ts", text: "[User]: look at /tmp/ms-root/src/a.ts\n[Tool output]: /home/ada/x.txt" });
    await summarizeTurn(t, opts("ok", { paths: { root: "/tmp/ms-root", home: "/home/ada" } }));
    const [call] = fakeClaudeCalls(log);
    expect(call!.stdin).toContain("[User]: look at src/a.ts");
    expect(call!.stdin).toContain("[Tool output]: ~/x.txt");
    expect(call!.stdin).not.toContain("/tmp/ms-root");
  });

  test("the ask is what the person typed: a front end's or an editor's wrapper blocks are left out", () => {
    const userText = "<system_instruction> The user has attached these files. Read them before proceeding. - /x/.context/attachments/ci.log </system_instruction>\n\nFix the failing CI actions.<ide_selection>const a = 1;</ide_selection>";
    expect(extractBullets(turn({ userText, assistantTexts: [] }))[0]).toBe("- User asked: Fix the failing CI actions.");
  });

  test("more than 8 files are counted, not listed", () => {
    const tools = Array.from({ length: 10 }, (_, i) => ({ id: String(i), name: "Write", input: `/p/f${i}.ts` }));
    const files = extractBullets(turn({ tools })).find((b) => b.startsWith("- Files touched"));
    expect(files).toBe("- Files touched: f0.ts, f1.ts, f2.ts, f3.ts, f4.ts, f5.ts, f6.ts, f7.ts and 2 more");
  });

  test("provider extract never fails, even on a malformed turn", async () => {
    expect(await summarizeTurn(turn(), opts("ok", { provider: "extract" }))).toEqual({
      provider: "extract",
      bullets: ["- User asked: Please fix the login bug. My key is [REDACTED:aws-key], keep it out of notes.", "- Outcome: Fixed the null check in src/auth.ts."],
    });
    const broken = { sessionId: "s", turnUuid: "t" } as unknown as LastTurn;
    const r = await summarizeTurn(broken, opts("ok", { provider: "extract" }));
    expect(r.bullets.length).toBeGreaterThan(0);
  });
});

describe("parsing helpers", () => {
  test("parseBullets drops prose and think blocks", () => {
    expect(parseBullets("<think>- not this</think>\nIntro\n- one\n  * two\n• three\n-not a bullet\n")).toEqual([
      "- one",
      "- two",
      "- three",
    ]);
  });
  test("firstSentence stops at sentence ends in several scripts", () => {
    expect(firstSentence("Fix it. Then test.")).toBe("Fix it.");
    expect(firstSentence("\n\n  修复登录问题。然后测试")).toBe("修复登录问题。");
    expect(firstSentence("no end mark\nsecond line")).toBe("no end mark");
    expect(firstSentence("bump v1.2.3 now")).toBe("bump v1.2.3 now");
  });
});

describe("labelled turns of real sessions (test/fixtures/labelled-turns)", () => {
  const Labelled = v.object({
    licence: v.string(),
    turns: v.array(
      v.object({
        session: v.string(),
        turn: v.string(),
        keyFact: v.pipe(v.string(), v.minLength(3)),
        userText: v.string(),
        assistantTexts: v.array(v.string()),
        tools: v.array(v.object({ name: v.string(), input: v.string() })),
        extractKeeps: v.boolean(),
      }),
    ),
  });
  const dir = join(import.meta.dir, "..", "fixtures", "labelled-turns");
  const sets = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => ({ name: f, ...v.parse(Labelled, JSON.parse(readFileSync(join(dir, f), "utf8"))) }));
  const bulletsOf = (t: (typeof sets)[number]["turns"][number]) =>
    extractBullets({ sessionId: t.session, turnUuid: t.turn, userText: t.userText, assistantTexts: t.assistantTexts, tools: t.tools.map((x, i) => ({ id: String(i), ...x })), text: "" }).join("\n");

  test("the note keeps the fact that matters (a cause, a decision, a figure) in the turns where the extract can", () => {
    const lost: string[] = [];
    for (const set of sets) for (const t of set.turns) if (t.extractKeeps && !bulletsOf(t).includes(t.keyFact)) lost.push(`${set.name} ${t.turn}: ${t.keyFact}`);
    expect(lost).toEqual([]);
    // The record says how many: 26 of the 32 turns labelled.
    expect(sets.reduce((n, s) => n + s.turns.filter((t) => t.extractKeeps).length, 0)).toBe(26);
    expect(sets.reduce((n, s) => n + s.turns.length, 0)).toBe(32);
  });
});
