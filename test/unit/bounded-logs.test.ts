/**
 * Logs kept in the project are read from their end only (issue 31): a committed 200 MB
 * `injections.jsonl` made every prompt hook read it whole (14–18 s, over a GB), and a committed
 * ledger showed costs nobody here spent. What is counted is the bytes this process reads
 * (/proc/self/io `rchar`), never a duration.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendInjection, LOG_MAX_BYTES, readInjections, recentlyInjected, type InjectionRecord } from "../../src/memory/injections.ts";
import { readModelLedger, recordModelCall } from "../../src/memory/ledger.ts";

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "ms-logs-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const hasIo = existsSync("/proc/self/io");
/** Bytes this process has read through read(2) and its kin so far. */
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1]);

const record = (session: string, id: string): InjectionRecord => ({
  v: 1,
  at: new Date().toISOString(),
  session,
  mode: "inject",
  decision: "injected",
  reason: "test",
  considered: [{ kind: "note", id, score: 0.9, outcome: "injected" }],
  chars: 100,
});

/** A 200 MB log of another session's records, as a repository could bring it, with this session's last prompts at its end. */
function plantHugeLog(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  const line = JSON.stringify(record("someone-else", "x".repeat(150))) + "\n";
  const block = Buffer.from(line.repeat(Math.floor((4 << 20) / line.length)));
  const fd = openSync(join(dataDir, "injections.jsonl"), "w");
  for (let written = 0; written < 200 << 20; written += block.byteLength) writeSync(fd, block);
  closeSync(fd);
  for (let i = 0; i < 3; i++) appendFileSync(join(dataDir, "injections.jsonl"), JSON.stringify(record("s-mine", `chunk-${i}`)) + "\n");
}

describe("the injection log", () => {
  test.if(hasIo)("a 200 MB log: the prompt hook's look at the session's last prompts reads only its end, and finds them", () => {
    const dataDir = join(temp(), ".memsearch");
    plantHugeLog(dataDir);
    const before = bytesRead();
    const recent = recentlyInjected(dataDir, "s-mine");
    const read = bytesRead() - before;
    expect([...recent.keys()].sort()).toEqual(["chunk-0", "chunk-1", "chunk-2"]);
    // Both parts, each at most LOG_MAX_BYTES, and the small reads around them.
    expect(read).toBeLessThan(2 * LOG_MAX_BYTES + 64 * 1024);
    const all = bytesRead();
    expect(readInjections(dataDir).length).toBeGreaterThan(0);
    expect(bytesRead() - all).toBeLessThan(2 * LOG_MAX_BYTES + 64 * 1024);
  });

  test("a log of ordinary size is read whole: every record of both parts, oldest first", () => {
    const dataDir = join(temp(), ".memsearch");
    for (let i = 0; i < 10; i++) appendInjection(dataDir, record("s-1", `c${i}`));
    expect(readInjections(dataDir).map((r) => r.considered[0]!.id)).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`));
  });
});

describe("the model-call ledger", () => {
  const call = { v: 1 as const, at: "2026-11-02T12:00:00.000Z", provider: "claude" as const, model: "haiku", purpose: "summary" as const, inChars: 10, outChars: 5, inTokens: 1_000, outTokens: 100, ms: 20, outcome: "ok" as const };

  test("counts only the lines this machine wrote; a committed line, or one copied from another machine's ledger, is not counted", () => {
    const home = temp();
    const env = { ...process.env, MEMSEARCH_HOME: join(home, ".memsearch") };
    const dataDir = join(temp(), ".memsearch");
    mkdirSync(dataDir, { recursive: true });
    const ledger = join(dataDir, "model-calls.jsonl");
    appendFileSync(ledger, JSON.stringify({ ...call, inTokens: 90_000_000 }) + "\n");
    const saved = process.env.MEMSEARCH_HOME;
    process.env.MEMSEARCH_HOME = env.MEMSEARCH_HOME;
    try {
      recordModelCall(dataDir, call);
      recordModelCall(dataDir, { ...call, outcome: "failed" });
    } finally {
      if (saved === undefined) delete process.env.MEMSEARCH_HOME;
      else process.env.MEMSEARCH_HOME = saved;
    }
    const lines = readFileSync(ledger, "utf8").trim().split("\n");
    // A line of ours with one byte changed is no longer ours.
    appendFileSync(ledger, lines[1]!.replace('"haiku"', '"opus"') + "\n");
    const read = readModelLedger(dataDir, env);
    expect(read.calls.map((c) => c.outcome)).toEqual(["ok", "failed"]);
    expect(read.calls.every((c) => c.inTokens === 1_000)).toBe(true);
    expect(read.notOurs).toBe(2);
    // Another machine (another home, another key) counts none of them.
    const elsewhere = readModelLedger(dataDir, { ...process.env, MEMSEARCH_HOME: join(temp(), ".memsearch") });
    expect(elsewhere.calls).toEqual([]);
    expect(elsewhere.notOurs).toBe(4);
  });
});
