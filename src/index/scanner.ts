/**
 * Finds the markdown files to index under the given paths.
 *
 * Synchronous on purpose: it runs once per index pass, a few thousand readdir/stat calls
 * are milliseconds, and a plain loop keeps pruning and ignore-file scoping easy to follow.
 *
 * Rules (same as the reference scanner): `.md`/`.markdown` in any case; names starting
 * with "." below a root are skipped (the root itself may be hidden); directory symlinks are
 * not followed, so there are no loops; files are deduplicated by real path. Optional ignore
 * files (e.g. `.gitignore`) are read in every directory inside a root, never above it, with
 * gitignore semantics; `exclude` patterns (root-relative) are applied last. Ignored
 * directories are not descended. A file named directly bypasses every rule but the extension;
 * one without it is listed in `notMarkdown`, so the caller can say why it was left out.
 *
 * And reads them as the index takes them (`readMarkdown`): any file may hold bytes someone else
 * wrote, and a few bad ones must not cost the rest of the file.
 */
import { readdirSync, readFileSync, realpathSync, statSync, type Dirent, type Stats } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { errCode, InputError, NotFoundError, UsageError } from "../core/errors.ts";
import { stripControls } from "../core/text.ts";

export interface ScanOptions {
  /** File names (no directories) read as gitignore files in each scanned directory. */
  ignoreFiles?: string[];
  /** Gitignore patterns relative to each directory root, applied after the ignore files. */
  exclude?: string[];
  /**
   * Roots (as given in `paths`) whose symlinked files are left out: memsearch's own memory folder,
   * where a link can only be planted (by a cloned repository) to bring another file into memory.
   */
  noLinksIn?: string[];
}

export interface ScannedFile {
  /** Absolute real path. */
  path: string;
  /** Real path of the directory root it was found under, or of the file itself when named directly. */
  root: string;
  mtimeMs: number;
  size: number;
}

export interface ScanResult {
  /** Sorted by path, one entry per real path. */
  files: ScannedFile[];
  /** Real paths of the given paths, in order, without repeats. */
  roots: string[];
  /** Files named directly that are not markdown by name (real paths, in order): never indexed, and said. */
  notMarkdown: string[];
}

/** Why a file is left out of the index: not named .md/.markdown, or not UTF-8 text (binary, another encoding). */
export type SkipReason = "not-markdown" | "not-text";

/** What the index reads of a markdown file: its text, cleaned, and what cleaning it took. */
export interface MarkdownText {
  text: string;
  /** Sections that held control characters or bytes that are not UTF-8: cleaned, and kept. */
  cleaned: number;
  /** Sections left out: mostly such bytes (a binary blob pasted into a note). */
  dropped: number;
}

// A UTF-8 BOM is dropped; `lenient` makes invalid sequences U+FFFD.
const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");
/** A character no markdown file should hold: a control character but tab, newline and CR. */
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;
/** The same, or an unreadable byte (in a file that has some: a U+FFFD a note holds as text is no damage). */
const CONTROLS_OR_BAD = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]/g;
/**
 * More damage than this share of its characters, and a section is not text: UTF-16 is half
 * NULs, random bytes more than half unreadable, while text in Latin-1 or with a pasted coloured
 * log stays far below it.
 */
