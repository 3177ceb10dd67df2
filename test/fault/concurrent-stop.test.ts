/**
 * Fault injection 2: Stop hooks of several sessions at once. Every turn goes through
 * UserPromptSubmit (with its prompt id) and then Stop; transcripts are on time, lagging behind
 * the hook, or never get the turn; some Stops are fired twice (a retried hook); in the burst
 * variant a drainer is killed with SIGKILL mid-queue. Once the drainers are done: exactly one
 * note per turn (anchors counted by turn id), each note about its own turn, the queue empty.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeClaudeCalls, writeFakeClaude } from "../helpers/fake-claude.ts";
import { anchorsOf, drained, drainersIn, faultKit, HANG_SLACK_MS, HOOK_BUDGET_MS, hookOutputProblem, ms, queued, readMemory, tracked, type Project, liveLockContent } from "./helpers.ts";
import { appendTurn, type TurnSpec } from "./transcript.ts";

const kit = faultKit("concurrent-stop");

const SESSIONS = 4;
const TURNS = 10;

type Timing = "on-time" | "lagging" | "never";

interface Turn extends TurnSpec {
  transcript: string;
  timing: Timing;
  /** How long after Stop a lagging transcript gets the reply. */
  lagMs: number;
  retried: boolean;
}

/** The turns of a test (`prefix` names it and seeds its stream): the same whichever tests ran before. */
function makeTurns(p: Project, prefix: string, neverCount: number): Turn[][] {
  const rng = kit.rngFor(prefix);
  const sessions: Turn[][] = [];
  const never = new Set<string>();
  while (never.size < neverCount) never.add(`${rng.int(0, SESSIONS)}.${rng.int(0, TURNS)}`);
  for (let s = 0; s < SESSIONS; s++) {
    const sessionId = `${prefix}-sess-${s}-${rng.string(6)}`;
    const transcript = join(p.root, `${sessionId}.jsonl`);
    writeFileSync(transcript, "");
    const turns: Turn[] = [];
    for (let t = 0; t < TURNS; t++) {
      const word = rng.string(10, "abcdefghijklmnopqrstuvwxyz");
      const uuid = `${prefix}-u-${s}-${t}-${rng.string(8)}`;
      const promptId = `${prefix}-p-${s}-${t}-${rng.string(8)}`;
      const timing: Timing = never.has(`${s}.${t}`) ? "never" : rng.chance(0.3) ? "lagging" : "on-time";
      turns.push({
        sessionId,
        transcript,
        uuid,
        promptId,
        prompt: `Turn ${s}.${t} of ${prefix}: why does the ${word} job time out?`,
        command: `grep -rn ${word} src/`,
        output: `src/${word}.ts:12: await lock.acquire()`,
        reply: `The ${word} job waits on a lock held by the nightly backup (turn ${s}.${t}).`,
        timing,
        lagMs: rng.int(100, 2_500),
        retried: rng.chance(0.15),
      });
    }
    sessions.push(turns);
  }
  return sessions;
}

