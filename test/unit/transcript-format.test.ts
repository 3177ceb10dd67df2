/** Text formatting of `memsearch transcript` (listing, --turn view, output cap). */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { clock, formatListing, formatTurn, formatTurns, OUTPUT_CAP, TRUNCATED_MARKER } from "../../src/commands/transcript.ts";
import { listTurns, readTranscript } from "../../src/agents/claude/reader.ts";
import type { Turn } from "../../src/transcript/types.ts";

const FIX = join(import.meta.dir, "../fixtures/transcripts");

function turn(i: number, o: Partial<Turn> = {}): Turn {
  return {
    index: i,
    uuid: `${String(i).padStart(8, "0")}-1111-4222-8333-444455556666`,
    timestamp: "2026-03-01T10:00:00.000Z",
    kind: "prompt",
    userText: `prompt ${i}`,
    assistantTexts: [],
    tools: [],
    items: [],
    toolCount: 0,
    line: i + 1,
    start: i * 10,
    end: i * 10 + 10,
    ...o,
  };
}

describe("clock", () => {
  test("local HH:MM:SS, placeholder when unknown", () => {
    const d = new Date("2026-03-01T10:04:05.000Z");
    const p = (n: number) => String(n).padStart(2, "0");
    expect(clock(d.toISOString())).toBe(`${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`);
    expect(clock(undefined)).toBe("--:--:--");
    expect(clock("garbage")).toBe("--:--:--");
  });
});

describe("listing", () => {
  test("All turns (N): then uuid prefix, time, 80-char preview, [N tools]", async () => {
    const index = await listTurns(join(FIX, "compaction.jsonl"));
    const lines = formatListing(index).split("\n");
    const [a, b] = index.turns.map((t) => t.uuid.slice(0, 12));
    expect(lines[0]).toBe("All turns (2):");
    expect(lines[1]).toBe("");
    expect(lines[2]).toBe(`  ${a}  ${clock(index.turns[0]!.timestamp)}  Refactor the store module into three files  [3 tools]`);
    expect(lines[3]).toBe(`  ${b}  ${clock(index.turns[1]!.timestamp)}  Thanks, now update the imports`);
    expect(lines.length).toBe(4);
  });

  test("long and multi-line prompts become one clipped line", () => {
    const t = turn(1, { userText: "word ".repeat(40) + "\n\nsecond paragraph", toolCount: 2 });
    const line = formatListing({ turns: [t] }).split("\n")[2]!;
    const preview = line.slice(2 + 12 + 2 + 8 + 2, line.lastIndexOf("  [2 tools]"));
    expect(preview.length).toBe(80);
    expect(preview.endsWith("...")).toBe(true);
    expect(line).not.toContain("\n");
  });

  test("subagent files are listed after the turns", () => {
    const out = formatListing({ turns: [], subagents: [{ agentId: "a1", path: "/x/agent-a1.jsonl", compaction: false, size: 1 }] });
    expect(out).toContain("Subagents (1):");
    expect(out).toContain("agent-a1");
  });
});

describe("--turn view", () => {
  test("the target is marked >>>, tools one line each, long output clipped visibly", async () => {
    const t = await readTranscript(join(FIX, "split-assistant.jsonl"));
    const big = { ...t.turns[0]!, items: [...t.turns[0]!.items] };
    big.items.push({ kind: "tool", call: { id: "x", name: "Read", input: "/big.txt", output: "y".repeat(3000), outputChars: 3000 } });
    const block = formatTurn(big, true);
    const lines = block.split("\n");
    expect(lines[0]).toBe(`>>> [${clock(big.timestamp)}] ${big.uuid.slice(0, 8)}`);
    expect(lines[1]).toBe("Rename the config loader and run the tests");
    expect(block).toContain("**Assistant**: I'll rename it first.\n\nThen run the tests.");
    expect(block).toContain("  [Bash] git mv src/config.ts src/settings.ts");
    expect(block).toContain("  [Bash] bun test ↵ --bail\n      ✗ error: 1 test failed");
    expect(block).toContain(" …[truncated, 3000 chars total]");
    expect(block).not.toContain("y".repeat(201));
    expect(formatTurn(big, false).startsWith("[")).toBe(true);
  });

  test("unpaired calls say so", async () => {
    const t = await readTranscript(join(FIX, "lagging.jsonl"));
    expect(formatTurn(t.turns[1]!, false)).toContain("  [Grep] CREATE TABLE users in migrations\n      → (no result in the transcript)");
  });

  test("Showing N turns around ID, uncapped when small", () => {
    const turns = [turn(1), turn(2), turn(3)];
    const out = formatTurns(turns, 1, "00000002");
    expect(out.startsWith("Showing 3 turns around 00000002:\n\n")).toBe(true);
    expect(out.split("\n").filter((l) => l.startsWith(">>> ")).length).toBe(1);
    expect(out).not.toContain("truncated");
  });

  test("the whole output is capped; the target survives, nearest turns first", () => {
    const fat = (i: number) =>
      turn(i, {
        userText: `prompt ${i} ` + "lorem ipsum ".repeat(300),
        items: Array.from({ length: 30 }, (_, k) => ({ kind: "tool" as const, call: { id: `${i}-${k}`, name: "Bash", input: `step ${k}`, output: "ok ".repeat(80), outputChars: 240 } })),
      });
    for (const [n, ti] of [
      [7, 3],
      [7, 0],
      [7, 6],
      [300, 150],
    ] as const) {
      const turns = Array.from({ length: n }, (_, i) => fat(i));
      const target = turns[ti]!;
      const out = formatTurns(turns, ti, target.uuid);
      expect(out.length).toBeLessThanOrEqual(OUTPUT_CAP);
      expect(out.endsWith(TRUNCATED_MARKER)).toBe(true);
      expect(out).toContain(`>>> [`);
      expect(out).toContain(`prompt ${ti} lorem`);
      expect(out).toContain("[Bash] step 0");
    }
  });
});
