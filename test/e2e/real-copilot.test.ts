/**
 * memsearch with the real GitHub Copilot CLI (1.0.102, a pinned dev dependency) against the local
 * Chat Completions mock, after `memsearch install copilot` (its four hooks in Copilot's
 * settings.json, nothing else). Asserted from the outside: the hooks Copilot recorded, the
 * markdown, the requests the model received, the session files Copilot wrote (read by our
 * reader), the conversation index, the processes left. One project lives through the file, as a
 * user's would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseEvents } from "../../src/agents/copilot/events.ts";
import { startChatMock, type ChatMock } from "../helpers/chat-mock.ts";
import { captureClaudeTurn, laterHandNote } from "../helpers/claude-turn.ts";
import { run, tempProject, type Project } from "../helpers/cli.ts";
import { CLAUDE_FACT, leftAfter, memsearchEnv, notesOf, SCENARIO, scenarioRules, tearDown, until } from "../helpers/real-agent.ts";
import { assertRealCopilot, copilotEnv, copilotPrompt, hookTimings, makeCopilotHome, sessionFiles, type CopilotHome, type PromptResult } from "../helpers/real-copilot.ts";

assertRealCopilot();

const RUN = `rcp-${process.pid}-${Date.now().toString(36)}`;
const TURNS = SCENARIO;
/** A user's own settings, which install must keep. */
const USER_SETTINGS = { banner: "never", hooks: { preToolUse: [{ type: "command", bash: "true", timeoutSec: 5 }] } };

let mock: ChatMock;
let p: Project;
let h: CopilotHome;
let env: Record<string, string>;
const runs: PromptResult[] = [];
/** The events file of each scenario turn (the third turn resumes the second's session). */
const files: string[] = [];
/** The model requests of the scenario's turns (later tests add their own). */
let scenarioRequests = 0;

