/**
 * The anchor comment that ties a memory note to its conversation:
 * `<!-- session:ID turn:UUID transcript:PATH -->` (the reference's format, fields percent-encoded),
 * with ` agent:NAME` before the close when the turn was with another agent than Claude Code. A
 * Claude Code note keeps the reference's exact format, so every older reader still reads it.
 */
const ANCHOR_RE = /<!--\s*session:(\S+)\s+turn:(\S+)\s+transcript:(\S+?)(?:\s+agent:([a-z][a-z0-9-]{0,31}))?\s*-->/;

/** The agent of an anchor without one: every note written before agents were named was Claude Code's. */
export const DEFAULT_AGENT = "claude";

export interface Anchor {
  session: string;
  turn: string;
  transcript: string;
  /** Absent: Claude Code (see agentOf). */
  agent?: string;
}

/** Which agent a note's turn was with; a note without an anchor (`memsearch remember`, hand-written) counts as the default. */
export function agentOf(a: Anchor | undefined): string {
  return a?.agent ?? DEFAULT_AGENT;
}

// Readers split the anchor on whitespace, so a path with spaces must not contain any; `>` could
// close the HTML comment early; a control character (a NUL in a hostile session id) must not
// reach the markdown. `%` is encoded so decoding is exact; a lone surrogate, which no encoding
// can carry, becomes U+FFFD.
function encodeField(value: string): string {
  return value.toWellFormed().replace(/[%>\s\x00-\x1f\x7f-\x9f]/g, (ch) => encodeURIComponent(ch));
}

function decodeField(value: string): string {
  // Tolerant: an anchor written by another tool may hold a raw `%` that is not an escape.
  return value.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** The anchor comment on a line, with its fields decoded; undefined when there is none. */
export function parseAnchor(line: string): Anchor | undefined {
  const m = ANCHOR_RE.exec(line);
  if (!m) return undefined;
  const a: Anchor = { session: decodeField(m[1]!), turn: decodeField(m[2]!), transcript: decodeField(m[3]!) };
  if (m[4]) a.agent = m[4];
  return a;
}

export function formatAnchor(a: Anchor): string {
  const agent = a.agent && a.agent !== DEFAULT_AGENT ? ` agent:${a.agent}` : "";
  return `<!-- session:${encodeField(a.session)} turn:${encodeField(a.turn)} transcript:${encodeField(a.transcript || "-")}${agent} -->`;
}

/** A note's text as a person reads it: its anchor lines out (the commands show them as `Session:`/`Turn:` lines). */
export function withoutAnchorLines(content: string): string {
  return content
    .split("\n")
    .filter((line) => !(line.trimStart().startsWith("<!--") && parseAnchor(line) && line.trim().endsWith("-->")))
    .join("\n");
}

export function anchorsIn(content: string): Anchor[] {
  const out: Anchor[] = [];
  for (const line of content.split("\n")) {
    if (!line.includes("<!--")) continue;
    const a = parseAnchor(line);
    if (a) out.push(a);
  }
  return out;
}
