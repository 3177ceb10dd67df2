/**
 * The write-ahead capture path: what the hooks saw goes into the queue, the drainer waits for a
 * lagging transcript, falls back to the hooks' record, and writes each turn's note exactly once.
 */
import { describe, expect, test } from "bun:test";
import { agentOrDefault } from "../../src/agents/registry.ts";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anchorsIn } from "../../src/core/anchor.ts";
import { drainPending, resolveTurn } from "../../src/memory/capture.ts";
import { enqueueTurn, forgetPrompt, listPending, readPending, readPrompt, recordPrompt, saveResolved } from "../../src/memory/pending.ts";
import { appendTurnNote } from "../../src/memory/journal.ts";
import type { Summary } from "../../src/memory/summarizer.ts";
import type { LastTurn } from "../../src/transcript/types.ts";
import { deadPid } from "../helpers/processes.ts";

const line = (o: unknown) => JSON.stringify(o) + "\n";
const user = (uuid: string, text: string, promptId?: string) =>
  line({ type: "user", uuid, sessionId: "s-1", timestamp: "2026-11-23T10:00:00Z", ...(promptId ? { promptId } : {}), message: { role: "user", content: text } });
const reply = (uuid: string, id: string, text: string) => line({ type: "assistant", uuid, sessionId: "s-1", message: { id, role: "assistant", content: [{ type: "text", text }] } });
const tool = (uuid: string, id: string, command: string) =>
  line({ type: "assistant", uuid, sessionId: "s-1", message: { id, role: "assistant", content: [{ type: "tool_use", id: `tu-${uuid}`, name: "Bash", input: { command } }] } });

function project() {
  const dir = mkdtempSync(join(tmpdir(), "ms-capture-"));
  const dataDir = join(dir, ".memsearch");
  const memoryDir = join(dataDir, "memory");
  const transcript = join(dir, "session.jsonl");
  return { dir, dataDir, memoryDir, transcript };
}

/** A summariser that answers at once with bullets naming the user's words, and remembers what it saw. */
function fakeSummarizer() {
  const seen: LastTurn[] = [];
  const summarize = async (t: LastTurn): Promise<Summary> => {
    seen.push(t);
    return { bullets: [`- User asked: ${t.userText}`, `- Claude Code answered: ${t.assistantTexts.at(-1) ?? "(nothing)"}`], provider: "claude" };
  };
  return { seen, summarize };
}

const anchors = (memoryDir: string) =>
  readdirSync(memoryDir)
    .filter((n) => n.endsWith(".md"))
    .flatMap((n) => anchorsIn(readFileSync(join(memoryDir, n), "utf8")));