const NOT_TEXT_SHARE = 0.3;
/** A letter or a digit: a kept section without any (a heading mark alone) does not make a file text. */
const WORDY = /[\p{L}\p{N}]/u;
/** Where a section starts: an ATX heading line (fences are not looked at; a section here is only what damage is counted by). */
const SECTION_START = /(?=^#{1,6}(?:[ \t]|$))/m;

function count(re: RegExp, text: string): number {
  let n = 0;
  re.lastIndex = 0;
  while (re.exec(text)) n++;
  return n;
}

function decode(bytes: Uint8Array): { raw: string; damage: RegExp } {
  try {
    return { raw: strict.decode(bytes), damage: CONTROLS };
  } catch {
    return { raw: lenient.decode(bytes), damage: CONTROLS_OR_BAD };
  }
}

/**
 * A markdown file's text as the index takes it, or undefined when no section of it is text
 * (binary, another encoding), which would otherwise become chunks of garbage. A file that is
 * partly text loses only what it must: a section holding a few control characters or unreadable
 * bytes keeps its words (escape sequences and control characters removed, unreadable bytes shown
 * as U+FFFD, so the note stays readable and findable); only a section that is mostly such bytes
 * is left out, its lines kept blank so every other line keeps its number.
 */
export function markdownText(bytes: Uint8Array): MarkdownText | undefined {
  const { raw, damage } = decode(bytes);
  if (count(damage, raw) === 0) return { text: raw, cleaned: 0, dropped: 0 };
  let cleaned = 0;
  let dropped = 0;
  let kept = false;
  const sections = raw.split(SECTION_START).map((section) => {
    const d = count(damage, section);
    if (d > section.length * NOT_TEXT_SHARE) {
      dropped++;
      return "\n".repeat(stripControls(section).split("\n").length - 1);
    }
    if (d > 0) cleaned++;
    kept ||= WORDY.test(section);
    return d > 0 ? stripControls(section) : section;
  });
  // Nothing left worth reading: the whole file is binary (random bytes hold no heading to split at).
  if (!kept) return undefined;
  return { text: sections.join(""), cleaned, dropped };
}

/** `markdownText` of a file. */
export function readMarkdown(path: string): MarkdownText | undefined {
  return markdownText(readFileSync(path));
}

const MARKDOWN_RE = /\.(?:md|markdown)$/i;

export function isMarkdownPath(p: string): boolean {
  return MARKDOWN_RE.test(p);
}

export function scanPaths(paths: string[], opts: ScanOptions = {}): ScanResult {
  const policy = makePolicy(opts);
  const files: ScannedFile[] = [];
  const seen = new Set<string>();
  const roots: string[] = [];
  const notMarkdown: string[] = [];

  const add = (real: string, root: string, st?: Stats) => {
    if (seen.has(real)) return;
    const s = st ?? statOrNull(real);
    if (!s?.isFile()) return;
    seen.add(real);
    files.push({ path: real, root, mtimeMs: s.mtimeMs, size: s.size });
  };

  for (const p of paths) {
    const { real, stat } = openRoot(p);
    if (!roots.includes(real)) roots.push(real);
    const follow = !opts.noLinksIn?.some((d) => resolve(d) === resolve(p));
    if (stat.isDirectory()) walk(real, policy, add, follow);
    else if (stat.isFile() && isMarkdownPath(real)) add(real, real, stat);
    else if (stat.isFile() && !notMarkdown.includes(real)) notMarkdown.push(real);
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, roots, notMarkdown };
}

/**
 * Whether a single path (e.g. from a file-watch event) would be picked up by
 * `scanPaths(roots, opts)`. Ignore files are re-read from disk, so edits to them take
 * effect without restarting the watcher. The file itself need not exist any more.
 */
export function shouldIndexPath(path: string, roots: string[], opts: ScanOptions = {}): boolean {
  const abs = resolve(expandHome(path));
  if (!isMarkdownPath(abs)) return false;
  const candidate = join(realpathOr(dirname(abs)), basename(abs));
  const policy = makePolicy(opts);

  for (const r of roots) {
    const root = realpathOr(resolve(expandHome(r)));
    const st = statOrNull(root);
    if (st?.isFile()) {
      if (candidate === root) return true;
      continue;
    }
    if (!st?.isDirectory()) continue;
    const rel = relative(root, candidate);
    if (!rel || rel.startsWith("..") || isAbsolute(rel)) continue;
    const parts = rel.split(sep);
    if (parts.some((part) => part.startsWith("."))) continue;
    if (!ignoredAlong(root, parts, policy)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Walking

interface Policy {
  ignoreFiles: string[];
  exclude: IgnoreRule[];
}

/** Ignore rules from one ignore file, scoped to the directory that holds it. */
interface Layer {
  /** Root-relative posix path of that directory ("" for the root). */
  base: string;
  rules: IgnoreRule[];
}

interface Frame {
  dir: string;
  rel: string;
  layers: Layer[];
}

type Add = (real: string, root: string, st?: Stats) => void;

function walk(root: string, policy: Policy, add: Add, followLinks: boolean): void {
  const stack: Frame[] = [{ dir: root, rel: "", layers: [] }];
  while (stack.length) {
    const frame = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(frame.dir, { withFileTypes: true });
    } catch {
      continue; // unreadable or vanished directory: skip it, keep scanning the rest
    }
    const layers = frame.layers.concat(loadLayers(frame.dir, frame.rel, policy));
    for (const e of entries) {
      const name = e.name;
      if (name.startsWith(".")) continue;
      const rel = frame.rel ? `${frame.rel}/${name}` : name;
      const full = join(frame.dir, name);
      if (e.isDirectory()) {
        if (!isIgnored(layers, policy, rel, true)) stack.push({ dir: full, rel, layers });
      } else if (isMarkdownPath(name) && (e.isFile() || e.isSymbolicLink())) {
        if (isIgnored(layers, policy, rel, false)) continue;
        // The root is a real path and directory links are never entered, so only a
        // file symlink can have a real path different from `full`.
        if (e.isFile()) add(full, root);
        else if (followLinks) addSymlink(full, root, add);
      }
    }
  }
}

/** A symlinked markdown file counts once, by its target; a link to a directory is not followed. */
function addSymlink(full: string, root: string, add: Add): void {
  const st = statOrNull(full);
  if (!st?.isFile()) return;
  const real = realpathOr(full, "");
  if (real) add(real, root, st);
}

/** Walks from the root down to a path's parent as `walk` would, reporting whether anything prunes it. */
function ignoredAlong(root: string, parts: string[], policy: Policy): boolean {
  let layers: Layer[] = [];
  let dir = root;
  let rel = "";
  for (let i = 0; i < parts.length; i++) {
    layers = layers.concat(loadLayers(dir, rel, policy));
    rel = rel ? `${rel}/${parts[i]}` : parts[i]!;
    const isDir = i < parts.length - 1;
    if (isIgnored(layers, policy, rel, isDir)) return true;
    dir = join(dir, parts[i]!);
  }
  return false;
}

function loadLayers(dir: string, rel: string, policy: Policy): Layer[] {
  const layers: Layer[] = [];
  for (const name of policy.ignoreFiles) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), "utf8");
    } catch {
      continue; // absent, a directory, or unreadable: no rules from it
    }
    const rules = parseIgnore(text);
    if (rules.length) layers.push({ base: rel, rules });
  }
  return layers;
}

