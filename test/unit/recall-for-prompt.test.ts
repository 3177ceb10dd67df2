/**
 * What a typed prompt gets (src/recall/for-prompt.ts) once the gate has spoken: a note the session
 * already has is not given again, and nothing else is taken for one; a note that does not fit the
 * budget is said to be so.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadContext } from "../../src/core/context.ts";
import { searchChunks } from "../../src/index/search.ts";
import { recordSessionStart } from "../../src/memory/injections.ts";
import { recentSessions } from "../../src/memory/recent.ts";
import { recallForPrompt } from "../../src/recall/for-prompt.ts";
import { storeOf } from "../helpers/store-of.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function project(settings: Record<string, unknown> = {}) {
  const root = mkdtempSync(join(tmpdir(), "ms-for-prompt-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, ".git"));
  const ctx = loadContext({ "embedding.provider": "none", ...settings }, root, { HOME: root, MEMSEARCH_HOME: join(root, "home") });
  mkdirSync(ctx.project.memoryDir, { recursive: true });
  return ctx;
}

/** A day of two sessions whose turns a reader numbered by line (`line-5`): the same id in each. */
const DAY = [
  "# 2026-11-20",
  "",
  "## Session 09:00",
  "",
  "### 09:00",
  "<!-- session:sess-a turn:line-5 transcript:/p/a.jsonl agent:codex -->",
  "- User asked: tune the zygomorphic quokka parser's buffer",
  "- Outcome: the quokka parser reads in 64 KiB blocks",
  "",
  "## Session 11:00",
  "",
  "### 11:00",
  "<!-- session:sess-b turn:line-5 transcript:/p/b.jsonl agent:codex -->",
  "- User asked: fix the zygomorphic quokka parser crash on empty input",
  "- Outcome: the zygomorphic quokka parser returns no rows for an empty file",
  "",
].join("\n");

test("a line id SessionStart gave in one session does not hold back another session's turn of the same id", async () => {
  const ctx = project();
  const store = storeOf({ [join(ctx.project.memoryDir, "2026-11-20.md")]: DAY });
  const notes = (q: { query: string; topK: number; background?: boolean }) => searchChunks({ ...q, store, config: ctx.config, embedder: null });
  // SessionStart gives session A's turn whole: its record names it with its session.
  const start = recentSessions([{ name: "2026-11-20.md", content: DAY.split("## Session 11:00")[0]! }], { lines: 80, chars: 9_000, ours: () => true });
  expect(start.turns).toEqual(["sess-a line-5"]);
  recordSessionStart(ctx.project.dataDir, "new", start.turns);
  const out = await recallForPrompt({ prompt: "the zygomorphic quokka parser crashes on empty input again", session: "new" }, { ctx, notes });
  expect(out.given.map((g) => g.session)).toEqual(["sess-b"]);
  // Session A's own turn is held back.
  const again = await recallForPrompt({ prompt: "tune the zygomorphic quokka parser buffer blocks", session: "new" }, { ctx, notes });
  expect(again.repeated.map((g) => g.session)).toEqual(["sess-a"]);
});

test("a note through the gate that no budget fits is on record as over the budget, not as given before", async () => {
  const ctx = project({ "hooks.inject_max_chars": 200 });
  const store = storeOf({ [join(ctx.project.memoryDir, "2026-11-20.md")]: DAY });
  const notes = (q: { query: string; topK: number; background?: boolean }) => searchChunks({ ...q, store, config: ctx.config, embedder: null });
  const out = await recallForPrompt({ prompt: "the zygomorphic quokka parser crashes on empty input again", session: "new" }, { ctx, notes });
  expect(out.context).toBeUndefined();
  expect(out.record.considered.some((c) => c.outcome === "over-budget")).toBe(true);
  expect(out.record.reason).toContain("hooks.inject_max_chars");
});
