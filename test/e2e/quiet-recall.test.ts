/**
 * The prompt hook speaks only to a person, once per memory per session, within its budget, and
 * leaves a record of every decision (issue 21), through the compiled binary (MEMSEARCH_BIN or
 * dist/memsearch). The sample memory, keyword search only; no watch process.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { InjectionRecordSchema, type InjectionRecord } from "../../src/memory/injections.ts";
import { indexedProject, type Project } from "../helpers/cli.ts";

const projects: Project[] = [];
afterAll(() => {
  for (const p of projects) for (const d of [p.root, p.home]) rmSync(d, { recursive: true, force: true });
});

const REDIS = "what did we decide about the redis connection pool?";

async function project() {
  const p = await indexedProject({ env: { MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract", TZ: "UTC" } });
  projects.push(p);
  let n = 0;
  const prompt = async (text: string, input: Record<string, unknown> = {}, env: Record<string, string | undefined> = {}) => {
    const r = await p.ms(["hook", "user-prompt-submit"], env, JSON.stringify({ session_id: "s-1", prompt_id: `p-${++n}`, prompt: text, cwd: p.root, ...input }));
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    return { json, ctx: json.hookSpecificOutput?.additionalContext as string | undefined };
  };
  /** The injection log, each line checked against the one schema. */
  const records = (): InjectionRecord[] => {
    const file = join(p.root, ".memsearch", "injections.jsonl");
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => v.parse(InjectionRecordSchema, JSON.parse(l)));
  };
  return { p, prompt, records };
}

