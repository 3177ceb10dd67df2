/**
 * The reader, the turn listing and the last-turn extraction over every real Claude Code transcript
 * in test/fixtures/transcripts/<source>/ (subagent files included), checked against facts computed here
 * independently with a plain JSON.parse of each line.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { formatListing, formatTurns } from "../../src/commands/transcript.ts";
import { extractLastTurn, LAST_TURN_OUTPUT_CHARS } from "../../src/agents/claude/last-turn.ts";
import { listTurns, readTranscript, readTurnRange } from "../../src/agents/claude/reader.ts";
import { listSubagents } from "../../src/agents/claude/subagents.ts";
import type { Transcript } from "../../src/agents/claude/types.ts";

import { FIXTURES as ROOT, realTranscripts } from "../helpers/fixtures.ts";
const BASE64_RUN = /[A-Za-z0-9+/]{200,}/;

type Obj = Record<string, any>;

/** What the file says, computed without the reader. */
function facts(path: string) {
  const subagentFile = /[\\/]subagents[\\/]agent-[^\\/]+\.jsonl$/.test(path);
  const entries: Obj[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object" && !Array.isArray(v)) entries.push(v);
    } catch {
      // not an entry
    }
  }
  const main = (e: Obj) => subagentFile || e.isSidechain !== true;
  const uuids = new Set(entries.map((e) => e.uuid).filter((u) => typeof u === "string"));
  const userUuids = new Set(entries.filter((e) => e.type === "user").map((e) => e.uuid));
  let upper = 0; // user entries with text: every possible turn start
  let lower = 0; // of those, plain typed text: certain turn starts
  const resultIds = new Set<string>();
  const toolUseIds = new Set<string>();
  const thinking: string[] = [];
  let boundaries = 0;
  let sessionId: string | undefined;
  for (const e of entries) {
    sessionId ??= typeof e.sessionId === "string" ? e.sessionId : undefined;
    if (e.type === "system" && e.subtype === "compact_boundary" && main(e)) boundaries++;
    const content = e.message?.content;
    if (e.type === "assistant" && main(e) && Array.isArray(content)) {
      for (const b of content) {
        if (b?.type === "tool_use") toolUseIds.add(b.id);
        if (b?.type === "thinking" && typeof b.thinking === "string" && b.thinking.length > 40) thinking.push(b.thinking.slice(0, 60));
      }
    }
    if (e.type !== "user" || !main(e)) continue;
    if (Array.isArray(content)) for (const b of content) if (b?.type === "tool_result") resultIds.add(b.tool_use_id);
    if (e.isMeta || e.isCompactSummary) continue;
    let text: string | undefined;
    if (typeof content === "string") text = content;
    else if (Array.isArray(content) && !content.some((b) => b?.type === "tool_result")) {
      const texts = content.filter((b) => b?.type === "text").map((b) => b.text);
      if (texts.length) text = texts.join("\n");
    }
    if (text === undefined) continue;
    upper++;
    const t = text.trim();
    if (t && !t.startsWith("<") && !t.startsWith("[Request interrupted") && !t.startsWith("Caveat:") && !t.startsWith("This session is being continued")) lower++;
  }
  return { subagentFile, uuids, userUuids, upper, lower, resultIds, toolUseIds, thinking, boundaries, sessionId };
}

/** Every string the reader captured, for content checks. */
function capturedTexts(t: Transcript): string[] {
  const out: string[] = [];
  for (const turn of t.turns) {
    out.push(turn.userText, ...turn.assistantTexts);
    for (const c of turn.tools) out.push(c.input, c.output ?? "");
    for (const it of turn.items) if (it.kind === "user") out.push(it.text);
  }
  return out;
}

const files = realTranscripts(ROOT);

test("the real fixtures are there", () => {
  expect(existsSync(ROOT)).toBe(true);
  expect(files.length).toBeGreaterThanOrEqual(15);
  expect(files.some((f) => f.includes("/subagents/agent-"))).toBe(true);
});

