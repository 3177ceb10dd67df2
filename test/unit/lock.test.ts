import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isLockHeld, LockTimeoutError, withFileLock } from "../../src/core/lock.ts";
import { bootWord, processStartTime } from "../../src/core/processes.ts";
import { deadPid, liveSleeper } from "../helpers/processes.ts";

const posix = process.platform !== "win32";
const lockIn = () => join(mkdtempSync(join(tmpdir(), "ms-lock-")), "x.lock");
const sleeper = liveSleeper();
/** The sleeper's start time as a lock holds it. */
const startOf = (pid: number) => processStartTime(pid)!.replace(/\s+/g, "_");

describe("file locks know their holder by PID and start time", () => {
  test.if(posix)("a lock records pid, time, token, the holder's start time and this boot", async () => {
    const path = lockIn();
    const seen = await withFileLock(path, () => readFileSync(path, "utf8"));
    const [pid, time, token, start, boot, ...rest] = seen.trim().split(" ");
    expect(Number(pid)).toBe(process.pid);
    expect(Math.abs(Number(time) - Date.now())).toBeLessThan(60_000);
    expect(token).toMatch(/^[a-z0-9]+$/);
    expect(start).toBe(processStartTime(process.pid)!.replace(/\s+/g, "_"));
    expect(boot).toBe(bootWord());
    expect(rest).toEqual([]);
    expect(existsSync(path)).toBe(false);
  });

  test.if(posix)(
    "a lock whose PID is alive but belongs to another process (other start time) is broken at once",
    async () => {
      const path = lockIn();
      const real = processStartTime(sleeper.pid)!;
      writeFileSync(path, `${sleeper.pid} ${Date.now()} deadbeef ${real}0\n`);
      // Long timeout and staleMs: only the identity check can let us in.
      expect(await withFileLock(path, () => "got it", { timeoutMs: 20_000, staleMs: 3600_000 })).toBe("got it");
    },
    30_000,
  );

  test.if(posix)("a live holder of this boot with its own start time is waited for, even when it holds long", async () => {
    const path = lockIn();
    writeFileSync(path, `${sleeper.pid} ${Date.now() - 10 * 60_000} deadbeef ${startOf(sleeper.pid)} ${bootWord()}\n`);
    const err = await withFileLock(path, () => "no", { timeoutMs: 300, staleMs: 3600_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockTimeoutError);
    // Not a memsearch: never "end it", whoever holds it.
    expect(err.message).toMatch(new RegExp(`^timed out after 300 ms waiting for .*x\\.lock \\(held by pid ${sleeper.pid} for 60\\d s; it is at work, try again\\)$`));
    expect(readFileSync(path, "utf8")).toStartWith(`${sleeper.pid} `);
  });

  test.if(posix)("only a memsearch that has held a lock a long while is called possibly hung; a short hold is work", async () => {
    const long = lockIn();
    writeFileSync(long, `${process.pid} ${Date.now() - 10 * 60_000} deadbeef ${startOf(process.pid)} ${bootWord()}\n`);
    const hung = await withFileLock(long, () => "no", { timeoutMs: 300, staleMs: 3600_000 }).catch((e) => e);
    expect(hung.message).toEndWith("; if that process is hung, end it)");
    const short = lockIn();
    writeFileSync(short, `${process.pid} ${Date.now() - 5_000} deadbeef ${startOf(process.pid)} ${bootWord()}\n`);
    const busy = await withFileLock(short, () => "no", { timeoutMs: 300, staleMs: 3600_000 }).catch((e) => e);
    expect(busy.message).toMatch(/held by pid \d+ for [56] s; it is at work, try again\)$/);
  });

  test.if(posix)(
    "a lock without this boot's word names a holder only when its PID is a live memsearch: a sleeper's, with its own start time, is broken at once",
    async () => {
      const path = lockIn();
      writeFileSync(path, `${sleeper.pid} ${Date.now()} deadbeef ${startOf(sleeper.pid)}\n`);
      expect(isLockHeld(path, 3600_000)).toBe(false);
      expect(await withFileLock(path, () => "got it", { timeoutMs: 20_000, staleMs: 3600_000 })).toBe("got it");
      // This process is one (the same executable as itself): its old-format lock is waited for.
      const mine = lockIn();
      writeFileSync(mine, `${process.pid} ${Date.now()} deadbeef ${startOf(process.pid)}\n`);
      expect(isLockHeld(mine, 3600_000)).toBe(true);
    },
    30_000,
  );

  test.if(posix)(
    "a lock from the future is nobody's: init's PID, any format",
    async () => {
      for (const content of [`1 ${Date.now() + 3600_000} cafe01\n`, `1 ${Date.now() + 3600_000} cafe01 ${startOf(1)} ${bootWord()}\n`, `${sleeper.pid} ${Date.now() + 60_000} cafe01 ${startOf(sleeper.pid)} ${bootWord()}\n`]) {
        const path = lockIn();
        writeFileSync(path, content);
        expect(isLockHeld(path, 3600_000)).toBe(false);
        expect(await withFileLock(path, () => "got it", { timeoutMs: 20_000, staleMs: 3600_000 })).toBe("got it");
      }
    },
    70_000,
  );

  test.if(posix)(
    "a lock of another machine or an earlier boot names no process here, whatever its PID and start time",
    async () => {
      const path = lockIn();
      writeFileSync(path, `${sleeper.pid} ${Date.now()} deadbeef ${startOf(sleeper.pid)} b:0123456789abcdef0123456789abcdef\n`);
      expect(isLockHeld(path, 3600_000)).toBe(false);
      expect(await withFileLock(path, () => "got it", { timeoutMs: 20_000, staleMs: 3600_000 })).toBe("got it");
    },
    30_000,
  );

  test.if(posix)("old-format locks (pid time token): a live PID that is not memsearch is broken, a dead one too", async () => {
    const live = lockIn();
    writeFileSync(live, `${sleeper.pid} ${Date.now()} deadbeef\n`);
    expect(await withFileLock(live, () => "yes", { timeoutMs: 2_000 })).toBe("yes");
    const dead = lockIn();
    writeFileSync(dead, `${await deadPid()} ${Date.now()} deadbeef\n`);
    expect(await withFileLock(dead, () => "yes", { timeoutMs: 2_000 })).toBe("yes");
  });

  test.if(posix)(
    "old-format lock whose PID's process started after the lock was taken (a reused PID) is broken at once",
    async () => {
      const path = lockIn();
      // Taken ten minutes ago; the sleeper started with this file.
      writeFileSync(path, `${sleeper.pid} ${Date.now() - 10 * 60_000} deadbeef\n`);
      expect(await withFileLock(path, () => "got it", { timeoutMs: 20_000, staleMs: 3600_000 })).toBe("got it");
    },
    30_000,
  );

  test.if(posix)(
    "a bare PID (no time: no memsearch wrote it) names no holder, even a live one",
    async () => {
      const path = lockIn();
      writeFileSync(path, `${sleeper.pid}\n`);
      const past = new Date(Date.now() - 10_000);
      utimesSync(path, past, past);
      expect(isLockHeld(path, 3600_000)).toBe(false);
      expect(await withFileLock(path, () => "got it", { timeoutMs: 20_000, staleMs: 3600_000 })).toBe("got it");
    },
    30_000,
  );

  test.if(posix)("a dead holder in the new format is broken; an old lock past staleMs too", async () => {
    const dead = lockIn();
    writeFileSync(dead, `${await deadPid()} ${Date.now()} deadbeef 12345\n`);
    expect(await withFileLock(dead, () => "yes", { timeoutMs: 2_000 })).toBe("yes");
    const aged = lockIn();
    writeFileSync(aged, `${sleeper.pid} ${Date.now() - 120_000} deadbeef ${startOf(sleeper.pid)} ${bootWord()}\n`);
    expect(await withFileLock(aged, () => "yes", { timeoutMs: 2_000, staleMs: 60_000 })).toBe("yes");
  });
});

