/**
 * memsearch with the real Codex CLI (0.169.0, a pinned dev dependency) against the local Responses
 * mock, after `memsearch install codex` (no `--dangerously-bypass-hook-trust`: the trust hashes
 * install wrote are what lets the hooks run). Asserted from the outside: the hooks Codex reports,
 * the markdown, the requests the model received, the rollouts Codex wrote (read by our reader),
 * the processes left. One project lives through the file, as a user's would.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseRollout } from "../../src/agents/codex/rollout.ts";
import { run, tempProject, type Project } from "../helpers/cli.ts";
import { captureClaudeTurn, laterHandNote } from "../helpers/claude-turn.ts";
import { checkFileLayerThree, CLAUDE_FACT, leftAfter, memsearchEnv, notesOf, SCENARIO, scenarioRules, SECRET_PROMPT, tearDown, until } from "../helpers/real-agent.ts";
import { startResponsesMock, type ResponsesMock } from "../helpers/responses-mock.ts";
import { assertRealCodex, codexEnv, codexExec, hooksRan, makeCodexHome, rollouts, type ExecResult } from "../helpers/real-codex.ts";

assertRealCodex();

const RUN = `rcx-${process.pid}-${Date.now().toString(36)}`;
const TURNS = SCENARIO;

let mock: ResponsesMock;
let p: Project;
let env: Record<string, string>;
let codexHome: string;
let userConfig: string;
const runs: ExecResult[] = [];
/** The rollouts of the scenario's turns (the tests run in any order; later ones add their own). */
let scenario: string[] = [];

const notes = () => notesOf(p.memory);

beforeAll(async () => {
  mock = await startResponsesMock({
    rules: scenarioRules(TURNS),
  });
  const h = makeCodexHome(mock.url);
  codexHome = h.codexHome;
  userConfig = readFileSync(join(codexHome, "config.toml"), "utf8");
  p = tempProject({ notes: "none" });
  env = codexEnv({ home: h.home, codexHome, runId: RUN, env: memsearchEnv(h.home) });
  const inst = await run(["install", "codex"], { cwd: p.root, env });
  if (inst.code !== 0) throw new Error(`memsearch install codex failed: ${inst.stderr}`);
  for (const t of TURNS) runs.push(await codexExec(t.prompt, { cwd: p.root, env }));
  scenario = rollouts(codexHome);
  await until(() => notes().length >= TURNS.length);
}, 180_000);

afterAll(() => {
  tearDown(mock, RUN, [p?.root, p?.home, env?.HOME]);
});

/**
 * The Claude Code fact captured through Claude Code's own hooks (prompt, stop, session end, the
 * drainer), then asked about in Codex: once per file, by whichever test needs it first (the tests
 * run in any order).
 */
let crossAgent: Promise<{ noted: boolean; code: number; reqs: ResponsesMock["requests"] }> | undefined;
function askAboutClaudeFact() {
  crossAgent ??= (async () => {
    await captureClaudeTurn({ root: p.root, env: { ...env, CODEX_HOME: undefined }, session: "c1a0de00-0000-4000-8000-0000000000aa", ...CLAUDE_FACT });
    const noted = await until(() => notes().some((n) => n.bullets.join(" ").includes("Ottervane")));
    await laterHandNote({ root: p.root, env: { ...env, CODEX_HOME: undefined } });
    const before = mock.requests.length;
    const r = await codexExec("Which library renders the invoice PDFs, and why is it pinned?", { cwd: p.root, env });
    const reqs = mock.requests.slice(before);
    // Its drainer outlives the agent: the turn's own note is waited for, so no later test meets it writing.
    await until(() => notes().some((n) => n.anchor?.agent === "codex" && n.bullets.join(" ").includes("invoice PDFs")));
    return { noted, code: r.code, reqs };
  })();
  return crossAgent;
}

