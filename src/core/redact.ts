/**
 * Keeps secrets and private text out of everything memsearch sends to a summariser or writes
 * to the journal. Memory files live in the project and may be committed; a key pasted into a
 * prompt must not end up there.
 *
 * Every pattern starts on a literal prefix (token patterns only where a token-character run
 * starts) and uses bounded quantifiers, and PEM blocks are found by one forward scan, so a 1 MB
 * tool output costs milliseconds and crafted input cannot make the backtracking engine go
 * quadratic (the unit tests feed it such input).
 */

import { clip, stripControls } from "./text.ts";

const PRIVATE_TAG = /<(\/?)private(?:\s[^<>]{0,200})?\s*>/gi;

/**
 * Replaces everything inside `<private>…</private>` (tags included) with `[private]`.
 * Case-insensitive, multi-line, nesting-aware; an unclosed `<private>` hides the rest of the text,
 * since leaking the tail of a block the user marked private is the worse mistake.
 */
export function stripPrivate(text: string): string {
  if (!/<private/i.test(text)) return text;
  let out = "";
  let depth = 0;
  let from = 0; // start of the text not yet copied (meaningful at depth 0)
  PRIVATE_TAG.lastIndex = 0;
  for (let m = PRIVATE_TAG.exec(text); m; m = PRIVATE_TAG.exec(text)) {
    const closing = m[1] === "/";
    if (!closing) {
      if (depth === 0) out += `${text.slice(from, m.index)}[private]`;
      depth++;
    } else if (depth > 0 && --depth === 0) {
      from = m.index + m[0].length;
    }
    // A stray closing tag outside any block is left as it is.
  }
  return depth > 0 ? out : out + text.slice(from);
}

type Replacer = (match: string, ...groups: string[]) => string;

interface Rule {
  kind: string;
  pattern: RegExp;
  /** Default: the whole match becomes `[REDACTED:kind]`. */
  replace?: Replacer;
}

const tag = (kind: string) => `[REDACTED:${kind}]`;

// Key names whose value is a credential. Only the name is matched (not what precedes it), so
// `DB_PASSWORD`, `client_secret` and `GITHUB_TOKEN` all hit without an unbounded prefix.
const SECRET_NAME = "(password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key)";
// Value shapes: quoted (JSON, YAML, code) or bare (env files, shell, query strings).
const VALUE = `(?:"([^"\\\\\\r\\n]{8,300})"|'([^'\\\\\\r\\n]{8,300})'|([^\\s"'\`,;<>&]{8,300}))`;

function kindOfName(name: string): string {
  const n = name.toLowerCase();
  if (n.startsWith("pass")) return "password";
  if (n === "token") return "token";
  if (n.includes("api")) return "api-key";
  return "secret";
}