describe("a crowd of writers (issue 31: 100 concurrent remember, 36 failed telling the user to end a healthy process)", () => {
  test.if(posix)("a waiter that times out while the lock changes hands says it was busy, and never to end a process", async () => {
    const path = lockIn();
    let n = 0;
    // Healthy holders (this process, this boot) taking the lock in turn faster than the waiter gets it.
    const hand = () => writeFileSync(path, `${process.pid} ${Date.now()} holder${n++} ${startOf(process.pid)} ${bootWord()}\n`);
    hand();
    const timer = setInterval(hand, 40);
    try {
      const err = await withFileLock(path, () => "no", { timeoutMs: 500, staleMs: 3600_000 }).catch((e) => e);
      expect(err).toBeInstanceOf(LockTimeoutError);
      expect(err.message).toMatch(/\(busy: \d+ writers held it in turn meanwhile; try again\)$/);
      expect(err.message).not.toContain("end it");
    } finally {
      clearInterval(timer);
    }
  });
});

describe("isLockHeld (whether to start another drainer)", () => {
  test.if(posix)("follows the same rules as a waiter: a reused PID or a dead one is not a holder", async () => {
    const path = lockIn();
    expect(isLockHeld(path, 3600_000)).toBe(false);
    const start = startOf(sleeper.pid);
    writeFileSync(path, `${sleeper.pid} ${Date.now()} deadbeef ${start} ${bootWord()}\n`);
    expect(isLockHeld(path, 3600_000)).toBe(true);
    writeFileSync(path, `${sleeper.pid} ${Date.now()} deadbeef ${start}0 ${bootWord()}\n`);
    expect(isLockHeld(path, 3600_000)).toBe(false);
    writeFileSync(path, `${await deadPid()} ${Date.now()} deadbeef\n`);
    expect(isLockHeld(path, 3600_000)).toBe(false);
    expect(await withFileLock(path, () => isLockHeld(path, 3600_000))).toBe(true);
  });
});
