/**
 * Fault injection 1: the four Claude Code hooks fed hostile stdin (random bytes, truncated and
 * wrong-typed JSON, huge fields, invalid UTF-8, a FIFO / a directory / a missing file as the
 * transcript, a cwd that does not exist, a stdin that never closes) through the compiled binary.
 * Every run must exit 0 with exactly one JSON object on stdout before its hang limit (the hook's
 * budget plus a few seconds), create nothing at a missing cwd, and leave no absurd file name or
 * markdown line behind. Then the drainer is run on a queue whose turn names a FIFO: it finishes.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { anchorsIn } from "../../src/core/anchor.ts";
import {
  allNames,
  anchorsOf,
  BIN,
  drained,
  faultKit,
  HANG_SLACK_MS,
  HOOK_BUDGET_MS,
  HOOKS,
  hookOutputProblem,
  ms,
  queued,
  readMemory,
  runCmd,
  tracked,
  type Project,
  type RunResult,
  liveLockContent,
} from "./helpers.ts";

const kit = faultKit("hook-fuzz");
const rng = kit.rng;
const enc = new TextEncoder();

interface FuzzInput {
  label: string;
  bytes: Uint8Array;
  /** Paths that must still not exist after the hook ran (a missing cwd). */
  mustNotExist?: string[];
  /** A Stop with this input is a real turn: its note must appear, anchored to this transcript path. */
  turnTranscript?: string;
  /** Leave stdin open after writing (a client that never closes it). */
  keepOpen?: boolean;
}

const FIFO = join(kit.base, "transcript.fifo");
const DIR_T = join(kit.base, "transcript-dir.jsonl");
const MISSING_T = join(kit.base, "gone", "transcript.jsonl");
const NO_CWD = join(kit.base, "no-such-cwd", "deep", "er");
const A_FILE = join(kit.base, "a-file.txt");

const ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-_/.\\ :*?\"<>|%$~éü中文🙂";
const bigId = (n: number) => rng.string(n, ID_CHARS);
const json = (o: unknown) => enc.encode(JSON.stringify(o));

/** A realistic hook input, as Claude Code sends it. */
function realistic(i: number): Record<string, unknown> {
  return {
    session_id: `fz-${i}-${rng.string(8)}`,
    prompt_id: `pr-${i}-${rng.string(8)}`,
    transcript_path: MISSING_T,
    cwd: NO_CWD,
    hook_event_name: "Stop",
    prompt: `fuzz prompt number ${i}: why does the ${rng.string(6)} job time out?`,
    last_assistant_message: `It waits on a lock (${rng.string(6)}).`,
    stop_hook_active: false,
  };
}

/** Raw JSON text with invalid UTF-8 bytes spliced into its string values. */
function invalidUtf8(i: number): Uint8Array {
  const bad = [[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf4, 0x90, 0x80, 0x80]];
  const parts: number[] = [];
  const push = (s: string) => parts.push(...enc.encode(s));
  const junk = () => parts.push(...rng.pick(bad));
  push('{"session_id":"bad-');
  junk();
  push(`-${i}","prompt_id":"p-`);
  junk();
  push('","prompt":"why is the ');
  junk();
  junk();
  push(' build red?","last_assistant_message":"It is ');
  junk();
  push(`","transcript_path":"${MISSING_T}`);
  junk();
  push('","cwd":"/nonexistent-');
  junk();
  push('"}');
  return Uint8Array.from(parts);
}

function wrongTyped(): unknown {
  const values = [42, -1.5e308, true, null, [], ["x"], { a: 1 }, "", 0, [[[]]], { session_id: "nested" }, 1e21];
  const o: Record<string, unknown> = {};
  for (const k of ["session_id", "prompt_id", "transcript_path", "cwd", "prompt", "last_assistant_message", "stop_hook_active", "hook_event_name", "source", "reason"]) {
    if (rng.chance(0.8)) o[k] = rng.pick(values);
  }
  return o;
}

