/**
 * Text shaping shared by every layer: one line, clipped, the first line of it. Lengths are in
 * UTF-16 code units (what `.length` counts), but a cut never splits a surrogate pair, so what is
 * kept is always valid text (a lone surrogate would become U+FFFD or a `\ud83d` escape in JSON).
 *
 * Redaction is not done here: a text that may hold a secret is clipped through clipRedacted
 * (redact.ts), which redacts before it cuts.
 */

/** Any text, or the message of anything thrown, with every run of white space made one space. */
export function oneLine(value: unknown): string {
  const text = typeof value === "string" ? value : value instanceof Error ? value.message : String(value);
  return text.replace(/\s+/g, " ").trim();
}

/** Anything `stripControls` would change: a control character (C0 but tab and newline, DEL, C1) or a CR. */
const CONTROL_HINT = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
/**
 * An ANSI escape sequence whole (CSI `ESC [ … final`, OSC `ESC ] … BEL|ST`, the two- and
 * three-character ones), a CR or CRLF, or any other control character. Every quantifier is
 * bounded, so a run of unfinished sequences costs linear time; an unfinished one loses only its ESC.
 */
const CONTROL = /\x1b(?:\[[0-?]{0,32}[ -/]{0,4}[@-~]|\][^\x00-\x1f]{0,1024}(?:\x07|\x1b\\)|[ -/]{1,3}[0-~]|[@-Z\\^_])|\r\n?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

function controlReplacement(m: string): string {
  const c = m.charCodeAt(0);
  return c === 13 ? "\n" : c === 27 ? "" : " ";
}

/**
 * `text` without the characters that do harm where notes go: a NUL makes the file binary to
 * grep, git and our own scanner; an escape sequence recolours or rewrites the terminal a note
 * is printed in; a lone CR hides what came before it on the line; a lone surrogate is no text at
 * all. Tabs and newlines stay, CR and CRLF become a newline, escape sequences go whole, lone
 * surrogates become U+FFFD, every other control character becomes a space (a NUL often separates
 * words: `find -print0`, `xargs -0`).
 */
export function stripControls(text: string): string {
  const out = CONTROL_HINT.test(text) ? text.replace(CONTROL, controlReplacement) : text;
  return out.isWellFormed() ? out : out.toWellFormed();
}

/** The first line holding something other than white space, trimmed ("" when there is none). */
export function firstLine(text: string): string {
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t) return t;
  }
  return "";
}

/** The first `n` code units of `text`, one fewer when the last would be half of a surrogate pair. */
function head(text: string, n: number): string {
  if (n <= 0) return "";
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/**
 * At most `max` code units, ending in `ellipsis` when something was cut: for a line that must fit
 * a width or a budget (a hook's context, an error message).
 */
export function clip(text: string, max: number, ellipsis = "…"): string {
  return text.length > max ? head(text, max - ellipsis.length) + ellipsis : text;
}

/**
 * The first `max` code units and a marker giving the whole length, for a reader who may go and
 * fetch the rest. `total` is the length before an earlier cut, when `text` is already a part.
 */
export function clipMarked(text: string, max: number, total = text.length): string {
  if (text.length <= max && total <= max) return text;
  return `${head(text, max)} …[truncated, ${total} chars total]`;
}

/** At most about `max` code units, keeping the start and the end, which say the most in a long turn. */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const start = Math.floor(max / 3);
  const end = max - start;
  const tail = text.slice(-end);
  // Drop the low half of a pair whose high half was cut off.
  const lowFirst = tail.charCodeAt(0) >= 0xdc00 && tail.charCodeAt(0) <= 0xdfff;
  return `${head(text, start)}\n[… ${text.length - max} characters omitted …]\n${lowFirst ? tail.slice(1) : tail}`;
}

/** A duration as people read it: `0.3s`, `90s`. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))}s`;
}

export { timeAgo } from "./ago.ts";

/** `YYYY-MM-DD HH:MM` in local time, as results and projects are dated. */
export function localMinute(at: Date | number): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * The SHA-256 of `data` in hex. Bun's hasher, not node:crypto's createHash (the same digest):
 * loading node:crypto brings Node's streams with it, milliseconds every hook and command paid
 * at start-up for a hash of a few bytes.
 */
export function sha256Hex(data: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}
