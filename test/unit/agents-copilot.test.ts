/**
 * The Copilot CLI adapter: a real 1.0.102 session (events.jsonl) into the neutral turn, without
 * the context our hooks gave it; the stopped turn found by the stop hook's time; its hook input
 * and output; its sessions refused when they are another project's, a link or not its own; and
 * `memsearch install copilot` as a plan over its settings.json.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventsTurns, findStoppedEventsTurn, parseEvents } from "../../src/agents/copilot/events.ts";
import { checkProjectSession, isCopilotEventsPath } from "../../src/agents/copilot/files.ts";
import { formatCopilotOutput, parseCopilotHookInput } from "../../src/agents/copilot/hook.ts";
import { copilotWired, planCopilotInstall } from "../../src/agents/copilot/install.ts";
import { AGENTS, agentNamed, transcriptAgent, transcriptSources } from "../../src/agents/registry.ts";
import { sanitize } from "../../src/core/redact.ts";
import { resolveTurn } from "../../src/memory/capture.ts";
import { InputError } from "../../src/core/errors.ts";
import { ForeignTranscriptError } from "../../src/transcript/files.ts";
import { REPO } from "../helpers/cli.ts";
import { rereadSource } from "../helpers/sources.ts";

const FIXTURE = readFileSync(join(REPO, "test/fixtures/copilot/resumed-tool-1.0.102.jsonl"), "utf8");
const FIRST = "Which library renders the invoice PDFs, and why is it pinned?";
const SECOND = "RUNTOOL list the checklist";
const line = (o: object) => JSON.stringify(o);
const ev = (type: string, data: object, timestamp = "2026-11-26T10:00:00.000Z") => line({ type, data, id: `e-${Math.random()}`, timestamp, parentId: null });
const start = (cwd: string) => ev("session.start", { sessionId: "s-1", context: { cwd } });
const user = (interactionId: string, content: string, timestamp: string) => ev("user.message", { content, transformedContent: `${content}\n<system_reminder>[memsearch] injected</system_reminder>`, interactionId }, timestamp);
const said = (content: string, toolRequests: object[] = []) => ev("assistant.message", { content, toolRequests });
const turnEnd = () => ev("assistant.turn_end", { turnId: "0" });

describe("Copilot CLI sessions → the neutral turn", () => {
  test("a real 1.0.102 session: the typed prompts, never the context our hooks gave (hook.end, <system_reminder>); the bash call with its output; both turns complete", () => {
    // The file holds our context both ways: as the session start's hook output and inside the second prompt.
    expect(FIXTURE).toContain("# Recent memory (memsearch)");
    expect(FIXTURE).toContain("<system_reminder>\\n[memsearch] Memories");
    const s = parseEvents(FIXTURE);
    expect(s.sessionId).toBe("ab427ccd-fdba-45b2-874e-d5ff224d3bf1");
    expect(s.cwd).toBe("/tmp/c4x/p2");
    expect(s.turns.map((t) => t.userText)).toEqual([FIRST, SECOND]);
    expect(s.turns.map((t) => t.complete)).toEqual([true, true]);
    expect(s.turns[0]!.assistantTexts).toEqual(["OK."]);
    const t = s.turns[1]!;
    expect(t.id).toBe("c9c6f303-07d2-4407-919c-0e9ff4068823");
    expect(t.tools).toHaveLength(1);
    expect(t.tools[0]).toMatchObject({ name: "bash", input: "echo hello-tool", isError: false, unpaired: false });
    expect(t.tools[0]!.output).toContain("hello-tool");
    expect(t.assistantTexts.join("\n")).toContain("The command printed: hello-tool");
    const all = s.turns.flatMap((x) => [x.userText, ...x.assistantTexts, ...x.tools.map((c) => `${c.input} ${c.output}`)]).join("\n");
    expect(all).not.toContain("memsearch");
    expect(all).not.toContain("system_reminder");
    expect(all).not.toContain("current_datetime");
    expect(eventsTurns(s).map((x) => x.uuid)).toEqual(s.turns.map((x) => x.id));
  });

  test("every text passes through the redaction given, tool output before its clip", () => {
    const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const text = FIXTURE.replaceAll(`"content":"${SECOND}"`, `"content":"${SECOND} with token ${secret}"`).replace(/hello-tool/g, `hello-tool ${secret}`);
    const s = parseEvents(text, { redact: sanitize });
    expect(JSON.stringify(s)).not.toContain(secret);
    expect(s.turns[1]!.userText).toStartWith(`${SECOND} with token `);
    const big = FIXTURE.replace('"hello-tool\\n', `"${"x".repeat(50_000)} ${secret} hello-tool\\n`);
    const call = parseEvents(big, { redact: sanitize }).turns[1]!.tools[0]!;
    expect(call.outputChars).toBeGreaterThan(50_000);
    expect(call.output!.length).toBeLessThanOrEqual(1000);
  });

  test("hostile lines: a NUL, a cut line, a huge line, a line that is not an event are no turn and do not stop the reading", () => {
    const huge = "y".repeat(8 * 1024 * 1024);
    const text = [start("/p"), "{\"type\":\"user.mess", `\0\0\0`, line({ type: "user.message", data: { content: huge.slice(0, 10) + "\0tail", interactionId: "i1" }, timestamp: "2026-11-26T10:00:01Z" }), said("fine"), turnEnd(), `{"type":"assistant.message","data":{"content":"${huge}"}}`, "[1,2]", "null", user("i2", "next", "2026-11-26T10:00:05Z"), said("ok"), turnEnd()].join("\n");
    const s = parseEvents(text, { redact: sanitize });
    expect(s.turns.map((t) => t.userText)).toEqual(["yyyyyyyyyy tail", "next"]);
    expect(s.turns[0]!.assistantTexts[0]).toBe("fine");
    expect(s.turns[1]!.complete).toBe(true);
  });

  test("a turn that asked for a tool is not complete at its turn_end; it is once an answer without tools ends, or the agentStop hook starts", () => {
    const asked = [start("/p"), user("i1", "run it", "2026-11-26T10:00:01Z"), said("", [{ toolCallId: "c1", name: "bash", arguments: { command: "ls" } }]), turnEnd()];
    expect(parseEvents(asked.join("\n")).turns[0]!.complete).toBe(false);
    expect(parseEvents([...asked, said("done"), turnEnd()].join("\n")).turns[0]!.complete).toBe(true);
    expect(parseEvents([...asked, ev("hook.start", { hookType: "agentStop", input: {} })].join("\n")).turns[0]!.complete).toBe(true);
    const tool = parseEvents(asked.join("\n")).turns[0]!.tools[0]!;
    expect(tool).toMatchObject({ input: "ls", unpaired: true });
  });

  test("the stopped turn is the one whose stop hook fired at the stop's time, whatever came after (a queue drained late)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cop-ev-"));
    const f = join(dir, "events.jsonl");
    const stop = (at: string) => ev("hook.start", { hookType: "agentStop", input: {} }, at);
    const firstTurn = [start("/p"), user("i1", "first question", "2026-11-26T10:00:01.000Z"), said("first answer"), turnEnd(), stop("2026-11-26T10:00:02.500Z")];
    writeFileSync(f, [...firstTurn, user("i2", "second question", "2026-11-26T10:00:09.000Z"), said("second answer"), turnEnd(), stop("2026-11-26T10:00:09.700Z")].join("\n"));
    const first = await findStoppedEventsTurn(f, { stoppedAt: "2026-11-26T10:00:02.500Z" });
    expect(first?.turn.userText).toBe("first question");
    expect(first?.turn.turnUuid).toBe("i1");
    expect(first?.complete).toBe(true);
    expect(first?.turn.text).toBe("[User]: first question\n[Copilot CLI]: first answer");
    expect(await findStoppedEventsTurn(f, { stoppedAt: "2026-11-26T10:00:09.700Z" })).toMatchObject({ turn: { userText: "second question" }, complete: true });
    // Copilot writes its file behind its hooks: a stop not in it yet gets the last turn begun before it, not complete (the drainer reads again).
    writeFileSync(f, firstTurn.join("\n"));
    expect(await findStoppedEventsTurn(f, { stoppedAt: "2026-11-26T10:00:09.700Z" })).toMatchObject({ turn: { userText: "first question" }, complete: false });
    writeFileSync(f, [...firstTurn, user("i2", "second question", "2026-11-26T10:00:09.000Z"), said("second answer")].join("\n"));
    expect(await findStoppedEventsTurn(f, { stoppedAt: "2026-11-26T10:00:09.700Z" })).toMatchObject({ turn: { userText: "second question" }, complete: false });
    expect(await findStoppedEventsTurn(f, { stoppedAt: "2026-11-26T09:00:00.000Z" })).toBeUndefined();
    // Without a time: the last turn, when its prompt is the recorded one.
    expect((await findStoppedEventsTurn(f, { prompt: "second question" }))?.turn.turnUuid).toBe("i2");
    expect(await findStoppedEventsTurn(f, { prompt: "first question" })).toBeUndefined();
    // The real session: the stop of its first run, at the time Copilot gave its Stop hook.
    writeFileSync(f, FIXTURE);
    const real = await findStoppedEventsTurn(f, { stoppedAt: "2026-11-26T13:39:35.393Z", redact: sanitize });
    expect(real?.turn.userText).toBe(FIRST);
    expect(real?.complete).toBe(true);
    expect(real?.turn.sessionId).toBe("ab427ccd-fdba-45b2-874e-d5ff224d3bf1");
    expect((await findStoppedEventsTurn(f, { stoppedAt: "2026-11-26T13:39:37.390Z" }))?.turn.userText).toBe(SECOND);
  });

  test("the drainer asks for the turn by its entry's stop time: a turn queued before the session went on is still its own", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cop-ev-"));
    const f = join(dir, "events.jsonl");
    const stop = (at: string) => ev("hook.start", { hookType: "agentStop", input: {} }, at);
    writeFileSync(f, [start("/p"), user("i1", "first question", "2026-11-26T10:00:01.000Z"), said("first answer"), turnEnd(), stop("2026-11-26T10:00:02.500Z"), user("i2", "second question", "2026-11-26T10:00:09.000Z"), said("second answer"), turnEnd(), stop("2026-11-26T10:00:09.700Z")].join("\n"));
    const r = await resolveTurn({ sessionId: "s-1", agent: "copilot", transcriptPath: f, stoppedAt: "2026-11-26T10:00:02.500Z" }, { readerFor: () => AGENTS.copilot, transcriptWaitMs: 0 });
    expect(r).toMatchObject({ source: "transcript", turnUuid: "i1", userText: "first question", assistantTexts: ["first answer"] });
  });

  test("an events file that is a link is not read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cop-ev-"));
    const target = join(dir, "elsewhere.jsonl");
    writeFileSync(target, FIXTURE);
    symlinkSync(target, join(dir, "events.jsonl"));
    await expect(findStoppedEventsTurn(join(dir, "events.jsonl"), {})).rejects.toThrow();
  });
});

describe("Copilot CLI hooks", () => {
  test("the input as 1.0.102 sends it (PascalCase events, snake_case fields): no prompt id, the time it fired; source only at SessionStart", () => {
    const stop = parseCopilotHookInput({ hook_event_name: "Stop", session_id: "s", timestamp: "2026-11-26T13:35:20.422Z", cwd: "/p", transcript_path: "/h/.copilot/session-state/s/events.jsonl", stop_reason: "end_turn", stop_hook_active: false });
    expect(stop).toEqual({ agent: "copilot", hook_event_name: "Stop", session_id: "s", cwd: "/p", transcript_path: "/h/.copilot/session-state/s/events.jsonl", stop_hook_active: false, fired_at: "2026-11-26T13:35:20.422Z" });
    expect(parseCopilotHookInput({ hook_event_name: "Stop", timestamp: "not a time" }).fired_at).toBeUndefined();
    expect(parseCopilotHookInput({ hook_event_name: "Stop", timestamp: 1795700120422 }).fired_at).toBeUndefined();
    expect(parseCopilotHookInput({ hook_event_name: "SessionStart", session_id: "s", cwd: "/p", source: "new", initial_prompt: "hi" }).source).toBe("new");
    expect(parseCopilotHookInput({ hook_event_name: "UserPromptSubmit", prompt: "Which broker?", source: "x" })).toEqual({ agent: "copilot", hook_event_name: "UserPromptSubmit", prompt: "Which broker?" });
    expect(parseCopilotHookInput({ session_id: ["no"], prompt: "p\0q" })).toEqual({ agent: "copilot", prompt: "p\0q" });
  });

  test("the output: only a top-level additionalContext (Copilot CLI ignores hookSpecificOutput and shows no systemMessage)", () => {
    expect(formatCopilotOutput({ systemMessage: "s", hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "m" } })).toEqual({ additionalContext: "m" });
    expect(formatCopilotOutput({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "c" } })).toEqual({ additionalContext: "c" });
    expect(formatCopilotOutput({ systemMessage: "s" })).toEqual({});
    expect(formatCopilotOutput({ hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "" } })).toEqual({});
  });

  test("the registry knows it by name", () => {
    expect(agentNamed("copilot").label).toBe("Copilot CLI");
  });
});

function home() {
  const h = mkdtempSync(join(tmpdir(), "cop-home-"));
  const root = mkdtempSync(join(tmpdir(), "cop-proj-"));
  const copilotHome = join(h, ".copilot");
  const file = (id: string, cwd: string) => {
    mkdirSync(join(copilotHome, "session-state", id), { recursive: true });
    const f = join(copilotHome, "session-state", id, "events.jsonl");
    writeFileSync(f, [start(cwd), user("i1", "q", "2026-11-26T10:00:01Z"), said("a"), turnEnd()].join("\n"));
    return f;
  };
  return { env: { HOME: h }, h, root, copilotHome, file };
}

describe("which Copilot CLI sessions are this project's", () => {
  test("a session started in the project is read; another project's, a link, a file elsewhere are refused", () => {
    const h = home();
    const mine = h.file("s-mine", h.root);
    expect(isCopilotEventsPath(mine, h.env)).toBe(true);
    expect(transcriptAgent(mine, h.env)?.name).toBe("copilot");
    expect(() => checkProjectSession(mine, h.root, { env: h.env })).not.toThrow();
    const theirs = h.file("s-theirs", "/somewhere/else");
    expect(() => checkProjectSession(theirs, h.root, { env: h.env })).toThrow(ForeignTranscriptError);
    expect(() => checkProjectSession(theirs, h.root, { env: h.env, anyProject: true })).not.toThrow();
    mkdirSync(join(h.copilotHome, "session-state", "s-link"));
    const link = join(h.copilotHome, "session-state", "s-link", "events.jsonl");
    symlinkSync(mine, link);
    expect(() => checkProjectSession(link, h.root, { env: h.env })).toThrow("not a plain file");
    const outside = join(h.root, "events.jsonl");
    writeFileSync(outside, readFileSync(mine));
    expect(isCopilotEventsPath(outside, h.env)).toBe(false);
    expect(() => checkProjectSession(outside, h.root, { env: h.env })).toThrow(ForeignTranscriptError);
    // Deeper than a session's own folder: not a session's events.
    mkdirSync(join(h.copilotHome, "session-state", "s-mine", "files"));
    expect(isCopilotEventsPath(join(h.copilotHome, "session-state", "s-mine", "files", "events.jsonl"), h.env)).toBe(false);
    expect(isCopilotEventsPath(mine, { HOME: h.h, COPILOT_HOME: join(h.h, "other") })).toBe(false);
  });

  test("import lists this project's sessions only; the conversation index lists every plain one", async () => {
    const h = home();
    const mine = h.file("s-mine", h.root);
    h.file("s-theirs", "/somewhere/else");
    mkdirSync(join(h.copilotHome, "session-state", "s-link"));
    symlinkSync(mine, join(h.copilotHome, "session-state", "s-link", "events.jsonl"));
    const t = AGENTS.copilot.transcripts;
    expect(t.projectFiles(h.root, h.env).map((s) => s.path)).toEqual([mine]);
    expect(t.list(h.env).map((s) => s.path.split("/").at(-2))).toEqual(["s-mine", "s-theirs"]);
    const src = rereadSource(transcriptSources(h.env), "copilot");
    const read = await src.read(mine);
    expect(read.sessionId).toBe("s-1");
    expect(read.cwd).toBe(h.root);
    expect(t.render(read.turns[0]!)).toBe("[User]: q\n[Copilot CLI]: a");
  });
});

describe("memsearch install copilot, as a plan over settings.json", () => {
  const exe = ["/opt/memsearch bin/memsearch"];
  const settings = (h: ReturnType<typeof home>) => join(h.copilotHome, "settings.json");
  const write = (h: ReturnType<typeof home>, text: string) => {
    mkdirSync(h.copilotHome, { recursive: true });
    writeFileSync(settings(h), text);
  };
  const apply = (plan: ReturnType<typeof planCopilotInstall>) => {
    for (const c of plan.changes) writeFileSync(c.path, c.after ?? "");
  };

  test("merged beside the user's settings and hooks, idempotent, exactly undone", () => {
    const h = home();
    const user = { model: "gpt-4.1", hooks: { UserPromptSubmit: [{ type: "command", bash: "./audit.sh", timeoutSec: 2 }], preToolUse: [{ type: "command", bash: "./guard.sh" }] } };
    const before = `${JSON.stringify(user, null, 2)}\n`;
    write(h, before);
    expect(copilotWired({ exe, env: h.env })).toMatchObject({ wired: false });
    const plan = planCopilotInstall({ exe, env: h.env });
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]!.before).toBe(before);
    const doc = JSON.parse(plan.changes[0]!.after as string);
    expect(doc.model).toBe("gpt-4.1");
    expect(doc.hooks.preToolUse).toEqual(user.hooks.preToolUse);
    expect(doc.hooks.UserPromptSubmit).toEqual([user.hooks.UserPromptSubmit[0], { type: "command", bash: "'/opt/memsearch bin/memsearch' hook user-prompt-submit --agent copilot", timeoutSec: 5 }]);
    expect(Object.keys(doc.hooks)).toEqual(["UserPromptSubmit", "preToolUse", "SessionStart", "Stop", "SessionEnd"]);
    // Planning writes nothing (what --dry-run shows).
    expect(readFileSync(settings(h), "utf8")).toBe(before);
    apply(plan);
    expect(copilotWired({ exe, env: h.env })).toEqual({ wired: true, detail: `4 hooks in ${settings(h)}` });
    expect(planCopilotInstall({ exe, env: h.env }).changes).toEqual([]);
    // Installed again from another path: ours replaced where it stands, not doubled.
    const moved = planCopilotInstall({ exe: ["/usr/bin/memsearch"], env: h.env });
    const movedDoc = JSON.parse(moved.changes[0]!.after as string);
    expect(movedDoc.hooks.UserPromptSubmit.map((x: { bash: string }) => x.bash)).toEqual(["./audit.sh", "/usr/bin/memsearch hook user-prompt-submit --agent copilot"]);
    const un = planCopilotInstall({ exe, env: h.env, uninstall: true });
    apply(un);
    expect(JSON.parse(readFileSync(settings(h), "utf8"))).toEqual(user);
    expect(planCopilotInstall({ exe, env: h.env, uninstall: true }).changes).toEqual([]);
  });

  test("no settings.json: created; uninstalled: removed, as it was not there", () => {
    const h = home();
    const plan = planCopilotInstall({ exe, env: h.env });
    expect(plan.changes[0]!.before).toBeUndefined();
    mkdirSync(h.copilotHome, { recursive: true });
    apply(plan);
    const un = planCopilotInstall({ exe, env: h.env, uninstall: true });
    expect(un.changes).toEqual([{ path: settings(h), before: plan.changes[0]!.after as string, after: undefined }]);
  });

  test("a settings.json that is not plain JSON, or whose hooks are not lists, is refused in one line; a link is refused", () => {
    const h = home();
    write(h, '{ // my settings\n  "model": "x" }');
    expect(() => planCopilotInstall({ exe, env: h.env })).toThrow(InputError);
    expect(() => planCopilotInstall({ exe, env: h.env })).toThrow(/settings\.json: .*plain JSON/);
    expect(copilotWired({ exe, env: h.env }).wired).toBe(false);
    write(h, '{"hooks": {"Stop": "not a list"}}');
    expect(() => planCopilotInstall({ exe, env: h.env })).toThrow(InputError);
    const real = join(h.h, "real-settings.json");
    writeFileSync(real, "{}");
    rmSync(settings(h));
    symlinkSync(real, settings(h));
    expect(() => planCopilotInstall({ exe, env: h.env })).toThrow("symbolic link");
    expect(readFileSync(real, "utf8")).toBe("{}");
  });
});