function buildInputs(): FuzzInput[] {
  const out: FuzzInput[] = [];
  // Random bytes.
  for (const n of [0, 1, rng.int(2, 64), rng.int(64, 4096), 65_536]) out.push({ label: `random ${n} bytes`, bytes: rng.bytes(n) });
  // Truncated JSON.
  for (let i = 0; i < 6; i++) {
    const text = JSON.stringify(realistic(i));
    out.push({ label: `truncated JSON (${i})`, bytes: enc.encode(text.slice(0, rng.int(1, text.length - 1))) });
  }
  // Wrong types, and JSON that is not an object.
  for (let i = 0; i < 6; i++) out.push({ label: `wrong-typed fields (${i})`, bytes: json(wrongTyped()) });
  for (const v of ["[1,2,3]", "42", '"a string"', "null", "true", '{"__proto__":{"session_id":"x"},"constructor":{"prototype":1}}', '{"session_id":"dup","session_id":7}'])
    out.push({ label: `JSON ${v.slice(0, 20)}`, bytes: enc.encode(v) });
  out.push({ label: "UTF-8 BOM before the object", bytes: Uint8Array.from([0xef, 0xbb, 0xbf, ...json(realistic(90))]) });
  out.push({ label: "NUL characters in every field", bytes: json({ session_id: "a\u0000b", prompt_id: "\u0000", cwd: `${NO_CWD}\u0000`, transcript_path: `${FIFO}\u0000x`, prompt: "why \u0000 nul?", last_assistant_message: "\u0000" }) });
  out.push({ label: "nested 100,000 deep", bytes: enc.encode("[".repeat(100_000) + "]".repeat(100_000)) });
  out.push({ label: "object nested 50,000 deep", bytes: enc.encode('{"a":'.repeat(50_000) + "1" + "}".repeat(50_000)) });
  // Huge fields.
  out.push({ label: "100,000-char session_id", bytes: json({ ...realistic(100), session_id: bigId(100_000), cwd: undefined }), turnTranscript: MISSING_T });
  out.push({ label: "100,000-char prompt_id", bytes: json({ ...realistic(101), prompt_id: bigId(100_000), cwd: undefined }), turnTranscript: MISSING_T });
  out.push({ label: "10 MB prompt", bytes: json({ ...realistic(102), prompt: "why " + rng.string(1000).repeat(10_240), cwd: undefined }) });
  out.push({ label: "10 MB last_assistant_message", bytes: json({ ...realistic(103), last_assistant_message: rng.string(1000, "ab \n").repeat(10_240), cwd: undefined }) });
  out.push({ label: "5,000-char transcript_path and cwd", bytes: json({ ...realistic(104), transcript_path: "/" + "t".repeat(5_000), cwd: "/" + "c".repeat(5_000) }), mustNotExist: ["/" + "c".repeat(255)] });
  out.push({ label: "17 MB of stdin (over the read limit)", bytes: enc.encode(JSON.stringify({ prompt: "x".repeat(17 * 1024 * 1024) })) });
  // Invalid UTF-8.
  for (let i = 0; i < 4; i++) out.push({ label: `invalid UTF-8 (${i})`, bytes: invalidUtf8(i) });
  // Transcript paths that are not transcripts; cwds that are not folders.
  out.push({ label: "transcript_path is a FIFO", bytes: json({ ...realistic(200), transcript_path: FIFO, cwd: undefined }), turnTranscript: FIFO });
  out.push({ label: "transcript_path is a directory", bytes: json({ ...realistic(201), transcript_path: DIR_T, cwd: undefined }), turnTranscript: DIR_T });
  out.push({ label: "transcript_path is missing", bytes: json({ ...realistic(202), transcript_path: MISSING_T, cwd: undefined }), turnTranscript: MISSING_T });
  out.push({ label: "cwd does not exist", bytes: json({ ...realistic(203), transcript_path: FIFO }), mustNotExist: [NO_CWD, join(kit.base, "no-such-cwd")], turnTranscript: FIFO });
  out.push({ label: "relative cwd that does not exist", bytes: json({ ...realistic(204), cwd: "no/such/relative/dir" }), mustNotExist: ["no"] });
  out.push({ label: "cwd is a file", bytes: json({ ...realistic(205), cwd: A_FILE }) });
  out.push({ label: "cwd is a FIFO", bytes: json({ ...realistic(206), cwd: FIFO }) });
  // A client that never closes stdin: a whole object, and half of one.
  out.push({ label: "stdin never closed (whole object)", bytes: json({ ...realistic(300), cwd: undefined }), keepOpen: true });
  out.push({ label: "stdin never closed (half an object)", bytes: enc.encode('{"session_id":"open","prompt":"why'), keepOpen: true });
  return out;
}

