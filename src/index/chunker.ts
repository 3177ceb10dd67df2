/**
 * Markdown → chunks. Sections run from one heading (any level) to the next; sections
 * longer than the size limit are split on blank lines, then lines, then sentence ends.
 *
 * Line numbers, hashes and split rules follow the Python memsearch chunker so chunk
 * identities stay comparable. Unlike it, headings come from marked's block lexer, so a
 * `#` line inside a code fence, list or blockquote does not start a section.
 */
import { Lexer, Tokenizer, type Token, type Tokens } from "marked";
import { UsageError } from "../core/errors.ts";
import { oneLine, sha256Hex } from "../core/text.ts";
import type { Chunk } from "./types.ts";

export interface ChunkOptions {
  /** Longest chunk, in UTF-16 code units. Default 1500. */
  maxChunkSize?: number;
  /** Lines carried from one piece of a split section into the next. Default 2. */
  overlapLines?: number;
}

export const DEFAULT_MAX_CHUNK_SIZE = 1500;
export const DEFAULT_OVERLAP_LINES = 2;

/** Bodies shorter than this (after comments and heading lines go) are noise, e.g. a bare `## Session 03:16`. */
const MIN_BODY_CHARS = 2;

const COMMENT_RE = /<!--[\s\S]*?-->/g;

/** sha256 of the UTF-8 text, first 16 hex digits. */
export function contentHash(content: string): string {
  return sha256Hex16(content);
}

/** Identity of a chunk for a given embedding model; same recipe as the reference, so ids match. */
export function chunkHash(
  c: { source: string; startLine: number; endLine: number; contentHash: string },
  model: string,
): string {
  return sha256Hex16(`markdown:${c.source}:${c.startLine}:${c.endLine}:${c.contentHash}:${model}`);
}

/**
 * The text handed to the embedder. Anchor comments carry ids and paths that only dilute
 * the vector; the stored content keeps them because `expand` needs them.
 */
export function embeddingText(content: string): string {
  return content.replace(COMMENT_RE, "").replace(/\n{3,}/g, "\n\n").trim();
}

export function chunkMarkdown(text: string, source: string, opts: ChunkOptions = {}): Chunk[] {
  const max = opts.maxChunkSize ?? DEFAULT_MAX_CHUNK_SIZE;
  const overlap = opts.overlapLines ?? DEFAULT_OVERLAP_LINES;
  if (!Number.isInteger(max) || max < 1) throw new UsageError(`max chunk size must be a whole number ≥ 1, got ${max}`);
  if (!Number.isInteger(overlap) || overlap < 0) throw new UsageError(`overlap lines must be a whole number ≥ 0, got ${overlap}`);

  const src = normaliseNewlines(text);
  if (src.trim() === "") return [];
  const lines = src.split("\n");
  const bodyStart = frontMatterEnd(lines);
  const headings = findHeadings(lines, bodyStart);

  const out = new ChunkList(source);
  for (const s of sections(headings, bodyStart, lines.length)) {
    const content = joinLines(lines, s.start, s.end).trim();
    if (!content || !hasBody(lines, s.bodyStart, s.end)) continue;
    if (content.length <= max) {
      out.add(s, content, s.start + 1, s.end);
      continue;
    }
    // A piece starting at the heading can hold nothing else when the next line alone was
    // too long; a bare heading is the same noise as a heading-only section.
    const bare = bareHeadingTest(lines, s);
    splitSection(lines, s.start, s.end, max, overlap, (c, startLine, endLine) => {
      for (const p of fitToMax(c, max)) {
        if (startLine !== s.start + 1 || !bare(p)) out.add(s, p, startLine, endLine);
      }
    });
  }
  return out.chunks;
}

// ---------------------------------------------------------------------------
// Sections

interface Heading {
  /** 0-based line of the heading's first line. */
  line: number;
  /** Lines the heading occupies (2+ for setext). */
  span: number;
  level: number;
  title: string;
}

interface Section {
  start: number;
  /** Exclusive; also the 1-based inclusive end line, as in the reference. */
  end: number;
  /** First line after the heading itself. */
  bodyStart: number;
  heading: string;
  level: number;
}

