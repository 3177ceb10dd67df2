import type { RecallResult } from "./recall.ts";

/**
 * The commands that open a result one layer down: `expand` for a note's whole section,
 * `transcript --turn` for the conversation behind it. Every face of recall (the CLI, the prompt
 * hook's lines and synthesis, the model's sources) prints them from here.
 */

/** A path as one shell word: left bare when it is plainly safe, else single-quoted. */
export function shellQuote(s: string): string {
  return /^[\w./~@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

export function expandCommand(chunkHash: string): string {
  return `memsearch expand ${chunkHash}`;
}

export function transcriptCommand(path: string, turn: string): string {
  return `memsearch transcript ${shellQuote(path)} --turn ${turn}`;
}

/** A result's way down: its note's section, and its turn (its own hit, the note's anchor, or the session row's turn). */
export function drill(r: RecallResult): { expand?: string; transcript?: string } {
  const out: { expand?: string; transcript?: string } = {};
  if (r.note) out.expand = expandCommand(r.note.chunkHash);
  const c = r.sessionContent;
  const t = r.transcript ? { path: r.transcript.path, turn: r.transcript.turnUuid } : (r.anchorTranscript ?? (c?.turnUuid ? { path: c.path, turn: c.turnUuid } : undefined));
  if (t) out.transcript = transcriptCommand(t.path, t.turn);
  return out;
}