/** A bare value that is code or a reference (`getToken()`, `self.token`, `$TOKEN`) is not a secret. */
function looksLikeReference(value: string): boolean {
  if (/^[$%{[(<]/.test(value)) return true;
  if (/[()]/.test(value)) return true;
  if (/^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(value)) return true; // member access
  return /^(?:null|undefined|none|true|false|required|optional|string|redacted)$/i.test(value);
}

const assignment: Replacer = (match, name, sep, dq, sq, bare) => {
  const value = dq ?? sq ?? bare ?? "";
  if (value.startsWith("[REDACTED") || value.startsWith("[private]")) return match;
  if (bare !== undefined) {
    if (looksLikeReference(bare)) return match;
    // `Password: incorrect` is prose, `password: hunter2!` in YAML is a secret.
    if (sep!.includes(":") && !/[^A-Za-z]/.test(bare)) return match;
  }
  // The value is the tail of the match, before the closing quote when there is one.
  const end = bare === undefined ? match.length - 1 : match.length;
  return match.slice(0, end - value.length) + tag(kindOfName(name!)) + match.slice(end);
};

const RULES: Rule[] = [
  { kind: "aws-key", pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|AROA|ANPA|ANVA)[A-Z0-9]{16}\b/g },
  {
    kind: "aws-secret",
    pattern: /(aws_secret_access_key["']?\s{0,5}[:=]\s{0,5}["']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi,
    replace: (_m, head) => head + tag("aws-secret"),
  },
  // No word boundary before: the prefixes are distinctive enough, and a token glued to the word
  // before it (`buildghp_…` in a log) is still a token.
  { kind: "github-token", pattern: /(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,255}\b/g },
  { kind: "github-token", pattern: /github_pat_[A-Za-z0-9_]{22,255}\b/g },
  { kind: "anthropic-key", pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,300}/g },
  {
    kind: "openai-key",
    pattern: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,300}/g,
    // Real keys are random base62 and carry digits; `sk-some-long-kebab-slug` is a name.
    replace: (m) => (/\d/.test(m) ? tag("openai-key") : m),
  },
  { kind: "stripe-key", pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,250}\b/g },
  { kind: "slack-token", pattern: /(?<![A-Za-z0-9-])xox[baprs]-[A-Za-z0-9-]{10,250}/g },
  { kind: "slack-token", pattern: /(?<![A-Za-z0-9-])xapp-\d-[A-Za-z0-9-]{10,250}/g },
  { kind: "google-api-key", pattern: /(?<![0-9A-Za-z_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: "npm-token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  // Starts only where a base64url run starts, so a run of `eyJ-eyJ-…` is not rescanned from every
  // `eyJ` in it (that would be quadratic).
  { kind: "jwt", pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{10,2000}/g },
  // scheme://user:pass@host: the user name helps recall, the password never does.
  {
    kind: "url-password",
    pattern: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@"'<>]{1,100}:)([^\s/@"'<>]{1,200})@/gi,
    replace: (m, head, pass) => (pass.startsWith("[REDACTED") ? m : `${head}${tag("url-password")}@`),
  },
  {
    kind: "bearer",
    pattern: /\b(Authorization["']?\s{0,5}[:=]\s{0,5}["']?(?:Bearer|Basic|Token)\s{1,5})[A-Za-z0-9._~+/-]{8,4000}=*/gi,
    replace: (_m, head) => head + tag("bearer"),
  },
  {
    kind: "bearer",
    pattern: /\b(Bearer\s{1,5})[A-Za-z0-9._~+/-]{16,4000}=*/g,
    replace: (_m, head) => head + tag("bearer"),
  },
  // --password xyz / --token xyz on a command line.
  {
    kind: "cli-secret",
    pattern: /(--(password|passwd|token|secret|api-key|apikey)[ ](?!-))([^\s"'`;|&]{8,300})/gi,
    replace: (m, head, name, value) => (looksLikeReference(value) || value.startsWith("[REDACTED") ? m : head + tag(kindOfName(name))),
  },
  // name = value, name: value, "name": "value" (env, shell, JSON, YAML, code).
  {
    kind: "assignment",
    pattern: new RegExp(`${SECRET_NAME}(?:[_-]?(?:key|token))?["']?(\\s{0,5}[:=]\\s{0,5})${VALUE}`, "gi"),
    replace: assignment,
  },
];

// PEM blocks are handled by one forward scan over BEGIN/END markers: a lazy `BEGIN[\s\S]*?END`
// regex rescans the text after every unclosed BEGIN, which is quadratic on crafted input.
const PEM_MARKER = /-----(BEGIN|END) (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
// After an unclosed BEGIN (a clipped tool output), the base64 lines that follow it.
// Whole lines only: the text after a clipped key must not lose its first word.
const PEM_BODY = /(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]+(?=\r?\n|\\n|$))*/y;

function redactPem(text: string): string {
  if (!text.includes("PRIVATE KEY-----")) return text;
  let out = "";
  let from = 0;
  let open: RegExpExecArray | undefined;
  const closeUnfinished = () => {
    PEM_BODY.lastIndex = open!.index + open![0].length;
    PEM_BODY.exec(text);
    out += `${text.slice(from, open!.index)}${tag("private-key")}`;
    from = PEM_BODY.lastIndex;
    open = undefined;
  };
  PEM_MARKER.lastIndex = 0;
  for (let m = PEM_MARKER.exec(text); m; m = PEM_MARKER.exec(text)) {
    if (m[1] === "BEGIN") {
      if (open) closeUnfinished();
      if (m.index >= from) open = m;
    } else if (open) {
      out += `${text.slice(from, open.index)}${tag("private-key")}`;
      from = m.index + m[0].length;
      open = undefined;
    }
  }
  if (open) closeUnfinished();
  return out + text.slice(from);
}

/**
 * Replaces credentials with `[REDACTED:kind]`. Git SHAs, UUIDs and ordinary words are left alone:
 * every rule needs a vendor prefix or a credential-named key.
 */
export function redactSecrets(text: string): string {
  // PEM blocks first: their base64 body would otherwise be chewed by the rules below.
  let out = redactPem(text);
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    const replace = rule.replace;
    out = replace ? out.replace(rule.pattern, replace as (m: string, ...g: any[]) => string) : out.replace(rule.pattern, tag(rule.kind));
  }
  return out;
}

/**
 * What every text goes through before it leaves the process or reaches the journal. Control
 * characters go first: a secret split by a colour sequence is whole again for the rules.
 */
export function sanitize(text: string): string {
  return redactSecrets(stripPrivate(stripControls(text)));
}

/** Anything that maps a text to its redacted form (`sanitize` by default). */
export type Redactor = (text: string) => string;

/** A clipped text is redacted over this many times what is kept (at least REDACT_MIN_WINDOW chars). */
export const REDACT_WINDOW_FACTOR = 8;
export const REDACT_MIN_WINDOW = 8_000;
/**
 * How far past what is kept the edge of a redacted window must stay. No rule matches a secret
 * holding white space longer than a quoted value (300) with its name: one cut by the window's
 * edge cannot reach back into what is kept.
 */
const EDGE_MARGIN = 512;

/** White space, as `\s` has it (the BMP's; the rules only need the ASCII ones to be right). */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Without its last run of non-white-space characters: what a cut may have left of a token. */
function dropCutRun(text: string): string {
  let i = text.length;
  while (i > 0 && !isSpace(text.charCodeAt(i - 1))) i--;
  return text.slice(0, i);
}

/**
 * The start of `text` redacted, for a text that is clipped to `keep` characters afterwards:
 * redact first, then clip, so a secret the clip would cut (a PEM key losing its END line, a token
 * cut short) is still recognised whole. Only a window of the text is redacted (8× what is kept,
 * at least 8,000 chars), so a 1 MB tool output of which 1,000 chars are kept costs what 8 KB do.
 * Where the window cuts the text, its last run of non-blank characters (maybe a piece of a secret
 * the cut made unrecognisable) is dropped; a window whose redaction shrank so much that its edge
 * comes near the kept part is widened (at worst to the whole text: the redactor is linear).
 *
 * `shape` is applied to the redacted text before it is measured (the one-line form of a tool
 * input, say). Returns the redacted (and shaped) start of the text, of which at least the first
 * `keep` characters are final, and `whole` when that is all of it: clip it to `keep` to show it,
 * marking it cut when `whole` is false or it is longer than `keep`.
 */
export function redactHead(text: string, keep: number, redact: Redactor = sanitize, shape: (s: string) => string = (s) => s): { text: string; whole: boolean } {
  for (let window = Math.max(keep * REDACT_WINDOW_FACTOR, REDACT_MIN_WINDOW); ; window *= 4) {
    if (text.length <= window) return { text: shape(redact(text)), whole: true };
    const head = shape(dropCutRun(redact(text.slice(0, window))));
    if (head.length >= keep + EDGE_MARGIN) return { text: head, whole: false };
  }
}

/**
 * `text` redacted, then clipped to `max` chars: `cut` makes the clipped form from the redacted
 * start, told the length of the whole text (default: clip, ending in "…"; clipMarked says how
 * long the whole was).
 */
export function clipRedacted(text: string, max: number, redact: Redactor = sanitize, cut: (head: string, max: number, total: number) => string = (h, m) => clip(h, m)): string {
  const head = redactHead(text, max, redact);
  return head.whole && head.text.length <= max ? head.text : cut(head.text, max, text.length);
}