const notes = () => notesOf(p.memory);
const events = (f: string) => parseEvents(readFileSync(f, "utf8"));
/** The prompt as typed: Copilot sends it with the date and our context around it, and our context quotes earlier prompts. */
const typed = (prompt: string) => prompt.replace(/<system_reminder>[\s\S]*?<\/system_reminder>/g, "").replace(/<current_datetime>[\s\S]*?<\/current_datetime>/g, "");
const userTexts = (body: any): string[] => (body?.messages ?? []).filter((m: any) => m?.role === "user").map((m: any) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

async function turn(prompt: string, resume?: string): Promise<string> {
  const before = new Set(sessionFiles(h.copilotHome));
  const r = await copilotPrompt(prompt, { cwd: p.root, env, resume });
  runs.push(r);
  if (resume) return join(h.copilotHome, "session-state", resume, "events.jsonl");
  return sessionFiles(h.copilotHome).find((f) => !before.has(f)) ?? "";
}

beforeAll(async () => {
  mock = await startChatMock({ rules: scenarioRules(TURNS), matchOn: typed });
  h = makeCopilotHome();
  mkdirSync(h.copilotHome, { recursive: true });
  writeFileSync(join(h.copilotHome, "settings.json"), JSON.stringify(USER_SETTINGS, null, 2));
  p = tempProject({ notes: "none" });
  env = copilotEnv({ h, apiUrl: mock.url, runId: RUN, env: memsearchEnv(h.home) });
  const inst = await run(["install", "copilot"], { cwd: p.root, env });
  if (inst.code !== 0) throw new Error(`memsearch install copilot failed: ${inst.stderr}`);
  files.push(await turn(TURNS[0]!.prompt));
  const second = await turn(TURNS[1]!.prompt);
  files.push(second);
  // The third turn goes on in the second's session: one file, two turns, each stop its own.
  files.push(await turn(TURNS[2]!.prompt, basename(dirname(second))));
  await until(() => notes().length >= TURNS.length);
  scenarioRequests = mock.requests.length;
}, 120_000);

afterAll(() => {
  tearDown(mock, RUN, [p?.root, p?.home, h?.home]);
});

describe("the real Copilot CLI, wired by memsearch install copilot", () => {
  test("install kept the user's settings and hooks, and each of memsearch's four hooks ran and answered", () => {
    const settings = JSON.parse(readFileSync(join(h.copilotHome, "settings.json"), "utf8"));
    expect(settings.banner).toBe("never");
    expect(settings.hooks.preToolUse).toEqual(USER_SETTINGS.hooks.preToolUse);
    for (const e of ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]) expect(settings.hooks[e]).toHaveLength(1);
    for (const r of runs) expect(r.code).toBe(0);
    const timings = [...new Set(files)].flatMap((f) => hookTimings(readFileSync(f, "utf8")));
    for (const type of ["sessionStart", "userPromptSubmitted", "agentStop", "sessionEnd"]) {
      const of = timings.filter((t) => t.type === type);
      expect(of.length).toBeGreaterThanOrEqual(2);
      expect(of.every((t) => t.success)).toBe(true);
      const ms = of.map((t) => t.ms).sort((a, b) => a - b);
      // The figures docs/RELIABILITY.md quotes: each hook's run as Copilot timed it.
      console.log(`copilot hook ${type}: n=${ms.length} median=${ms[Math.floor(ms.length / 2)]} ms max=${ms.at(-1)} ms`);
    }
  });

  test("every turn is in the markdown, with its agent and Copilot's interaction id", () => {
    expect(files.every(Boolean)).toBe(true);
    expect(new Set(files).size).toBe(2);
    const ids = [...new Set(files)].flatMap((f) => events(f).turns.map((t) => t.id));
    expect(ids.length).toBe(TURNS.length);
    const ours = notes().filter((n) => ids.includes(n.anchor?.turn ?? ""));
    expect(ours.length).toBe(TURNS.length);
    for (const n of ours) {
      expect(n.heading).toContain("(agent: copilot)");
      expect(n.anchor?.agent).toBe("copilot");
    }
    const text = ours.map((n) => n.bullets.join(" ")).join("\n");
    expect(text).toContain("Quillfeather");
    expect(text).toContain("48213");
    // The tool ran in Copilot, its output reached the model, the note has the reply that quotes it.
    expect(text).toContain("holds one item: marmalade");
    expect(text).toContain("Tools run: bash");
  });

  test("our reader parses the events Copilot wrote: the prompts as typed, the replies, the tool, none of our context", () => {
    const first = events(files[0]!);
    expect(first.cwd).toBe(p.root);
    expect(first.turns.map((t) => t.userText)).toEqual([TURNS[0]!.prompt]);
    expect(first.turns[0]!.assistantTexts).toEqual([TURNS[0]!.reply!]);
    const resumed = events(files[1]!);
    expect(resumed.turns.map((t) => t.userText)).toEqual([TURNS[1]!.prompt, TURNS[2]!.prompt]);
    expect(resumed.turns.every((t) => t.complete)).toBe(true);
    const tool = resumed.turns[0]!.tools[0]!;
    expect(tool.name).toBe("bash");
    expect(tool.input).toBe("echo checklist-item-marmalade");
    expect(tool.output).toContain("checklist-item-marmalade");
    expect(resumed.turns[1]!.assistantTexts).toEqual([TURNS[2]!.reply!]);
    // Copilot keeps our context (in hook.end, in transformedContent); the turns never carry it.
    expect(readFileSync(files[1]!, "utf8")).toContain("# Recent memory (memsearch)");
    const all = [...first.turns, ...resumed.turns].flatMap((t) => [t.userText, ...t.assistantTexts]).join("\n");
    expect(all).not.toContain("memsearch");
  });

  test("transcript opens a Copilot session of this project, turn by turn", async () => {
    const list = await run(["transcript", files[1]!], { cwd: p.root, env: { ...env, MEMSEARCH_NO_WATCH: "1" } });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`Copilot CLI session ${basename(dirname(files[1]!))}: 2 turns`);
    const id = events(files[1]!).turns[1]!.id;
    const one = await run(["transcript", files[1]!, "--turn", id.slice(0, 8), "-c", "0"], { cwd: p.root, env: { ...env, MEMSEARCH_NO_WATCH: "1" } });
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(TURNS[2]!.prompt);
    expect(one.stdout).toContain(TURNS[2]!.reply!);
  });

  test("the model's requests all reached the mock, and a later session started with the earlier turns' memory", () => {
    // Every model call Copilot recorded is one the mock answered: nothing went elsewhere.
    const calls = [...new Set(files)].flatMap((f) => readFileSync(f, "utf8").match(/"type":"assistant\.message"/g) ?? []);
    expect(scenarioRequests).toBe(calls.length);
    const resumedRun = mock.requests.slice(0, scenarioRequests).filter((q) => userTexts(q.body).some((u) => u.includes(TURNS[2]!.prompt)));
    expect(resumedRun.length).toBeGreaterThan(0);
    // SessionStart's context is a user message of its own: the recent memory, Copilot's first turn in it.
    const cold = userTexts(resumedRun[0]!.body).find((u) => u.startsWith("# Recent memory (memsearch)"));
    expect(cold).toBeDefined();
    expect(cold).toContain("Quillfeather");
  });

  test("memsearch recall --source transcripts --agent copilot finds a Copilot turn in the conversation index", async () => {
    const r = await run(["recall", "staging gateway port Tamarind", "--raw", "--source", "transcripts", "--agent", "copilot", "-j"], { cwd: p.root, env: { ...env, MEMSEARCH_NO_WATCH: "1" } });
    expect(r.code).toBe(0);
    const { results } = JSON.parse(r.stdout) as { results: { agent: string; from: string[]; transcript: { path: string; snippet: string } | null }[] };
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((x) => x.agent === "copilot")).toBe(true);
    const hit = results.find((x) => x.transcript?.snippet.includes("48213"));
    expect(hit?.from).toEqual(["transcript"]);
    expect(hit?.transcript?.path).toBe(files[2]!);
  }, 30_000);

  test("a fact captured with Claude Code is recalled into Copilot's request, inside the prompt's system_reminder", async () => {
    await captureClaudeTurn({ root: p.root, env: { ...env, COPILOT_HOME: undefined }, session: "c1a0de00-0000-4000-8000-0000000000ac", ...CLAUDE_FACT });
    expect(await until(() => notes().some((n) => n.bullets.join(" ").includes("Ottervane")))).toBe(true);
    await laterHandNote({ root: p.root, env: { ...env, COPILOT_HOME: undefined } });
    const before = mock.requests.length;
    const question = "Which library renders the invoice PDFs, and why is it pinned?";
    const file = await turn(question);
    expect(runs.at(-1)!.code).toBe(0);
    const reqs = mock.requests.slice(before);
    expect(reqs.length).toBeGreaterThan(0);
    const prompt = reqs[0]!.prompt;
    // The prompt hook's recall, through the calibrated gate, framed as quoted data: Copilot puts a top-level additionalContext inside <system_reminder>.
    expect(prompt).toContain(question);
    expect(prompt).toMatch(/<system_reminder>\s*\[memsearch\] Memories from earlier sessions[\s\S]*Ottervane[\s\S]*<\/system_reminder>/);
    const log = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(log.some((e) => e.decision === "injected" && e.agent === "copilot")).toBe(true);
    // Copilot's own record of the prompt is the typed one; our reader gives just that.
    expect(events(file).turns.map((t) => t.userText)).toEqual([question]);
  }, 60_000);

  test("no process is left once Copilot has exited and the drainers are done", async () => {
    const { gone, left } = await leftAfter(RUN, 20_000);
    expect(left).toEqual([]);
    expect(gone).toBe(true);
  }, 30_000);
});
