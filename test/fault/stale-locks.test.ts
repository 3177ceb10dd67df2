/**
 * Fault injection: locks and markers naming a live process that is not their holder (issue 20,
 * defect 7). A PID is reused after a crash, and a file may come with a cloned repository: a lock
 * or a `watch.starting` marker naming a live but unrelated process is taken over at once, never
 * waited on until the index lock's 120 s timeout. What is asserted is the outcome within a hang
 * limit well under that timeout, not a duration.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processStartTime } from "../../src/core/processes.ts";
import { liveSleeper } from "../helpers/processes.ts";
import { BIN, faultKit, isAlive, ms, tracked } from "./helpers.ts";

const kit = faultKit("stale-locks");
const sleeper = liveSleeper();
/** Far below the index lock's 120 s: a run that waits on the lock is killed and fails. */
const HANG_MS = 40_000;

const startWord = (pid: number) => processStartTime(pid)!.replace(/\s+/g, "_");

/** Lock contents naming the live sleeper (or init), none of them its holder. */
const LOCKS: Record<string, () => string> = {
  "start time of another process": () => `${sleeper.pid} ${Date.now()} deadbeef ${startWord(sleeper.pid)}0\n`,
  "older format, the PID's process started after the lock was taken": () => `${sleeper.pid} ${Date.now() - 10 * 60_000} deadbeef\n`,
  "a bare PID (no memsearch ever wrote one)": () => `${sleeper.pid}\n`,
  "committed from another machine (init's PID, another start time)": () => `1 ${Date.now()} cafe01 98765432\n`,
};

kit.set("lock-kinds", Object.keys(LOCKS).length);

describe("index.lock naming a live process that does not hold it", () => {
  for (const [kind, content] of Object.entries(LOCKS)) {
    test(
      `memsearch index takes it over at once: ${kind}`,
      tracked(kit, async () => {
        const p = kit.project();
        mkdirSync(p.indexDir, { recursive: true });
        const lock = join(p.indexDir, "index.lock");
        writeFileSync(lock, content());
        // As a lock from a clone has it: written a while ago.
        const past = new Date(Date.now() - 30_000);
        utimesSync(lock, past, past);
        const r = await ms(["index"], { cwd: p.root, env: { ...p.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" }, hangMs: HANG_MS });
        expect(r.hung).toBe(false);
        expect(r.stderr).not.toContain("timed out");
        expect(r.code).toBe(0);
        expect(existsSync(join(p.indexDir, "index.bin"))).toBe(true);
        expect(existsSync(lock)).toBe(false);
        kit.count("locks-taken-over");
      }),
      HANG_MS + 10_000,
    );
  }
});

/** Kinds of leftover `watch.starting`: none is a start in progress. */
const MARKERS: Record<string, () => string> = {
  "committed, a bare PID of a live process": () => `${sleeper.pid}\n`,
  "a live PID with another start time": () => `${sleeper.pid} ${Date.now()} ${startWord(sleeper.pid)}0\n`,
  "a live watch's own marker, left from a start over a minute ago": () => `${sleeper.pid} ${Date.now() - 5 * 60_000} ${startWord(sleeper.pid)}\n`,
};

kit.set("marker-kinds", Object.keys(MARKERS).length);

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) return false;
    await Bun.sleep(100);
  }
  return true;
}

describe("a leftover watch.starting does not block the watch process", () => {
  for (const [kind, content] of Object.entries(MARKERS)) {
    test(
      `SessionStart starts the watch process: ${kind}`,
      tracked(kit, async () => {
        const p = kit.project();
        mkdirSync(p.dataDir, { recursive: true });
        const marker = join(p.dataDir, "watch.starting");
        writeFileSync(marker, content());
        const input = JSON.stringify({ session_id: "s-1", hook_event_name: "SessionStart", source: "startup", cwd: p.root });
        const env = { ...p.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: undefined, MEMSEARCH_NO_TRANSCRIPT_INDEX: "1" };
        const h = await ms(["hook", "session-start"], { cwd: p.root, env, stdin: input, hangMs: 20_000 });
        expect(h.code).toBe(0);
        const pidFile = join(p.dataDir, "watch.pid");
        expect(await until(() => existsSync(pidFile), 20_000)).toBe(true);
        const watchPid = JSON.parse(readFileSync(pidFile, "utf8")).pid as number;
        expect(watchPid).not.toBe(sleeper.pid);
        expect(isAlive(watchPid)).toBe(true);
        // Serving, the watch process removed the marker of its start.
        expect(await until(() => !existsSync(marker), 10_000)).toBe(true);
        kit.count("watch-started");
      }),
      60_000,
    );
  }
});

