/**
 * How recall's results are worded where a model reads them: one quoted line per note under a
 * header that says it is data, a model's synthesis with its sources, and the hint. The prompt hook and the evaluation measure injections with these.
 *
 * Everything injected starts with the `[memsearch]` marker and holds no blank line, so the whole
 * text is one paragraph the transcript index and the note writer recognise and leave out
 * (`stripInjected`): a recalled conversation never comes back as a new one.
 */
import { basename } from "node:path";
import { clip, oneLine } from "../core/text.ts";
import { fitLines, FROM_REPOSITORY, neutralise, quote, QUOTED_DATA } from "../core/frame.ts";
import type { StoredChunk } from "../index/types.ts";
import { drill, expandCommand } from "./drill.ts";
import type { RecallResult } from "./recall.ts";

export const NOTES_HEADER = `[memsearch] Memories from earlier sessions that may be relevant (${QUOTED_DATA}; "${FROM_REPOSITORY}": not written on this machine; open one with memsearch expand):`;

/**
 * What a memory gets to say on its line, before the budget decides how many lines fit: at most
 * QUOTE_CHARS, less when the budget is small, so that one line always fits beside the header.
 */
const QUOTE_CHARS = 240;
const LINE_FRAME_CHARS = 140;
export function quoteChars(budget: number, header: string): number {
  return Math.max(40, Math.min(QUOTE_CHARS, budget - header.length - LINE_FRAME_CHARS));
}

/** Body text without the heading line, anchor comment and bullet marks, on one line, `max` characters. */
export function preview(content: string, max = 200): string {
  const body = content
    .replace(/<!--[\s\S]*?-->/g, "")
    .split("\n")
    .filter((l) => !/^#{1,6}\s/.test(l))
    .map((l) => l.replace(/^\s*[-*+]\s+/, "").trim())
    .filter(Boolean)
    .join(" · ");
  return clip(oneLine(body), max);
}

/** `YYYY-MM-DD HH:MM` of a note from its daily file's name and its heading's time, when it has them. */
export function noteWhen(c: Pick<StoredChunk, "source" | "heading">): string | undefined {
  const day = /^(\d{4}-\d{2}-\d{2})\.md$/.exec(basename(c.source))?.[1];
  if (!day) return undefined;
  const time = /^\d{1,2}:\d{2}\b/.exec(c.heading)?.[0];
  return time ? `${day} ${time}` : day;
}

/** One injected note: its date, the command that opens it, and its text quoted as data. */
export function noteLine(c: Pick<StoredChunk, "source" | "heading" | "chunkHash">, text: string, foreign: boolean, curated = false): string {
  const what = curated ? `curated ${basename(c.source)}` : (noteWhen(c) ?? basename(c.source));
  return `- ${what} · ${expandCommand(c.chunkHash)} · ${quote(text, { foreign })}`;
}

/**
 * The context the hook gives for these notes, as written on this machine, within `budget`
 * characters ("" when none fits): the evaluation measures injections with it.
 */
export function notesText(chunks: StoredChunk[], budget: number): string {
  const width = quoteChars(budget, NOTES_HEADER);
  return fitLines(NOTES_HEADER, chunks.map((c) => noteLine(c, preview(c.content, width), false)), budget).text;
}

/** The one line the `hint` mode gives (and the hook when a search cannot answer in time). */
export function hintText(chunks: number | undefined): string {
  return `[memsearch] Memory available: ${chunks ? `${chunks} notes` : "notes"} from earlier sessions of this project; the memory-recall skill searches them.`;
}

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
