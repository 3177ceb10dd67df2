/**
 * Shared machinery of the fault-injection suite (test/fault/*.test.ts), over the one way every
 * suite runs the binary and isolates a project (test/helpers/cli.ts): a seeded PRNG, temp
 * projects, the compiled binary run with a hang detector, every process a file starts found
 * again by an environment tag and killed at the end, and one summary line per file.
 *
 * Deterministic: every random choice comes from `rngFor(label)`, derived from one seed
 * (MEMSEARCH_FAULT_SEED, default below) and printed. Only the scheduling of processes is left
 * to the machine; assertions are about outcomes, never about how long something took (a run
 * that outlives its hang limit is killed and fails).
 *
 * MEMSEARCH_FAULT_REPORT=<file> appends each file's summary line to that file as well
 * (docs/RELIABILITY.md quotes them).
 */
import { afterAll, test } from "bun:test";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { anchorsIn, type Anchor } from "../../src/core/anchor.ts";
import { bootWord, processStartTime } from "../../src/core/processes.ts";
import { socketPath } from "../../src/watch/client.ts";
import { HOOK_EVENTS } from "../../src/hooks/events.ts";
import { BIN, copySampleMemory, exactEnv, isolatedEnv, REPO, runProcess, type RunResult } from "../helpers/cli.ts";

export { BIN, REPO };

// ---------------------------------------------------------------------------------------------
// Seeded randomness

export const DEFAULT_SEED = 0x20261123;

function parseSeed(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const n = text.startsWith("0x") ? Number.parseInt(text.slice(2), 16) : Number(text);
  return Number.isFinite(n) ? n >>> 0 : undefined;
}

export const SEED = parseSeed(process.env.MEMSEARCH_FAULT_SEED) ?? DEFAULT_SEED;
export const seedText = () => `0x${SEED.toString(16)}`;

function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** sfc32: small, fast, good enough for test data; one independent stream per label. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 16; i++) this.next();
  }
  /** In [0, 1). */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length)]!;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(0, 256);
    return out;
  }
  string(n: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"): string {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[this.int(0, alphabet.length)];
    return s;
  }
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(0, i + 1);
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }
}

export function rngFor(label: string): Rng {
  return new Rng((SEED ^ fnv(label)) >>> 0);
}

// ---------------------------------------------------------------------------------------------
// Processes

export type { RunResult };

export interface RunOptions {
  cwd: string;
  /** The whole environment of the run (a kit's project gives one: Kit.project). */
  env: Record<string, string | undefined>;
  stdin?: string | Uint8Array;
  /** Hang detector: SIGKILL after this long, and `hung` is set. */
  hangMs?: number;
}

/** Run any command; stdout and stderr collected as text. */
export function runCmd(cmd: string[], opts: RunOptions): Promise<RunResult> {
  return runProcess(cmd, { cwd: opts.cwd, env: exactEnv(opts.env), stdin: opts.stdin, timeoutMs: opts.hangMs ?? 60_000 });
}

/** Run the compiled memsearch binary. */
export function ms(args: string[], opts: RunOptions): Promise<RunResult> {
  return runCmd([BIN, ...args], opts);
}

/** The Claude Code hooks and their budgets (src/hooks/events.ts); the hang detector allows a few seconds more. */
export const HOOKS = ["session-start", "user-prompt-submit", "stop", "session-end"];
export const HOOK_BUDGET_MS: Record<string, number> = Object.fromEntries(HOOKS.map((e) => [e, HOOK_EVENTS[e]!.budgetMs]));
export const HANG_SLACK_MS = 6_000;

/** Exactly one JSON object on one line of stdout, as Claude Code wants it; the reason when not. */
export function hookOutputProblem(r: RunResult): string | undefined {
  if (r.hung) return `hung (killed after its budget + ${HANG_SLACK_MS} ms)`;
  if (r.code !== 0) return `exit ${r.code}`;
  const lines = r.stdout.split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== 1) return `${lines.length} lines on stdout`;
  try {
    const v = JSON.parse(lines[0]!);
    if (!v || typeof v !== "object" || Array.isArray(v)) return `stdout is not a JSON object: ${lines[0]!.slice(0, 100)}`;
  } catch {
    return `stdout is not JSON: ${lines[0]!.slice(0, 100)}`;
  }
  return undefined;
}

/** Pids whose environment carries `tag` (Linux /proc; every process a kit starts inherits it). */
export function taggedPids(tag: string): number[] {
  const needle = `MEMSEARCH_FAULT_TAG=${tag}\0`;
  const out: number[] = [];
  if (!existsSync("/proc/self/environ")) return out;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, "latin1");
      if (!env.includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      out.push(Number(name));
    } catch {}
  }
  return out;
}

function cmdlineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

function cwdOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/** Live drainers (`memsearch hook drain`) of the kit working in `root`. */
export function drainersIn(tag: string, root: string): number[] {
  return taggedPids(tag).filter((pid) => {
    const cmd = cmdlineOf(pid);
    return cmd.includes("hook") && cmd.includes("drain") && cwdOf(pid) === root;
  });
}

