/**
 * What SessionStart's context gives a new session, as the sessions whose notes it holds: the
 * benchmark of real work (real.ts) counts a positive as covered when this context, or the prompt
 * hook's injection, holds a relevant session.
 */
import type { Context } from "../../src/core/context.ts";
import { notesIn, readDailyTexts, recentMemory } from "../../src/memory/journal.ts";

/** The hook's default `hooks.session_start_lines`, the window of lines it keeps of each of the two newest files. */
export function sessionStartGiven(ctx: Context, _session: string, _now: number): string[] {
  const week = readDailyTexts(ctx.project.memoryDir, 7);
  const kept = recentMemory(week, { files: 2, linesPerFile: ctx.config["hooks.session_start_lines"] });
  const out = new Set<string>();
  for (const r of kept) {
    const day = week.find((d) => d.name === r.file);
    if (!day) continue;
    const lines = new Set(r.lines.map((l) => l.replace(/^\s*[-*]\s+/, "").trim()));
    for (const n of notesIn(day.content, day.name)) if (n.anchor && n.bullets.some((b) => lines.has(b.trim()))) out.add(n.anchor.session);
  }
  return [...out];
}
