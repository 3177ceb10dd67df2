/**
 * The model-call ledger: every call to a model is one line (provider, model, purpose, sizes,
 * tokens when reported, duration, outcome), its count equals what the API received, and the cost
 * report adds it up per day and month from the one price table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markLine } from "../../src/core/machine-mark.ts";
import { LEDGER_MAX_BYTES, readModelCalls, recordModelCall, type ModelCall } from "../../src/memory/ledger.ts";
import { callCost, costReport, formatUsd, PRICES_AS_OF } from "../../src/memory/prices.ts";
import { askModel, readClaudeOutput, summarizeTurn, type SummarizeOptions } from "../../src/memory/summarizer.ts";
import type { LastTurn } from "../../src/transcript/types.ts";
import { startMockApi, type MockApi } from "../helpers/anthropic-mock.ts";
import { writeFakeClaude } from "../helpers/fake-claude.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";
import { assertRealClaude, CLAUDE_BIN, claudeEnv, makeClaudeHome } from "../helpers/real-claude.ts";

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const turn = (words: string): LastTurn => ({ sessionId: "s", turnUuid: "u", userText: words, assistantTexts: ["done"], tools: [], text: `[User]: ${words}\n[Claude Code]: done` });

function options(dataDir: string, over: Partial<SummarizeOptions> = {}): SummarizeOptions {
  return { provider: "claude", claudeModel: "haiku", ollamaHost: "http://127.0.0.1:9", ollamaModel: "llama3.2", timeoutMs: 60_000, ledger: { dataDir, purpose: "summary" }, ...over };
}

describe("the real claude CLI against the mock API", () => {
  let api: MockApi;
  beforeAll(async () => {
    assertRealClaude();
    api = await startMockApi({ summaryDelayMs: 10 });
  });
  afterAll(async () => {
    await api.stop();
  });

  test("after N summaries the ledger has N calls, as many as the API received, with the tokens claude reported", async () => {
    const dataDir = join(temp("ms-ledger-"), ".memsearch");
    mkdirSync(dataDir, { recursive: true });
    const home = makeClaudeHome();
    dirs.push(home);
    const env = claudeEnv({ apiUrl: api.url, home, runId: "ledger-test" });
    const o = options(dataDir, { claudeBin: CLAUDE_BIN, env });
    const before = api.summariser().length;
    const n = 3;
    for (let i = 0; i < n; i++) {
      const s = await summarizeTurn(turn(`tune the redis pool number ${i} for kafka consumers`), o);
      expect(s.provider).toBe("claude");
      expect(s.fallbackReason).toBeUndefined();
    }
    const calls = readModelCalls(dataDir);
    expect(calls).toHaveLength(n);
    expect(api.summariser().length - before).toBe(calls.length);
    for (const c of calls) {
      expect(c).toMatchObject({ provider: "claude", model: "haiku", purpose: "summary", outcome: "ok" });
      expect(c.inTokens).toBeGreaterThan(0);
      expect(c.outTokens).toBeGreaterThan(0);
      expect(c.inChars).toBeGreaterThan(100);
      expect(c.outChars).toBeGreaterThan(0);
      expect(callCost(c)).toBeGreaterThan(0);
    }
  }, 120_000);
});

describe("what is recorded", () => {
  let double: OllamaDouble;
  beforeAll(async () => {
    double = await startOllamaDouble({ chatReply: "- a\n- b", models: ["llama3.2"] });
  });
  afterAll(async () => {
    await double.stop();
  });

  test("an Ollama call: its reported tokens, zero dollars; a failing one: its outcome", async () => {
    const dataDir = temp("ms-ledger-");
    double.setMode("ok");
    await summarizeTurn(turn("a question"), options(dataDir, { provider: "ollama", ollamaHost: double.host, ledger: { dataDir, purpose: "import" } }));
    double.setMode("http-500");
    const failed = await askModel("Answer.", "a question", options(dataDir, { provider: "ollama", ollamaHost: double.host, ledger: { dataDir, purpose: "recall" } }));
    expect(failed.ok).toBe(false);
    const [ok, bad] = readModelCalls(dataDir);
    expect(ok).toMatchObject({ provider: "ollama", model: "llama3.2", purpose: "import", outcome: "ok", outTokens: 12 });
    expect(ok!.inTokens).toBeGreaterThan(0);
    expect(callCost(ok!)).toBe(0);
    expect(bad).toMatchObject({ provider: "ollama", purpose: "recall", outcome: "failed", outChars: 0 });
  });

  test("a claude that fails or times out is recorded so; one that is not installed was never called; no ledger asked, none written", async () => {
    const dataDir = temp("ms-ledger-");
    const bin = writeFakeClaude(temp("ms-fake-"));
    const env = { PATH: process.env.PATH, HOME: dataDir };
    await summarizeTurn(turn("x"), options(dataDir, { claudeBin: bin, env: { ...env, FAKE_CLAUDE_MODE: "fail" } }));
    await summarizeTurn(turn("x"), options(dataDir, { claudeBin: bin, timeoutMs: 300, env: { ...env, FAKE_CLAUDE_MODE: "slow" } }));
    await summarizeTurn(turn("x"), options(dataDir, { claudeBin: join(dataDir, "no-such-claude") }));
    // A plain-text answer (an older claude): characters only, price unknown.
    await summarizeTurn(turn("x"), options(dataDir, { claudeBin: bin, env }));
    await summarizeTurn(turn("x"), options(dataDir, { claudeBin: bin, env, ledger: undefined }));
    const calls = readModelCalls(dataDir);
    expect(calls.map((c) => c.outcome)).toEqual(["failed", "timeout", "ok"]);
    expect(calls[2]!.inTokens).toBeUndefined();
    expect(callCost(calls[2]!)).toBeUndefined();
  });

  test("claude's JSON answer: the text, tokens with the cached ones, its cost; an error result fails", () => {
    const out = JSON.stringify({ type: "result", is_error: false, result: "- a\n- b", total_cost_usd: 0.002, usage: { input_tokens: 100, cache_read_input_tokens: 1000, cache_creation_input_tokens: 10, output_tokens: 20 } });
    expect(readClaudeOutput(out)).toEqual({ text: "- a\n- b", usage: { inTokens: 1110, outTokens: 20, cacheReadTokens: 1000, cacheWriteTokens: 10, reportedUsd: 0.002 } });
    expect(readClaudeOutput("- plain\n")).toEqual({ text: "- plain\n" });
    expect(() => readClaudeOutput(JSON.stringify({ type: "result", is_error: true, result: "Invalid API key" }))).toThrow("claude reported an error: Invalid API key");
  });

  test("bounded: past its size the ledger rolls over; lines that are not calls are skipped", () => {
    const dataDir = temp("ms-ledger-");
    const call: ModelCall = { v: 1, at: new Date().toISOString(), provider: "claude", model: "haiku", purpose: "summary", inChars: 10, outChars: 5, ms: 3, outcome: "ok" };
    // Each line carries this machine's mark (core/machine-mark.ts).
    const line = markLine(JSON.stringify(call)).length;
    const n = Math.ceil((LEDGER_MAX_BYTES * 1.5) / line);
    for (let i = 0; i < n; i++) recordModelCall(dataDir, call);
    const size = (f: string) => readFileSync(join(dataDir, f)).length;
    expect(size("model-calls.jsonl") + size("model-calls.1.jsonl")).toBe(n * line);
    expect(size("model-calls.1.jsonl")).toBeLessThanOrEqual(LEDGER_MAX_BYTES);
    writeFileSync(join(dataDir, "model-calls.1.jsonl"), `not json\n${markLine(JSON.stringify({ ...call, inChars: -1 }))}${markLine(JSON.stringify(call))}`);
    expect(readModelCalls(dataDir)).toHaveLength(1 + size("model-calls.jsonl") / line);
  });
});

describe("the cost report", () => {
  const call = (at: string, over: Partial<ModelCall> = {}): ModelCall => ({ v: 1, at, provider: "claude", model: "haiku", purpose: "summary", inChars: 4000, outChars: 200, inTokens: 1_000_000, outTokens: 100_000, ms: 900, outcome: "ok", ...over });

  test("per day and month, priced from the table; Ollama free; a model not in the table unknown", () => {
    const r = costReport([
      call("2026-10-31T12:00:00"),
      call("2026-11-02T12:00:00"),
      call("2026-11-02T13:00:00", { model: "sonnet", purpose: "recall" }),
      call("2026-11-02T14:00:00", { provider: "ollama", model: "llama3.2", purpose: "import" }),
      call("2026-11-03T09:00:00", { model: "some-future-model" }),
      call("2026-11-03T10:00:00", { inTokens: undefined, outTokens: undefined, outcome: "timeout" }),
    ]);
    expect(r.pricesAsOf).toBe(PRICES_AS_OF);
    // Haiku: $1 in, $5 out per million → 1 + 0.5; Sonnet: 3 + 1.5.
    expect(r.days.map((d) => [d.period, d.calls, Math.round(d.usd * 100) / 100, d.unpriced])).toEqual([
      ["2026-11-03", 2, 0, 2],
      ["2026-11-02", 3, 6, 0],
      ["2026-10-31", 1, 1.5, 0],
    ]);
    expect(r.months.map((m) => [m.period, m.calls, Math.round(m.usd * 100) / 100])).toEqual([
      ["2026-11", 5, 6],
      ["2026-10", 1, 1.5],
    ]);
    expect(r.days[0]).toMatchObject({ failed: 1, charsOnly: 4200 });
    expect(r.days[1]!.purposes).toEqual({ summary: 1, recall: 1, import: 1 });
    expect(formatUsd(r.days[0]!)).toBe("unknown");
    expect(formatUsd(r.days[1]!)).toBe("$6.00");
    expect(formatUsd(r.total)).toBe("$7.50 + 2 unpriced");
    expect(formatUsd({ usd: 0.0123, unpriced: 0, calls: 1 })).toBe("$0.0123");
  });
});
