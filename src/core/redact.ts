/**
 * Keeps secrets and private text out of everything memsearch sends to a summariser or writes
 * to the journal. Memory files live in the project and may be committed; a key pasted into a
 * prompt must not end up there.
 *
 * Every pattern starts on a literal prefix (token patterns only where a token-character run
 * starts; the two vendor shapes without a prefix of their own are only tried where a literal
 * piece of them occurs) and uses bounded quantifiers, and PEM blocks are found by one forward
 * scan, so a 1 MB tool output costs milliseconds and crafted input cannot make the backtracking
 * engine go quadratic (the unit tests feed it such input).
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
  /** Literal pieces (three characters or more, as written: matched case-sensitively) one of which every match holds: a text holding none is not searched (most texts hold none). */
  hints?: string[];
}

/** A credential recognised by its vendor prefix alone: the whole match goes. */
const vendor = (kind: string, hints: string[], pattern: RegExp): Rule => ({ kind, hints, pattern });

/**
 * A token whose body (after its prefix's last `_`) has an upper-case and a lower-case letter:
 * random keys have both, identifiers and words rarely.
 */
const mixedCase = (kind: string) => (m: string) => {
  const body = m.slice(m.lastIndexOf("_") + 1);
  return /[A-Z]/.test(body) && /[a-z]/.test(body) ? tag(kind) : m;
};