function sections(headings: Heading[], bodyStart: number, lineCount: number): Section[] {
  const out: Section[] = [];
  const firstHeading = headings.length ? headings[0]!.line : lineCount;
  if (firstHeading > bodyStart) {
    out.push({ start: bodyStart, end: firstHeading, bodyStart, heading: "", level: 0 });
  }
  headings.forEach((h, i) => {
    const end = i + 1 < headings.length ? headings[i + 1]!.line : lineCount;
    out.push({ start: h.line, end, bodyStart: Math.min(h.line + h.span, end), heading: h.title, level: h.level });
  });
  return out;
}

/** True when the section says something beyond its heading and anchor comments. */
function hasBody(lines: string[], from: number, to: number): boolean {
  return isSubstantial(joinLines(lines, from, to));
}

/** Whether a piece of section `s` is its heading line(s) with no body after them. */
function bareHeadingTest(lines: string[], s: Section): (piece: string) => boolean {
  const span = s.bodyStart - s.start;
  const first = lines[s.start]!.trim();
  return (piece) => {
    if (span === 0 || !piece.startsWith(first)) return false;
    let at = -1;
    for (let i = 0; i < span; i++) {
      at = piece.indexOf("\n", at + 1);
      if (at === -1) return true;
    }
    return !isSubstantial(piece.slice(at + 1));
  };
}

function isSubstantial(body: string): boolean {
  return body.replace(COMMENT_RE, "").trim().length >= MIN_BODY_CHARS;
}

// ---------------------------------------------------------------------------
// Headings

/**
 * Top-level headings from marked's block lexer. marked reports no positions, but the
 * tokens' `raw` strings concatenate back to the input, so counting newlines gives lines.
 * If that ever stops holding (a marked change, an exotic input) we fall back to a
 * line scanner that still respects code fences, rather than mis-number every chunk.
 */
function findHeadings(lines: string[], bodyStart: number): Heading[] {
  if (longestRun(lines, bodyStart) > MARKED_RUN_LIMIT) return scanHeadings(lines, bodyStart);
  const body = joinLines(lines, bodyStart, lines.length);
  let tokens: Token[];
  try {
    tokens = blockLexer().blockTokens(body);
  } catch {
    return scanHeadings(lines, bodyStart);
  }
  const found: Heading[] = [];
  let pos = 0;
  let line = bodyStart;
  for (const t of tokens) {
    if (!body.startsWith(t.raw, pos)) return scanHeadings(lines, bodyStart);
    if (t.type === "heading") {
      const lead = leadingNewlines(t.raw);
      const span = Math.max(1, countNewlines(t.raw.trimEnd()) - lead + 1);
      found.push({ line: line + lead, span, level: t.depth, title: oneLine(t.text) });
    }
    pos += t.raw.length;
    line += countNewlines(t.raw);
  }
  // marked may drop trailing blank space; anything else left over means the raws lied.
  if (body.slice(pos).trim() !== "") return scanHeadings(lines, bodyStart);
  return found;
}

/**
 * marked's paragraph regex runs at ~10 µs a line and, on a single run of text of a couple of
 * megabytes without a blank line, effectively never returns. Files with such a run (pasted
 * logs, minified dumps) get the line scanner instead.
 */
const MARKED_RUN_LIMIT = 128 * 1024;

/** Characters in the longest stretch of lines without a blank one. */
function longestRun(lines: string[], from: number): number {
  let best = 0;
  let run = 0;
  for (let i = from; i < lines.length; i++) {
    const line = lines[i]!;
    run = line.trim() === "" ? 0 : run + line.length + 1;
    if (run > best) best = run;
  }
  return best;
}

/**
 * A lexer with explicit options, so a `marked.use()` elsewhere in the process (extensions,
 * pedantic mode) cannot change where our sections fall. The options object is mutated by
 * marked, hence a fresh one per call.
 */
function blockLexer(): Lexer {
  return new Lexer({ gfm: true, pedantic: false, breaks: false, silent: false, tokenizer: new QuickSetextTokenizer() });
}

/**
 * marked tries its setext-heading regex at every block start, and on a long paragraph that
 * regex falls off the JIT: ~0.15 ms per line, and a 50k-line paragraph never finishes.
 * A setext heading needs an `===`/`---` line before the paragraph's first blank line, so
 * look for one cheaply and skip the regex when there is none (the common case). Past
 * SETEXT_SCAN_LIMIT a run of text is treated as a paragraph: a heading that long is not one.
 */
