/**
 * The anchor comment that ties a memory note to its conversation:
 * `<!-- session:ID turn:UUID transcript:PATH -->` (the reference's format, fields percent-encoded).
 */
const ANCHOR_RE = /<!--\s*session:(\S+)\s+turn:(\S+)\s+transcript:(\S+)\s*-->/;

export interface Anchor {
  session: string;
  turn: string;
  transcript: string;
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
  return { session: decodeField(m[1]!), turn: decodeField(m[2]!), transcript: decodeField(m[3]!) };
}

export function formatAnchor(a: Anchor): string {
  return `<!-- session:${encodeField(a.session)} turn:${encodeField(a.turn)} transcript:${encodeField(a.transcript || "-")} -->`;
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
