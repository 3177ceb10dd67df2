import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isLockHeld, LockTimeoutError, withFileLock } from "../../src/core/lock.ts";
import { processStartTime } from "../../src/core/processes.ts";
import { deadPid, liveSleeper } from "../helpers/processes.ts";

const posix = process.platform !== "win32";
const lockIn = () => join(mkdtempSync(join(tmpdir(), "ms-lock-")), "x.lock");
const sleeper = liveSleeper();

describe("file locks know their holder by PID and start time", () => {
  test.if(posix)("a lock records pid, time, token and the holder's start time", async () => {
    const path = lockIn();
    const seen = await withFileLock(path, () => readFileSync(path, "utf8"));
    const [pid, time, token, start, ...rest] = seen.trim().split(" ");
    expect(Number(pid)).toBe(process.pid);
    expect(Math.abs(Number(time) - Date.now())).toBeLessThan(60_000);
    expect(token).toMatch(/^[a-z0-9]+$/);
    expect(start).toBe(processStartTime(process.pid)!.replace(/\s+/g, "_"));
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

  test.if(posix)("a live holder with its own start time is waited for, even when it holds long", async () => {
    const path = lockIn();
    writeFileSync(path, `${sleeper.pid} ${Date.now() - 10 * 60_000} deadbeef ${processStartTime(sleeper.pid)}\n`);
    const err = await withFileLock(path, () => "no", { timeoutMs: 300, staleMs: 3600_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockTimeoutError);
    expect(err.message).toMatch(new RegExp(`^timed out after 300 ms waiting for .*x\\.lock \\(held by pid ${sleeper.pid} for 60\\d s; if that process is hung, end it\\)$`));
    expect(readFileSync(path, "utf8")).toStartWith(`${sleeper.pid} `);
  });

  test.if(posix)("old-format locks (pid time token) keep their rules: a live PID is waited for, a dead one broken", async () => {
    const live = lockIn();
    writeFileSync(live, `${sleeper.pid} ${Date.now()} deadbeef\n`);
    await expect(withFileLock(live, () => "no", { timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
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
    writeFileSync(aged, `${sleeper.pid} ${Date.now() - 120_000} deadbeef ${processStartTime(sleeper.pid)}\n`);
    expect(await withFileLock(aged, () => "yes", { timeoutMs: 2_000, staleMs: 60_000 })).toBe("yes");
  });
});

describe("isLockHeld (whether to start another drainer)", () => {
  test.if(posix)("follows the same rules as a waiter: a reused PID or a dead one is not a holder", async () => {
    const path = lockIn();
    expect(isLockHeld(path, 3600_000)).toBe(false);
    const start = processStartTime(sleeper.pid)!.replace(/\s+/g, "_");
    writeFileSync(path, `${sleeper.pid} ${Date.now()} deadbeef ${start}\n`);
    expect(isLockHeld(path, 3600_000)).toBe(true);
    writeFileSync(path, `${sleeper.pid} ${Date.now()} deadbeef ${start}0\n`);
    expect(isLockHeld(path, 3600_000)).toBe(false);
    writeFileSync(path, `${await deadPid()} ${Date.now()} deadbeef\n`);
    expect(isLockHeld(path, 3600_000)).toBe(false);
    expect(await withFileLock(path, () => isLockHeld(path, 3600_000))).toBe(true);
  });
});
