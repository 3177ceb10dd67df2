/**
 * How the prompt hook words what recall found (recall/turns.ts finds the conversation turns): past
 * conversations of the project when no note is relevant enough (`hooks.recall = "inject"`), and a
 * model's synthesis of notes and conversations (`"synthesize"`).
 *
 * Everything injected starts with the `[memsearch]` marker and holds no blank line, so the whole
 * text is one paragraph the transcript index and the note writer recognise and leave out
 * (`stripInjected`): a recalled conversation never comes back as a new one.
 */
import { basename } from "node:path";
import { clip, localMinute, oneLine } from "../core/text.ts";
import type { RecallResult } from "../recall/recall.ts";
import { drill, transcriptCommand } from "../recall/drill.ts";
import type { TurnHit } from "../recall/turns.ts";
import { sanitize } from "../core/redact.ts";
import { fitLines, neutralise, quote, QUOTED_DATA } from "../core/frame.ts";

/** One conversation turn as an injected line: date, who, how to open it, and what was said, quoted. */
export function turnLine({ hit }: TurnHit, chars: number): string {
  const when = hit.ts ? localMinute(hit.ts) : "date unknown";
  const files = hit.paths.length ? ` (files: ${neutralise(hit.paths.slice(0, 4).map((p) => basename(p)).join(", "))})` : "";
  const said = clip(oneLine(sanitize(hit.snippet)), chars);
  return `- ${when}, ${hit.role}${files} · ${transcriptCommand(hit.path, hit.turnUuid)} · ${quote(said)}`;
}

/** The header of injected conversation turns (inject mode when no note passed the gate). */
export const TURNS_HEADER = `[memsearch] Earlier conversations of this project that may be relevant (no note matched; ${QUOTED_DATA}; the command on a line opens its turn):`;

/** The model's synthesis with its sources, as one paragraph under the marker, within `budget` characters. */
export function formatSynthesis(answer: string, provider: string, results: RecallResult[], budget: number): string {
  const header = `[memsearch] From earlier sessions of this project (${provider}'s summary of ${results.length} search result${results.length === 1 ? "" : "s"}, notes and conversation turns; ${QUOTED_DATA}; check a point with its source):`;
  // The model read notes that may hold planted text: its answer is framed like them.
  const body = answer
    .split("\n")
    .map((l) => neutralise(l.trimEnd()))
    .filter((l) => l.trim().length > 0);
  const sources = results.map((r, i) => {
    const d = drill(r);
    return `[result ${i + 1}] ${r.date ?? "date unknown"}: ${[d.expand, d.transcript].filter(Boolean).join(" | ")}`;
  });
  const tail = fitLines("Sources:", sources, Math.floor(budget / 2)).text;
  const room = budget - header.length - tail.length - 2;
  const middle = clip(body.join("\n"), Math.max(100, room));
  return clip(`${header}\n${middle}\n${tail}`, budget);
}