describe("resolveTurn", () => {
  test("the transcript's turn, matched by prompt id, not the last one in the file", async () => {
    const p = project();
    writeFileSync(p.transcript, user("u1", "first question", "p1") + reply("a1", "m1", "first answer") + user("u2", "second question", "p2") + reply("a2", "m2", "second answer"));
    const r = await resolveTurn({ sessionId: "s-1", promptId: "p1", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "first answer" }, { readerFor: agentOrDefault, transcriptWaitMs: 0 });
    expect(r).toMatchObject({ source: "transcript", turnUuid: "u1", userText: "first question" });
  });

  test("a lagging transcript is waited for: the turn's lines arrive after Stop", async () => {
    const p = project();
    writeFileSync(p.transcript, user("u1", "earlier turn", "p1") + reply("a1", "m1", "earlier answer"));
    setTimeout(() => appendFileSync(p.transcript, user("u2", "deploy the api", "p2") + tool("t2", "m2", "fly deploy")), 150);
    setTimeout(() => appendFileSync(p.transcript, reply("a2", "m3", "Deployed to fly.io.")), 400);
    const r = await resolveTurn(
      { sessionId: "s-1", promptId: "p2", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "Deployed to fly.io." },
      { readerFor: agentOrDefault, transcriptWaitMs: 5_000, pollMs: 20 },
    );
    expect(r?.source).toBe("transcript");
    expect(r?.turnUuid).toBe("u2");
    expect(r?.tools.map((t) => t.name)).toEqual(["Bash"]);
    expect(r?.assistantTexts.at(-1)).toBe("Deployed to fly.io.");
  });

  test("a transcript that never gets the turn: the hooks' record, anchored by the prompt id", async () => {
    const p = project();
    writeFileSync(p.transcript, user("u1", "earlier turn", "p1") + reply("a1", "m1", "earlier answer"));
    const t0 = Date.now();
    const r = await resolveTurn(
      { sessionId: "s-1", promptId: "p9", prompt: "what port does redis use", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "Redis listens on 6380 here." },
      { readerFor: agentOrDefault, transcriptWaitMs: 300, pollMs: 20 },
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(r).toMatchObject({ source: "hooks", turnUuid: "p9", userText: "what port does redis use", assistantTexts: ["Redis listens on 6380 here."] });
    expect(r?.text).toBe("[User]: what port does redis use\n[Claude Code]: Redis listens on 6380 here.");
  });

  test("no transcript file at all (first turn not flushed yet): the hooks' record", async () => {
    const p = project();
    const r = await resolveTurn({ sessionId: "s-1", promptId: "p1", prompt: "hello", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "Hi." }, { readerFor: agentOrDefault, transcriptWaitMs: 100, pollMs: 20 });
    expect(r?.source).toBe("hooks");
  });

  test("without prompt ids in the file, an older turn whose text differs is never taken for this one", async () => {
    const p = project();
    writeFileSync(p.transcript, user("u1", "earlier turn") + reply("a1", "m1", "earlier answer"));
    const r = await resolveTurn({ sessionId: "s-1", promptId: "p2", prompt: "a new question", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "new answer" }, { readerFor: agentOrDefault, transcriptWaitMs: 50, pollMs: 10 });
    expect(r?.source).toBe("hooks");
    // The same text does match (older clients write no prompt id).
    const same = await resolveTurn({ sessionId: "s-1", promptId: "p1", prompt: "earlier turn", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "earlier answer" }, { readerFor: agentOrDefault, transcriptWaitMs: 0 });
    expect(same).toMatchObject({ source: "transcript", turnUuid: "u1" });
  });

  test("nothing seen at all: no turn", async () => {
    expect(await resolveTurn({ sessionId: "s-1", stoppedAt: new Date().toISOString() }, { readerFor: agentOrDefault, transcriptWaitMs: 0 })).toBeUndefined();
  });
});

describe("the queue", () => {
  test("prompts and turns are redacted before they reach the disk; hostile ids stay inside the folder", () => {
    const p = project();
    const key = "sk-ant-api03-" + "A".repeat(90);
    recordPrompt(p.dataDir, { sessionId: "../../etc", promptId: "x/../../y", prompt: `use ${key} please`, at: new Date().toISOString() });
    const names = readdirSync(join(p.dataDir, "pending", "prompts"));
    expect(names).toHaveLength(1);
    expect(readFileSync(join(p.dataDir, "pending", "prompts", names[0]!), "utf8")).not.toContain(key);
    const prompt = readPrompt(p.dataDir, "../../etc", "x/../../y");
    expect(prompt).toContain("use ");
    expect(prompt).not.toContain(key);
    forgetPrompt(p.dataDir, "../../etc", "x/../../y");
    expect(readdirSync(join(p.dataDir, "pending", "prompts"))).toHaveLength(0);
    const file = enqueueTurn(p.dataDir, { sessionId: "s".repeat(100_000), promptId: "p", stoppedAt: new Date().toISOString(), lastAssistantMessage: `the key is ${key}` });
    expect(file.startsWith(join(p.dataDir, "pending"))).toBe(true);
    expect(file.length).toBeLessThan(p.dataDir.length + 200);
    expect(readFileSync(file, "utf8")).not.toContain(key);
  });
});

/** A clock that only moves when slept on, and counts the sleeping. */
function fakeClock(start = Date.now()) {
  const c = { t: start, slept: 0, now: () => c.t, sleep: async (ms: number) => void ((c.t += ms), (c.slept += ms)) };
  return c;
}

describe("waiting for the transcript", () => {
  test(
    "three turns the transcript never gets cost one wait, shared from their Stop, not three",
    async () => {
      const p = project();
      writeFileSync(p.transcript, user("u1", "earlier turn", "p1") + reply("a1", "m1", "earlier answer"));
      const clock = fakeClock();
      const stoppedAt = new Date(clock.t).toISOString();
      for (const n of [7, 8, 9]) enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: `p${n}`, prompt: `question ${n}`, transcriptPath: p.transcript, stoppedAt, lastAssistantMessage: `answer ${n}` });
      const s = fakeSummarizer();
      // The default wait (10 s), counted on the fake clock: three real waits would outlast this test's limit.
      const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: s.summarize, clock });
      expect(report).toMatchObject({ written: 3, fromHooks: 3, failed: 0 });
      expect(clock.slept).toBeGreaterThanOrEqual(10_000);
      expect(clock.slept).toBeLessThanOrEqual(10_000 + 200);
      // Not one turn lost: each from what the hooks saw.
      expect(anchors(p.memoryDir).map((a) => a.turn)).toEqual(["p7", "p8", "p9"]);
    },
    15_000,
  );

  test("a turn stopped a minute ago is not waited for; a Stop time in the future waits one wait at most", async () => {
    const p = project();
    writeFileSync(p.transcript, user("u1", "earlier turn", "p1"));
    const old = fakeClock();
    const r = await resolveTurn({ sessionId: "s-1", promptId: "p5", prompt: "q", transcriptPath: p.transcript, stoppedAt: new Date(old.t - 60_000).toISOString(), lastAssistantMessage: "a" }, { readerFor: agentOrDefault, clock: old });
    expect(r?.source).toBe("hooks");
    expect(old.slept).toBe(0);
    const future = fakeClock();
    await resolveTurn({ sessionId: "s-1", promptId: "p6", prompt: "q", transcriptPath: p.transcript, stoppedAt: new Date(future.t + 3600_000).toISOString(), lastAssistantMessage: "a" }, { readerFor: agentOrDefault, clock: future, transcriptWaitMs: 1_000, pollMs: 100 });
    expect(future.slept).toBeGreaterThanOrEqual(1_000);
    expect(future.slept).toBeLessThanOrEqual(1_100);
  }, 15_000);
});