class QuickSetextTokenizer extends Tokenizer {
  override lheading(src: string): Tokens.Heading | undefined {
    BLANK_LINE_RE.lastIndex = 0;
    const blank = BLANK_LINE_RE.exec(src);
    const run = blank ? src.slice(0, blank.index) : src;
    if (run.length > SETEXT_SCAN_LIMIT || !SETEXT_UNDERLINE_RE.test(run)) return undefined;
    return super.lheading(src);
  }
}

const SETEXT_SCAN_LIMIT = 16 * 1024;
const BLANK_LINE_RE = /\n[ \t]*(?:\n|$)/g;
const SETEXT_UNDERLINE_RE = /\n {0,3}(?:=+|-+)[ \t]*(?:\n|$)/;

/**
 * Fallback: ATX headings outside ``` / ~~~ fences. Only unindented ones, since an
 * indented `#` line is more likely inside a list item than a heading.
 */
function scanHeadings(lines: string[], bodyStart: number): Heading[] {
  const found: Heading[] = [];
  let fence: { ch: string; len: number } | null = null;
  for (let i = bodyStart; i < lines.length; i++) {
    const line = lines[i]!;
    const f = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (f && f[1]![0] === fence.ch && f[1]!.length >= fence.len && f[2]!.trim() === "") fence = null;
      continue;
    }
    if (f && !(f[1]![0] === "`" && f[2]!.includes("`"))) {
      fence = { ch: f[1]![0]!, len: f[1]!.length };
      continue;
    }
    const h = /^(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (h) found.push({ line: i, span: 1, level: h[1]!.length, title: (h[2] ?? "").trim() });
  }
  return found;
}

/**
 * Lines after YAML front matter (`---` … `---` or `...` at the very top), or 0. Skipping
 * it matters beyond noise: marked would read `title: x` + `---` as a setext heading.
 */