describe("a watch.pid naming a live process that is not the watch process", () => {
  const PIDFILES: Record<string, () => object> = {
    "its start time is another process's": () => ({ pid: sleeper.pid, socket: "/nonexistent/watch.sock", startedAt: new Date().toISOString(), version: "0.0.0", startTime: `${startWord(sleeper.pid)}0` }),
    "older format: the PID's process started after the watch did": () => ({ pid: sleeper.pid, socket: "/nonexistent/watch.sock", startedAt: new Date(Date.now() - 10 * 60_000).toISOString(), version: "0.0.0" }),
  };
  kit.set("pidfile-kinds", Object.keys(PIDFILES).length);
  for (const [kind, info] of Object.entries(PIDFILES)) {
    test(
      `SessionStart starts the watch process: ${kind}`,
      tracked(kit, async () => {
        const p = kit.project();
        mkdirSync(p.dataDir, { recursive: true });
        const pidFile = join(p.dataDir, "watch.pid");
        writeFileSync(pidFile, JSON.stringify(info()));
        const input = JSON.stringify({ session_id: "s-1", hook_event_name: "SessionStart", source: "startup", cwd: p.root });
        const env = { ...p.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: undefined, MEMSEARCH_NO_TRANSCRIPT_INDEX: "1" };
        const h = await ms(["hook", "session-start"], { cwd: p.root, env, stdin: input, hangMs: 20_000 });
        expect(h.code).toBe(0);
        expect(await until(() => existsSync(pidFile) && JSON.parse(readFileSync(pidFile, "utf8")).pid !== sleeper.pid, 20_000)).toBe(true);
        expect(isAlive(JSON.parse(readFileSync(pidFile, "utf8")).pid)).toBe(true);
        kit.count("watch-started");
      }),
      60_000,
    );
  }
});

// ---------------------------------------------------------------------------------------------
// Planted locks (issue 31): a lock file comes with a repository as easily as any other file.

const bootWordOf = () => `b:${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().replace(/-/g, "")}`;
const linux = existsSync("/proc/sys/kernel/random/boot_id");

/** Planted index locks: none is held by a memsearch of this machine. */
const PLANTED: Record<string, () => string> = {
  "from the future, naming init (older format)": () => `1 ${Date.now() + 3600_000} cafe01\n`,
  "from the future, naming init with its own start time": () => `1 ${Date.now() + 3600_000} cafe01 ${startWord(1)}\n`,
  "older format naming a live process that is not memsearch, its own start time": () => `${sleeper.pid} ${Date.now()} cafe01 ${startWord(sleeper.pid)}\n`,
};
kit.set("planted-kinds", Object.keys(PLANTED).length);

