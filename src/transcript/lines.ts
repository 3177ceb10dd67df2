/**
 * Byte-level JSONL streaming: the file is read in fixed chunks, lines are found with a native
 * byte search and handed over as (buffer, start, end) windows, so a line is never decoded unless
 * the reader decides to parse it. A 100 MB transcript is never held in memory whole.
 */
import { open } from "node:fs/promises";

const NL = 10;
const Q = 34; // "
const BS = 92; // \
const LBRACE = 123;
const LBRACKET = 91;
const COLON = 58;
const COMMA = 44;

export interface ScanOptions {
  /** Byte offset to start at (must be a line start). */
  start?: number;
  /** Byte offset to stop at (exclusive). */
  end?: number;
  chunkSize?: number;
  /** Lines longer than this are skipped without being buffered. */
  maxLineBytes?: number;
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
  const fh = await open(path, "r");
  const chunk = new Uint8Array(chunkSize);
  let pos = opts.start ?? 0;
  let lineStart = pos;
  let lineNo = 0;
  let parts: Uint8Array[] = [];
  let partsLen = 0;
  let discarding = false;
  const res: ScanResult = { bytes: 0, lines: 0, oversized: 0, binary: false };
  let first = true;
  let stopped = false;
  try {
    outer: while (pos < stop) {
      const want = Math.min(chunkSize, stop - pos);
      const { bytesRead } = await fh.read(chunk, 0, want, pos);
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
              parts.push(c.slice(i, bytesRead));
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
            const line = concat(parts, partsLen + (j - i));
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
        const line = concat(parts, partsLen);
        sink(line, 0, line.length, lineStart, lineNo);
      }
    }
  } finally {
    await fh.close();
  }
  return res;
}