describe("only prompts a person typed get memories", () => {
  test("loop and schedule wake-ups, system turns and poll events get nothing; typed, -p and unlabelled prompts do", async () => {
    const { prompt, records } = await project();
    for (const source of ["loop_wakeup", "schedule_wakeup", "system", "poll_event", "some_future_source"]) {
      expect((await prompt(REDIS, { source, session_id: `s-${source}` })).json).toEqual({});
    }
    for (const source of ["user", "sdk", undefined]) {
      expect((await prompt(REDIS, { source, session_id: `s-${source}` })).ctx).toContain("Redis connection pool");
    }
    const log = records();
    expect(log.map((r) => [r.source, r.decision])).toEqual([
      ["loop_wakeup", "skipped"],
      ["schedule_wakeup", "skipped"],
      ["system", "skipped"],
      ["poll_event", "skipped"],
      ["some_future_source", "skipped"],
      ["user", "injected"],
      ["sdk", "injected"],
      [undefined, "injected"],
    ]);
    expect(log[0]!.reason).toBe("source loop_wakeup: not typed by a person");
    // Nothing was searched for a wake-up.
    expect(log[0]!.considered).toEqual([]);
  });

  test("a wake-up's turn is still captured, its source in the note's heading", async () => {
    const { p } = await project();
    const input = { session_id: "s-loop", prompt_id: "p-loop", cwd: p.root, transcript_path: join(p.root, "missing.jsonl") };
    expect((await p.ms(["hook", "user-prompt-submit"], {}, JSON.stringify({ ...input, prompt: "check the deploy queue again", source: "loop_wakeup" }))).stdout.trim()).toBe("{}");
    expect((await p.ms(["hook", "stop"], { MEMSEARCH_NO_WATCH: "1" }, JSON.stringify({ ...input, last_assistant_message: "The deploy queue is empty." }))).code).toBe(0);
    // The drainer writes the note a moment later (it waits for the transcript first).
    let md = "";
    for (let i = 0; i < 300 && !md.includes("deploy queue"); i++) {
      await Bun.sleep(100);
      md = readdirSync(p.memory)
        .filter((f) => f.endsWith(".md"))
        .map((f) => readFileSync(join(p.memory, f), "utf8"))
        .join("\n");
    }
    expect(md).toMatch(/### \d\d:\d\d \(source: loop_wakeup\)\n<!-- session:s-loop turn:p-loop /);
    expect(md).toContain("check the deploy queue again");
  }, 60_000);
});

describe("a memory is given once per session", () => {
  test("the same question twice: injected once, the log and the debug log say why; another session gets it; it comes back after five prompts", async () => {
    const { p, prompt, records } = await project();
    const first = await prompt(REDIS, {}, { MEMSEARCH_DEBUG: "1" });
    expect(first.ctx).toContain("Redis connection pool");
    const hash = /memsearch expand ([0-9a-f]{16})/.exec(first.ctx!)![1]!;
    const second = await prompt(REDIS, {}, { MEMSEARCH_DEBUG: "1" });
    expect(second.json).toEqual({});
    const [a, b] = records();
    expect(a!.considered.find((c) => c.id === hash)!.outcome).toBe("injected");
    expect(b!.decision).toBe("nothing");
    expect(b!.reason).toBe("every memory through the gate was given in this session's last prompts");
    expect(b!.considered.find((c) => c.id === hash)!.outcome).toBe("repeated");
    const logs = join(p.home, ".memsearch", "logs");
    const debug = readdirSync(logs).map((f) => readFileSync(join(logs, f), "utf8")).join("");
    expect(debug).toContain(`chunk ${hash} was given 1 prompt ago in this session: not again`);
    // Another session has not seen it.
    expect((await prompt(REDIS, { session_id: "s-2" })).ctx).toContain(hash);
    // Five more prompts of the first session, and the memory may be given again.
    for (let i = 0; i < 4; i++) expect((await prompt(`unrelated question number ${i} about nothing`)).json).toEqual({});
    expect((await prompt(REDIS)).ctx).toContain(hash);
  }, 60_000);
});

describe("one budget per prompt", () => {
  test("1,500 characters by default, each memory one quoted line with its date and expand handle; a smaller budget drops whole lines, on record", async () => {
    const { prompt, records } = await project();
    const wide = { MEMSEARCH_HOOKS_INJECT_TOP_K: "10", MEMSEARCH_HOOKS_INJECT_MIN_SCORE: "0" };
    const all = await prompt("redis pool deploy fly checkout test translation health checks", { session_id: "s-a" }, wide);
    expect(all.ctx!.length).toBeLessThanOrEqual(1500);
    const lines = all.ctx!.split("\n").slice(1);
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(l).toMatch(/^- 2026-11-2[01] \d\d:\d\d · memsearch expand [0-9a-f]{16} · \(from the repository\) ".*"$/);
    const small = await prompt("redis pool deploy fly checkout test translation health checks", { session_id: "s-b" }, { ...wide, MEMSEARCH_HOOKS_INJECT_MAX_CHARS: "500" });
    expect(small.ctx!.length).toBeLessThanOrEqual(500);
    expect(small.ctx!.split("\n").length).toBeLessThan(lines.length + 1);
    const rec = records().at(-1)!;
    expect(rec.chars).toBe(small.ctx!.length);
    expect(rec.considered.filter((c) => c.outcome === "injected").length).toBe(small.ctx!.split("\n").length - 1);
    expect(rec.considered.some((c) => c.outcome === "over-budget")).toBe(true);
  });
});

describe("every decision on record", () => {
  test("each prompt leaves one line: session, prompt id, source, mode, what was considered with scores, characters, or why nothing", async () => {
    const { prompt, records } = await project();
    await prompt(REDIS, { source: "user" });
    await prompt("ok");
    await prompt(REDIS, { session_id: "s-hint" }, { MEMSEARCH_HOOKS_RECALL: "hint" });
    await prompt(REDIS, { session_id: "s-off" }, { MEMSEARCH_HOOKS_RECALL: "off" });
    await prompt("zebra quantum marmalade", { session_id: "s-none" });
    const log = records();
    expect(log.length).toBe(5);
    const [injected, trivial, hint, off, none] = log;
    expect(injected).toMatchObject({ session: "s-1", prompt: "p-1", source: "user", mode: "inject", search: "bm25", decision: "injected" });
    expect(injected!.chars).toBeGreaterThan(0);
    const given = injected!.considered.filter((c) => c.outcome === "injected");
    expect(given.length).toBeGreaterThan(0);
    for (const c of given) {
      expect(c.score).toBeGreaterThanOrEqual(0.5);
      expect(c.fromRepository).toBe(true);
      expect(c.date).toMatch(/^2026-11-2[01] \d\d:\d\d$/);
    }
    expect(trivial).toMatchObject({ decision: "skipped", reason: "trivial prompt", chars: 0 });
    expect(hint).toMatchObject({ mode: "hint", decision: "hint" });
    expect(hint!.chars).toBeGreaterThan(0);
    expect(off).toMatchObject({ mode: "off", decision: "skipped", reason: "hooks.recall is off" });
    expect(none).toMatchObject({ decision: "nothing", chars: 0 });
  });

  test("the log is redacted", async () => {
    const { p, prompt } = await project();
    const key = `sk-ant-api03-${"Z".repeat(60)}`;
    await prompt(REDIS, { session_id: key });
    const text = readFileSync(join(p.root, ".memsearch", "injections.jsonl"), "utf8");
    expect(text).not.toContain("ZZZZZZZZ");
    expect(text).toContain("[REDACTED:anthropic-key]");
  });
});

describe("memsearch debug --injections", () => {
  test("the last decisions, one line each with what was considered; -j gives the records; none yet is said so", async () => {
    const { p, prompt } = await project();
    expect((await p.ms(["debug", "--injections"])).stdout).toContain("No prompt hook decision recorded yet");
    await prompt(REDIS, { source: "user" });
    await prompt("zebra quantum marmalade");
    await prompt(REDIS, { source: "loop_wakeup", session_id: "s-loop" });
    const text = await p.ms(["debug", "--injections", "--lines", "2"]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split("\n");
    expect(lines[0]).toStartWith("Last 2 decisions of the prompt hook (");
    expect(text.stdout).not.toContain("s-1/p-1 (user)");
    expect(text.stdout).toMatch(/s-1\/p-2 inject: nothing, 0 chars \(nothing through the gate\)/);
    expect(text.stdout).toContain("s-loop/p-3 (loop_wakeup) inject: skipped, 0 chars (source loop_wakeup: not typed by a person)");
    const json = JSON.parse((await p.ms(["debug", "--injections", "-j"])).stdout);
    expect(json.records.length).toBe(3);
    expect(json.records[0]).toMatchObject({ session: "s-1", prompt: "p-1", source: "user", decision: "injected" });
    expect(json.records[0].considered[0]).toMatchObject({ kind: "note", outcome: "injected", from_repository: true });
  });
});
