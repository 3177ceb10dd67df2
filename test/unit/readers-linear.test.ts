/**
 * Three readers of other agents' transcripts stay linear in the length of a session (issue 31: a
 * 2 MB Gemini CLI chat took 7.7 s, a 9 MB Codex rollout made `import` take 33 s). Time is never
 * asserted: the work is counted instead, as the elements every array search and walk visits while
 * a reader runs (a search of the turn's calls, or of the chat's messages, per line is what made
 * them quadratic). Four times the session must cost about four times the visits, not sixteen.
 */
import { describe, expect, test } from "bun:test";
import { parseRollout } from "../../src/agents/codex/rollout.ts";
import { parseEvents } from "../../src/agents/copilot/events.ts";
import { parseChat } from "../../src/agents/gemini/chat.ts";
import { codexRollout, copilotEvents, geminiChat, tinyGeminiChat } from "../helpers/long-transcripts.ts";

const WALKS = ["find", "findIndex", "findLast", "findLastIndex", "some", "every", "filter", "forEach", "map", "flatMap", "reduce", "indexOf", "lastIndexOf", "includes", "slice", "splice"] as const;

/** Runs `fn` (synchronous) counting, for every array method call, the length of the array it walks. */
function visits(fn: () => unknown): number {
  const proto = Array.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const saved = WALKS.map((m) => [m, proto[m]!] as const);
  let n = 0;
  for (const [m, orig] of saved) {
    Object.defineProperty(Array.prototype, m, {
      configurable: true,
      writable: true,
      value: function (this: unknown[], ...args: unknown[]) {
        n += this.length;
        return orig.apply(this, args);
      },
    });
  }
  try {
    fn();
  } finally {
    for (const [m, orig] of saved) Object.defineProperty(Array.prototype, m, { configurable: true, writable: true, value: orig });
  }
  return n;
}

/** Visits at size n and at 4n: their ratio, about 4 for a linear reader, about 16 for a quadratic one. */
function growth(make: (n: number) => string, parse: (text: string) => unknown, n: number): number {
  const small = make(n);
  const large = make(4 * n);
  return visits(() => parse(large)) / visits(() => parse(small));
}

describe("the readers are linear in the session's length", () => {
  test("Gemini CLI: a chat of many turns, each answer rewritten with its results", () => {
    const chat = parseChat(geminiChat(400));
    expect(chat.turns).toHaveLength(400);
    expect(chat.turns[399]!.tools[0]!.output).toBe("file399.ts:1: ledger ");
    expect(growth(geminiChat, (t) => parseChat(t), 400)).toBeLessThan(6);
  });

  test("Gemini CLI: a chat of one-word messages, rewinds and a checkpoint among them", () => {
    const withEdits = (n: number) => {
      const lines = tinyGeminiChat(n * 40).trimEnd().split("\n");
      const mid = Math.floor(lines.length / 2);
      // A rewind to the middle, the messages written again, then a checkpoint of the first ten.
      return [...lines, JSON.stringify({ $rewindTo: `m${mid}` }), ...lines.slice(mid), JSON.stringify({ $set: { messages: lines.slice(1, 11).map((l) => JSON.parse(l)) } }), ...lines.slice(11)].join("\n");
    };
    const chat = parseChat(withEdits(500));
    expect(chat.turns.length).toBeGreaterThan(200);
    expect(growth(withEdits, (t) => parseChat(t), 500)).toBeLessThan(6);
  });

  test("Codex: a rollout of one turn that made many shell calls", () => {
    const r = parseRollout(codexRollout(500));
    expect(r.turns[0]!.tools).toHaveLength(500);
    expect(r.turns[0]!.tools.every((t) => !t.unpaired && t.output?.startsWith("file"))).toBe(true);
    expect(growth(codexRollout, (t) => parseRollout(t), 500)).toBeLessThan(6);
  });

  test("Copilot CLI: a session of one turn that made many tool calls", () => {
    const s = parseEvents(copilotEvents(500));
    expect(s.turns[0]!.tools).toHaveLength(500);
    expect(s.turns[0]!.tools.every((t) => !t.unpaired && t.output?.startsWith("file"))).toBe(true);
    expect(growth(copilotEvents, (t) => parseEvents(t), 500)).toBeLessThan(6);
  });
});