describe("temp files of killed writers", () => {
  test("the drainer sweeps those of dead writers and old ones, and leaves a live writer's", async () => {
    const p = project();
    const dead = await deadPid();
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", prompt: "q", stoppedAt: new Date(Date.now() - 60_000).toISOString(), lastAssistantMessage: "a" });
    const pending = join(p.dataDir, "pending");
    const prompts = join(pending, "prompts");
    mkdirSync(prompts, { recursive: true });
    const gone = [join(pending, `s-1--p2.json.tmp-${dead}-k1ll3d`), join(prompts, `s-1--p3.json.tmp-${dead}-abcdef`), join(pending, `s-1--p4.json.tmp-${process.pid}-0ld0ld`)];
    const kept = [join(pending, `s-1--p5.json.tmp-${process.pid}-wr1t1n`)];
    for (const f of [...gone, ...kept]) writeFileSync(f, '{"sessionId":');
    const past = new Date(Date.now() - 20 * 60_000);
    utimesSync(gone[2]!, past, past);
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: fakeSummarizer().summarize, transcriptWaitMs: 0 });
    expect(report).toMatchObject({ written: 1, tempSwept: 3, damaged: 0 });
    expect(gone.filter((f) => existsSync(f))).toEqual([]);
    expect(kept.filter((f) => existsSync(f))).toEqual(kept);
  });
});

