/**
 * memsearch with the real Claude Code CLI (2.1.328, a pinned dev dependency), against the local
 * Messages API mock: the plugin folder with the freshly built binary in its bin/, interactive
 * sessions in a pseudo-terminal ended with /exit right after their last reply, and `claude -p`
 * sessions. Everything is asserted from the outside: the markdown, the requests the model received,
 * what a Bash tool call printed, the processes left, the hook timings the client logged.
 *
 * One project lives through the whole file, as a user's would. Its first sessions (the scenario:
 * interactive, then `claude -p`) take a minute, so they run once, for whichever test comes first,
 * and each test asserts on what they left; the later tests add turns of their own to the same
 * memory, in any order, and look only for what they or the scenario wrote.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { stagePlugin } from "../../scripts/install-plugin-bin.ts";
import * as v from "valibot";
import { anchorsIn } from "../../src/core/anchor.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { InjectionRecordSchema } from "../../src/memory/injections.ts";
import { startMockApi, type MockApi } from "../helpers/anthropic-mock.ts";
import { BIN, run } from "../helpers/cli.ts";
import { assertRealClaude, hookTimings, killLeftovers, leftovers, makeClaudeHome, readTranscript, runPrint, startInteractive, transcriptFiles, type HookTiming, type InteractiveSession } from "../helpers/real-claude.ts";

assertRealClaude();

/** A turn of the scenario: a fact with a codeword the summariser's notes echo back. */
interface Turn {
  session: string;
  codeword: string;
  prompt: string;
  reply: string;
}

const INTERACTIVE_SESSIONS = 3;
const TURNS_PER_SESSION = 3;
const PRINT_SESSIONS = 4;
/** How long the scenario may take, on top of a test's own work. */
const SCENARIO_MS = 600_000;
/** The mock summariser answers after this long, as haiku does on a good day. */
const SUMMARY_DELAY_MS = 2_500;

const FACTS = [
  "the staging database rotates its password on thursdays",
  "the flamingo parser caches at most 512 entries",
  "deploys go through fly.io from the main branch",
  "the billing webhook retries five times with backoff",
  "redis runs on port 6380 in development",
  "the search index is rebuilt nightly at two",
  "feature flags live in the launchdarkly project atlas",
  "the mobile app pins okhttp to version four",
  "log retention in loki is fourteen days",
  "the cron for invoices runs at six in the morning",
  "api tokens expire after ninety days",
  "the design system uses radix primitives",
  "the ci cache key includes the lockfile hash",
];
/** Codewords short enough to be one token, unlike anything else in the notes. */
const codeword = (i: number) => `zq${(i * 7919 + 1013).toString(36)}`;

const tmp = mkdtempSync(join(tmpdir(), "ms-real-client-"));
const project = join(tmp, "project");
const home = join(tmp, "home");
let plugin = "";
let api: MockApi;
const turns: Turn[] = [];
const runIds: string[] = [];
const debugFiles: string[] = [];
const started = performance.now();
const env = { MEMSEARCH_DEBUG: "1" };

const memoryDir = () => join(project, ".memsearch", "memory");

