/**
 * Fault injection 7: a full disk. Where `mount -t tmpfs` works (root, Linux), a small tmpfs is
 * filled to the last page under the data folder or under the memory folder alone; everywhere, a
 * file-size limit (`ulimit -f` in a `sh -c` wrapper that ignores SIGXFSZ, so writes fail with
 * EFBIG instead of killing the process) stands in for it. `index` and `remember` then fail with
 * one clear line and a non-zero exit, the hooks exit 0 with their JSON, the markdown is byte for
 * byte what it was (never half-written), and a turn queued while the disk was full is written
 * once there is room again — exactly once.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, closeSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { INDEX_FILE } from "../../src/index/format.ts";
import { checkIndex } from "../../src/index/disk.ts";
import { anchorsOf, BIN, drained, drainersIn, faultKit, HANG_SLACK_MS, HOOK_BUDGET_MS, hookOutputProblem, ms, queued, readMemory, REPO, runCmd, sameSnapshot, snapshot, stderrLines, tracked, type Project, type Rng, type RunResult, liveLockContent } from "./helpers.ts";
import { appendTurn } from "./transcript.ts";
import { errCode } from "../../src/core/errors.ts";

const kit = faultKit("disk-full");

const pad = (n: number) => String(n).padStart(2, "0");
const dayFile = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}.md`;
const DISK_FULL = /disk full|no space left|ENOSPC/i;
const TOO_LARGE = /file too large|EFBIG/i;

// ---------------------------------------------------------------------------------------------
// tmpfs

let tmpfsWorks = false;
const mounts: string[] = [];

function mountTmpfs(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  const r = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdout: "ignore", stderr: "ignore" });
  if (r.exitCode !== 0) return false;
  mounts.push(dir);
  return true;
}

kit.onCleanup(() => {
  for (const dir of mounts.reverse()) Bun.spawnSync(["umount", "-l", dir], { stdout: "ignore", stderr: "ignore" });
});

/** Write a filler file until the file system says no more: not one free page left. */
function fill(dir: string): string {
  const file = join(dir, ".filler");
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  try {
    for (let i = 0; i < 100_000; i++) writeSync(fd, chunk);
  } catch (e) {
    expect(errCode(e)).toBe("ENOSPC");
  }
  // The last partial page too.
  try {
    for (let i = 0; i < 100_000; i++) writeSync(fd, Buffer.alloc(512, 0x61));
  } catch {}
  closeSync(fd);
  kit.count("disks-filled");
  return file;
}

beforeAll(() => {
  const probe = join(kit.base, "probe-mount");
  tmpfsWorks = process.platform === "linux" && mountTmpfs(probe, "64k");
  kit.set("tmpfs", tmpfsWorks ? "yes" : "no (ulimit -f only)");
});

// ---------------------------------------------------------------------------------------------