function frontMatterEnd(lines: string[]): number {
  if (lines.length < 2 || !/^---[ \t]*$/.test(lines[0]!)) return 0;
  for (let i = 1; i < lines.length; i++) {
    if (/^(?:---|\.\.\.)[ \t]*$/.test(lines[i]!)) return i + 1;
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Splitting large sections

type Emit = (content: string, startLine: number, endLine: number) => void;

/**
 * The reference's split of an oversized section `lines[start:end]`, in priority order:
 * at a blank line once the buffer reaches `max`; else before the line that made it too
 * long; a single over-long line is cut at sentence ends. `overlap` lines are carried
 * into the next piece for context. Lengths are tracked incrementally instead of
 * re-joining the buffer on every line, which made the reference quadratic.
 */
function splitSection(lines: string[], start: number, end: number, max: number, overlap: number, emit: Emit): void {
  const n = end - start;
  let cur: string[] = [];
  let curLen = -1; // length of cur.join("\n"); -1 for empty so the first line adds no separator
  let curStart = 0; // section-relative index of cur[0]

  const reset = (keep: string[]) => {
    cur = keep;
    curLen = keep.length ? keep.reduce((a, l) => a + l.length + 1, -1) : -1;
  };
  // Overlap is context, so it may not eat more than half a chunk: carrying a line that
  // is itself near `max` (the reference does) re-emits it whole in the next piece.
  const budget = Math.floor(max / 2);
  const tail = (arr: string[]) => {
    const kept: string[] = [];
    let len = -1;
    for (let k = arr.length - 1; k >= 0 && kept.length < overlap; k--) {
      len += arr[k]!.length + 1;
      if (len > budget) break;
      kept.unshift(arr[k]!);
    }
    return kept;
  };

  for (let i = 0; i < n; i++) {
    const line = lines[start + i]!;
    cur.push(line);
    curLen += line.length + 1;
    const full = curLen >= max;
    const blank = line.trim() === "" && i + 1 < n;

    if (full && blank) {
      emit(cur.join("\n").trim(), start + curStart + 1, start + i + 1);
      reset(tail(cur));
      curStart = i + 1 - cur.length;
    } else if (full && cur.length > 1) {
      cur.pop();
      emit(cur.join("\n").trim(), start + curStart + 1, start + i);
      reset([...tail(cur), line]);
      curStart = i + 1 - cur.length;
    } else if (full) {
      for (const part of splitLongText(line, max)) emit(part.trim(), start + curStart + 1, start + i + 1);
      reset([]);
      curStart = i + 1;
    } else if (i === n - 1) {
      emit(cur.join("\n").trim(), start + curStart + 1, start + i + 1);
      reset([]);
    }
  }
  // A line rolled back on the last iteration is still waiting.
  if (cur.length) emit(cur.join("\n").trim(), start + curStart + 1, end);
}

/**
 * Where a sentence ends: `……`, `…`, CJK 。！？； (plus following spaces), or .!?; followed
 * by whitespace, the end, or a CJK character. `v1.2.3`, URLs and e-mail addresses never
 * match because their dots are followed by a letter or digit.
 */
const SENTENCE_END_RE =
  /……|…|[。\uFF01\uFF1F\uFF1B]\s*|[.!?;](?=\s|$|[\u4E00-\u9FFF\u3040-\u30FF\uAC00-\uD7AF])\s*/g;

/**
 * Cut `text` into pieces of at most `max`, each ending at the last sentence end that fits;
 * failing that at the last line break (only multi-line re-splits have one), failing that
 * exactly at `max`. Each window is scanned once, so the whole is linear.
 */
export function splitLongText(text: string, max: number): string[] {
  const parts: string[] = [];
  let pos = 0;
  while (text.length - pos > max) {
    const cut = sentenceCut(text, pos, max) || newlineCut(text, pos, max) || hardCut(text, pos, max);
    parts.push(text.slice(pos, pos + cut));
    pos += cut;
  }
  if (pos < text.length) parts.push(text.slice(pos));
  return parts;
}

/** Offset (from pos) just after the last sentence end within `max`, or 0. */
function sentenceCut(text: string, pos: number, max: number): number {
  // One character past the window lets the look-ahead see what really follows a final
  // "."; the reference let `$` match at the window edge and could cut `v1.|2`.
  const window = text.slice(pos, pos + max + 1);
  SENTENCE_END_RE.lastIndex = 0;
  let best = 0;
  for (let m = SENTENCE_END_RE.exec(window); m && m.index < max; m = SENTENCE_END_RE.exec(window)) {
    best = Math.min(m.index + m[0].length, max);
  }
  return best;
}

function newlineCut(text: string, pos: number, max: number): number {
  const nl = text.lastIndexOf("\n", pos + max - 1);
  return nl > pos ? nl + 1 - pos : 0;
}

/** Exactly `max`, stepping back one so a surrogate pair is never halved. */
function hardCut(text: string, pos: number, max: number): number {
  const c = text.charCodeAt(pos + max - 1);
  return max > 1 && c >= 0xd800 && c <= 0xdbff ? max - 1 : max;
}

// ---------------------------------------------------------------------------
// Output

/** Trimmed, non-empty pieces of at most `max`; the reference's line logic can emit more. */
function fitToMax(content: string, max: number): string[] {
  if (content.length <= max) return content ? [content] : [];
  return splitLongText(content, max)
    .map((p) => p.trim())
    .filter((p) => p !== "");
}

/**
 * The chunks of one file. Exact repeats (same lines, same text) are dropped: hard cuts of
 * a repetitive line would otherwise give two chunks the same id.
 */
class ChunkList {
  readonly chunks: Chunk[] = [];
  private readonly seen = new Set<string>();
  constructor(private readonly source: string) {}

  add(s: Section, content: string, startLine: number, endLine: number): void {
    const hash = contentHash(content);
    const key = `${startLine}:${endLine}:${hash}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.chunks.push({
      content,
      source: this.source,
      heading: s.heading,
      headingLevel: s.level,
      startLine,
      endLine,
      contentHash: hash,
    });
  }
}

// ---------------------------------------------------------------------------
// Small helpers

function sha256Hex16(s: string): string {
  return sha256Hex(s).slice(0, 16);
}

/** \r\n and lone \r become \n (marked does the same), and a leading BOM goes. */
function normaliseNewlines(text: string): string {
  const t = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return t.includes("\r") ? t.replace(/\r\n?/g, "\n") : t;
}

function joinLines(lines: string[], from: number, to: number): string {
  return from >= to ? "" : lines.slice(from, to).join("\n");
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

function leadingNewlines(s: string): number {
  let n = 0;
  while (s.charCodeAt(n) === 10) n++;
  return n;
}

/** Headings of a markdown text as the chunker sees them (fence-aware, front matter skipped); lines 1-based. */
export function headingsOf(text: string): { line: number; level: number; title: string }[] {
  const lines = normaliseNewlines(text).split("\n");
  return findHeadings(lines, frontMatterEnd(lines)).map((h) => ({ line: h.line + 1, level: h.level, title: h.title }));
}