/** One hook run, checked like Claude Code would see it. */
async function hook(p: Project, env: Record<string, string | undefined>, event: string, input: unknown, problems: string[]): Promise<void> {
  const r = await ms(["hook", event], { cwd: p.root, env, stdin: JSON.stringify(input), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
  kit.count("hook-runs");
  const problem = hookOutputProblem(r);
  if (problem) problems.push(`${event}: ${problem}`);
}

/**
 * A turn as Claude Code drives it: the user entry, UserPromptSubmit, the reply, Stop (maybe
 * twice). A lagging transcript gets the reply only after Stop fired (the next turn waits for it,
 * as the file stays in order); `written` means the whole transcript is on disk already.
 */
async function driveTurn(p: Project, env: Record<string, string | undefined>, t: Turn, problems: string[], written = false): Promise<void> {
  const base = { session_id: t.sessionId, transcript_path: t.transcript, cwd: p.root, prompt_id: t.promptId };
  if (!written && t.timing !== "never") appendTurn(t.transcript, t, "user");
  await hook(p, env, "user-prompt-submit", { ...base, hook_event_name: "UserPromptSubmit", prompt: t.prompt }, problems);
  if (!written && t.timing === "on-time") appendTurn(t.transcript, t, "reply");
  const stop = { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: t.reply };
  await Promise.all([hook(p, env, "stop", stop, problems), t.retried ? hook(p, env, "stop", stop, problems) : Promise.resolve()]);
  if (!written && t.timing === "lagging") {
    await Bun.sleep(t.lagMs);
    appendTurn(t.transcript, t, "reply");
  }
}

/** Exactly one note per turn, about that turn, and nothing else new; the queue empty. */
function checkNotes(p: Project, turns: Turn[], before: number): void {
  const anchors = anchorsOf(p.memory);
  const md = [...readMemory(p.memory).values()].join("\n");
  const notes = md.split(/^### /m);
  const counts = turns.map((t) => anchors.filter((a) => a.turn === t.uuid || a.turn === t.promptId).length);
  const wrong = turns.filter((_, i) => counts[i] !== 1).map((t, i) => `${t.promptId}: ${counts[i]} notes`);
  expect(wrong).toEqual([]);
  expect(anchors.length).toBe(before + turns.length);
  for (const t of turns) {
    const note = notes.find((n) => n.includes(` turn:${t.uuid} `) || n.includes(` turn:${t.promptId} `))!;
    expect(note).toContain(`session:${t.sessionId} `);
    expect(note).toContain(t.prompt.slice(0, 60));
    // Its own turn only: no other turn's words in it.
    for (const other of turns) if (other !== t) expect(note).not.toContain(other.prompt);
  }
  // Each anchor sits right under its `### HH:MM` heading and is followed by bullets.
  const lines = md.split("\n");
  lines.forEach((l, i) => {
    if (!l.startsWith("<!-- session:")) return;
    expect(lines[i - 1]).toMatch(/^### \d\d:\d\d$/);
    expect(lines[i + 1]).toMatch(/^- /);
  });
  expect(queued(p)).toEqual([]);
  const prompts = join(p.pending, "prompts");
  expect(existsSync(prompts) ? readdirSync(prompts) : []).toEqual([]);
  expect(existsSync(join(p.pending, "damaged"))).toBe(false);
  kit.count("turns", turns.length);
  kit.count("notes-checked", turns.length);
}

describe("concurrent Stop hooks", () => {
  test(
    `${SESSIONS} sessions × ${TURNS} turns at once, summarised by claude -p (echo): one note per turn, none lost, none duplicated`,
    tracked(kit, async () => {
      const p = kit.project({ env: { MEMSEARCH_NO_WATCH: "1" } });
      const bin = mkdtempSync(join(kit.base, "bin-"));
      writeFakeClaude(bin);
      const log = join(kit.base, "claude-log");
      const env = { ...p.env, PATH: `${bin}:${process.env.PATH}`, MEMSEARCH_SUMMARIZER_PROVIDER: "claude", FAKE_CLAUDE_MODE: "echo", FAKE_CLAUDE_LOG: log };
      const sessions = makeTurns(p, "seq", 1);
      const turns = sessions.flat();
      const before = anchorsOf(p.memory).length;
      const problems: string[] = [];
      const rng = kit.rngFor("seq pauses");
      // Sessions side by side; inside a session, turns one after the other (as Claude Code runs them).
      await Promise.all(
        sessions.map(async (s) => {
          for (const t of s) {
            await Bun.sleep(rng.int(0, 60));
            await driveTurn(p, env, t, problems);
          }
        }),
      );
      expect(problems).toEqual([]);
      expect(await drained(kit, p, 150_000)).toBe(true);
      checkNotes(p, turns, before);
      // Every note was summarised by the (fake) claude, whose notes name the turn's request.
      const calls = fakeClaudeCalls(log);
      expect(calls.length).toBeGreaterThanOrEqual(turns.length);
      for (const c of calls) expect(c.env.MEMSEARCH_DISABLE).toBe("1");
      kit.set("lagging", turns.filter((t) => t.timing === "lagging").length);
      kit.set("never-in-transcript", turns.filter((t) => t.timing === "never").length);
      kit.count("retried-stops", turns.filter((t) => t.retried).length);
      kit.set("summariser-calls", calls.length);
    }),
    240_000,
  );

  test(
    `burst: all ${SESSIONS * TURNS} turns fired together, extract summaries, the drainer holding the queue killed with SIGKILL at a seeded moment: still one note per turn`,
    tracked(kit, async () => {
      const p = kit.project({ env: { MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" } });
      const env = p.env;
      const sessions = makeTurns(p, "burst", 0);
      const turns = sessions.flat();
      // The transcripts are on disk before the hooks fire (their turns cannot be appended in order while all fire at once).
      for (const t of turns) {
        t.timing = "on-time";
        appendTurn(t.transcript, t, "all");
      }
      const before = anchorsOf(p.memory).length;
      const problems: string[] = [];
      // Kill whichever drainer holds the queue at a seeded moment, while the burst goes on.
      const killAfter = kit.rngFor("burst kill").int(50, 1_500);
      let killed = 0;
      const killer = (async () => {
        await Bun.sleep(killAfter);
        for (let i = 0; i < 100 && !killed; i++) {
          const lock = join(p.pending, ".drain.lock");
          const pid = existsSync(lock) ? Number(readFileSync(lock, "utf8").split(" ")[0]) : 0;
          if (pid > 0 && drainersIn(kit.tag, p.root).includes(pid)) {
            process.kill(pid, "SIGKILL");
            killed++;
          } else await Bun.sleep(20);
        }
      })();
      await Promise.all(turns.map((t) => driveTurn(p, env, t, problems, true)));
      await killer;
      kit.count("drainers-killed", killed);
      expect(problems).toEqual([]);
      // Whatever the killed drainer left is taken by the next one a hook starts (here: the next session's start).
      for (let i = 0; i < 600 && drainersIn(kit.tag, p.root).length; i++) await Bun.sleep(100);
      const start = await ms(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "next", cwd: p.root }) });
      expect(hookOutputProblem(start)).toBeUndefined();
      expect(await drained(kit, p, 150_000)).toBe(true);
      checkNotes(p, turns, before);
    }),
    240_000,
  );

  test(
    "two projects of one user at once: every note lands in its own project's memory and index, none in the other",
    tracked(kit, async () => {
      const a = kit.project({ env: { MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" } });
      // One user: the second project shares the first one's home (~/.memsearch, logs).
      const b = kit.project({ env: { ...a.env } });
      const projects = [a, b];
      const turnsOf = projects.map((p, i) => {
        const turns = makeTurns(p, `proj${i}`, 0).flat().slice(0, 10);
        for (const t of turns) {
          t.timing = "on-time";
          t.retried = false;
          appendTurn(t.transcript, t, "all");
        }
        return turns;
      });
      const before = projects.map((p) => anchorsOf(p.memory).length);
      const problems: string[] = [];
      await Promise.all(projects.flatMap((p, i) => turnsOf[i]!.map((t) => driveTurn(p, p.env, t, problems, true))));
      expect(problems).toEqual([]);
      for (const p of projects) expect(await drained(kit, p, 120_000)).toBe(true);
      for (let i = 0; i < 2; i++) {
        const p = projects[i]!;
        checkNotes(p, turnsOf[i]!, before[i]!);
        const other = turnsOf[1 - i]!;
        const md = [...readMemory(p.memory).values()].join("\n");
        for (const t of other) expect(md).not.toContain(t.promptId);
        // The other project's words are not in this project's index either; its own are.
        const wordOf = (t: Turn) => t.prompt.match(/the (\w+) job/)![1]!;
        const own = await ms(["search", wordOf(turnsOf[i]![0]!), "-j"], { cwd: p.root, env: p.env });
        expect(JSON.parse(own.stdout)[0].content).toContain(wordOf(turnsOf[i]![0]!));
        const r = await ms(["search", wordOf(other[0]!), "-j"], { cwd: p.root, env: p.env });
        expect(r.code).toBe(0);
        expect(JSON.stringify(JSON.parse(r.stdout))).not.toContain(wordOf(other[0]!));
      }
      kit.count("projects", 2);
    }),
    180_000,
  );
});

/**
 * Claude Code may run a Stop hook twice for one turn. Both queue entries must carry the prompt
 * UserPromptSubmit recorded: a turn the transcript never gets is written from them. (Found when
 * the first Stop took the prompt away and the second rewrote the entry without it.) Here the
 * queue is held, which makes the order deterministic; the sweep above covers the races.
 */
describe("a retried Stop", () => {
  test(
    "a Stop retried for a turn the transcript never gets keeps the prompt UserPromptSubmit recorded",
    tracked(kit, async () => {
      const p = kit.project({ memory: "none", env: { MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" } });
      // Held as a live drainer would hold it: the Stops only queue, in this order.
      mkdirSync(p.pending, { recursive: true });
      const lock = join(p.pending, ".drain.lock");
      writeFileSync(lock, liveLockContent());
      const transcript = join(p.root, "never.jsonl");
      writeFileSync(transcript, "");
      const base = { session_id: "retry-s", prompt_id: "retry-p", transcript_path: transcript, cwd: p.root };
      const problems: string[] = [];
      await hook(p, p.env, "user-prompt-submit", { ...base, hook_event_name: "UserPromptSubmit", prompt: "Why does the okapi job time out?" }, problems);
      const stop = { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: "It waits on a lock." };
      await hook(p, p.env, "stop", stop, problems);
      await hook(p, p.env, "stop", stop, problems);
      expect(problems).toEqual([]);
      rmSync(lock);
      const drain = await ms(["hook", "drain"], { cwd: p.root, env: p.env, hangMs: 90_000 });
      expect(drain.code).toBe(0);
      const notes = [...readMemory(p.memory).values()].join("\n");
      expect(notes).toContain(" turn:retry-p ");
      expect(notes).toContain("Why does the okapi job time out?");
      // Written, so the recorded prompt is no longer needed.
      expect(existsSync(join(p.pending, "prompts"))).toBe(true);
      expect(readdirSync(join(p.pending, "prompts"))).toEqual([]);
    }),
    120_000,
  );
});