function envOf(p: Project, extra: Record<string, string | undefined> = {}) {
  return { ...p.env, MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract", ...extra };
}

/** One clear line on stderr, no stack trace. */
function oneLine(r: RunResult, what: RegExp): void {
  const lines = stderrLines(r.stderr);
  expect(lines.length).toBe(1);
  expect(lines[0]).toMatch(/^Error: /);
  expect(lines[0]).toMatch(what);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

/** Turns so far, per project. */
const turnsIn = new Map<string, number>();
/** UserPromptSubmit then Stop for a new turn whose transcript (outside the full disk) holds it. */
async function turn(p: Project, env: Record<string, string | undefined>, rng: Rng, wrap: (cmd: string[]) => string[] = (c) => c) {
  const n = (turnsIn.get(p.root) ?? 0) + 1;
  turnsIn.set(p.root, n);
  const t = { sessionId: `full-s${n}`, uuid: `full-u${n}-${rng.string(6)}`, promptId: `full-p${n}-${rng.string(6)}`, prompt: `Turn ${n}: why is the disk full?`, command: "df -h", output: "tmpfs 100%", reply: `The filler file takes all of it (turn ${n}).` };
  const transcript = join(p.root, `t${n}.jsonl`);
  appendTurn(transcript, t, "all");
  const input = { session_id: t.sessionId, prompt_id: t.promptId, transcript_path: transcript, cwd: p.root };
  for (const [event, extra] of [
    ["user-prompt-submit", { prompt: t.prompt }],
    ["stop", { last_assistant_message: t.reply }],
  ] as const) {
    const r = await runCmd(wrap([BIN, "hook", event]), { cwd: p.root, env, stdin: JSON.stringify({ ...input, ...extra }), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
    kit.count("hook-runs");
    expect(hookOutputProblem(r)).toBeUndefined();
  }
  return t;
}

async function allHooks(p: Project, env: Record<string, string | undefined>, rng: Rng, wrap: (cmd: string[]) => string[] = (c) => c): Promise<void> {
  for (const event of ["session-start", "session-end"]) {
    const r = await runCmd(wrap([BIN, "hook", event]), { cwd: p.root, env, stdin: JSON.stringify({ session_id: "full-x", cwd: p.root }), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
    kit.count("hook-runs");
    expect(hookOutputProblem(r)).toBeUndefined();
  }
  await turn(p, env, rng, wrap);
}

/** Wait (bounded) until no drainer of the kit works in the project. */
async function drainersGone(p: Project): Promise<void> {
  for (let i = 0; i < 300 && drainersIn(kit.tag, p.root).length; i++) await Bun.sleep(100);
  expect(drainersIn(kit.tag, p.root)).toEqual([]);
}

const tmpLeft = (p: Project) => (existsSync(p.indexDir) ? readdirSync(p.indexDir).filter((n) => n.includes(".tmp-")) : []);

describe("a full tmpfs", () => {
  test(
    "the whole data folder full: index and remember fail with one line, hooks exit 0, markdown untouched; all works again once there is room",
    tracked(kit, async () => {
      const rng = kit.rngFor("whole data folder full");
      if (!tmpfsWorks) return void kit.count("skipped-tmpfs");
      const p = kit.project({ memory: "none" });
      expect(mountTmpfs(p.dataDir, "1m")).toBe(true);
      cpSync(join(REPO, "sample", "memory"), p.memory, { recursive: true });
      const env = envOf(p);
      expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
      appendFileSync(join(p.memory, "2026-11-21.md"), "\n### 18:00\n- The stale note about the zebra deploy window.\n");
      const filler = fill(p.dataDir);
      const before = snapshot(p.memory);
      const indexBefore = readFileSync(join(p.indexDir, INDEX_FILE));

      const index = await ms(["index"], { cwd: p.root, env });
      kit.count("commands-on-full-disk");
      expect(index.code).not.toBe(0);
      oneLine(index, DISK_FULL);
      expect(readFileSync(join(p.indexDir, INDEX_FILE)).equals(indexBefore)).toBe(true);
      expect(tmpLeft(p)).toEqual([]);

      const remember = await ms(["remember", "The release train leaves at noon."], { cwd: p.root, env });
      kit.count("commands-on-full-disk");
      expect(remember.code).not.toBe(0);
      oneLine(remember, DISK_FULL);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);

      await allHooks(p, env, rng);
      await drainersGone(p);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);
      const search = await ms(["search", "redis connection pool", "-j"], { cwd: p.root, env });
      expect(search.code).toBe(0);
      expect(JSON.parse(search.stdout)[0].content).toContain("Redis connection pool");

      // A few pages free: the change is one small segment after the base, which fits (the whole index
      // written again, as before segments, did not): the note is indexed, the base is not rewritten.
      truncateSync(filler, statSync(filler).size - 16 * 1024);
      const partly = await ms(["index"], { cwd: p.root, env });
      kit.count("commands-on-full-disk");
      expect(partly.code).toBe(0);
      expect(readFileSync(join(p.indexDir, INDEX_FILE)).equals(indexBefore)).toBe(true);
      expect(checkIndex(p.indexDir).state).toBe("ok");
      expect(tmpLeft(p)).toEqual([]);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);
      const zebra = await ms(["search", "stale note zebra deploy window", "-j"], { cwd: p.root, env });
      expect(JSON.parse(zebra.stdout)[0].content).toContain("zebra deploy window");

      // Room again.
      rmSync(filler);
      expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
      expect(checkIndex(p.indexDir).state).toBe("ok");
      const r2 = await ms(["remember", "The release train leaves at noon."], { cwd: p.root, env });
      expect(r2.code).toBe(0);
      const t = await turn(p, env, rng);
      expect(await drained(kit, p, 60_000)).toBe(true);
      expect(anchorsOf(p.memory).filter((a) => a.turn === t.uuid).length).toBe(1);
      expect([...readMemory(p.memory).values()].join("\n")).toContain("The release train leaves at noon.");
    }),
    120_000,
  );

  test(
    "the memory folder full: the turn stays queued, the markdown untouched, the next status line says why; written once when there is room",
    tracked(kit, async () => {
      const rng = kit.rngFor("memory folder full");
      if (!tmpfsWorks) return void kit.count("skipped-tmpfs");
      const p = kit.project({ memory: "none" });
      expect(mountTmpfs(p.memory, "512k")).toBe(true);
      cpSync(join(REPO, "sample", "memory"), p.memory, { recursive: true });
      const env = envOf(p);
      expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
      const filler = fill(p.memory);
      const before = snapshot(p.memory);

      const t = await turn(p, env, rng);
      await drainersGone(p);
      expect(queued(p)).toHaveLength(1);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);
      expect(readFileSync(join(p.dataDir, "hook-problems.json"), "utf8")).toMatch(DISK_FULL);
      // The next session is told, and its start tries again (still full: still queued, still untouched).
      const start = await ms(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "full-next", cwd: p.root }) });
      expect(hookOutputProblem(start)).toBeUndefined();
      expect(JSON.parse(start.stdout).systemMessage).toMatch(/WARNING: .*disk full/);
      await drainersGone(p);
      expect(queued(p)).toHaveLength(1);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);

      rmSync(filler);
      const again = await ms(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "full-later", cwd: p.root }) });
      expect(hookOutputProblem(again)).toBeUndefined();
      expect(await drained(kit, p, 60_000)).toBe(true);
      expect(anchorsOf(p.memory).filter((a) => a.turn === t.uuid).length).toBe(1);
      // Only appended: every file that was there is unchanged (the note went to today's file).
      const after = snapshot(p.memory);
      for (const [name, bytes] of before) if (name !== ".filler") expect(after.get(name)?.equals(bytes)).toBe(true);
      kit.count("turns-written-after-disk-full");
    }),
    120_000,
  );
});

