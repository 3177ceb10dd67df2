/**
 * `watch.starting` (src/watch/starting.ts): a start in progress is respected, and nothing else
 * is (issue 20, defect 7). test/fault/stale-locks.test.ts drives SessionStart with leftovers.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processStartTime } from "../../src/core/processes.ts";
import { claimStart, markStarting, releaseStart } from "../../src/watch/starting.ts";
import { deadPid, liveSleeper } from "../helpers/processes.ts";

const sleeper = liveSleeper();
const markerIn = () => join(mkdtempSync(join(tmpdir(), "ms-starting-")), "watch.starting");
const startWord = (pid: number) => processStartTime(pid)!.replace(/\s+/g, "_");
const aged = (path: string, ms: number) => {
  const t = new Date(Date.now() - ms);
  utimesSync(path, t, t);
};

describe("watch.starting", () => {
  test("a start in progress holds: an empty marker just claimed, a live watch named by PID and start time", async () => {
    const empty = markerIn();
    expect(claimStart(empty)).toEqual({ claimed: true });
    expect(claimStart(empty)).toEqual({ claimed: false });
    const named = markerIn();
    expect(claimStart(named)).toEqual({ claimed: true });
    markStarting(named, sleeper.pid);
    expect(readFileSync(named, "utf8")).toMatch(new RegExp(`^${sleeper.pid} \\d+ ${startWord(sleeper.pid)}\\n$`));
    expect(claimStart(named)).toEqual({ claimed: false, pid: sleeper.pid });
  });

  test("stale: an empty marker left by a starter killed before it spawned, a dead PID, a reused PID, a bare PID, a start over a minute old", async () => {
    const cases: [string, string, number][] = [
      ["empty, 20 s old", "", 20_000],
      ["dead", `${await deadPid()} ${Date.now()} 12345\n`, 0],
      ["reused", `${sleeper.pid} ${Date.now()} ${startWord(sleeper.pid)}0\n`, 0],
      ["bare pid", `${sleeper.pid}\n`, 0],
      ["old start", `${sleeper.pid} ${Date.now() - 120_000} ${startWord(sleeper.pid)}\n`, 0],
      ["committed garbage", "hello\n", 0],
    ];
    for (const [what, content, age] of cases) {
      const path = markerIn();
      writeFileSync(path, content);
      if (age) aged(path, age);
      expect([what, claimStart(path)]).toEqual([what, { claimed: true }]);
    }
  });

  test("the watch process removes only its own marker; a spawn that failed leaves none", async () => {
    const path = markerIn();
    writeFileSync(path, `${sleeper.pid} ${Date.now()} ${startWord(sleeper.pid)}\n`);
    releaseStart(path, sleeper.pid + 1);
    expect(existsSync(path)).toBe(true);
    releaseStart(path, sleeper.pid);
    expect(existsSync(path)).toBe(false);
    expect(claimStart(path)).toEqual({ claimed: true });
    markStarting(path, await deadPid());
    expect(existsSync(path)).toBe(false);
  });
});