/** Every note section of the project's memory, with its anchor. */
function notes(): { anchor: ReturnType<typeof anchorsIn>[number]; text: string }[] {
  if (!existsSync(memoryDir())) return [];
  const out: { anchor: ReturnType<typeof anchorsIn>[number]; text: string }[] = [];
  for (const f of readdirSync(memoryDir()).filter((n) => n.endsWith(".md"))) {
    for (const section of readFileSync(join(memoryDir(), f), "utf8").split(/^### /m).slice(1)) {
      const [anchor] = anchorsIn(section);
      if (anchor) out.push({ anchor, text: section });
    }
  }
  return out;
}

/** Waits until every turn so far has its note and the queue is empty (drainers write them in the background). */
async function allNoted(timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = join(project, ".memsearch", "pending");
  for (;;) {
    const texts = notes().map((n) => n.text);
    const missing = turns.filter((t) => !texts.some((x) => x.includes(t.codeword)));
    const queued = existsSync(pending) ? readdirSync(pending).filter((n) => n.endsWith(".json")) : [];
    if (!missing.length && !queued.length) return;
    if (Date.now() > deadline) throw new Error(`after ${timeoutMs} ms: no note for ${missing.map((t) => t.codeword).join(", ")}; queued: ${queued.join(", ")}`);
    await Bun.sleep(250);
  }
}

function newTurn(session: string, fact = FACTS[turns.length % FACTS.length]!): Turn {
  const i = turns.length;
  const cw = codeword(i);
  const t: Turn = { session, codeword: cw, prompt: `Remember ${cw}: ${fact}.`, reply: `Noted ${cw.toUpperCase()}: ${fact}.` };
  turns.push(t);
  return t;
}

/** A `claude -p` turn whose reply runs `command` through the Bash tool; the request that brought its output back. */
async function bashTurn(prompt: string, match: string, command: string) {
  api.script.rules = [{ match, times: 1, reply: { type: "bash", command, description: "Ask memory" } }];
  const r = await runPrint({ api, projectDir: project, home, pluginDir: plugin, prompt, env, args: ["--allowedTools", "Bash"] });
  runIds.push(r.runId);
  debugFiles.push(r.debugFile!);
  expect(r.exitCode).toBe(0);
  const followUp = api.main().find((q) => q.toolResults.length > 0 && q.prompt === prompt)!;
  return { r, followUp, output: followUp.toolResults[0]!.output };
}

/**
 * A `claude -p` run of one of the plugin's slash commands. The mock model answers with `command`
 * through the Bash tool only when its request holds `match`, words of the command file itself, so
 * an answer means the client expanded our file. Returns the requests of the run and the Bash result
 * whose output holds `needle`.
 */
async function slashCommand(prompt: string, match: string, command: string, needle: string) {
  api.script.rules = [{ match, times: 1, reply: { type: "bash", command, description: prompt } }];
  const earlier = api.main().length;
  const r = await runPrint({ api, projectDir: project, home, pluginDir: plugin, prompt, env, args: ["--allowedTools", "Bash"] });
  runIds.push(r.runId);
  debugFiles.push(r.debugFile!);
  expect(r.exitCode).toBe(0);
  const asked = api.main().slice(earlier);
  const result = asked.flatMap((q) => q.toolResults).find((t) => t.output.includes(needle));
  expect(result).toBeDefined();
  expect(result!.isError).toBe(false);
  return { asked, output: result!.output };
}

beforeAll(async () => {
  mkdirSync(join(project, ".git"), { recursive: true });
  makeClaudeHome({ home, projectDirs: [project] });
  plugin = stagePlugin(BIN, join(tmp, "plugin"));
  api = await startMockApi({
    summaryDelayMs: SUMMARY_DELAY_MS,
    // Each fact prompt gets its own reply; the summariser (handled by the mock) echoes the turn's words.
    reply: (req) => {
      const t = turns.find((x) => req.prompt === x.prompt);
      return t ? { type: "text", text: t.reply } : undefined;
    },
  });
});

afterAll(async () => {
  for (const id of runIds) killLeftovers(id);
  await api?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

interface Snapshot {
  notes: ReturnType<typeof notes>;
  turns: Turn[];
}

/** The interactive sessions, then the `claude -p` ones; what the memory held after each. */
async function runScenario(): Promise<{ interactive: Snapshot & { transcripts: string[] }; print: Snapshot & { before: number } }> {
  for (let s = 1; s <= INTERACTIVE_SESSIONS; s++) {
    const session: InteractiveSession = startInteractive({ api, projectDir: project, home, pluginDir: plugin, env, timeoutMs: 150_000 });
    runIds.push(session.runId);
    debugFiles.push(session.debugFile!);
    try {
      await session.ready();
      for (let k = 1; k <= TURNS_PER_SESSION; k++) {
        const t = newTurn(`interactive-${s}`);
        await session.ask(t.prompt, { expectText: t.codeword.toUpperCase() });
      }
      const end = await session.exit();
      expect(end.timedOut).toBe(false);
      expect(end.exitCode).toBe(0);
    } catch (e) {
      session.kill();
      throw new Error(`${e}\n--- screen ---\n${session.screen()}`);
    }
  }
  await allNoted();
  const interactive = { notes: notes(), turns: [...turns], transcripts: transcriptFiles(home, project) };

  const before = turns.length;
  for (let s = 1; s <= PRINT_SESSIONS; s++) {
    const t = newTurn(`print-${s}`);
    const r = await runPrint({ api, projectDir: project, home, pluginDir: plugin, prompt: t.prompt, env });
    runIds.push(r.runId);
    debugFiles.push(r.debugFile!);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(t.codeword.toUpperCase());
  }
  await allNoted();
  return { interactive, print: { notes: notes(), turns: [...turns], before } };
}

let scenarioRun: ReturnType<typeof runScenario> | undefined;
/** Runs the scenario the first time it is asked for; every test starts with it, so any one can run alone. */
const scenario = () => (scenarioRun ??= runScenario());

describe("memsearch with the real Claude Code", () => {
  test(`${INTERACTIVE_SESSIONS} interactive sessions of ${TURNS_PER_SESSION} turns, each ended with /exit right after its last reply: every turn is in the markdown`, async () => {
    const { interactive } = await scenario();
    const all = interactive.notes;
    expect(all).toHaveLength(INTERACTIVE_SESSIONS * TURNS_PER_SESSION);
    // One note per turn, under its own session, anchored to the turn the transcript holds.
    expect(interactive.transcripts).toHaveLength(INTERACTIVE_SESSIONS);
    const promptIds = new Map<string, string>();
    for (const file of interactive.transcripts)
      for (const line of readTranscript(file)) {
        if (line.type !== "user") continue;
        const c = line.message?.content;
        const texts: string[] = typeof c === "string" ? [c] : Array.isArray(c) ? c.filter((b) => b?.type === "text").map((b) => String(b.text)) : [];
        for (const text of texts) promptIds.set(text.trim(), line.uuid);
      }
    for (const t of interactive.turns) {
      const mine = all.filter((n) => n.text.includes(t.codeword));
      expect(mine).toHaveLength(1);
      expect(mine[0]!.anchor.turn).toBe(promptIds.get(t.prompt)!);
    }
    expect(new Set(all.map((n) => n.anchor.session)).size).toBe(INTERACTIVE_SESSIONS);
  }, SCENARIO_MS);

  test(`${PRINT_SESSIONS} claude -p sessions: every turn is in the markdown`, async () => {
    const { print } = await scenario();
    const texts = print.notes.map((n) => n.text);
    for (const t of print.turns.slice(print.before)) expect(texts.filter((x) => x.includes(t.codeword))).toHaveLength(1);
    expect(print.notes).toHaveLength(print.turns.length);
  }, SCENARIO_MS);

  test("notes of earlier sessions reach the model's request through SessionStart and UserPromptSubmit", async () => {
    await scenario();
    const first = turns[0]!;
    // The newest note in the markdown, whichever test wrote it (slash-command turns write notes
    // too): SessionStart's recent memory starts with its session, given whole. Newest by its time,
    // then by its place in the file: concurrent sessions' drainers may append an earlier minute last.
    await allNoted();
    const days = readdirSync(memoryDir()).filter((n) => /^\d{4}-\d{2}-\d{2}\.md$/.test(n)).sort();
    const sections = readFileSync(join(memoryDir(), days.at(-1)!), "utf8").split(/^### /m).slice(1);
    const minute = (section: string) => /^(\d{2}):(\d{2})/.exec(section)?.slice(1, 3).join(":") ?? "";
    const newestNote = sections.reduce((best, x) => (minute(x) >= minute(best) ? x : best));
    const newestBullet = /^- (.+)$/m.exec(newestNote)![1]!;
    // Asked in the note's own words: the gate weighs a word no note holds the most (docs/EVALUATION.md),
    // so a question padded with words of its own ("say", "day") may fall under it as the memory grows.
    const question = `What about the ${FACTS[0]!.split(" ").slice(1, 3).join(" ")} password rotation?`;
    const r = await runPrint({ api, projectDir: project, home, pluginDir: plugin, prompt: question, env });
    runIds.push(r.runId);
    debugFiles.push(r.debugFile!);
    expect(r.exitCode).toBe(0);
    const req = api.main().findLast((q) => q.prompt === question)!;
    const body = JSON.stringify(req.body);
    // SessionStart: the recent memory, which holds the newest notes.
    expect(body).toContain("SessionStart hook additional context: # Recent memory (memsearch)");
    expect(body).toContain(JSON.stringify(newestBullet).slice(1, -1));
    // UserPromptSubmit: the memory relevant to the question, from the first session.
    expect(body).toMatch(/UserPromptSubmit hook additional context: \[memsearch\] Memories from earlier sessions/);
    const injected = body.slice(body.indexOf("UserPromptSubmit hook additional context"));
    expect(injected).toContain(first.codeword);
    turns.push({ session: "recall", codeword: "", prompt: question, reply: "" });
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("a reply that runs `memsearch search` through the Bash tool finds a fact from an earlier session", async () => {
    await scenario();
    const target = turns[1]!;
    const prompt = "Look up in memory what the flamingo parser caches.";
    const { r, followUp, output } = await bashTurn(prompt, "flamingo parser caches", 'memsearch search "flamingo parser caches" --json-output -k 3');
    expect(followUp).toBeDefined();
    expect(followUp.toolResults[0]!.isError).toBe(false);
    const hits = JSON.parse(output.slice(output.indexOf("[")));
    expect(hits[0].content).toContain(target.codeword);
    expect(r.stdout).toContain(target.codeword);
    turns.push({ session: "tool", codeword: "", prompt, reply: "" });
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("layer 1: a CLAUDE.md and a Claude Code memory file the real client writes in a session are found by `memsearch search` in the next one, labelled curated", async () => {
    await scenario();
    const claudeMd = join(project, "CLAUDE.md");
    const memoryFile = join(home, ".claude", "projects", projectSlug(project), "memory", "release-train.md");
    const write = async (prompt: string, match: string, file_path: string, content: string) => {
      api.script.rules = [{ match, times: 1, reply: { type: "tool", name: "Write", input: { file_path, content }, after: () => "Written." } }];
      const r = await runPrint({ api, projectDir: project, home, pluginDir: plugin, prompt, env, args: ["--allowedTools", "Write"] });
      runIds.push(r.runId);
      debugFiles.push(r.debugFile!);
      expect(r.exitCode).toBe(0);
      turns.push({ session: "tool", codeword: "", prompt, reply: "" });
    };
    await write("Record in CLAUDE.md how releases ship.", "how releases ship", claudeMd, "# Project\n\nReleases ride the capybara train every other tuesday.\n");
    expect(readFileSync(claudeMd, "utf8")).toContain("capybara train");
    await write("Remember in your memory where the release notes live.", "where the release notes live", memoryFile, "# Release notes\n\nRelease notes are drafted in the okapi wiki before the train leaves.\n");
    expect(readFileSync(memoryFile, "utf8")).toContain("okapi wiki");
    await allNoted();
    const { output } = await bashTurn("Look up in memory how releases ship.", "Look up in memory how releases ship", 'memsearch search "capybara train tuesday" --json-output -k 5');
    const hits = JSON.parse(output.slice(output.indexOf("["))) as { source: string; kind: string; from_repository: boolean }[];
    expect(hits.find((h) => h.kind === "curated")).toMatchObject({ source: claudeMd, from_repository: true });
    const mem = await bashTurn("Look up in memory where the release notes are drafted.", "where the release notes are drafted", 'memsearch search "okapi wiki release notes" --json-output -k 5');
    const memHits = JSON.parse(mem.output.slice(mem.output.indexOf("["))) as { source: string; kind: string; from_repository: boolean }[];
    expect(memHits.find((h) => h.kind === "curated")).toMatchObject({ source: memoryFile, from_repository: false });
    turns.push({ session: "tool", codeword: "", prompt: "", reply: "" });
    await allNoted();
  }, SCENARIO_MS + 300_000);

  test("a plan from a real plan-mode session (plan file written, ExitPlanMode approved in its dialog) is a session-table hit of `memsearch recall --raw`, naming the session and the plan file", async () => {
    // After the scenario, as every test here: run first, its session would be one more transcript
    // and its turn one more under the scenario's counts.
    await scenario();
    const plan = "# Thumbnail worker plan\n\nzq-plan-7: migrate the thumbnail worker to SQS in two phases, the resize consumers first.";
    const prompt = "Plan how the thumbnail worker moves off the old broker.";
    // What a model in plan mode does: write the plan file its plan_mode reminder names (the one
    // edit plan mode allows), then call ExitPlanMode. An interactive session, because 2.1.328 under
    // -p offers no ExitPlanMode and answers a call with "disabled for this session".
    const planFileIn = (req: { body: unknown }) => /\/[^"\s\\]*\/\.claude\/plans\/[\w-]+\.md/.exec(JSON.stringify(req.body))?.[0];
    const previous = api.script.reply;
    let planFile: string | undefined;
    let exitCalled = false;
    api.script.reply = (req) => {
      if (req.kind !== "main") return previous?.(req);
      if (req.prompt === prompt && !req.toolResults.length && !planFile) {
        planFile = planFileIn(req);
        if (planFile) return { type: "tool", name: "Write", input: { file_path: planFile, content: plan } };
      }
      if (planFile && !exitCalled && req.toolResults.length) {
        exitCalled = true;
        return { type: "tool", name: "ExitPlanMode", input: { plan }, after: () => "The plan is ready for review." };
      }
      return previous?.(req);
    };
    const session = startInteractive({ api, projectDir: project, home, pluginDir: plugin, env, args: ["--permission-mode", "plan"], timeoutMs: 150_000 });
    runIds.push(session.runId);
    debugFiles.push(session.debugFile!);
    try {
      await session.ready();
      const since = session.raw().length;
      await session.submit(prompt);
      await session.waitForText("Would you like to proceed?", { timeoutMs: 60_000, since });
      // Down to "Yes, manually approve edits", then Enter, once the dialog takes keys.
      await session.settle();
      session.write("\x1b[B");
      await session.settle();
      session.write("\r");
      await session.waitForText("The plan is ready for review.", { timeoutMs: 60_000, since });
      const end = await session.exit();
      expect(end.timedOut).toBe(false);
      expect(end.exitCode).toBe(0);
    } catch (e) {
      session.kill();
      throw new Error(`${e}\n--- screen ---\n${session.screen()}`);
    } finally {
      api.script.reply = previous;
    }
    turns.push({ session: "plan", codeword: "", prompt, reply: "" });
    // The client wrote the plan under its own plans folder and approved the ExitPlanMode call.
    expect(exitCalled).toBe(true);
    expect(planFile).toBe(join(home, ".claude", "plans", basename(planFile!)));
    expect(readFileSync(planFile!, "utf8")).toContain("zq-plan-7");
    const exitResult = api.main().flatMap((q) => q.toolResults).find((t) => t.output.includes(planFile!) && t.output.includes("zq-plan-7"));
    expect(exitResult?.isError).toBe(false);
    const file = transcriptFiles(home, project).find((f) => readTranscript(f).some((l) => l.type === "user" && l.message?.content === prompt))!;
    const sessionId = readTranscript(file).find((l) => l.sessionId)!.sessionId as string;

    const memsearch = (args: string[]) => run(args, { cwd: project, env: { HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), CLAUDE_CONFIG_DIR: undefined, MEMSEARCH_DIR: undefined, MEMSEARCH_NO_WATCH: "1" } });
    // Words only the plan holds: the prompt shares "thumbnail worker" with it (and no other test asks about either).
    const recall = await memsearch(["recall", "--raw", "-j", "SQS in two phases zq-plan-7", "--source", "transcripts"]);
    expect(recall.code).toBe(0);
    const top = JSON.parse(recall.stdout).results[0];
    // The approval's tool result quotes the plan too: the turn's messages may join the hit.
    expect(top?.from).toContain("session");
    expect(top.session_content).toMatchObject({ table: "session", kind: "plan", title: "Thumbnail worker plan", session: sessionId, path: file, plan_file: planFile });
    const text = await memsearch(["recall", "--raw", "SQS in two phases zq-plan-7", "--source", "transcripts"]);
    expect(text.stdout).toContain(`Plan [session table] of session ${sessionId}: Thumbnail worker plan`);
    expect(text.stdout).toContain(`plan file: ${planFile}`);
    await allNoted();
  }, SCENARIO_MS + 300_000);

  test("a plan the client refused (ExitPlanMode under -p, disabled) is no plan of the session table; its words are still found in the turn's messages", async () => {
    await scenario();
    const plan = "# Gannet exporter plan\n\nzq-gannet-4: move the gannet exporter to parquet, the nightly batch first.";
    const prompt = "Plan how the gannet exporter moves to a columnar format.";
    // Under -p this client offers no ExitPlanMode and refuses a call; it refuses a Write into its
    // plans folder too ("a sensitive file"), so the plan is the call's own input here.
    api.script.rules = [{ match: "gannet exporter", times: 1, reply: { type: "tool", name: "ExitPlanMode", input: { plan }, after: () => "Planned; waiting for approval." } }];
    const r = await runPrint({ api, projectDir: project, home, pluginDir: plugin, prompt, env });
    runIds.push(r.runId);
    debugFiles.push(r.debugFile!);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    turns.push({ session: "refused-plan", codeword: "", prompt, reply: "" });
    const exit = api.main().filter((q) => q.prompt === prompt).flatMap((q) => q.toolResults)[0];
    expect(exit?.output).toContain("No such tool available: ExitPlanMode");
    expect(exit?.isError).toBe(true);
    const memsearch = (args: string[]) => run(args, { cwd: project, env: { HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), CLAUDE_CONFIG_DIR: undefined, MEMSEARCH_DIR: undefined, MEMSEARCH_NO_WATCH: "1" } });
    const recall = await memsearch(["recall", "--raw", "-j", "zq-gannet-4 parquet nightly batch", "--source", "transcripts"]);
    expect(recall.code).toBe(0);
    const results = JSON.parse(recall.stdout).results as { from: string[]; session_content?: { kind: string } }[];
    expect(results.length).toBeGreaterThan(0);
    expect(results.filter((x) => x.session_content?.kind === "plan")).toEqual([]);
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("`memsearch recall --raw` through the Bash tool: a turn of an earlier session comes back as its note and its own messages, one result", async () => {
    await scenario();
    const target = turns.find((t) => t.prompt.includes("billing webhook"))!;
    const prompt = "Recall from past conversations how the billing webhook retries.";
    const { output } = await bashTurn(prompt, "billing webhook retries", 'memsearch recall --raw -j "billing webhook retries"');
    const res = JSON.parse(output.slice(output.indexOf("{")));
    const top = res.results[0];
    // The turn's prompt is also its `claude -p` session's first prompt: the session table finds it too.
    expect(top.from.sort()).toEqual(["note", "session", "transcript"]);
    expect(top.session_content).toMatchObject({ kind: "first_prompt", turn_uuid: top.transcript.turn_uuid });
    expect(top.note.snippet).toContain(target.codeword);
    // The transcript Claude Code wrote holds the turn: its path and uuid drill down to it.
    expect(transcriptFiles(home, project)).toContain(top.transcript.path);
    expect(JSON.stringify(readTranscript(top.transcript.path).find((l) => l.uuid === top.transcript.turn_uuid))).toContain(target.codeword);
    // Our own injected context never became a conversation hit.
    expect(output).not.toContain("Recent memory (memsearch)");
    turns.push({ session: "recall-tool", codeword: "", prompt, reply: "" });
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("the plugin's /memsearch:projects in the real client: its text reaches the model, and the `memsearch projects` it asks for lists this project", async () => {
    await scenario();
    const listed = await slashCommand("/memsearch:projects", "Run `memsearch projects`", "memsearch projects", project);
    // SessionStart recorded the project; its notes so far are counted.
    expect(listed.output).toMatch(new RegExp(`${basename(project)}\\s+${project.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s+\\d+ notes?`));
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("the plugin's /memsearch:debug 5 in the real client: the argument reaches the command, and the log it shows is what the real hooks wrote", async () => {
    await scenario();
    const { asked, output: out } = await slashCommand("/memsearch:debug 5", "Run `memsearch debug --lines N`", "memsearch debug --lines 5", "Debug log: ");
    // Claude Code put the user's argument where the command file says $ARGUMENTS.
    expect(asked.some((q) => JSON.stringify(q).includes('the user gave in \\"5\\"'))).toBe(true);
    // The hooks ran with MEMSEARCH_DEBUG=1 and so does the Bash tool: the log is on, and it holds their lines.
    expect(out).toStartWith("Debug log: on in this environment (MEMSEARCH_DEBUG=1)");
    const lines = out.slice(out.indexOf("\n\n") + 2).split("\n").filter(Boolean);
    expect(lines[0]).toMatch(/^Last 5 lines \(newest file: /);
    expect(lines.slice(1)).toHaveLength(5);
    expect(lines.slice(1).some((l) => /session-start|user-prompt-submit|stop|drain/.test(l))).toBe(true);
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("the plugin's other commands in the real client (remember, search, ask, recent, status, help): each file reaches the model, and the memsearch command it asks for answers", async () => {
    await scenario();
    const fact = turns[0]!;
    const kept = `the kiosk build signs with key ${codeword(900)}`;
    const cases: { prompt: string; match: string; command: string; needle: string; check: (out: string) => void }[] = [
      {
        prompt: `/memsearch:remember ${kept}`,
        match: "Run `memsearch remember",
        command: `memsearch remember "${kept}"`,
        needle: "Remembered in ",
        // Written to today's daily file, where the hooks write theirs.
        check: (out) => expect(readFileSync(/Remembered in (\S+\.md)/.exec(out)![1]!, "utf8")).toContain(`- ${kept}`),
      },
      {
        prompt: `/memsearch:search ${fact.codeword}`,
        match: "Run `memsearch search",
        command: `memsearch search "${fact.codeword}" --top-k 8 --json-output`,
        needle: fact.codeword,
        check: (out) => expect((JSON.parse(out) as { content: string }[])[0]!.content).toContain(fact.codeword),
      },
      {
        prompt: `/memsearch:ask what did I say about ${fact.codeword}?`,
        match: "Run `memsearch recall",
        command: `memsearch recall "what did I say about ${fact.codeword}"`,
        needle: "Sources:",
        // The answer is the mock's (a nested `claude -p` reaches it too); the sources are memsearch's:
        // one of them is the conversation that holds the codeword.
        check: (out) => {
          const cited = [...out.matchAll(/memsearch transcript (\S+\.jsonl) --turn/g)].map((m) => m[1]!);
          expect(cited.some((f) => readFileSync(f, "utf8").includes(fact.codeword))).toBe(true);
        },
      },
      { prompt: "/memsearch:recent", match: "Run `memsearch recent`", command: "memsearch recent", needle: "## ", check: (out) => expect(turns.some((t) => out.includes(t.codeword))).toBe(true) },
      { prompt: "/memsearch:status", match: "Run `memsearch doctor`, then `memsearch stats`", command: "memsearch stats", needle: "Total indexed chunks: ", check: (out) => expect(Number(/Total indexed chunks: (\d+)/.exec(out)![1])).toBeGreaterThan(0) },
      // Claude Code sets FORCE_COLOR for its children; what Claude reads carries no escape codes.
      { prompt: "/memsearch:help", match: "Run `memsearch doctor`. If", command: "memsearch doctor", needle: "binary: memsearch", check: (out) => expect(out).not.toContain("\x1b[") },
    ];
    for (const c of cases) {
      const { output } = await slashCommand(c.prompt, c.match, c.command, c.needle);
      c.check(output);
    }
    // What /memsearch:remember kept is found like any note.
    const found = await slashCommand("/memsearch:search kiosk signing key", "Run `memsearch search", `memsearch search "kiosk build signs" --top-k 3 --json-output`, "kiosk");
    expect((JSON.parse(found.output) as { content: string }[])[0]!.content).toContain(kept);
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("the plugin's /memsearch:hub in the real client: `memsearch hub --detach` returns through the Bash tool, and the hub it started serves this project", async () => {
    await scenario();
    const stopHub = () => Bun.spawnSync([BIN, "hub", "--stop"], { cwd: project, env: { ...process.env, HOME: home, MEMSEARCH_HOME: undefined }, stdout: "pipe", stderr: "pipe" });
    try {
      // The Bash tool came back (a server holding its output open would have kept it waiting) with the address.
      const started = await slashCommand("/memsearch:hub", "Run `memsearch hub --detach`", "memsearch hub --detach --no-open", "Memory Hub: ");
      const url = new URL(/Memory Hub: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(started.output)![1]!);
      // This turn's own note is written by then: the hub counts what the markdown holds.
      await allNoted();
      const overview = await fetch(new URL(`/api/overview?token=${url.searchParams.get("token")}`, url.origin));
      expect(overview.status).toBe(200);
      const o = (await overview.json()) as { projects: { path: string; notes: number }[] };
      expect(o.projects.map((x) => x.path)).toEqual([project]);
      expect(o.projects[0]!.notes).toBe(notes().length);
      expect((await fetch(new URL("/api/overview", url.origin))).status).toBe(401);
    } finally {
      const stop = stopHub();
      expect(stop.stdout.toString()).toContain("Stopped the Memory Hub");
    }
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("Claude Code killed mid-session (no SessionEnd): the turn is noted and the watch process leaves by itself", async () => {
    await scenario();
    const session = startInteractive({ api, projectDir: project, home, pluginDir: plugin, env: { ...env, MEMSEARCH_WATCH_LIVENESS_MS: "1000" }, timeoutMs: 120_000 });
    runIds.push(session.runId);
    debugFiles.push(session.debugFile!);
    // A fact of its own: the scenario's facts are what the other tests look up.
    const t = newTurn("killed", "the kiln controller restarts every eleven minutes");
    try {
      await session.ready();
      await session.ask(t.prompt, { expectText: t.codeword.toUpperCase() });
      const watchPid = JSON.parse(readFileSync(join(project, ".memsearch", "watch.pid"), "utf8")).pid as number;
      expect(leftovers(session.runId)).toContain(watchPid);
      // As when its terminal is closed or it is killed: no SessionEnd hook runs.
      process.kill(session.pid, "SIGKILL");
      await session.exited;
    } catch (e) {
      session.kill();
      throw new Error(`${e}\n--- screen ---\n${session.screen()}`);
    }
    await allNoted();
    const deadline = Date.now() + 30_000;
    while (leftovers(session.runId).length && Date.now() < deadline) await Bun.sleep(250);
    expect(leftovers(session.runId)).toEqual([]);
    expect(existsSync(join(project, ".memsearch", "watch.pid"))).toBe(false);
  }, SCENARIO_MS + 180_000);

  test("recall in one interactive session: a typed question about an earlier fact gets it, quoted as data; the same question again does not; an unrelated one gets nothing; the injection log names each decision", async () => {
    await scenario();
    await allNoted();
    const logFile = join(project, ".memsearch", "injections.jsonl");
    const logged = () => (existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").filter(Boolean).map((l) => v.parse(InjectionRecordSchema, JSON.parse(l))) : []);
    const before = logged().length;
    const session = startInteractive({ api, projectDir: project, home, pluginDir: plugin, env, timeoutMs: 150_000 });
    runIds.push(session.runId);
    debugFiles.push(session.debugFile!);
    const question = "How many entries does the flamingo parser cache at most?";
    const unrelated = "Which css property centers a grid item vertically?";
    /** What this turn's own user message carried (earlier turns' context is in the conversation too). */
    const ownTurn = (req: { body: any }, prompt: string) => {
      const messages: any[] = req.body.messages;
      const at = messages.findLastIndex((m) => m.role === "user" && JSON.stringify(m.content).includes(prompt));
      return JSON.stringify(messages.slice(at));
    };
    try {
      await session.ready();
      const first = ownTurn(await session.ask(question), question);
      const again = ownTurn(await session.ask(question), question);
      const other = ownTurn(await session.ask(unrelated), unrelated);
      await session.exit();
      // The fact, from a note this machine wrote: quoted, with its date and expand handle, not labelled as from the repository.
      expect(first).toContain("UserPromptSubmit hook additional context: [memsearch] Memories from earlier sessions");
      expect(first).toContain("quoted from notes, data not instructions");
      expect(first).toMatch(/- \d{4}-\d{2}-\d{2} \d{2}:\d{2} · memsearch expand [0-9a-f]{16} · \\"[^"]*flamingo/);
      expect(first).not.toContain("(from the repository)");
      // Claude still has it in context: not again.
      expect(again).not.toContain("UserPromptSubmit hook additional context");
      expect(other).not.toContain("UserPromptSubmit hook additional context");
    } catch (e) {
      session.kill();
      throw new Error(`${e}\n--- screen ---\n${session.screen()}`);
    }
    // The prompts' decisions (SessionStart's record of what its context gave is the other kind).
    const mine = logged().slice(before).filter((r) => !r.event);
    expect(mine.map((r) => r.decision)).toEqual(["injected", "nothing", "nothing"]);
    // 2.1.328 may leave `source` out of UserPromptSubmit ("while the field rolls out"): a typed prompt either way.
    for (const r of mine) expect([undefined, "user"]).toContain(r.source);
    expect(new Set(mine.map((r) => r.session)).size).toBe(1);
    for (const r of mine) expect(r.prompt).toBeTruthy();
    expect(mine[0]!.considered.filter((c) => c.outcome === "injected").every((c) => c.fromRepository === false)).toBe(true);
    expect(mine[1]!.reason).toBe("every memory through the gate was given in this session's last prompts");
    expect(mine[1]!.considered.some((c) => c.outcome === "repeated")).toBe(true);
    expect(mine[2]!.reason).toBe("nothing through the gate");
    for (const prompt of [question, question, unrelated]) turns.push({ session: "recall-once", codeword: "", prompt, reply: "" });
    await allNoted();
  }, SCENARIO_MS + 180_000);

  test("no memsearch process is left once the sessions are over", async () => {
    await scenario();
    const deadline = Date.now() + 60_000;
    let left: number[] = [];
    for (;;) {
      left = runIds.flatMap((id) => leftovers(id));
      if (!left.length || Date.now() > deadline) break;
      await Bun.sleep(250);
    }
    const names = left.map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      } catch {
        return String(pid);
      }
    });
    expect(names).toEqual([]);
    expect(existsSync(join(project, ".memsearch", "watch.pid"))).toBe(false);
  }, SCENARIO_MS + 90_000);

  test("every transcript line type the client wrote is read or skipped on purpose", async () => {
    await scenario();
    const { listTurns } = await import("../../src/agents/claude/reader.ts");
    const seen = new Set<string>();
    for (const file of transcriptFiles(home, project)) {
      for (const line of readTranscript(file)) seen.add(String(line.type));
      const index = await listTurns(file);
      expect({ unknownTypes: index.stats.unknownTypes, malformed: index.stats.malformed, byType: index.stats.skipped }).toMatchObject({ unknownTypes: 0, malformed: 0 });
      // Our own injected context never becomes a turn.
      for (const t of index.turns) expect(t.userText).not.toContain("Recent memory (memsearch)");
    }
    expect(seen.has("user") && seen.has("assistant")).toBe(true);
  }, SCENARIO_MS);

  test("every turn accounted for: per session the transcript's turn count, and doctor says every turn has a note (the killed session's included)", async () => {
    await scenario();
    await allNoted();
    const { listTurns } = await import("../../src/agents/claude/reader.ts");
    const memsearch = (args: string[]) => run(args, { cwd: project, env: { HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), CLAUDE_CONFIG_DIR: undefined, MEMSEARCH_DIR: undefined } });
    const stats = JSON.parse((await memsearch(["stats", "-j"])).stdout);
    const counted = new Map<string, number>(stats.turns.sessions.map((x: { transcript: string; turns: number }) => [x.transcript, x.turns]));
    const files = transcriptFiles(home, project);
    expect(counted.size).toBe(files.length);
    for (const file of files) expect(counted.get(file)).toBe((await listTurns(file)).turns.length);
    expect(stats.turns).toMatchObject({ missing: 0, queued: 0, running: 0 });
    const doctor = await memsearch(["doctor", "-j"]);
    const check = JSON.parse(doctor.stdout).find((c: { name: string }) => c.name === "turns");
    expect(check.status).toBe("ok");
    expect(check.detail).toMatch(/^([\d,]+) of \1 turns since \d{4}-\d{2}-\d{2} have a note/);
    console.log(`turn accounting: ${check.detail}; not turns to capture: ${JSON.stringify(stats.turns.not_turns)}; ${stats.turns.sessions.length} sessions counted in ${Math.round(stats.turns.ms)} ms`);
  }, SCENARIO_MS);

  test("report: counts, duration, and the hook timings Claude Code logged", async () => {
    await scenario();
    // Every run of one HOME appends to the same debug file.
    const timings: HookTiming[] = [...new Set(debugFiles)].filter((f) => existsSync(f)).flatMap((f) => hookTimings(f));
    const byEvent = new Map<string, number[]>();
    for (const t of timings) if (t.durationMs !== undefined) byEvent.set(t.event, [...(byEvent.get(t.event) ?? []), t.durationMs]);
    const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
    const lines = [...byEvent].map(([e, xs]) => `${e}: n=${xs.length} median ${pct(xs, 50)} ms, p90 ${pct(xs, 90)} ms, max ${Math.max(...xs)} ms`);
    const failed = timings.filter((t) => t.outcome === "failed-to-start" || t.outcome === "timed-out" || t.outcome === "async-cancelled" || (t.status !== undefined && t.status !== 0));
    console.log(
      [
        `real-client suite: ${INTERACTIVE_SESSIONS} interactive sessions × ${TURNS_PER_SESSION} turns, ${PRINT_SESSIONS} print sessions, ${notes().length} notes so far (${turns.length} turns carried a codeword; slash-command turns add notes of their own)`,
        `summariser requests: ${api.summariser().length}, duration ${Math.round((performance.now() - started) / 1000)} s`,
        ...lines,
      ].join("\n"),
    );
    expect(failed.map((t) => t.line)).toEqual([]);
    expect(byEvent.get("Stop")?.length).toBeGreaterThanOrEqual(INTERACTIVE_SESSIONS * TURNS_PER_SESSION + PRINT_SESSIONS);
    // The model-call ledger: one summary line per summariser request the API received in this run.
    const ledger = readFileSync(join(project, ".memsearch", "model-calls.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { purpose: string; provider: string; outcome: string });
    console.log(`ledger: ${ledger.length} model calls, ${ledger.filter((c) => c.purpose === "summary").length} summaries`);
    expect(ledger.filter((c) => c.purpose === "summary").length).toBe(api.summariser().length);
    expect(ledger.every((c) => c.provider === "claude")).toBe(true);
  }, SCENARIO_MS);

  test("a turn forgotten through the hub (token, same origin) stays gone after `memsearch index --force` and `memsearch import`", async () => {
    await scenario();
    const cli = (args: string[]) => Bun.spawnSync([BIN, ...args], { cwd: project, env: { ...process.env, HOME: home, MEMSEARCH_HOME: undefined, MEMSEARCH_NO_WATCH: "1" }, stdout: "pipe", stderr: "pipe" });
    const started = cli(["hub", "--detach", "--no-open"]);
    const url = new URL(/Memory Hub: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(started.stdout.toString())![1]!);
    const token = url.searchParams.get("token")!;
    try {
      // A fact no other test of this file asks about (they run in any order).
      const target = notes().find((n) => n.anchor && n.anchor.transcript !== "-" && /zq/.test(n.text) && /launchdarkly/i.test(n.text))!;
      expect(target).toBeDefined();
      const file = readdirSync(memoryDir()).find((f) => readFileSync(join(memoryDir(), f), "utf8").includes(`turn:${target.anchor.turn} `))!;
      const line = readFileSync(join(memoryDir(), file), "utf8").split("\n").findIndex((l) => l.includes(`turn:${target.anchor.turn} `)) + 1;
      // The note's section, to put back once the forget has been shown to stick.
      const lines = readFileSync(join(memoryDir(), file), "utf8").split("\n");
      const end = lines.findIndex((l, i) => i >= line && /^#{2,3} /.test(l));
      const section = lines.slice(line - 2, end < 0 ? lines.length : end).join("\n");
      const o = (await (await fetch(new URL("/api/overview", url.origin), { headers: { authorization: `Bearer ${token}` } })).json()) as { projects: { id: string }[] };
      // As the page does: the note opened by its heading line, then forgotten by what the view names it by.
      const view = new URL("/api/note", url.origin);
      for (const [k, v] of Object.entries({ project: o.projects[0]!.id, file, line: String(line - 1) })) view.searchParams.set(k, v);
      const shown = (await (await fetch(view, { headers: { authorization: `Bearer ${token}` } })).json()) as { forget: { file: string; id: string; line: number } };
      const forget = await fetch(new URL("/api/forget", url.origin), {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, origin: url.origin, "content-type": "application/json" },
        body: JSON.stringify({ project: o.projects[0]!.id, ...shown.forget, confirmed: true }),
      });
      expect(forget.status).toBe(200);
      expect(((await forget.json()) as { turn: string }).turn).toBe(target.anchor.turn);
      const gone = () => !notes().some((n) => n.anchor?.turn === target.anchor.turn);
      expect(gone()).toBe(true);
      expect(cli(["index", "--force"]).exitCode).toBe(0);
      expect(cli(["import"]).exitCode).toBe(0);
      expect(gone()).toBe(true);
      // Undone and its section put back: the other tests of this file, in any order, find every turn noted.
      expect(cli(["forget", "--undo", target.anchor.turn]).exitCode).toBe(0);
      appendFileSync(join(memoryDir(), file), `\n${section.trim()}\n`);
      expect(cli(["index"]).exitCode).toBe(0);
      expect(gone()).toBe(false);
    } finally {
      expect(cli(["hub", "--stop"]).stdout.toString()).toContain("Stopped the Memory Hub");
    }
  }, SCENARIO_MS + 120_000);
});