// ---------------------------------------------------------------------------------------------
// A file-size limit (works everywhere)

const LIMIT_BLOCKS = 32; // dash and POSIX sh count 512-byte blocks: 16 KiB
const LIMIT_BYTES = LIMIT_BLOCKS * 512;
const limited = (cmd: string[]) => ["sh", "-c", `trap '' XFSZ; ulimit -f ${LIMIT_BLOCKS}; exec "$0" "$@"`, ...cmd];

/** Today's (and tomorrow's, across midnight) daily file, already larger than the limit (or the days given). */
function bigDailyFiles(p: Project, rng: Rng, days?: Date[]): void {
  const now = new Date();
  for (const d of days ?? [now, new Date(now.getTime() + 86_400_000)]) {
    const lines = [`# ${dayFile(d).slice(0, 10)}`, "", "## Session 08:00", ""];
    for (let i = 0; lines.join("\n").length < LIMIT_BYTES + 4_000; i++) lines.push(`### 08:${pad(i % 60)}`, `<!-- session:big turn:big-${i} transcript:- -->`, `- earlier note ${i}: ${rng.string(60, "abcdefgh ")}`, "");
    writeFileSync(join(p.memory, dayFile(d)), lines.join("\n"));
  }
}

describe("a file-size limit (ulimit -f, SIGXFSZ ignored)", () => {
  test(
    "a note whose append crosses the limit is rolled back whole by the drainer a Stop hook starts: never half a note",
    tracked(kit, async () => {
      const rng = kit.rngFor("append crosses the limit");
      const p = kit.project({ memory: "none" });
      mkdirSync(p.memory, { recursive: true });
      // Today's and tomorrow's files end 60 bytes short of the limit: the first write of a note is cut short.
      const now = new Date();
      for (const d of [now, new Date(now.getTime() + 86_400_000)]) {
        let text = `# ${dayFile(d).slice(0, 10)}\n\n## Session 08:00\n\n### 08:00\n<!-- session:big turn:big-0 transcript:- -->\n`;
        while (text.length < LIMIT_BYTES - 60) text += `- earlier note ${rng.string(40, "abcdefgh ")}\n`;
        writeFileSync(join(p.memory, dayFile(d)), text.slice(0, LIMIT_BYTES - 61) + "\n");
      }
      const before = snapshot(p.memory);
      const env = envOf(p);
      const t = await turn(p, env, rng, limited);
      // The drainer the Stop hook started may not be a process of its own yet when the hook
      // returns (a loaded machine): wait for what it leaves, then for it to be gone.
      const problems = join(p.dataDir, "hook-problems.json");
      for (let i = 0; i < 300 && !existsSync(problems); i++) await Bun.sleep(100);
      await drainersGone(p);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);
      expect(queued(p)).toHaveLength(1);
      expect(readFileSync(problems, "utf8")).toMatch(TOO_LARGE);
      const free = await ms(["hook", "drain"], { cwd: p.root, env, hangMs: 60_000 });
      expect(free.code).toBe(0);
      expect(anchorsOf(p.memory).filter((a) => a.turn === t.uuid).length).toBe(1);
      kit.count("turns-written-after-limit");
    }),
    60_000,
  );

  test(
    "index and remember fail with one line, hooks exit 0, markdown untouched; the queued turn is written once the limit is gone",
    tracked(kit, async () => {
      const rng = kit.rngFor("commands over the limit");
      const p = kit.project();
      const env = envOf(p);
      // An older day as large as the limit, so the index is larger than the limit too.
      bigDailyFiles(p, rng, [new Date(Date.now() - 30 * 86_400_000)]);
      expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
      bigDailyFiles(p, rng);
      const before = snapshot(p.memory);
      const indexBefore = readFileSync(join(p.indexDir, INDEX_FILE));
      expect(indexBefore.length).toBeGreaterThan(LIMIT_BYTES);

      const index = await runCmd(limited([BIN, "index"]), { cwd: p.root, env });
      kit.count("commands-over-limit");
      expect(index.code).not.toBe(0);
      oneLine(index, TOO_LARGE);
      expect(readFileSync(join(p.indexDir, INDEX_FILE)).equals(indexBefore)).toBe(true);
      expect(tmpLeft(p)).toEqual([]);

      const remember = await runCmd(limited([BIN, "remember", "The release train leaves at noon."]), { cwd: p.root, env });
      kit.count("commands-over-limit");
      expect(remember.code).not.toBe(0);
      oneLine(remember, TOO_LARGE);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);

      // The hooks only queue (the queue is held as a live drainer would hold it), then a drainer
      // under the same limit tries: the note cannot be appended, the turn stays queued.
      mkdirSync(p.pending, { recursive: true });
      const lock = join(p.pending, ".drain.lock");
      writeFileSync(lock, liveLockContent());
      for (const event of ["session-start", "session-end"]) {
        const r = await runCmd(limited([BIN, "hook", event]), { cwd: p.root, env, stdin: JSON.stringify({ session_id: "lim-x", cwd: p.root }), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
        expect(hookOutputProblem(r)).toBeUndefined();
      }
      const t = await turn(p, env, rng, limited);
      expect(queued(p)).toHaveLength(1);
      rmSync(lock);
      const drain = await runCmd(limited([BIN, "hook", "drain"]), { cwd: p.root, env, hangMs: 60_000 });
      expect(drain.code).toBe(0);
      expect(queued(p)).toHaveLength(1);
      expect(sameSnapshot(snapshot(p.memory), before)).toBe(true);
      expect(readFileSync(join(p.dataDir, "hook-problems.json"), "utf8")).toMatch(TOO_LARGE);

      // No limit any more: the next drainer writes it, once, by appending only.
      const free = await ms(["hook", "drain"], { cwd: p.root, env, hangMs: 60_000 });
      expect(free.code).toBe(0);
      expect(await drained(kit, p, 60_000)).toBe(true);
      expect(anchorsOf(p.memory).filter((a) => a.turn === t.uuid).length).toBe(1);
      const after = snapshot(p.memory);
      for (const [name, bytes] of before) expect(after.get(name)!.subarray(0, bytes.length).equals(bytes)).toBe(true);
      kit.count("turns-written-after-limit");
    }),
    120_000,
  );
});
