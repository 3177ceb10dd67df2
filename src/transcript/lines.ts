/**
 * Byte-level JSONL streaming: the file is read in fixed chunks, lines are found with a native
 * byte search and handed over as (buffer, start, end) windows, so a line is never decoded unless
 * the reader decides to parse it. A 100 MB transcript is never held in memory whole.
 */
import { closeSync, readSync } from "node:fs";
import { openRegularFile } from "./files.ts";

const NL = 10;
const Q = 34; // "
const BS = 92; // \
const LBRACE = 123;
const LBRACKET = 91;

export interface ScanOptions {
  /** Byte offset to start at (must be a line start). */
  start?: number;
  /** Byte offset to stop at (exclusive). */
  end?: number;
  chunkSize?: number;
  /** Lines longer than this are skipped without being buffered. */
  maxLineBytes?: number;
  /** Number of lines before `start` (so reported line numbers stay file-wide). */
  linesBefore?: number;
}

export interface ScanResult {
  /** Bytes scanned. */
  bytes: number;
  lines: number;
  oversized: number;
  /** True when the first chunk held a NUL byte (a binary file, never a JSONL transcript). */
  binary: boolean;
}

/**
 * Called once per line (without its newline). `offset` is the absolute byte offset of the line
 * start, `lineNo` is 1-based. `buf` is only valid during the call. Return `false` to stop.
 */
export type LineSink = (buf: Uint8Array, start: number, end: number, offset: number, lineNo: number) => boolean | void;

export const DEFAULT_CHUNK = 1 << 20;
export const DEFAULT_MAX_LINE = 256 * 1024 * 1024;

export async function scanLines(path: string, sink: LineSink, opts: ScanOptions = {}): Promise<ScanResult> {
  const chunkSize = opts.chunkSize ?? DEFAULT_CHUNK;
  const maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE;
  const stop = opts.end ?? Number.POSITIVE_INFINITY;
  // Synchronous chunked reads: no thread-pool hop per chunk, and the caller awaits the whole scan anyway.
  // A FIFO or device named like a transcript is refused, never waited on.
  const fd = openRegularFile(path);
  // Buffers, so the peek can use native pattern search on them.
  const chunk = Buffer.allocUnsafe(chunkSize);
  let pos = opts.start ?? 0;
  let lineStart = pos;
  let lineNo = opts.linesBefore ?? 0;
  let parts: Uint8Array[] = [];
  let partsLen = 0;
  let discarding = false;
  const res: ScanResult = { bytes: 0, lines: 0, oversized: 0, binary: false };
  let first = true;
  let stopped = false;
  try {
    outer: while (pos < stop) {
      const want = Math.min(chunkSize, stop - pos);
      const bytesRead = readSync(fd, chunk, 0, want, pos);
      if (bytesRead === 0) break;
      const c = bytesRead === chunkSize ? chunk : chunk.subarray(0, bytesRead);
      if (first) {
        first = false;
        if (c.indexOf(0) >= 0) {
          res.binary = true;
          res.bytes = bytesRead;
          break;
        }
      }
      let i = 0;
      while (i < bytesRead) {
        const j = c.indexOf(NL, i);
        if (j < 0) {
          // The line continues in the next chunk.
          if (!discarding) {
            if (partsLen + (bytesRead - i) > maxLine) {
              discarding = true;
              parts = [];
              partsLen = 0;
            } else {
              parts.push(Buffer.from(c.subarray(i, bytesRead))); // a copy: the chunk is reused
              partsLen += bytesRead - i;
            }
          }
          break;
        }
        lineNo++;
        res.lines++;
        if (discarding) {
          res.oversized++;
          discarding = false;
        } else if (partsLen > 0) {
          if (partsLen + (j - i) > maxLine) {
            res.oversized++;
          } else {
            parts.push(c.subarray(i, j));
            const line = Buffer.concat(parts, partsLen + (j - i));
            if (sink(line, 0, line.length, lineStart, lineNo) === false) stopped = true;
          }
          parts = [];
          partsLen = 0;
        } else if (j - i > maxLine) {
          res.oversized++;
        } else if (sink(c, i, j, lineStart, lineNo) === false) {
          stopped = true;
        }
        i = j + 1;
        lineStart = pos + i;
        if (stopped) {
          res.bytes = lineStart - (opts.start ?? 0);
          break outer;
        }
      }
      pos += bytesRead;
    }
    if (!stopped && !res.binary) {
      res.bytes = pos - (opts.start ?? 0);
      // A last line without a trailing newline (often a line Claude Code is still writing).
      if (discarding) {
        res.lines++;
        res.oversized++;
      } else if (partsLen > 0) {
        lineNo++;
        res.lines++;
        const line = Buffer.concat(parts, partsLen);
        sink(line, 0, line.length, lineStart, lineNo);
      }
    }
  } finally {
    closeSync(fd);
  }
  return res;
}