/**
 * Deeper ignore files override shallower ones and the last matching rule in a file wins,
 * as in git; `exclude` has the final word.
 */
function isIgnored(layers: Layer[], policy: Policy, rel: string, isDir: boolean): boolean {
  let ignored = false;
  for (const layer of layers) {
    const sub = layer.base ? rel.slice(layer.base.length + 1) : rel;
    const m = matchIgnore(layer.rules, sub, isDir);
    if (m !== undefined) ignored = m;
  }
  const m = matchIgnore(policy.exclude, rel, isDir);
  return m !== undefined ? m : ignored;
}

function makePolicy(opts: ScanOptions): Policy {
  const ignoreFiles: string[] = [];
  for (const raw of opts.ignoreFiles ?? []) {
    const name = raw.trim();
    if (!name || name === "." || name === ".." || /[\\/]/.test(name)) {
      throw new UsageError(`ignore file must be a file name without directories: ${JSON.stringify(raw)}`);
    }
    if (!ignoreFiles.includes(name)) ignoreFiles.push(name);
  }
  return { ignoreFiles, exclude: parseIgnore((opts.exclude ?? []).join("\n")) };
}

function openRoot(p: string): { real: string; stat: Stats } {
  const abs = resolve(expandHome(p));
  let stat: Stats;
  let real: string;
  try {
    stat = statSync(abs);
    real = realpathSync(abs);
  } catch (e) {
    const code = errCode(e);
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") throw new NotFoundError(`path not found: ${p}`);
    throw new InputError(`cannot read ${p}: ${(e as Error).message}`);
  }
  return { real, stat };
}

function expandHome(p: string): string {
  return p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p;
}

function statOrNull(p: string): Stats | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

function realpathOr(p: string, fallback = p): string {
  try {
    return realpathSync(p);
  } catch {
    return fallback;
  }
}

// ---------------------------------------------------------------------------
// Gitignore patterns

export interface IgnoreRule {
  /** The pattern as written, for diagnostics. */
  pattern: string;
  negate: boolean;
  /** Trailing "/": matches directories only. */
  dirOnly: boolean;
  /** Tested against the path relative to the ignore file's directory, posix separators. */
  re: RegExp;
}

/** Rules from the text of an ignore file (or from patterns joined by newlines). */
export function parseIgnore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const line of text.split(/\r?\n/)) {
    const rule = compileRule(line);
    if (rule) rules.push(rule);
  }
  return rules;
}

/**
 * The verdict of the last rule matching `rel` (true = ignored, false = re-included by
 * `!`), or undefined when none matches. Like git, a rule matches the path itself, not its
 * descendants: callers prune ignored directories instead.
 */