function concat(parts: Uint8Array[], len: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(len);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Parse one line; undefined when it is not exactly one JSON object. */
export function parseLine(buf: Uint8Array, start: number, end: number): Record<string, unknown> | undefined {
  const r = Bun.JSONL.parseChunk(buf, start, end);
  if (r.error || !r.done || r.values.length !== 1) return undefined;
  const v = r.values[0];
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  return v as Record<string, unknown>;
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
 * What a cheap look at the start of a line tells: the top-level `type`, `isSidechain`, and for a
 * `message` object its `role`, whether `content` is a string or an array, and the `type` of the
 * first content block. The scan walks real JSON tokens (strings with escapes, literals) at the top
 * level and gives up at the first nested value it was not asked to enter, so what it reports is
 * exact for a valid line; fields it could not reach stay undefined.
 */
export interface Peek {
  type?: string;
  sidechain?: boolean;
  role?: string;
  content?: "string" | "array" | "other";
  firstBlock?: string;
}

const K_TYPE = bytes("type");
const K_SIDECHAIN = bytes("isSidechain");
const K_MESSAGE = bytes("message");
const K_ROLE = bytes("role");
const K_CONTENT = bytes("content");

function bytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

function keyIs(buf: Uint8Array, s: number, e: number, k: Uint8Array): boolean {
  if (e - s !== k.length) return false;
  for (let i = 0; i < k.length; i++) if (buf[s + i] !== k[i]) return false;
  return true;
}

function skipWs(buf: Uint8Array, i: number, e: number): number {
  while (i < e) {
    const b = buf[i]!;
    if (b !== 32 && b !== 9 && b !== 13 && b !== NL) return i;
    i++;
  }
  return i;
}

/** Index of the quote closing a string whose content starts at i, or -1. */
function strEnd(buf: Uint8Array, i: number, e: number): number {
  for (;;) {
    const j = buf.indexOf(Q, i);
    if (j < 0 || j >= e) return -1;
    let k = j - 1;
    let n = 0;
    while (k >= i && buf[k] === BS) {
      k--;
      n++;
    }
    if ((n & 1) === 0) return j;
    i = j + 1;
  }
}

/** Skip a string / literal / number value; -1 for objects, arrays or anything unexpected. */
function skipSimple(buf: Uint8Array, i: number, e: number): number {
  const b = buf[i];
  if (b === Q) {
    const j = strEnd(buf, i + 1, e);
    return j < 0 ? -1 : j + 1;
  }
  if (b === undefined || b === LBRACE || b === LBRACKET) return -1;
  // true / false / null / numbers
  let j = i;
  while (j < e) {
    const c = buf[j]!;
    const ok = (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || c === 45 || c === 43 || c === 46 || c === 69;
    if (!ok) break;
    j++;
  }
  return j > i ? j : -1;
}

function ascii(buf: Uint8Array, s: number, e: number): string {
  let out = "";
  for (let i = s; i < e && i < s + 64; i++) out += String.fromCharCode(buf[i]!);
  return out;
}

/** Read `"key": ` at i; returns [keyStart, keyEnd, valueStart] or undefined. */
function readKey(buf: Uint8Array, i: number, e: number): [number, number, number] | undefined {
  i = skipWs(buf, i, e);
  if (buf[i] !== Q) return undefined;
  const ks = i + 1;
  const ke = strEnd(buf, ks, e);
  if (ke < 0) return undefined;
  i = skipWs(buf, ke + 1, e);
  if (buf[i] !== COLON) return undefined;
  return [ks, ke, skipWs(buf, i + 1, e)];
}

/** After a value ending at i: index after the comma, or -1 at the end of the object / on error. */
function nextKey(buf: Uint8Array, i: number, e: number): number {
  i = skipWs(buf, i, e);
  return buf[i] === COMMA ? i + 1 : -1;
}

function readString(buf: Uint8Array, i: number, e: number): [string, number] | undefined {
  if (buf[i] !== Q) return undefined;
  const j = strEnd(buf, i + 1, e);
  if (j < 0) return undefined;
  return [ascii(buf, i + 1, j), j + 1];
}

export function peekEntry(buf: Uint8Array, start: number, end: number): Peek {
  const p: Peek = {};
  const e = Math.min(end, start + 4096);
  let i = skipWs(buf, start, e);
  if (buf[i] !== LBRACE) return p;
  i++;
  for (let n = 0; n < 32; n++) {
    const k = readKey(buf, i, e);
    if (!k) return p;
    const [ks, ke, vs] = k;
    let ve: number;
    if (keyIs(buf, ks, ke, K_TYPE)) {
      const s = readString(buf, vs, e);
      if (!s) return p;
      p.type = s[0];
      ve = s[1];
      // Only user entries are worth looking into further.
      if (p.type !== "user" || p.content !== undefined) return p;
    } else if (keyIs(buf, ks, ke, K_SIDECHAIN)) {
      ve = skipSimple(buf, vs, e);
      if (ve < 0) return p;
      p.sidechain = buf[vs] === 116; // t
    } else if (keyIs(buf, ks, ke, K_MESSAGE) && buf[vs] === LBRACE) {
      peekMessage(buf, vs + 1, e, p);
      return p;
    } else {
      ve = skipSimple(buf, vs, e);
      if (ve < 0) return p;
    }
    i = nextKey(buf, ve, e);
    if (i < 0) return p;
  }
  return p;
}

function peekMessage(buf: Uint8Array, i: number, e: number, p: Peek): void {
  for (let n = 0; n < 16; n++) {
    const k = readKey(buf, i, e);
    if (!k) return;
    const [ks, ke, vs] = k;
    let ve: number;
    if (keyIs(buf, ks, ke, K_ROLE)) {
      const s = readString(buf, vs, e);
      if (!s) return;
      p.role = s[0];
      ve = s[1];
    } else if (keyIs(buf, ks, ke, K_CONTENT)) {
      const b = buf[vs];
      if (b === Q) {
        p.content = "string";
        return;
      }
      if (b !== LBRACKET) {
        p.content = "other";
        return;
      }
      p.content = "array";
      let j = skipWs(buf, vs + 1, e);
      if (buf[j] !== LBRACE) return;
      j++;
      for (let m = 0; m < 16; m++) {
        const bk = readKey(buf, j, e);
        if (!bk) return;
        if (keyIs(buf, bk[0], bk[1], K_TYPE)) {
          const s = readString(buf, bk[2], e);
          if (s) p.firstBlock = s[0];
          return;
        }
        const be = skipSimple(buf, bk[2], e);
        if (be < 0) return;
        j = nextKey(buf, be, e);
        if (j < 0) return;
      }
      return;
    } else {
      ve = skipSimple(buf, vs, e);
      if (ve < 0) return;
    }
    i = nextKey(buf, ve, e);
    if (i < 0) return;
  }
}