describe("drainPending", () => {
  test("every queued turn becomes one note, in order, and the queue empties", async () => {
    const p = project();
    writeFileSync(p.transcript, user("u1", "set up the ci", "p1") + reply("a1", "m1", "CI is set up."));
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", transcriptPath: p.transcript, stoppedAt: "2026-11-23T10:01:00Z", lastAssistantMessage: "CI is set up." });
    await Bun.sleep(5);
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p2", prompt: "and the linter", transcriptPath: p.transcript, stoppedAt: "2026-11-23T10:02:00Z", lastAssistantMessage: "Linter added." });
    const s = fakeSummarizer();
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: s.summarize, transcriptWaitMs: 50, pollMs: 10 });
    expect(report).toMatchObject({ written: 2, duplicates: 0, fromHooks: 1, failed: 0, ran: true });
    expect(anchors(p.memoryDir).map((a) => a.turn)).toEqual(["u1", "p2"]);
    expect(listPending(p.dataDir)).toEqual([]);
    const again = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: s.summarize });
    expect(again.written).toBe(0);
    expect(s.seen).toHaveLength(2);
  });

  test("a /clear the hooks saw leaves the queue at once with no note, counted as a local command", async () => {
    const p = project();
    // Claude Code answers nobody for a /clear: the transcript never holds a turn for it.
    writeFileSync(p.transcript, user("u1", "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>", "p-clear"));
    recordPrompt(p.dataDir, { sessionId: "s-1", promptId: "p-clear", prompt: "/clear", at: new Date().toISOString() });
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p-clear", prompt: "/clear", transcriptPath: p.transcript, stoppedAt: new Date().toISOString() });
    const s = fakeSummarizer();
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: s.summarize });
    expect(report).toMatchObject({ written: 0, failed: 0, notTurns: { "local-command": 1 } });
    expect(s.seen).toHaveLength(0);
    expect(listPending(p.dataDir)).toEqual([]);
    expect(readPrompt(p.dataDir, "s-1", "p-clear")).toBeUndefined();
    expect(existsSync(p.memoryDir)).toBe(false);
  });

  test("from the transcript: an /exit answered only by Claude Code's <synthetic> line and an 'Ok nice!' answered with words get no note; a 'yes' that ran a tool does", async () => {
    const p = project();
    const synthetic = line({ type: "assistant", uuid: "a2", sessionId: "s-1", message: { model: "<synthetic>", id: "m2", role: "assistant", content: [{ type: "text", text: "No response requested." }] } });
    writeFileSync(
      p.transcript,
      user("u1", "Ok nice!", "p1") + reply("a1", "m1", "Glad it helped.") + user("u2", "<command-name>/exit</command-name>\n<command-message>exit</command-message>\n<command-args></command-args>", "p2") + synthetic + user("u3", "yes", "p3") + tool("a3", "m3", "git push") + reply("a4", "m4", "Pushed."),
    );
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", transcriptPath: p.transcript, stoppedAt: "2026-11-23T10:01:00Z", lastAssistantMessage: "Glad it helped." });
    await Bun.sleep(5);
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p2", transcriptPath: p.transcript, stoppedAt: "2026-11-23T10:02:00Z", lastAssistantMessage: "No response requested." });
    await Bun.sleep(5);
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p3", transcriptPath: p.transcript, stoppedAt: "2026-11-23T10:03:00Z", lastAssistantMessage: "Pushed." });
    const s = fakeSummarizer();
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: s.summarize, transcriptWaitMs: 0 });
    expect(report).toMatchObject({ written: 1, notTurns: { trivial: 1, "local-command": 1 } });
    expect(anchors(p.memoryDir).map((a) => a.turn)).toEqual(["u3"]);
    expect(listPending(p.dataDir)).toEqual([]);
  });

  test("a trivial prompt whose reply the transcript does not hold yet is written (its tools are unknown)", async () => {
    const p = project();
    writeFileSync(p.transcript, user("u1", "ok", "p1"));
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "Deployed the fix to staging." });
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: fakeSummarizer().summarize, transcriptWaitMs: 0 });
    expect(report.written).toBe(1);
    expect(report.notTurns).toEqual({});
  });

  test("a drainer killed after the append: the next one finds the note there and writes nothing twice", async () => {
    const p = project();
    const file = enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", prompt: "q", stoppedAt: new Date().toISOString(), lastAssistantMessage: "a" });
    const entry = readPending(file)!;
    const resolved = (await resolveTurn(entry, { readerFor: agentOrDefault, transcriptWaitMs: 0 }))!;
    saveResolved(file, entry, resolved);
    await appendTurnNote({ memoryDir: p.memoryDir, sessionId: "s-1", turnUuid: resolved.turnUuid, transcriptPath: "", bullets: ["- first try"] });
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: fakeSummarizer().summarize });
    expect(report).toMatchObject({ written: 0, duplicates: 1 });
    expect(anchors(p.memoryDir)).toHaveLength(1);
    expect(existsSync(file)).toBe(false);
  });

  test("the settled turn is kept: a transcript flushed after a crash does not change the anchor", async () => {
    const p = project();
    const file = enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", prompt: "q", transcriptPath: p.transcript, stoppedAt: new Date().toISOString(), lastAssistantMessage: "a" });
    const entry = readPending(file)!;
    saveResolved(file, entry, (await resolveTurn(entry, { readerFor: agentOrDefault, transcriptWaitMs: 0 }))!);
    writeFileSync(p.transcript, user("u1", "q", "p1") + reply("a1", "m1", "a"));
    await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: fakeSummarizer().summarize });
    expect(anchors(p.memoryDir).map((a) => a.turn)).toEqual(["p1"]);
  });

  test("drainers started together write each turn once", async () => {
    const p = project();
    for (let i = 0; i < 6; i++) enqueueTurn(p.dataDir, { sessionId: `s-${i % 2}`, promptId: `p${i}`, prompt: `question ${i}`, stoppedAt: new Date().toISOString(), lastAssistantMessage: `answer ${i}` });
    const slow = async (t: LastTurn): Promise<Summary> => {
      await Bun.sleep(20);
      return { bullets: [`- ${t.userText}`], provider: "claude" };
    };
    const reports = await Promise.all([1, 2, 3].map(() => drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: slow, transcriptWaitMs: 0 })));
    expect(reports.reduce((n, r) => n + r.written, 0)).toBe(6);
    expect(anchors(p.memoryDir).map((a) => a.turn).sort()).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"]);
  });

  test("a turn that cannot be written stays queued, and is written once the disk is back", async () => {
    const p = project();
    mkdirSync(p.dataDir, { recursive: true });
    writeFileSync(p.memoryDir, "not a folder");
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", prompt: "q", stoppedAt: new Date().toISOString(), lastAssistantMessage: "a" });
    const failed = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: fakeSummarizer().summarize });
    expect(failed).toMatchObject({ written: 0, failed: 1 });
    expect(failed.problems[0]).toMatch(/stays queued/);
    expect(listPending(p.dataDir)).toHaveLength(1);
    const okDir = join(p.dir, "memory-ok");
    const ok = await drainPending({ readerFor: agentOrDefault, memoryDir: okDir, dataDir: p.dataDir, summarize: fakeSummarizer().summarize });
    expect(ok.written).toBe(1);
  });

  test("a damaged queue file is set aside, the others are written", async () => {
    const p = project();
    enqueueTurn(p.dataDir, { sessionId: "s-1", promptId: "p1", prompt: "q", stoppedAt: new Date().toISOString(), lastAssistantMessage: "a" });
    writeFileSync(join(p.dataDir, "pending", "broken.json"), "{not json");
    const report = await drainPending({ readerFor: agentOrDefault, memoryDir: p.memoryDir, dataDir: p.dataDir, summarize: fakeSummarizer().summarize });
    expect(report).toMatchObject({ written: 1, damaged: 1 });
    expect(readdirSync(join(p.dataDir, "pending", "damaged"))).toEqual(["broken.json"]);
  });
});
