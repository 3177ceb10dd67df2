/**
 * memsearch with the real Gemini CLI (0.61.0, a pinned dev dependency) against the local Gemini API
 * mock, after `memsearch install gemini` wrote its hooks into the user's settings.json. Asserted
 * from the outside: the markdown, the requests the model received, the chats Gemini CLI wrote
 * (read by our reader), the processes left. One project lives through the file, as a user's would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseChat } from "../../src/agents/gemini/chat.ts";
import { run, tempProject, type Project } from "../helpers/cli.ts";
import { captureClaudeTurn, laterHandNote } from "../helpers/claude-turn.ts";
import { checkFileLayerThree, CLAUDE_FACT, indexedRows, leftAfter, memsearchEnv, notesOf, SCENARIO, scenarioRules, SECRET_PROMPT, tearDown, until } from "../helpers/real-agent.ts";
import type { ExecResult } from "../helpers/real-codex.ts";
import { startGeminiMock, type GeminiMock } from "../helpers/gemini-mock.ts";
import { assertRealGemini, chats, geminiEnv, geminiRun, hookCalls, makeGeminiHome, USER_SETTINGS } from "../helpers/real-gemini.ts";

assertRealGemini();

const RUN = `rgm-${process.pid}-${Date.now().toString(36)}`;
const TURNS = SCENARIO;

let mock: GeminiMock;
let p: Project;
let env: Record<string, string>;
let geminiHome: string;
let telemetry: string;
let started = 0;
const runs: ExecResult[] = [];
/** The chats of the scenario's turns (the tests run in any order; later ones add their own). */
let scenario: string[] = [];

const notes = () => notesOf(p.memory);

beforeAll(async () => {
  mock = await startGeminiMock({
    rules: scenarioRules(TURNS),
  });
  started = performance.now();
  const h = makeGeminiHome();
  geminiHome = h.geminiHome;
  telemetry = h.telemetry;
  p = tempProject({ notes: "none" });
  env = geminiEnv({ home: h.home, apiUrl: mock.url, runId: RUN, env: memsearchEnv(h.home) });
  const inst = await run(["install", "gemini"], { cwd: p.root, env });
  if (inst.code !== 0) throw new Error(`memsearch install gemini failed: ${inst.stderr}`);
  for (const t of TURNS) runs.push(await geminiRun(t.prompt, { cwd: p.root, env }));
  scenario = chats(geminiHome);
  await until(() => notes().length >= TURNS.length);
}, 180_000);

afterAll(() => {
  tearDown(mock, RUN, [p?.root, p?.home, env?.HOME]);
});

/**
 * The Claude Code fact captured through Claude Code's own hooks, then asked about in Gemini CLI:
 * once per file, by whichever test needs it first (the tests run in any order).
 */
let crossAgent: Promise<{ noted: boolean; code: number; reqs: GeminiMock["requests"] }> | undefined;
function askAboutClaudeFact() {
  crossAgent ??= (async () => {
    await captureClaudeTurn({ root: p.root, env: { ...env, GEMINI_CLI_HOME: undefined }, session: "c1a0de00-0000-4000-8000-0000000000bb", ...CLAUDE_FACT });
    const noted = await until(() => notes().some((n) => n.bullets.join(" ").includes("Ottervane")));
    await laterHandNote({ root: p.root, env: { ...env, GEMINI_CLI_HOME: undefined } });
    const before = mock.requests.length;
    const r = await geminiRun("Which library renders the invoice PDFs, and why is it pinned?", { cwd: p.root, env });
    const reqs = mock.requests.slice(before);
    // Its drainer outlives the agent: the turn's own note is waited for, so no later test meets it writing.
    await until(() => notes().some((n) => n.anchor?.agent === "gemini" && n.bullets.join(" ").includes("invoice PDFs")));
    return { noted, code: r.code, reqs };
  })();
  return crossAgent;
}