describe("the real Codex CLI, wired by memsearch install codex", () => {
  test("install kept the user's config.toml byte for byte and added the trust of each hook", () => {
    const after = readFileSync(join(codexHome, "config.toml"), "utf8");
    expect(after.startsWith(userConfig)).toBe(true);
    expect(after.match(/^\[hooks\.state\."[^"]+"\] # memsearch$/gm)?.length).toBe(4);
  });

  test("the hooks ran without --dangerously-bypass-hook-trust", () => {
    for (const r of runs) {
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain("dangerously-bypass-hook-trust");
      expect(hooksRan(r.stderr)).toEqual(expect.arrayContaining(["SessionStart", "UserPromptSubmit", "Stop"]));
    }
  });

  test("every turn is in the markdown, with its agent and its Codex turn id", () => {
    expect(scenario.length).toBe(TURNS.length);
    const turnIds = scenario.flatMap((f) => parseRollout(readFileSync(f, "utf8")).turns.map((t) => t.id));
    expect(turnIds.length).toBe(TURNS.length);
    const all = notes().filter((n) => turnIds.includes(n.anchor?.turn ?? ""));
    expect(all.length).toBe(TURNS.length);
    for (const n of all) {
      expect(n.heading).toContain("(agent: codex)");
      expect(n.anchor?.agent).toBe("codex");
    }
    const text = all.map((n) => n.bullets.join(" ")).join("\n");
    expect(text).toContain("Quillfeather");
    expect(text).toContain("48213");
    // The tool's output came back to the model, and the turn's note has the reply that quotes it.
    expect(text).toContain("holds one item: marmalade");
  });

  test("our reader parses the rollouts Codex wrote: the prompt, the reply, the tool, no scaffolding", () => {
    const parsed = scenario.map((f) => parseRollout(readFileSync(f, "utf8")));
    parsed.forEach((r, i) => {
      expect(r.turns.length).toBe(1);
      const t = r.turns[0]!;
      expect(t.userText).toBe(TURNS[i]!.prompt);
      expect(t.complete).toBe(true);
      const all = [t.userText, ...t.assistantTexts].join("\n");
      expect(all).not.toContain("<environment_context>");
      expect(all).not.toContain("memsearch");
    });
    expect(parsed[0]!.turns[0]!.assistantTexts).toEqual([TURNS[0]!.reply!]);
    const tool = parsed[1]!.turns[0]!.tools[0]!;
    expect(tool.name).toBe("exec_command");
    expect(tool.input).toContain("echo checklist-item-marmalade");
    expect(tool.output).toContain("checklist-item-marmalade");
  });

  test("transcript opens a turn of a Codex rollout of this project, and refuses another project's", async () => {
    const file = scenario[0]!;
    const id = parseRollout(readFileSync(file, "utf8")).turns[0]!.id;
    const list = await run(["transcript", file], { cwd: p.root, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("Codex CLI session");
    expect(list.stdout).toContain(id.slice(0, 8));
    const one = await run(["transcript", file, "--turn", id.slice(0, 13), "-c", "0"], { cwd: p.root, env });
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(TURNS[0]!.prompt);
    expect(one.stdout).toContain(`**Assistant**: ${TURNS[0]!.reply}`);
    // The same rollout, as if Codex had run in another folder: another project's.
    const other = join(codexHome, "sessions", "2026", "01", "01", "rollout-other.jsonl");
    mkdirSync(join(other, ".."), { recursive: true });
    writeFileSync(other, readFileSync(file, "utf8").replaceAll(JSON.stringify(p.root).slice(1, -1), "/somewhere/else"));
    const refused = await run(["transcript", other], { cwd: p.root, env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("another project's rollout");
    rmSync(other);
    // Not a rollout folder at all: Claude Code's rule applies, and refuses it.
    const outside = await run(["transcript", join(p.root, "x.jsonl")], { cwd: p.root, env });
    expect(outside.code).not.toBe(0);
  });

  test("import writes the notes of past Codex sessions, with their agent, once", async () => {
    // As if the memory had been lost and the sessions were an hour old (a running session's last turn is left to its Stop hook).
    const aside = `${p.memory}-aside`;
    renameSync(p.memory, aside);
    try {
      const hourAgo = new Date(Date.now() - 3600_000);
      for (const f of scenario) utimesSync(f, hourAgo, hourAgo);
      const r = await run(["import", "-j"], { cwd: p.root, env: { ...env, MEMSEARCH_NO_WATCH: "1" } });
      expect(r.code).toBe(0);
      const turnIds = scenario.flatMap((f) => parseRollout(readFileSync(f, "utf8")).turns.map((t) => t.id));
      const imported = notes().filter((n) => turnIds.includes(n.anchor?.turn ?? ""));
      expect(imported.length).toBe(TURNS.length);
      for (const n of imported) {
        expect(n.anchor?.agent).toBe("codex");
        expect(n.heading).toContain("(agent: codex)");
      }
      expect(imported.map((n) => n.bullets.join(" ")).join("\n")).toContain("Quillfeather");
      const again = JSON.parse((await run(["import", "-j"], { cwd: p.root, env: { ...env, MEMSEARCH_NO_WATCH: "1" } })).stdout);
      expect(again.written ?? 0).toBe(0);
    } finally {
      rmSync(p.memory, { recursive: true, force: true });
      renameSync(aside, p.memory);
    }
  });

  test("a fact captured with Claude Code is recalled into Codex's request", async () => {
    // The Claude Code side through its own hooks (the prompt, stop and session-end hooks, the
    // drainer), its session ended as it would be before the user turns to Codex.
    const { noted, code, reqs } = await askAboutClaudeFact();
    expect(noted).toBe(true);
    const claudeNote = notes().find((n) => n.bullets.join(" ").includes("Ottervane"))!;
    expect(claudeNote.anchor?.agent).toBeUndefined();
    expect(claudeNote.heading).not.toContain("agent:");
    expect(code).toBe(0);
    expect(reqs.length).toBeGreaterThan(0);
    const dev = reqs[0]!.developer;
    // The prompt hook's recall, through the calibrated gate, framed as quoted data: a developer message of its own.
    const recalled = dev.find((d) => d.startsWith("[memsearch] Memories from earlier sessions"));
    expect(recalled).toBeDefined();
    expect(recalled).toContain("Ottervane");
    // And the cold start: the recent memory at session start.
    expect(dev.some((d) => d.startsWith("# Recent memory (memsearch)"))).toBe(true);
    // The injection log names the decision.
    const log = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(log.some((e) => e.decision === "injected" && e.agent === "codex")).toBe(true);
  }, 60_000);

  test("layer 3: recall finds Codex's turns in the conversation index, without the memory Codex was given, and transcript opens them", async () => {
    // Codex was given the Claude Code fact (Ottervane) in a developer message of that turn.
    await askAboutClaudeFact();
    // One more turn, with a secret in its prompt: the agent keeps it as typed, the index redacted.
    expect((await codexExec(SECRET_PROMPT, { cwd: p.root, env })).code).toBe(0);
    // Its drainer outlives the agent: its note is waited for, so no later test meets it writing.
    expect(await until(() => notes().some((n) => n.anchor?.agent === "codex" && n.bullets.join(" ").includes("Vellichor")))).toBe(true);
    await checkFileLayerThree({ agent: "codex", root: p.root, env, files: rollouts(codexHome), scenario, firstTurnId: parseRollout(readFileSync(scenario[0]!, "utf8")).turns[0]!.id, injected: ["<environment_context>"] });
  }, 60_000);

  test("no process is left once Codex has exited and the drainers are done", async () => {
    const { gone, left } = await leftAfter(RUN, 20_000);
    expect(left).toEqual([]);
    expect(gone).toBe(true);
  }, 30_000);
});