describe("a planted index.lock does not switch memory off", () => {
  for (const [kind, content] of Object.entries(PLANTED)) {
    test(
      `memsearch index takes it over at once: ${kind}`,
      tracked(kit, async () => {
        const p = kit.project();
        mkdirSync(p.indexDir, { recursive: true });
        const lock = join(p.indexDir, "index.lock");
        writeFileSync(lock, content());
        const r = await ms(["index"], { cwd: p.root, env: { ...p.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" }, hangMs: HANG_MS });
        expect(r.hung).toBe(false);
        expect(r.code).toBe(0);
        expect(r.stderr).not.toContain("end it");
        expect(existsSync(lock)).toBe(false);
        kit.count("planted-taken-over");
      }),
      HANG_MS + 10_000,
    );
  }

  test(
    "remember writes its note past a planted day lock from the future, and never tells the user to end init",
    tracked(kit, async () => {
      const p = kit.project();
      const env = { ...p.env, TZ: "UTC", MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };
      mkdirSync(p.memory, { recursive: true });
      const day = new Date().toISOString().slice(0, 10);
      writeFileSync(join(p.memory, `.${day}.md.lock`), `1 ${Date.now() + 3600_000} cafe01\n`);
      const r = await ms(["remember", "the otter deploy needs the backup window"], { cwd: p.root, env, hangMs: HANG_MS });
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain("pid 1 ");
      expect(readFileSync(join(p.memory, `${day}.md`), "utf8")).toContain("otter deploy");
    }),
    HANG_MS + 10_000,
  );
});

describe("remember, its note saved", () => {
  test(
    "waits for a healthy memsearch holding the day's lock longer than 10 s instead of failing and blaming it",
    tracked(kit, async () => {
      if (!linux) return;
      const p = kit.project();
      const env = { ...p.env, TZ: "UTC", MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };
      // A live memsearch of this machine (a watch process of another project) stands for a writer
      // the machine's load keeps from finishing quickly.
      const other = kit.project();
      const holder = Bun.spawn([BIN, "watch"], { cwd: other.root, env: { ...other.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_TRANSCRIPT_INDEX: "1" } as Record<string, string>, stdout: "ignore", stderr: "ignore" });
      try {
        await Bun.sleep(300);
        mkdirSync(p.memory, { recursive: true });
        const day = new Date().toISOString().slice(0, 10);
        const lock = join(p.memory, `.${day}.md.lock`);
        writeFileSync(lock, `${holder.pid} ${Date.now()} cafe01 ${startWord(holder.pid)} ${bootWordOf()}\n`);
        const release = setTimeout(() => rmSync(lock, { force: true }), 13_000);
        const r = await ms(["remember", "the heron queue is drained nightly"], { cwd: p.root, env, hangMs: HANG_MS });
        clearTimeout(release);
        expect(r.code).toBe(0);
        expect(r.stderr).not.toContain("end it");
        expect(readFileSync(join(p.memory, `${day}.md`), "utf8")).toContain("heron queue");
      } finally {
        holder.kill(9);
      }
    }),
    HANG_MS + 10_000,
  );

  test(
    "says so and exits 0 when the index cannot be updated",
    tracked(kit, async () => {
      const p = kit.project();
      const env = { ...p.env, TZ: "UTC", MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };
      // A file where the index folder belongs: no index can be written, the note can.
      mkdirSync(p.dataDir, { recursive: true });
      writeFileSync(p.indexDir, "not a folder\n");
      const r = await ms(["remember", "the kestrel cache warms at boot"], { cwd: p.root, env, hangMs: HANG_MS });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Remembered in");
      expect(r.stderr).toContain("the note is saved, but the index was not updated");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      const day = new Date().toISOString().slice(0, 10);
      expect(readFileSync(join(p.memory, `${day}.md`), "utf8")).toContain("kestrel cache");
    }),
    HANG_MS + 10_000,
  );
});

describe("doctor and the turn queue", () => {
  test(
    "warns when a turn has waited more than a minute, by its file's time or the Stop time it records",
    tracked(kit, async () => {
      const p = kit.project();
      const env = { ...p.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };
      mkdirSync(p.pending, { recursive: true });
      const turn = (id: string, stoppedAt: Date) => JSON.stringify({ sessionId: "s-q", promptId: id, stoppedAt: stoppedAt.toISOString(), prompt: "why?" });
      // Written by a checkout just now, but stopped long ago.
      writeFileSync(join(p.pending, "s-q--p1.json"), turn("p1", new Date(Date.now() - 3 * 3600_000)));
      const old = join(p.pending, "s-q--p2.json");
      writeFileSync(old, turn("p2", new Date()));
      const past = new Date(Date.now() - 2 * 60_000);
      utimesSync(old, past, past);
      const r = await ms(["doctor", "-j"], { cwd: p.root, env, hangMs: HANG_MS });
      const checks = JSON.parse(r.stdout) as { name: string; status: string }[];
      expect(checks.find((c) => c.name === "turn queue")?.status).toBe("warn");
    }),
    HANG_MS + 10_000,
  );
});