/**
 * A lock's content naming this test process as its holder, as memsearch writes one (pid, time,
 * token, start time, this boot's word): a live holder the binary waits for, as it would for a
 * drainer at work. (A lock without the boot word is held only by a live memsearch process.)
 */
export function liveLockContent(token = "fault-test"): string {
  return `${process.pid} ${Date.now()} ${token} ${processStartTime(process.pid)?.replace(/\s+/g, "_") ?? "-"} ${bootWord()}\n`;
}

/** Alive and not a zombie. */
export { processAlive as isAlive } from "../helpers/fake-claude.ts";

// ---------------------------------------------------------------------------------------------
// Projects

export interface Project {
  root: string;
  home: string;
  dataDir: string;
  memory: string;
  indexDir: string;
  pending: string;
  env: Record<string, string | undefined>;
}

export interface Kit {
  name: string;
  tag: string;
  base: string;
  /** For what a file builds once, at load time. */
  rng: Rng;
  /**
   * A stream of one test's own (`label`: its name, or a part of it): what it draws does not depend
   * on which tests ran before it, so it replays alone (`-t`) exactly as in the whole run.
   */
  rngFor(label: string): Rng;
  /** A temp git project; `memory`: the sample memory (default), none, or a folder to copy. */
  project(opts?: { memory?: "sample" | "none" | string; env?: Record<string, string | undefined> }): Project;
  /** Figures for the summary line. */
  count(key: string, n?: number): void;
  set(key: string, value: string | number): void;
  figures: Map<string, string | number>;
  /** Registers a check that must reach its end; the summary counts those that did not. */
  started(): void;
  finished(): void;
  /** Something to do before the processes are killed and the temp folder removed. */
  onCleanup(fn: () => void | Promise<void>): void;
}

/**
 * One per test file: a temp base folder, a tag in every child's environment, and an afterAll
 * that prints the summary line, kills every tagged process and removes the folder.
 */
export function faultKit(name: string): Kit {
  const base = mkdtempSync(join(tmpdir(), `ms-fault-${name}-`));
  const tag = `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const figures = new Map<string, string | number>();
  const cleanups: (() => void | Promise<void>)[] = [];
  const dataDirs: string[] = [];
  let started = 0;
  let finished = 0;
  let n = 0;
  const t0 = performance.now();
  const kit: Kit = {
    name,
    tag,
    base,
    rng: rngFor(name),
    rngFor: (label) => rngFor(`${name}:${label}`),
    figures,
    project(opts = {}) {
      const root = join(base, `p${++n}`);
      mkdirSync(join(root, ".git"), { recursive: true });
      const home = join(base, `home${n}`);
      mkdirSync(home, { recursive: true });
      const dataDir = join(root, ".memsearch");
      const memory = join(dataDir, "memory");
      const src = opts.memory ?? "sample";
      if (src === "sample") copySampleMemory(memory);
      else if (src !== "none") cpSync(src, memory, { recursive: true });
      const env: Record<string, string | undefined> = {
        ...process.env,
        ...isolatedEnv(home),
        MEMSEARCH_DEBUG: undefined,
        MEMSEARCH_DISABLE: undefined,
        // Never the real `claude` (npm puts node_modules/.bin, which holds one, on PATH): tests
        // that want the summariser put the fake one first on PATH and ask for it.
        MEMSEARCH_SUMMARIZER_PROVIDER: "extract",
        MEMSEARCH_FAULT_TAG: tag,
        ...opts.env,
      };
      dataDirs.push(dataDir);
      return { root, home, dataDir, memory, indexDir: join(dataDir, "index"), pending: join(dataDir, "pending"), env };
    },
    count(key, by = 1) {
      figures.set(key, Number(figures.get(key) ?? 0) + by);
    },
    set(key, value) {
      figures.set(key, value);
    },
    started() {
      started++;
    },
    finished() {
      finished++;
    },
    onCleanup(fn) {
      cleanups.push(fn);
    },
  };
  const killAll = async () => {
    // Children first found, then their children (a drainer's summariser), until none is left.
    for (let round = 0; round < 20; round++) {
      const pids = taggedPids(tag);
      if (!pids.length) break;
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
      await Bun.sleep(50);
    }
  };
  afterAll(async () => {
    await killAll();
    for (const fn of cleanups) {
      try {
        await fn();
      } catch (e) {
        console.error(`[fault:${name}] cleanup: ${e}`);
      }
    }
    await killAll();
    // A watch process killed with SIGKILL leaves its socket in the shared per-user socket folder.
    for (const d of dataDirs) rmSync(socketPath(d), { force: true });
    const left = taggedPids(tag).length;
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    const parts = [...figures].map(([k, v]) => `${k}=${v}`);
    const line = `[fault:${name}] seed=${seedText()} ${parts.join(" ")} checks=${started} failures=${started - finished} processes-left=${left} time=${secs}s`;
    console.log(line);
    if (process.env.MEMSEARCH_FAULT_REPORT) appendFileSync(process.env.MEMSEARCH_FAULT_REPORT, line + "\n");
    rmSync(base, { recursive: true, force: true });
  });
  return kit;
}

/** Wraps a test body so the kit's summary counts it; use for every test of a fault file. */
export function tracked(kit: Kit, fn: () => Promise<void> | void): () => Promise<void> {
  return async () => {
    kit.started();
    await fn();
    kit.finished();
  };
}

/**
 * A bug this suite found and reported, not fixed yet: the test asserts the right behaviour and
 * runs as `test.failing`, so the suite stays green while the bug is there and turns red the day
 * it is fixed (then make it a plain test). MEMSEARCH_FAULT_KNOWN_BUGS=1 runs them as plain tests.
 */
export const knownBug: typeof test = process.env.MEMSEARCH_FAULT_KNOWN_BUGS === "1" ? test : (test.failing as typeof test);

/** Wraps a known-bug test body: counted in the summary as a known bug, not as a check. */
export function trackedBug(kit: Kit, fn: () => Promise<void> | void): () => Promise<void> {
  return async () => {
    kit.count("known-bugs");
    await fn();
  };
}

// ---------------------------------------------------------------------------------------------
// Memory, queue and index helpers

/** Every daily markdown file of a memory folder, name → content. */
export function readMemory(memory: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(memory)) return out;
  for (const name of readdirSync(memory).sort()) if (name.endsWith(".md")) out.set(name, readFileSync(join(memory, name), "utf8"));
  return out;
}

/** Every file below `dir`, relative path → bytes (a byte-exact snapshot). */
export function snapshot(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

export function sameSnapshot(a: Map<string, Buffer>, b: Map<string, Buffer>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (!b.get(k)?.equals(v)) return false;
  return true;
}

export function anchorsOf(memory: string): Anchor[] {
  return [...readMemory(memory).values()].flatMap((c) => anchorsIn(c));
}

/** Queued turns (`pending/*.json`). */
export function queued(p: Project): string[] {
  return existsSync(p.pending) ? readdirSync(p.pending).filter((n) => n.endsWith(".json")) : [];
}

/**
 * True once the project's queue is empty, no drainer holds it and no drainer of the kit is
 * still at work in the project (it indexes after writing). Polls up to `limitMs`.
 */
export async function drained(kit: Kit, p: Project, limitMs = 90_000): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    const lock = existsSync(join(p.pending, ".drain.lock"));
    if (!lock && queued(p).length === 0 && drainersIn(kit.tag, p.root).length === 0) return true;
    await Bun.sleep(100);
  }
  return false;
}