/** Like runCmd, but stdin stays open until the process has exited. */
async function runKeepOpen(event: string, p: Project, bytes: Uint8Array, hangMs: number): Promise<RunResult> {
  const t0 = performance.now();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...p.env, MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" })) if (v !== undefined) env[k] = v;
  const proc = Bun.spawn([BIN, "hook", event], { cwd: p.root, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  proc.stdin.write(bytes);
  proc.stdin.flush();
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    proc.kill(9);
  }, hangMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  try {
    proc.stdin.end();
  } catch {}
  return { code, stdout, stderr, hung, ms: performance.now() - t0 };
}

const inputs = buildInputs();
const longestMs = new Map<string, number>();

beforeAll(() => {
  expect(Bun.spawnSync(["mkfifo", FIFO]).exitCode).toBe(0);
  mkdirSync(join(DIR_T, "sub"), { recursive: true });
  writeFileSync(A_FILE, "not a folder");
});

interface FuzzRun {
  failures: string[];
  /** Every project the hook ran in. */
  projects: Project[];
  /** Stop only: the project of each input (their drainers run side by side). */
  stopProjects: { p: Project; input: FuzzInput }[];
}

/** Every hostile input through one hook, two at a time (the machine has two cores and each run is one process). */
async function fuzz(event: string): Promise<FuzzRun> {
  const hangMs = HOOK_BUDGET_MS[event]! + HANG_SLACK_MS;
  const run: FuzzRun = { failures: [], projects: [], stopProjects: [] };
  // One indexed project for a hook but Stop (the prompt hook's cold search has an index to load);
  // every Stop input gets a project of its own.
  let shared: Project | undefined;
  if (event !== "stop") {
    shared = kit.project({ env: { MEMSEARCH_NO_WATCH: "1" } });
    const r = await ms(["index"], { cwd: shared.root, env: shared.env });
    expect(r.code).toBe(0);
    run.projects.push(shared);
  }
  const queue = [...inputs];
  const worker = async () => {
    for (let input = queue.shift(); input; input = queue.shift()) {
      let p = shared;
      if (!p) {
        p = kit.project({ memory: "none" });
        run.projects.push(p);
        run.stopProjects.push({ p, input });
      }
      const env = { ...p.env, MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" };
      const r = input.keepOpen ? await runKeepOpen(event, p, input.bytes, hangMs) : await runCmd([BIN, "hook", event], { cwd: p.root, env, stdin: input.bytes, hangMs });
      kit.count("inputs");
      longestMs.set(event, Math.max(longestMs.get(event) ?? 0, r.ms));
      const problem = hookOutputProblem(r);
      if (problem) run.failures.push(`${event} / ${input.label}: ${problem} (stderr: ${r.stderr.slice(0, 200)})`);
      if (r.stderr.trim()) run.failures.push(`${event} / ${input.label}: wrote to stderr: ${r.stderr.slice(0, 200)}`);
      for (const path of input.mustNotExist ?? []) {
        const abs = path.startsWith("/") ? path : join(p.root, path);
        if (existsSync(abs)) run.failures.push(`${event} / ${input.label}: created ${abs}`);
      }
    }
  };
  await Promise.all([worker(), worker()]);
  kit.set("slowest-ms", [...longestMs].map(([e, m]) => `${e}:${Math.round(m)}`).join(","));
  return run;
}

const runs = new Map<string, Promise<FuzzRun>>();
/** A hook's fuzzing, run once: by its own test or by the check of what the Stop drainers wrote, whichever comes first. */
function fuzzed(event: string): Promise<FuzzRun> {
  let r = runs.get(event);
  if (!r) runs.set(event, (r = fuzz(event)));
  return r;
}

/** The longest file name (in bytes) below the projects' folders and homes. */
function longestName(projects: Project[]): number {
  return Math.max(0, ...projects.flatMap((p) => [...allNames(p.root), ...allNames(p.home)]).map((n) => Buffer.byteLength(n)));
}

/** Nothing made at a missing cwd, whatever the input said. */
function expectNoMissingCwdMade(): void {
  expect(existsSync(join(kit.base, "no-such-cwd"))).toBe(false);
  expect(existsSync("/" + "c".repeat(255))).toBe(false);
}

describe("hook fuzzing", () => {
  for (const event of HOOKS) {
    test(
      `${event}: every hostile input → exit 0, one JSON object, inside the budget`,
      tracked(kit, async () => {
        const run = await fuzzed(event);
        expect(run.failures).toEqual([]);
        expectNoMissingCwdMade();
        // File names: nothing near the 255-byte limit, whatever the ids were.
        expect(longestName(run.projects)).toBeLessThanOrEqual(120);
      }),
      240_000,
    );
  }

  test(
    "no folder at a missing cwd, no absurd file name, and every real Stop turn written once",
    tracked(kit, async () => {
      const { stopProjects } = await fuzzed("stop");
      // Every Stop's drainer finishes (the FIFO, directory and missing transcripts are waited for, then the hooks' record is used).
      const done = await Promise.all(stopProjects.map(({ p }) => drained(kit, p, 120_000)));
      expect(done.every(Boolean)).toBe(true);
      for (const { p } of stopProjects) expect(queued(p)).toEqual([]);
      expectNoMissingCwdMade();
      // File names, now that the drainers have written the notes too.
      const longest = longestName(stopProjects.map(({ p }) => p));
      kit.set("longest-file-name", longest);
      expect(longest).toBeLessThanOrEqual(120);
      // Markdown: no line carries a 100k id or a 10 MB text; every anchor's fields stay short.
      let longestLine = 0;
      for (const { p } of stopProjects) {
        for (const [, md] of readMemory(p.memory)) {
          for (const line of md.split("\n")) longestLine = Math.max(longestLine, line.length);
          for (const a of anchorsIn(md)) {
            expect(a.session.length).toBeLessThanOrEqual(120);
            expect(a.turn.length).toBeLessThanOrEqual(120);
          }
        }
      }
      kit.set("longest-markdown-line", longestLine);
      expect(longestLine).toBeLessThanOrEqual(1_000);
      // A turn whose transcript is a FIFO, a directory or missing is written from what the hooks saw, once.
      let turns = 0;
      for (const { p, input } of stopProjects) {
        if (!input.turnTranscript) continue;
        const anchors = anchorsOf(p.memory);
        expect(anchors.length).toBe(1);
        expect(anchors[0]!.transcript).toBe(input.turnTranscript);
        turns++;
      }
      kit.set("stop-turns-written", turns);
      expect(turns).toBeGreaterThanOrEqual(5);
    }),
    // The Stop fuzzing itself, when this check is the first to ask for it, then the drains.
    420_000,
  );
});

describe("the drainer and a FIFO transcript", () => {
  test(
    "`memsearch hook drain` on a queue whose turn names a FIFO finishes, writes the turn once and lets go of the queue",
    tracked(kit, async () => {
      const p = kit.project({ memory: "none" });
      const env = { ...p.env, MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" };
      // Hold the queue as a live drainer would, so the Stop hook only queues.
      mkdirSync(p.pending, { recursive: true });
      const lock = join(p.pending, ".drain.lock");
      writeFileSync(lock, liveLockContent());
      const input = { session_id: "fifo-s", prompt_id: "fifo-p", transcript_path: FIFO, cwd: p.root, last_assistant_message: "The FIFO was never opened." };
      await ms(["hook", "user-prompt-submit"], { cwd: p.root, env, stdin: JSON.stringify({ ...input, prompt: "does the drainer open a FIFO transcript?" }) });
      const stop = await ms(["hook", "stop"], { cwd: p.root, env, stdin: JSON.stringify(input), hangMs: HOOK_BUDGET_MS.stop! + HANG_SLACK_MS });
      expect(hookOutputProblem(stop)).toBeUndefined();
      expect(queued(p)).toHaveLength(1);
      expect(readFileSync(lock, "utf8")).toStartWith(String(process.pid));
      rmSync(lock);
      // The drainer waits (bounded) for the transcript, then writes from the hooks' record.
      const drain = await ms(["hook", "drain"], { cwd: p.root, env, hangMs: 90_000 });
      kit.count("fifo-drains");
      expect(drain.hung).toBe(false);
      expect(drain.code).toBe(0);
      expect(queued(p)).toEqual([]);
      expect(existsSync(lock)).toBe(false);
      const anchors = anchorsOf(p.memory);
      expect(anchors.map((a) => [a.session, a.turn, a.transcript])).toEqual([["fifo-s", "fifo-p", FIFO]]);
      expect([...readMemory(p.memory).values()].join("\n")).toContain("does the drainer open a FIFO transcript?");
      // The next Stop of the project is not blocked by anything the first drainer left.
      expect(readdirSync(p.pending).filter((n) => n.startsWith(".drain"))).toEqual([]);
    }),
    120_000,
  );
});