// A URL that is itself the credential (a webhook): the host stays, for recall ("posted to Slack"),
// the path goes. `\/` as well as `/`: JSON written by PHP and others escapes slashes.
const webhook = (kind: string, hint: string, head: string, tail: string): Rule => ({
  kind,
  hints: [hint],
  pattern: new RegExp(`(${head})${tail}`, "g"),
  replace: (_m, h) => h + tag(kind),
});
const SLASH = String.raw`\\?/`;

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
  { kind: "aws-key", hints: ["AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "AROA", "ANPA", "ANVA"], pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|AROA|ANPA|ANVA)[A-Z0-9]{16}\b/g },
  {
    kind: "aws-secret",
    pattern: /(aws_secret_access_key["']?\s{0,5}[:=]\s{0,5}["']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi,
    replace: (_m, head) => head + tag("aws-secret"),
  },
  // No word boundary before: the prefixes are distinctive enough, and a token glued to the word
  // before it (`buildghp_…` in a log) is still a token.
  { kind: "github-token", hints: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], pattern: /(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,255}\b/g },
  { kind: "github-token", hints: ["github_pat_"], pattern: /github_pat_[A-Za-z0-9_]{22,255}\b/g },
  { kind: "anthropic-key", hints: ["sk-ant-"], pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,300}/g },
  {
    kind: "openai-key",
    hints: ["sk-"],
    pattern: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,300}/g,
    // Real keys are random base62 and carry digits; `sk-some-long-kebab-slug` is a name.
    replace: (m) => (/\d/.test(m) ? tag("openai-key") : m),
  },
  { kind: "stripe-key", hints: ["sk_", "rk_"], pattern: /\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,250}\b/g },
  vendor("stripe-key", ["whsec_"], /\bwhsec_[A-Za-z0-9+/]{24,100}={0,2}/g),
  // Bot, user, app, legacy and configuration (xoxe) tokens, and a configuration access token (xoxe.xoxp-).
  { kind: "slack-token", hints: ["xox"], pattern: /(?<![A-Za-z0-9-])xox(?:[abceoprs]|e\.xox[bp])-[A-Za-z0-9-]{10,250}/g },
  { kind: "slack-token", hints: ["xapp-"], pattern: /(?<![A-Za-z0-9-])xapp-\d-[A-Za-z0-9-]{10,250}/g },
  { kind: "google-api-key", hints: ["AIza"], pattern: /(?<![0-9A-Za-z_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: "npm-token", hints: ["npm_"], pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  // Vendor tokens with a prefix of their own (the kinds a current secret scanner knows, those
  // with a shape distinctive enough to need no key name beside them).
  vendor("gitlab-token", ["glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-", "GR1348941"], /(?<![A-Za-z0-9_-])(?:glpat|gldt|glrt|glptt|glcbt|glft|glimt|glagent|gloas|glsoat|glffct)-[A-Za-z0-9_.-]{20,300}|\bGR1348941[A-Za-z0-9_-]{20,100}/g),
  vendor("pypi-token", ["pypi-AgE"], /\bpypi-AgE[A-Za-z0-9_-]{60,1000}/g),
  { kind: "huggingface-token", hints: ["hf_", "api_org_"], pattern: /\b(?:hf|api_org)_[A-Za-z0-9]{34,40}\b/g, replace: mixedCase("huggingface-token") },
  vendor("twilio-key", [..."0123456789abcdefABCDEF"].map((c) => `SK${c}`), /\bSK[0-9a-fA-F]{32}\b/g),
  vendor("sendgrid-key", ["SG."], /\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}/g),
  vendor("mailgun-key", ["key-"], /\bkey-[0-9a-f]{32}\b/g),
  vendor("mailchimp-key", ["-us"], /\b[0-9a-f]{32}-us\d{1,2}\b/g),
  vendor("brevo-key", ["sib-"], /\bx(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b/g),
  vendor("shopify-token", ["shp"], /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g),
  vendor("azure-client-secret", [..."0123456789"].map((d) => `${d}Q~`), /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g),
  {
    kind: "azure-key",
    hints: ["AccountKey=", "SharedAccessKey="],
    pattern: /\b((?:AccountKey|SharedAccessKey)=)[A-Za-z0-9+/]{20,200}={0,2}/g,
    replace: (_m, head) => head + tag("azure-key"),
  },
  vendor("google-oauth", ["GOCSPX-", "ya29."], /\bGOCSPX-[A-Za-z0-9_-]{24,40}|\bya29\.[A-Za-z0-9_-]{20,2000}/g),
  vendor("aws-bedrock-key", ["ABSK"], /\bABSK[A-Za-z0-9+/]{100,300}={0,2}/g),
  vendor("alibaba-key", ["LTAI"], /\bLTAI[A-Za-z0-9]{12,24}\b/g),
  vendor("digitalocean-token", ["_v1_"], /\bdo[opr]_v1_[a-f0-9]{64}\b/g),
  vendor("databricks-token", ["dapi"], /\bdapi[a-f0-9]{32}(?:-\d)?\b/g),
  vendor("atlassian-token", ["ATATT"], /\bATATT3[A-Za-z0-9_=-]{100,300}/g),
  vendor("linear-key", ["lin_"], /\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b/g),
  { kind: "notion-token", hints: ["ntn_", "secret_"], pattern: /\b(?:ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43})\b/g, replace: mixedCase("notion-token") },
  vendor("postman-key", ["PMAK-"], /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g),
  vendor("pulumi-token", ["pul-"], /\bpul-[a-f0-9]{40}\b/g),
  vendor("grafana-token", ["glc_", "glsa_"], /\bglc_[A-Za-z0-9+/]{32,400}={0,2}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b/g),
  vendor("terraform-token", ["atlasv1"], /\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}/g),
  vendor("vault-token", ["hvs.", "hvb."], /\bhv[sb]\.[A-Za-z0-9_-]{90,400}/g),
  vendor("sentry-token", ["sntry"], /\bsntry[su]_[A-Za-z0-9+/=_]{40,400}/g),
  vendor("telegram-bot-token", [..."0123456789"].map((d) => `${d}:A`), /(?<![A-Za-z0-9_:-])\d{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])/g),
  vendor("heroku-key", ["HRKU-"], /\bHRKU-[A-Za-z0-9_-]{40,80}/g),
  vendor("flyio-token", ["fo1_", "fm1", "fm2_"], /\bfo1_[A-Za-z0-9_-]{43}|\bfm1[ar]_[A-Za-z0-9+/]{100,2000}={0,3}|\bfm2_[A-Za-z0-9+/]{100,4000}={0,3}/g),
  vendor("age-secret-key", ["AGE-SECRET-KEY-1"], /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g),
  vendor("1password-token", ["ops_eyJ", "A3-"], /\bops_eyJ[A-Za-z0-9+/=_-]{100,4000}|\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b/g),
  vendor("square-token", ["sq0"], /\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}/g),
  vendor("mapbox-token", ["sk.eyJ"], /\bsk\.eyJ[A-Za-z0-9_-]{20,400}\.[A-Za-z0-9_-]{20,100}/g),
  vendor("cloudflare-ca-key", ["v1.0-"], /\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b/g),
  vendor("perplexity-key", ["pplx-"], /\bpplx-[A-Za-z0-9]{40,60}\b/g),
  vendor("groq-key", ["gsk_"], /\bgsk_[A-Za-z0-9]{48,60}\b/g),
  vendor("xai-key", ["xai-"], /\bxai-[A-Za-z0-9]{70,90}\b/g),
  vendor("replicate-token", ["r8_"], /\br8_[A-Za-z0-9]{37}\b/g),
  vendor("rubygems-key", ["rubygems_"], /\brubygems_[a-f0-9]{48}\b/g),
  vendor("nuget-key", ["oy2"], /\boy2[a-z0-9]{43}\b/g),
  vendor("docker-token", ["dckr_"], /\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,100}/g),
  vendor("sourcegraph-token", ["sgp_"], /\bsgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}\b/g),
  vendor("planetscale-token", ["pscale_"], /\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_.=-]{32,64}/g),
  vendor("prefect-key", ["pnu_"], /\bpnu_[A-Za-z0-9]{36}\b/g),
  vendor("readme-key", ["rdme_"], /\brdme_[a-z0-9]{70}\b/g),
  vendor("newrelic-key", ["NRAK-", "NRII-", "NRJS-"], /\bNR(?:AK|II|JS)-[A-Za-z0-9]{19,32}\b/g),
  vendor("dynatrace-token", ["dt0c01."], /\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b/g),
  vendor("easypost-key", ["EZAK", "EZTK"], /\bEZ[AT]K[A-Za-z0-9]{54}\b/g),
  vendor("duffel-token", ["duffel_"], /\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}/g),
  vendor("flutterwave-key", ["FLWSECK"], /\bFLWSECK(?:_TEST)?-[a-h0-9]{32}-X\b/g),
  vendor("frameio-token", ["fio-u-"], /\bfio-u-[A-Za-z0-9_=-]{64}/g),
  vendor("infracost-key", ["ico-"], /\bico-[A-Za-z0-9]{32}\b/g),
  vendor("octopus-key", ["API-"], /\bAPI-[A-Z0-9]{26}\b/g),
  vendor("openshift-token", ["sha256~"], /\bsha256~[A-Za-z0-9_-]{43}\b/g),
  vendor("plaid-token", ["access-"], /\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g),
  vendor("shippo-token", ["shippo_"], /\bshippo_(?:live|test)_[a-f0-9]{40}\b/g),
  vendor("typeform-token", ["tfp_"], /\btfp_[A-Za-z0-9_.=-]{59}/g),
  vendor("artifactory-key", ["AKCp"], /\bAKCp[A-Za-z0-9]{69}\b/g),
  vendor("adobe-secret", ["p8e-"], /\bp8e-[A-Za-z0-9]{32}\b/g),
  vendor("clojars-token", ["CLOJARS_"], /\bCLOJARS_[a-z0-9]{60}\b/g),
  // Webhook URLs: whoever has one can post as the integration.
  webhook("slack-webhook", "hooks.slack.com", `hooks\\.slack\\.com${SLASH}(?:services|workflows|triggers)${SLASH}`, String.raw`[A-Za-z0-9_+\\/-]{20,300}`),
  webhook("discord-webhook", "discord", `discord(?:app)?\\.com${SLASH}api${SLASH}(?:v\\d{1,2}${SLASH})?webhooks${SLASH}`, String.raw`\d{5,30}\\?/[A-Za-z0-9_-]{20,200}`),
  webhook("teams-webhook", "webhook.office.com", `\\.webhook\\.office\\.com${SLASH}webhook(?:b2)?${SLASH}`, String.raw`[A-Za-z0-9@_.\\/-]{40,400}`),
  // The signature of a signed URL (Azure SAS, Teams and Power Automate workflow triggers, S3 and GCS presigned URLs).
  {
    kind: "url-signature",
    hints: ["sig=", "Signature="],
    pattern: /([?&](?:sig|X-Amz-Signature|X-Goog-Signature|Signature)=)[A-Za-z0-9%_.+/=-]{16,1000}/g,
    replace: (_m, head) => head + tag("url-signature"),
  },
  // Starts only where a base64url run starts, so a run of `eyJ-eyJ-…` is not rescanned from every
  // `eyJ` in it (that would be quadratic).
  { kind: "jwt", hints: [".eyJ"], pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{10,2000}/g },
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
    hints: ["Bearer"],
    pattern: /\b(Bearer\s{1,5})[A-Za-z0-9._~+/-]{16,4000}=*/g,
    replace: (_m, head) => head + tag("bearer"),
  },
  // --password xyz / --token xyz on a command line.
  {
    kind: "cli-secret",
    pattern: /(--(password|passwd|token|secret|api-key|apikey)[ ](?!-))([^\s"'`;|&]{8,300})/gi,
    replace: (m, head, name, value) => (looksLikeReference(value) || value.startsWith("[REDACTED") ? m : head + tag(kindOfName(name))),
  },
  // curl -u user:password (and wget --user=… alike): the user helps recall, the password never does.
  {
    kind: "cli-secret",
    hints: ["-u ", "--user"],
    pattern: /(?<!\S)(-u |--user[ =])(["']?)([^\s:"'@]{1,100}:)([^\s"'@]{4,200})(?=\2(?:\s|$))/g,
    // `docker run -u 1000:1000` is a uid and a gid; `$USER:$TOKEN` a reference.
    replace: (m, flag, q, user, pass) => (/^\d+$/.test(pass) || looksLikeReference(pass) || pass.startsWith("[REDACTED") ? m : flag + q + user + tag("password")),
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
  // Found before any replacement: a tag holds no hint, and what a rule takes away a later rule did not need.
  const found = hintsIn(out);
  for (const rule of RULES) {
    if (rule.hints && !rule.hints.some((h) => found.has(h))) continue;
    rule.pattern.lastIndex = 0;
    const replace = rule.replace;
    out = replace ? out.replace(rule.pattern, replace as (m: string, ...g: any[]) => string) : out.replace(rule.pattern, tag(rule.kind));
  }
  return out;
}

// Most texts hold none of the vendor prefixes, and looking for each prefix is a scan of the text
// per rule (over a megabyte, as long as the old rules all together). One scan instead finds every
// hint the text holds: a rolling hash of each three characters is looked up in a table of the
// hints' first three (a few hundred entries: nearly every lookup misses), and a hit is checked
// in place.
const TABLE = 1 << 15;
const roll = (h: number, c: number) => ((h << 5) ^ c) & (TABLE - 1);
const hashOf = (s: string, at: number) => roll(roll(roll(0, s.charCodeAt(at)), s.charCodeAt(at + 1)), s.charCodeAt(at + 2));
/** Hints by the hash of their first three characters, and which hashes have any (a byte each: the loop below reads it for every character). */
const HINTS_AT = new Map<number, string[]>();
const ANY_AT = new Uint8Array(TABLE);
for (const rule of RULES) {
  for (const hint of rule.hints ?? []) {
    const h = hashOf(hint, 0);
    const list = HINTS_AT.get(h) ?? [];
    if (!list.includes(hint)) list.push(hint);
    HINTS_AT.set(h, list);
    ANY_AT[h] = 1;
  }
}

/** The hints `text` holds. */
function hintsIn(text: string): Set<string> {
  const found = new Set<string>();
  let h = roll(roll(0, text.charCodeAt(0)), text.charCodeAt(1));
  for (let i = 2; i < text.length; i++) {
    h = roll(h, text.charCodeAt(i));
    if (ANY_AT[h] === 0) continue;
    for (const hint of HINTS_AT.get(h)!) if (text.startsWith(hint, i - 2)) found.add(hint);
  }
  return found;
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

/** A record as one JSON line, every string in it redacted: what memsearch's own logs append. */
export function redactedJsonLine(rec: unknown): string {
  return JSON.stringify(rec, (_k, val) => (typeof val === "string" ? sanitize(val) : val)) + "\n";
}