describe("the real Gemini CLI, wired by memsearch install gemini", () => {
  test("install kept the user's settings and added one group per event", () => {
    const s = JSON.parse(readFileSync(join(geminiHome, "settings.json"), "utf8"));
    expect(s).toMatchObject(USER_SETTINGS);
    for (const e of ["SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"]) expect(s.hooks[e].length).toBe(1);
  });

  test("every run answered from the mock, and nothing but the mock's model endpoint was asked", () => {
    expect(runs.map((r) => r.code)).toEqual(TURNS.map(() => 0));
    expect(runs[0]!.stdout).toContain("Quillfeather");
    expect(new Set(mock.requests.map((r) => r.path))).toEqual(new Set(["/v1beta/models/gemini-2.5-flash:streamGenerateContent"]));
  });

  test("every turn is in the markdown, with its agent and the id of its prompt in the chat", () => {
    expect(scenario.length).toBe(TURNS.length);
    const turnIds = scenario.flatMap((f) => parseChat(readFileSync(f, "utf8")).turns.map((t) => t.id));
    expect(turnIds.length).toBe(TURNS.length);
    const all = notes().filter((n) => turnIds.includes(n.anchor?.turn ?? ""));
    expect(all.length).toBe(TURNS.length);
    for (const n of all) {
      expect(n.heading).toContain("(agent: gemini)");
      expect(n.anchor?.agent).toBe("gemini");
    }
    const text = all.map((n) => n.bullets.join(" ")).join("\n");
    expect(text).toContain("Quillfeather");
    expect(text).toContain("48213");
    expect(text).toContain("holds one item: marmalade");
    // Our own context never reads as the user's words.
    expect(text).not.toContain("hook_context");
    expect(text).not.toContain("Recent memory");
  });

  test("our reader parses the chats Gemini CLI wrote: the prompt, the reply, the tool, no scaffolding or hook context", () => {
    const parsed = scenario.map((f) => parseChat(readFileSync(f, "utf8")));
    parsed.forEach((c, i) => {
      expect(c.turns.length).toBe(1);
      const t = c.turns[0]!;
      expect(t.userText).toBe(TURNS[i]!.prompt);
      expect(t.complete).toBe(true);
      const all = [t.userText, ...t.assistantTexts].join("\n");
      expect(all).not.toContain("session_context");
      expect(all).not.toContain("hook_context");
    });
    expect(parsed[0]!.turns[0]!.assistantTexts).toEqual([TURNS[0]!.reply!]);
    const tool = parsed[1]!.turns[0]!.tools[0]!;
    expect(tool.name).toBe("run_shell_command");
    expect(tool.input).toContain("echo checklist-item-marmalade");
    expect(tool.output).toContain("checklist-item-marmalade");
    expect(parsed[1]!.turns[0]!.assistantTexts).toEqual(["The release checklist holds one item: marmalade."]);
  });

  test("transcript opens a turn of a Gemini CLI chat of this project, and refuses another project's", async () => {
    const file = scenario[0]!;
    const id = parseChat(readFileSync(file, "utf8")).turns[0]!.id;
    const list = await run(["transcript", file], { cwd: p.root, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("Gemini CLI session");
    expect(list.stdout).toContain(id.slice(0, 8));
    const one = await run(["transcript", file, "--turn", id.slice(0, 13), "-c", "0"], { cwd: p.root, env });
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(TURNS[0]!.prompt);
    expect(one.stdout).toContain(`**Assistant**: ${TURNS[0]!.reply}`);
    // The same chat in another project's slot.
    const slot = join(geminiHome, "tmp", "elsewhere");
    mkdirSync(join(slot, "chats"), { recursive: true });
    writeFileSync(join(slot, ".project_root"), "/somewhere/else");
    const other = join(slot, "chats", "session-other.jsonl");
    writeFileSync(other, readFileSync(file, "utf8"));
    const refused = await run(["transcript", other], { cwd: p.root, env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("another project's chat");
    rmSync(slot, { recursive: true });
  });

  test("a fact captured with Claude Code is recalled into Gemini CLI's request", async () => {
    // The Claude Code side through its own hooks (the prompt, stop and session-end hooks, the drainer).
    const { noted, code, reqs } = await askAboutClaudeFact();
    expect(noted).toBe(true);
    expect(notes().find((n) => n.bullets.join(" ").includes("Ottervane"))!.anchor?.agent).toBeUndefined();
    expect(code).toBe(0);
    expect(reqs.length).toBeGreaterThan(0);
    const texts = reqs[0]!.userTexts;
    // The prompt hook's recall, through the calibrated gate, framed as quoted data: BeforeAgent's context.
    const recalled = texts.find((t) => t.startsWith("<hook_context>[memsearch] Memories from earlier sessions"));
    expect(recalled).toBeDefined();
    expect(recalled).toContain("Ottervane");
    // And the cold start: the recent memory at session start, prepended to the prompt.
    expect(texts.some((t) => t.startsWith("<hook_context># Recent memory (memsearch)") && t.endsWith("Which library renders the invoice PDFs, and why is it pinned?"))).toBe(true);
    const log = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(log.some((e) => e.decision === "injected" && e.agent === "gemini")).toBe(true);
    // That turn's note, too, holds the user's words only.
    expect(await until(() => notes().some((n) => n.anchor?.agent === "gemini" && n.bullets.join(" ").includes("renders the invoice PDFs")))).toBe(true);
    const note = notes().find((n) => n.anchor?.agent === "gemini" && n.bullets.join(" ").includes("renders the invoice PDFs"))!;
    expect(note.bullets.join(" ")).not.toContain("Memories from earlier sessions");
  }, 60_000);

  test("layer 3: recall finds Gemini CLI's turns in the conversation index, without the memory Gemini CLI was given, and transcript opens them", async () => {
    // Gemini CLI was given the Claude Code fact (Ottervane), and saved that context in its chat.
    await askAboutClaudeFact();
    // One more turn, with a secret in its prompt: the agent keeps it as typed, the index redacted.
    expect((await geminiRun(SECRET_PROMPT, { cwd: p.root, env })).code).toBe(0);
    // Its drainer outlives the agent: its note is waited for, so no later test meets it writing.
    expect(await until(() => notes().some((n) => n.anchor?.agent === "gemini" && n.bullets.join(" ").includes("Vellichor")))).toBe(true);
    await checkFileLayerThree({ agent: "gemini", root: p.root, env, files: chats(geminiHome), scenario, firstTurnId: parseChat(readFileSync(scenario[0]!, "utf8")).turns[0]!.id, injected: ["hook_context", "session_context"] });
    // The question about the Claude Code fact is one of Gemini CLI's prompts, as typed.
    expect(indexedRows(env.MEMSEARCH_HOME!, "gemini").filter((r) => r.role === "user").map((r) => r.text)).toContain("Which library renders the invoice PDFs, and why is it pinned?");
  }, 60_000);

  test("report: turns noted of turns run, duration, and the hook calls Gemini CLI logged (each of ours succeeded)", async () => {
    const calls = hookCalls(telemetry).filter((c) => c.name === "memsearch");
    const runsSoFar = chats(geminiHome).length;
    const byEvent = new Map<string, number[]>();
    for (const c of calls) byEvent.set(c.event, [...(byEvent.get(c.event) ?? []), c.durationMs]);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const gemini = notes().filter((n) => n.anchor?.agent === "gemini").length;
    console.log(
      [
        `real Gemini CLI suite: ${gemini} turns noted of ${runsSoFar} run, ${mock.requests.length} model requests, ${Math.round((performance.now() - started) / 1000)} s so far`,
        ...[...byEvent].map(([e, xs]) => `${e}: n=${xs.length} median ${median(xs)} ms, max ${Math.max(...xs)} ms`),
      ].join("\n"),
    );
    expect(calls.filter((c) => !c.ok)).toEqual([]);
    for (const e of ["SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"]) expect(byEvent.get(e)?.length ?? 0).toBeGreaterThanOrEqual(TURNS.length);
    expect(gemini).toBeGreaterThanOrEqual(TURNS.length);
  });

  test("no process is left once Gemini CLI has exited and the drainers are done", async () => {
    const { gone, left } = await leftAfter(RUN, 20_000);
    expect(left).toEqual([]);
    expect(gone).toBe(true);
  }, 30_000);
});