/** Parse one line; undefined when it is not exactly one JSON object. */
export function parseLine(buf: Uint8Array, start: number, end: number): Record<string, unknown> | undefined {
  const r = Bun.JSONL.parseChunk(buf, start, end);
  if (r.error || !r.done || r.values.length !== 1) return undefined;
  const v = r.values[0];
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  return v as Record<string, unknown>;
}

function skipWs(buf: Uint8Array, i: number, e: number): number {
  while (i < e) {
    const b = buf[i]!;
    if (b !== 32 && b !== 9 && b !== 13 && b !== NL) return i;
    i++;
  }
  return i;
}

/** True when the window holds only whitespace. */
export function isBlank(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b !== 32 && b !== 9 && b !== 13 && b !== NL) return false;
  }
  return true;
}

/**
 * What a cheap look at a line tells, without parsing it: the top-level `type` and `isSidechain`,
 * and in a top-level `message` object its `role`, whether `content` is a string or an array, and
 * the `type` of the first content block. Keys are found with a native byte search and accepted only
 * when provably at the right depth: no `{`/`[` (and for nested keys no `}`/`]`) between the
 * enclosing brace and the key, and the key's opening quote not escaped. An unescaped `"type":"` can
 * only be a key token in valid JSON, so what is reported is exact; anything uncertain stays undefined
 * (and the caller parses the line).
 */
export interface Peek {
  type?: string;
  sidechain?: boolean;
  role?: string;
  content?: "string" | "array" | "other";
  firstBlock?: string;
}

const pats = (...xs: string[]) => xs.map((x) => Buffer.from(x));
const P_TYPE = pats('"type":"', '"type": "');
const P_SIDECHAIN = pats('"isSidechain":', '"isSidechain": ');
const P_MESSAGE = pats('"message":{', '"message": {');
const P_ROLE = pats('"role":"', '"role": "');
const P_CONTENT = pats('"content":', '"content": ');
const P_TOOL_USE = Buffer.from('"tool_use"');
/** How far into a line the peek looks. */
const PEEK_WINDOW = 4096;

