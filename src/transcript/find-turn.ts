import type { Turn } from "./types.ts";

/**
 * Turn whose uuid matches `id` (exact, then prefix), else the turn of that prompt id (a note
 * written from what the hooks saw, before the transcript had the turn, is anchored by it).
 */
export function findTurn(turns: readonly Pick<Turn, "uuid" | "promptId">[], id: string): number | undefined {
  const q = id.trim().replace(/\.+$/, "").toLowerCase();
  if (!q) return undefined;
  let i = turns.findIndex((t) => t.uuid.toLowerCase() === q);
  if (i < 0) i = turns.findIndex((t) => t.uuid.toLowerCase().startsWith(q));
  if (i < 0) i = turns.findIndex((t) => t.promptId?.toLowerCase() === q);
  return i < 0 ? undefined : i;
}