describe.each(files.map((f) => [relative(ROOT, f), f]))("%s", (_name, path) => {
  const f = facts(path);

  test("turns, pairing, content hygiene", async () => {
    const t = await readTranscript(path);
    // Turn count within the file's user prompts.
    expect(t.turns.length).toBeLessThanOrEqual(f.upper);
    expect(t.turns.length).toBeGreaterThanOrEqual(f.lower);
    expect(t.subagent).toBe(f.subagentFile);
    // Turns open at user entries of this file, in file order.
    let prevStart = -1;
    for (const turn of t.turns) {
      expect(f.userUuids.has(turn.uuid)).toBe(true);
      expect(turn.start).toBeGreaterThan(prevStart);
      expect(turn.end).toBeGreaterThan(turn.start);
      prevStart = turn.start;
      expect(turn.userText.trim().length).toBeGreaterThan(0);
      expect(turn.toolCount).toBe(turn.tools.length);
    }
    // Every tool call paired with a result of the same id, or explicitly unpaired.
    let calls = 0;
    for (const turn of t.turns) {
      for (const c of turn.tools) {
        calls++;
        expect(f.toolUseIds.has(c.id)).toBe(true);
        if (c.unpaired) {
          expect(c.output).toBeUndefined();
          expect(f.resultIds.has(c.id)).toBe(false);
        } else {
          expect(typeof c.output).toBe("string");
          expect(f.resultIds.has(c.id)).toBe(true);
        }
      }
    }
    expect(calls).toBeLessThanOrEqual(f.toolUseIds.size);
    // Compactions: one per boundary, each with its summary; a summary is never a turn.
    expect(t.compactions.filter((c) => c.uuid).length).toBe(f.boundaries);
    for (const c of t.compactions) {
      expect(c.summary?.startsWith("This session is being continued")).toBe(true);
      expect(t.turns.some((turn) => turn.userText.startsWith("This session is being continued"))).toBe(false);
    }
    // Summaries are trusted only when their leaf is in this file.
    for (const s of t.summaries) expect(f.uuids.has(s.leafUuid)).toBe(true);
    // No base64, no injected context, no thinking in anything captured.
    for (const s of capturedTexts(t)) {
      expect(s).not.toMatch(BASE64_RUN);
      expect(s).not.toContain("<system-reminder>");
      expect(s).not.toContain("[memsearch");
      for (const th of f.thinking) expect(s).not.toContain(th);
    }
  });

  test("listing = full read, and ranges re-read the same turns", async () => {
    const full = await readTranscript(path);
    const index = await listTurns(path);
    const key = (x: Transcript) => x.turns.map((t) => [t.uuid, t.timestamp, t.kind, t.userText, t.toolCount, t.start, t.end, t.line]);
    expect(key(index)).toEqual(key(full));
    expect(index.sessionId).toBe(full.sessionId);
    for (let i = 0; i < index.turns.length; i++) {
      const [one] = await readTurnRange(index, i, i);
      expect(one).toEqual(full.turns[i]!);
    }
    if (index.turns.length) {
      const all = await readTurnRange(index, 0, index.turns.length - 1);
      expect(all).toEqual(full.turns);
    }
    const listing = formatListing(index);
    expect(listing.split("\n")[0]).toBe(`All turns (${index.turns.length}):`);
    expect(listing).not.toMatch(BASE64_RUN);
    for (const [i, turn] of index.turns.entries()) {
      const line = listing.split("\n")[i + 2]!;
      expect(line.startsWith(`  ${turn.uuid.slice(0, 12).padEnd(12)}  `)).toBe(true);
      if (turn.toolCount) expect(line.endsWith(`[${turn.toolCount} tools]`)).toBe(true);
    }
    if (full.turns.length) {
      const ti = Math.floor(full.turns.length / 2);
      const shown = formatTurns(full.turns, ti, full.turns[ti]!.uuid.slice(0, 8));
      expect(shown.length).toBeLessThanOrEqual(12000);
      expect(shown).toContain(`>>> [`);
      expect(shown.split("\n").filter((l) => l.startsWith(">>> ")).length).toBe(1);
      expect(shown).not.toMatch(BASE64_RUN);
      for (const th of f.thinking) expect(shown).not.toContain(th);
    }
  });

  test("last turn", async () => {
    const [index, last] = await Promise.all([listTurns(path), extractLastTurn(path)]);
    if (index.turns.length === 0) {
      expect(last).toBeUndefined();
      return;
    }
    expect(last).toBeDefined();
    const l = last!;
    expect(l.turnUuid).toBe(index.turns[index.turns.length - 1]!.uuid);
    expect(f.uuids.has(l.turnUuid)).toBe(true);
    expect(l.sessionId).toBe(f.sessionId ?? basename(path, ".jsonl"));
    expect(l.text.startsWith(`[User]: ${l.userText}`)).toBe(true);
    expect(l.text).not.toMatch(BASE64_RUN);
    expect(l.text).not.toContain("<system-reminder>");
    expect(l.text).not.toContain("[memsearch");
    for (const th of f.thinking) expect(l.text).not.toContain(th);
    for (const c of l.tools) {
      expect(c.output === undefined ? c.unpaired : c.output.length <= LAST_TURN_OUTPUT_CHARS + 40).toBe(true);
      expect(l.text).toContain(`[Claude Code calls tool]: ${c.name}`);
    }
    const toolLines = l.text.split("\n").filter((x) => x.startsWith("[Claude Code calls tool]: ")).length;
    expect(toolLines).toBe(l.tools.length);
    for (const a of l.assistantTexts) expect(l.text).toContain(`[Claude Code]: ${a}`);
  });
});

test("spotter sessions list their subagent files", async () => {
  const session = join(ROOT, "spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl");
  const subs = await listSubagents(session);
  expect(subs.map((s) => s.agentId)).toEqual(["a93ccab", "aa84377", "acompact-70d8e7"]);
  expect(subs.map((s) => s.compaction)).toEqual([false, false, true]);
  for (const s of subs) {
    const t = await readTranscript(s.path);
    expect(t.subagent).toBe(true);
    expect(t.turns.length).toBe(1);
    expect(t.sessionId).toBe("fa812bfe-b295-4cca-9c2f-fdf01028cb46");
  }
});

test("the largest fixture lists quickly", async () => {
  const largest = files.map((p) => [statSync(p).size, p] as const).sort((a, b) => b[0] - a[0])[0]![1];
  await listTurns(largest); // warm up
  const t0 = performance.now();
  const index = await listTurns(largest);
  const ms = performance.now() - t0;
  expect(index.turns.length).toBeGreaterThan(0);
  // Tens of ms on a quiet machine; generous for loaded CI runners.
  expect(ms).toBeLessThan(1000);
});
