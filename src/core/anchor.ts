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

/** The session of every note `memsearch remember` writes: its turn is the note's own id. */
export const MANUAL_SESSION = "manual";

/** Who wrote a hand-written note (`memsearch remember`, or a section added to the markdown by hand): the user. */
export const HAND_AGENT = "you";

/** Which agent a note's turn was with: the anchor's, Claude Code when it names none, and `you` for a `memsearch remember` note. */
export function agentOf(a: Anchor | undefined): string {
  if (a?.session === MANUAL_SESSION) return HAND_AGENT;
  return a?.agent ?? DEFAULT_AGENT;
}

/**
 * Who wrote a section of a daily memory file: as agentOf, and `you` for one without an anchor
 * (no hook writes one: it was added by hand). Not for other markdown (curated files), which has
 * no anchors at all.
 */
export function noteAgent(a: Anchor | undefined): string {
  return a ? agentOf(a) : HAND_AGENT;
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

/**
 * A turn id a reader made of a line number (`line-N`: an entry without a uuid in Claude Code's
 * oldest files, a Codex rollout or Copilot CLI session without turn ids): unique within its
 * session only, so such a turn is named by its session and id together.
 */
export function isLineId(id: string): boolean {
  return /^line-\d+$/.test(id);
}

/** A key that names one turn across sessions: its id, or for a line id its session and id. */
export function turnKey(session: string | undefined, turn: string): string {
  return isLineId(turn) && session !== undefined ? `${session} ${turn}` : turn;
}

/**
 * Whether a note's anchor (or a forgotten turn) names this turn: by its id, and for a line id by
 * its session too. A turn id of any other kind is unique on its own (a turn copied into a resumed
 * session keeps it, and is one turn). `session` undefined: not known, any session's.
 */
export function namesTurn(a: { turn: string; session?: string }, turn: string, session: string | undefined): boolean {
  return a.turn === turn && (!isLineId(turn) || session === undefined || a.session === undefined || a.session === session);
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

/** The anchor as a person reads it, the way `memsearch expand` heads a section: `[Session: ID  Turn: ID]`. */
export function anchorLine(a: Anchor): string {
  return `[Session: ${a.session}  Turn: ${a.turn}${a.agent && a.agent !== DEFAULT_AGENT ? `  Agent: ${a.agent}` : ""}]`;
}

/** Text for a person: each anchor comment replaced by its anchorLine (the JSON keeps the comment as written). */
export function showAnchors(text: string): string {
  if (!text.includes("<!--")) return text;
  return text.replace(new RegExp(ANCHOR_RE.source, "g"), (comment) => {
    const a = parseAnchor(comment);
    return a ? anchorLine(a) : comment;
  });
}