export function matchIgnore(rules: IgnoreRule[], rel: string, isDir: boolean): boolean | undefined {
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]!;
    if (r.dirOnly && !isDir) continue;
    if (r.re.test(rel)) return !r.negate;
  }
  return undefined;
}

function compileRule(line: string): IgnoreRule | null {
  // Trailing spaces are insignificant unless escaped with a backslash.
  let p = line.replace(/(?<!\\) +$/, "");
  if (!p || p.startsWith("#")) return null;
  const pattern = p;
  const negate = p.startsWith("!");
  if (negate) p = p.slice(1);
  const dirOnly = p.endsWith("/");
  p = p.replace(/\/+$/, "");
  // A slash anywhere but the end anchors the pattern to the ignore file's directory;
  // without one it matches a name at any depth.
  const anchored = p.includes("/");
  p = p.replace(/^\/+/, "");
  if (!p) return null;
  const body = segmentsToRegex(p.split("/"));
  const re = body === null ? /(?!)/ : new RegExp(`^${anchored ? "" : "(?:.*/)?"}${body}$`);
  return { pattern, negate, dirOnly, re };
}

function segmentsToRegex(segments: string[]): string | null {
  let out = "";
  let needSlash = false;
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const seg = segments[i]!;
    if (seg === "**") {
      if (i === last) out += i === 0 ? ".*" : "/.+"; // "x/**": everything inside x, not x itself
      else if (i === 0) out += "(?:.*/)?"; // "**/x": x at any depth
      else out += "(?:/.*)?"; // "a/**/b": zero or more directories between
      needSlash = i !== 0 && i !== last;
      continue;
    }
    const g = globToRegex(seg);
    if (g === null) return null;
    out += (needSlash ? "/" : "") + g;
    needSlash = true;
  }
  return out;
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: "a-zA-Z0-9",
  alpha: "a-zA-Z",
  blank: " \\t",
  cntrl: "\\x00-\\x1f\\x7f",
  digit: "0-9",
  graph: "\\x21-\\x7e",
  lower: "a-z",
  print: "\\x20-\\x7e",
  punct: "!-\\/:-@\\[-`{-~",
  space: " \\t\\n\\r\\f\\v",
  upper: "A-Z",
  xdigit: "0-9A-Fa-f",
};

/** One path segment: `*` and `?` never match "/", `[...]` classes, `\` escapes. Null = invalid. */
function globToRegex(seg: string): string | null {
  let out = "";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "\\") {
      out += escapeRe(seg[++i] ?? "\\");
    } else if (c === "*") {
      while (seg[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const cls = parseClass(seg, i);
      if (cls === undefined) out += "\\[";
      else if (cls.re === null) return null;
      else {
        out += cls.re;
        i = cls.end;
      }
    } else {
      out += escapeRe(c);
    }
  }
  return out;
}

/**
 * A bracket expression starting at `seg[at] === "["`: `[abc]`, `[a-z]`, `[!x]`/`[^x]`,
 * `[]x]`, `[[:digit:]]`. Undefined when unterminated (then "[" is literal); `re: null`
 * for an unknown POSIX class, which makes the whole pattern match nothing, as in git.
 */
function parseClass(seg: string, at: number): { re: string | null; end: number } | undefined {
  let i = at + 1;
  const negate = seg[i] === "!" || seg[i] === "^";
  if (negate) i++;
  let body = "";
  let first = true;
  for (; i < seg.length; i++, first = false) {
    const c = seg[i]!;
    if (c === "]" && !first) {
      return { re: negate ? `[^/${body}]` : `(?!/)[${body}]`, end: i };
    }
    if (c === "[" && seg[i + 1] === ":") {
      const close = seg.indexOf(":]", i + 2);
      if (close !== -1) {
        const cls = POSIX_CLASSES[seg.slice(i + 2, close)];
        if (cls === undefined) return { re: null, end: seg.indexOf("]", close + 2) };
        body += cls;
        i = close + 1;
        continue;
      }
    }
    if (c === "\\" && i + 1 < seg.length) {
      body += escapeClassChar(seg[++i]!);
      continue;
    }
    body += c === "-" ? "-" : escapeClassChar(c);
  }
  return undefined;
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function escapeClassChar(c: string): string {
  return c.replace(/[\\\]\[^]/g, "\\$&");
}
