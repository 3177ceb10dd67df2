/**
 * What the memory cost, through the compiled binary: `import --summarizer claude` records one
 * ledger line per claude call, and `memsearch stats` adds the ledger up per month and day.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { markLine } from "../../src/core/machine-mark.ts";
import { tempProject } from "../helpers/cli.ts";
import { fakeClaudeCalls, writeFakeClaude } from "../helpers/fake-claude.ts";

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function project() {
  const p = tempProject({ notes: "none" });
  cleanup.push(p.root, p.home);
  return p;
}

describe("the model-call ledger", () => {
  test("import --summarizer claude: one ledger line per claude call", async () => {
    const p = project();
    const dir = join(p.home, ".claude", "projects", p.root.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(dir, { recursive: true });
    const b = { parentUuid: null, isSidechain: false, userType: "external", cwd: p.root, sessionId: "s-cost", version: "2.1.40" };
    const lines = [1, 2, 3].flatMap((i) => [
      { ...b, type: "user", uuid: `u${i}`, timestamp: `2026-03-02T10:0${i}:00Z`, message: { role: "user", content: `question number ${i} about the redis pool` } },
      { ...b, type: "assistant", uuid: `a${i}`, timestamp: `2026-03-02T10:0${i}:05Z`, message: { id: `m${i}`, role: "assistant", content: [{ type: "text", text: `answer ${i}` }] } },
    ]);
    const file = join(dir, "s-cost.jsonl");
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    utimesSync(file, new Date("2026-03-02T12:00:00Z"), new Date("2026-03-02T12:00:00Z"));
    const bin = join(p.home, "bin");
    mkdirSync(bin);
    writeFakeClaude(bin);
    const log = join(p.home, "claude-log");
    const r = await p.ms(["import", "--summarizer", "claude"], { PATH: `${bin}:${process.env.PATH}`, FAKE_CLAUDE_LOG: log, FAKE_CLAUDE_MODE: "echo" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Imported 3 turns");
    const ledger = readFileSync(join(p.root, ".memsearch", "model-calls.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(ledger).toHaveLength(fakeClaudeCalls(log).length);
    expect(ledger).toHaveLength(3);
    for (const c of ledger) expect(c).toMatchObject({ provider: "claude", model: "haiku", purpose: "import", outcome: "ok" });
  }, 60_000);

  test("memsearch stats: calls, tokens and dollars per month and day, from the dated price table", async () => {
    const p = project();
    // Lines as this machine (the project's home, its key) writes them.
    const call = (at: string, over: Record<string, unknown> = {}) => markLine(JSON.stringify({ v: 1, at, provider: "claude", model: "haiku", purpose: "summary", inChars: 4000, outChars: 300, inTokens: 1_000_000, outTokens: 100_000, ms: 2100, outcome: "ok", ...over }), p.env as NodeJS.ProcessEnv).trimEnd();
    mkdirSync(join(p.root, ".memsearch"), { recursive: true });
    writeFileSync(
      join(p.root, ".memsearch", "model-calls.jsonl"),
      [
        call("2026-10-30T12:00:00"),
        call("2026-11-02T12:00:00"),
        call("2026-11-02T13:00:00", { provider: "ollama", model: "llama3.2", purpose: "import" }),
        call("2026-11-02T14:00:00", { model: "mystery-model" }),
        "not a call",
      ].join("\n") + "\n",
    );
    const r = await p.ms(["stats"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Model calls: 4, $3.00 + 1 unpriced (claude list prices as of 2025-11-24; Ollama and the extract cost nothing)");
    expect(r.stdout).toContain("  2026-11: 3 calls, 3,000,000 tokens in / 300,000 out, $1.50 + 1 unpriced");
    expect(r.stdout).toContain("  2026-10: 1 call, 1,000,000 tokens in / 100,000 out, $1.50");
    expect(r.stdout).toContain("  2026-11-02: 3 calls");
    const j = JSON.parse((await p.ms(["stats", "-j"])).stdout);
    expect(j.model_calls.months).toHaveLength(2);
    expect(j.model_calls.total).toMatchObject({ calls: 4, unpriced: 1 });

    const empty = project();
    expect((await empty.ms(["stats"])).stdout).toContain("Model calls: none recorded");
  }, 60_000);

  test("a ledger that came with the repository shows no cost: only lines this machine wrote are counted", async () => {
    const p = project();
    const invented = (at: string) => JSON.stringify({ v: 1, at, provider: "claude", model: "opus", purpose: "summary", inChars: 4000, outChars: 300, inTokens: 90_000_000, outTokens: 9_000_000, ms: 2100, outcome: "ok" });
    mkdirSync(join(p.root, ".memsearch"), { recursive: true });
    const ledger = join(p.root, ".memsearch", "model-calls.jsonl");
    // Committed lines, one of them marked by another machine's key (a copied line is not this machine's).
    const other = tempProject({ notes: "none" });
    cleanup.push(other.root, other.home);
    writeFileSync(ledger, [invented("2026-11-02T12:00:00"), invented("2026-11-03T12:00:00"), markLine(invented("2026-11-04T12:00:00"), other.env as NodeJS.ProcessEnv).trimEnd()].join("\n") + "\n");
    const r = await p.ms(["stats"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Model calls: none recorded");
    expect(r.stdout).toContain("3 ledger lines not written on this machine");
    expect(r.stdout).not.toContain("$");
    expect(JSON.parse((await p.ms(["stats", "-j"])).stdout).model_calls.total.calls).toBe(0);
  }, 60_000);
});