/** Every file name below `dir` (recursively). */
export function allNames(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      out.push(name);
      try {
        if (statSync(join(d, name)).isDirectory()) walk(join(d, name));
      } catch {}
    }
  };
  walk(dir);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Generated memory

const WORDS =
  "alpha cache redis pool deploy fly heroku queue worker cron index search vector token budget schema migration rollback canary metrics grafana alert latency timeout retry backoff shard replica leader follower snapshot compaction journal anchor chunk session turn prompt summary bullet hook watch daemon socket lock stale sweep crash restart signal kernel memory disk inode mount quota limit buffer stream parser lexer grammar compiler linker bundle release tag branch merge rebase commit review test fixture mock double harness coverage flaky seed random fuzz budget window debounce throttle batch embed model ollama vectors cosine ranking weight score floor recall inject hint status doctor config toml layer default override flag env path project root worktree submodule transcript reader line json utf8 bytes offset header checksum crc version format upgrade carry rebuild notice warning error message exit code stdout stderr pipe fifo directory file folder"
    .split(" ");

export const FACT = "The zebrafish cluster deploy key rotates every seventeen days, ticket QX4411.";
export const FACT_QUERY = "zebrafish cluster deploy key rotation";

/**
 * Writes `files` daily files of `notesPerFile` notes each (a heading, an anchor, 2–4 bullets of
 * words from a fixed vocabulary) into `dir`, with FACT in one random note. Returns the note count.
 */
export function writeMemory(dir: string, rng: Rng, files: number, notesPerFile: number): number {
  mkdirSync(dir, { recursive: true });
  const factFile = rng.int(0, files);
  const factNote = rng.int(0, notesPerFile);
  for (let f = 0; f < files; f++) {
    const day = `2026-10-${String(f + 1).padStart(2, "0")}`;
    const lines = [`# ${day}`, "", "## Session 09:00", ""];
    for (let n = 0; n < notesPerFile; n++) {
      const hm = `${String(9 + Math.floor(n / 60)).padStart(2, "0")}:${String(n % 60).padStart(2, "0")}`;
      lines.push(`### ${hm}`, `<!-- session:gen-${f} turn:gen-${f}-${n} transcript:- -->`);
      const bullets = rng.int(2, 5);
      for (let b = 0; b < bullets; b++) {
        const words = Array.from({ length: rng.int(6, 16) }, () => rng.pick(WORDS));
        lines.push(`- ${words.join(" ")}.`);
      }
      if (f === factFile && n === factNote) lines.push(`- ${FACT}`);
      lines.push("");
    }
    writeFileSync(join(dir, `${day}.md`), lines.join("\n"));
  }
  return files * notesPerFile;
}

/** Lines of stderr that are not empty. */
export const stderrLines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");