function asBuffer(buf: Uint8Array): Buffer {
  return buf instanceof Buffer ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * True when v[a, b) holds no `{`/`[` (and with `closing`, no `}`/`]`). Backward native searches
 * from b stop at the nearest hit, so they stay within the short prefix being checked.
 */
function noneOf(v: Buffer, a: number, b: number, closing: boolean): boolean {
  const from = b - 1;
  if (from < a) return true;
  if (v.lastIndexOf(LBRACE, from) >= a || v.lastIndexOf(LBRACKET, from) >= a) return false;
  return !closing || (v.lastIndexOf(125, from) < a && v.lastIndexOf(93, from) < a);
}

/**
 * Offset just after the key pattern for a key directly inside the object whose body starts at
 * `body` (just after its `{`) in the window `v`; -1 when absent or not provably at that depth.
 */
function keyIn(v: Buffer, body: number, ps: Buffer[], nested: boolean): number {
  for (const p of ps) {
    const at = v.indexOf(p, body);
    if (at < 0) continue;
    if (v[at - 1] === BS) return -1;
    return noneOf(v, body, at, nested) ? at + p.length : -1;
  }
  return -1;
}

/** Values the peek meets all the time, matched on bytes to spare a string allocation per line. */
const KNOWN = ["progress", "user", "assistant", "system", "file-history-snapshot", "queue-operation", "summary", "attachment", "tool_result", "tool_use", "text", "thinking", "image", "message"].map(
  (s) => [s, Buffer.from(s)] as const,
);

function readStr(v: Buffer, i: number): string | undefined {
  const j = v.indexOf(Q, i);
  if (j < 0 || j - i > 64) return undefined;
  const len = j - i;
  for (const [s, b] of KNOWN) {
    if (b.length !== len) continue;
    let k = 0;
    while (k < len && v[i + k] === b[k]) k++;
    if (k === len) return s;
  }
  return v.toString("latin1", i, j);
}

/** The top-level `isSidechain` of the line in window `v`, when it is there and a boolean. */
function sidechainOf(v: Buffer, w: number): boolean | undefined {
  const sc = keyIn(v, 1, P_SIDECHAIN, false);
  if (sc < 0) return undefined;
  const c = v[skipWs(v, sc, w)];
  return c === 116 ? true : c === 102 ? false : undefined;
}

export function peekEntry(b: Uint8Array, start: number, end: number): Peek {
  const buf = asBuffer(b);
  const p: Peek = {};
  const s = buf[start] === LBRACE ? start : skipWs(buf, start, end);
  if (buf[s] !== LBRACE) return p;
  // All searches stay inside this window of the line.
  const v = buf.subarray(s, Math.min(end, s + PEEK_WINDOW));
  const w = v.length;
  const t = keyIn(v, 1, P_TYPE, false);
  if (t >= 0) p.type = readStr(v, t);
  if (p.type !== undefined && p.type !== "user" && p.type !== "assistant") return p;
  const m = keyIn(v, 1, P_MESSAGE, false);
  if (m < 0) return p;
  if (p.type !== "user") {
    const r = keyIn(v, m, P_ROLE, true);
    if (r >= 0) p.role = readStr(v, r);
    if (p.type === undefined && p.role !== "assistant") return p;
    // Assistant lines: the sidechain flag decides whether the line counts.
    p.sidechain = sidechainOf(v, w);
    return p;
  }
  // User lines too: the first user or assistant line tells a subagent's file from a main one.
  p.sidechain = sidechainOf(v, w);
  const c = keyIn(v, m, P_CONTENT, true);
  if (c < 0) return p;
  let i = skipWs(v, c, w);
  if (v[i] === Q) p.content = "string";
  else if (v[i] === LBRACKET) {
    p.content = "array";
    i = skipWs(v, i + 1, w);
    if (v[i] === LBRACE) {
      const bt = keyIn(v, i + 1, P_TYPE, true);
      if (bt >= 0) p.firstBlock = readStr(v, bt);
    }
  } else if (i < w) p.content = "other";
  return p;
}


const P_BLOCK_PREFIX = Buffer.from('{"type":');
const P_STOP_PREFIX = Buffer.from('"stop_reason":');
const P_ID = Buffer.from(',"id":"');

function endsWithAt(buf: Buffer, at: number, pat: Buffer): boolean {
  const s = at - pat.length;
  if (s < 0) return false;
  for (let k = 0; k < pat.length; k++) if (buf[s + k] !== pat[k]) return false;
  return true;
}

/**
 * Ids of the tool_use blocks of an assistant line, found without parsing it; undefined when unsure
 * (another spelling or key order): the caller then parses the line. The token `"tool_use"` (quotes
 * included) cannot occur inside a JSON string, where its quotes would be escaped, so every
 * occurrence is a block type (`{"type":"tool_use","id":"…"`) or the stop reason, else we are unsure.
 */
export function toolUseIds(b: Uint8Array, start: number, end: number): string[] | undefined {
  const buf = asBuffer(b).subarray(start, end);
  const ids: string[] = [];
  for (let i = 0; ; ) {
    const j = buf.indexOf(P_TOOL_USE, i);
    if (j < 0) return ids;
    i = j + P_TOOL_USE.length;
    if (endsWithAt(buf, j, P_STOP_PREFIX)) continue;
    if (!endsWithAt(buf, j, P_BLOCK_PREFIX) || !endsWithAt(buf, i + P_ID.length, P_ID)) return undefined;
    const v = i + P_ID.length;
    const q = buf.indexOf(Q, v);
    if (q < 0 || q - v > 128) return undefined;
    ids.push(buf.toString("latin1", v, q));
    i = q;
  }
}
