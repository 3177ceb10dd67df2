/** A project's notes, newest first, a page at a time; and one day's notes over the projects in view. */
import { noteAgent } from "../core/anchor.ts";
import type { IndexSummary } from "../index/format.ts";
import type { DayPage, TimelinePage } from "./types.ts";
import { DAY_NOTES, noteItem, type HubProjects } from "./projects.ts";

/** A project's notes, newest first; with `agent`, only those of turns with that agent. */
export async function timelineOf(hub: HubProjects, id: string, offset: number, limit: number, agent?: string): Promise<TimelinePage> {
  const p = hub.project(id);
  const notes = agent === undefined ? hub.notes(p) : hub.notes(p).filter((n) => noteAgent(n.anchor) === agent);
  let summary: IndexSummary | undefined;
  try {
    summary = await hub.indexSummary(p);
  } catch {}
  return {
    project: await hub.card(p, notes, summary),
    total: notes.length,
    offset,
    notes: notes.slice(offset, offset + limit).map((n) => noteItem(p.id, n)),
  };
}

/** A day's notes in every project in view, newest first within each project. */
export function dayPage(hub: HubProjects, date: string): DayPage {
  const groups: DayPage["groups"] = [];
  let total = 0;
  let previous: string | null = null;
  let next: string | null = null;
  for (const p of hub.list) {
    const notes = hub.notes(p);
    const mine = notes.filter((n) => n.day === date);
    for (const n of notes) {
      if (n.day < date && (previous === null || n.day > previous)) previous = n.day;
      if (n.day > date && (next === null || n.day < next)) next = n.day;
    }
    if (!mine.length) continue;
    total += mine.length;
    // Capped per project: one busy project must not hide the others of the day.
    groups.push({ project: p.id, projectName: p.name, total: mine.length, notes: mine.slice(0, DAY_NOTES).map((n) => noteItem(p.id, n)) });
  }
  return { scope: hub.scope, date, total, groups, previous, next };
}
