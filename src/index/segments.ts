/**
 * The index as a base plus a short list of small segments (issue 34). The base is the index file
 * (format.ts), written whole; each later change to the index (a turn's chunks, a forget, a re-index
 * of a few files) is one segment: the store's operations in the order it made them (a chunk added
 * with its text and vector, a chunk removed, a file's record set or dropped), so replaying the
 * segments on the base gives the very state the writer held: the same internal ids, the same BM25
 * figures to the bit, the same vector rows in the same order, and so the same results, ranks and
 * ties as the one file a full save would have written. A removal is a tombstone (the id removed);
 * nothing already written is rewritten.
 *
 *   segment: MAGIC | u32 head length | head JSON (sealed: its own CRC-32) | ops JSON | pad to 4 | Float32 vectors
 *
 * The head names the base it follows (its id), its sequence number, its sizes and the CRC-32 of
 * everything after the head. The manifest (`manifest.json`, format.ts, sealed the same way, replaced
 * atomically) names the base and the segments in order, with each one's size and CRC-32, and the
 * counts after the last (what peeks and status lines read). Adding a segment is: write the manifest
 * naming it (its size and CRC-32 are known before it is written), then the segment (temp file, fsync,
 * rename). What can go wrong, and what a reader makes of it (the store replays every whole segment and
 * reports the rest for the heal path, heal.ts):
 *   - a segment the manifest names is missing, shorter or longer than named, or fails its CRC: lost
 *     (the writer died or met a full disk between the manifest and the segment; a damaged file);
 *   - a segment of this base that the manifest does not name: lost too, its change is not in the index;
 *   - a manifest naming another base (a merge died between writing the base and the manifest, or
 *     someone's full save): the base alone is the index, the segments' changes are in it or were
 *     superseded; their files are leftovers, swept by the next writer;
 *   - a manifest that is not one (damaged): the base alone, and whatever the segments held is lost.
 * Lost changes are always in the markdown: the files they touched still have their old stat in the
 * index, so a re-index reads them again.
 */
import { closeSync, fstatSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { IndexDamagedError } from "../core/errors.ts";
import { atomicWrite, errCode, openOwnFile } from "../core/fsutil.ts";
import { crc32, headChecksumOk, readExactly, sealJson, type FileRecord, type Manifest, type SegmentEntry } from "./format.ts";

const SEGMENT_MAGIC = "MEMSEARCH-SEGMT\n";
const SEGMENT_PREFIX = "seg-";
/** Bytes a segment's head is padded to. */
const SEGMENT_HEAD_ROOM = 320;

/** A chunk added: its document's fields, and its vector's place in the segment's block (−1: none). */
export type AddOp = ["a", string, string, string, string, number, number, number, string, number];
export type Op = AddOp | ["r", string] | ["f", string, FileRecord] | ["x", string];

const Count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

/** The ops' schema, made on the first segment read: a cold search of an index without segments never pays for it. */
let opsSchema: v.GenericSchema<unknown, Op[]> | undefined;
function opsSchemaOf(): v.GenericSchema<unknown, Op[]> {
  if (opsSchema) return opsSchema;
  const fileRecord = v.looseObject({ mtimeMs: v.number(), size: v.number(), chunks: v.array(v.string()) });
  const op = v.union([
    v.tuple([v.literal("a"), v.string(), v.string(), v.string(), v.string(), Count, Count, Count, v.string(), v.pipe(v.number(), v.safeInteger(), v.minValue(-1))]),
    v.tuple([v.literal("r"), v.string()]),
    v.tuple([v.literal("f"), v.string(), fileRecord]),
    v.tuple([v.literal("x"), v.string()]),
  ]);
  // Typed as Op[]: a file record is checked for the fields a reader relies on and kept whole (a loose
  // object), which valibot's inferred type cannot say of FileRecord's optional fields.
  return (opsSchema = v.array(op) as unknown as v.GenericSchema<unknown, Op[]>);
}

const SegmentHead = v.object({ v: v.literal(1), baseId: v.string(), seq: Count, opsBytes: Count, dim: Count, vectorCount: Count, fileBytes: Count, crc: Count, headCrc: Count });

export function segmentName(baseId: string, seq: number): string {
  return `${SEGMENT_PREFIX}${baseId}-${String(seq).padStart(6, "0")}.bin`;
}

/** A new base's id: names its segments, so a segment is never applied to another base. */
export function newBaseId(): string {
  return crypto.getRandomValues(new Uint32Array(2)).reduce((s, x) => s + x.toString(36).padStart(7, "0"), "");
}

/** What a segment holds, its vectors in one block (`dim` floats each, in the order the ops name them). */
export interface Segment {
  ops: Op[];
  dim: number;
  vectors: Float32Array;
}

/** One segment's bytes, in pieces, and its manifest entry (its size and CRC-32), before anything is written. */
export function encodeSegment(baseId: string, seq: number, ops: Op[], vectors: Float32Array[], dim: number): { entry: SegmentEntry; parts: Uint8Array[] } {
  const body = Buffer.from(JSON.stringify(ops));
  const pad = Buffer.alloc((4 - (body.length % 4)) % 4, 0x20);
  const block = new Float32Array(vectors.length * dim);
  vectors.forEach((x, i) => block.set(x, i * dim));
  const blockBytes = new Uint8Array(block.buffer);
  const crc = crc32(blockBytes, crc32(pad, crc32(body)));
  // The head is padded to a fixed room, so the sizes it records do not change its own length.
  const fileBytes = SEGMENT_MAGIC.length + 4 + SEGMENT_HEAD_ROOM + body.length + pad.length + blockBytes.length;
  const sealed = Buffer.from(sealJson({ v: 1, baseId, seq, opsBytes: body.length, dim, vectorCount: vectors.length, fileBytes, crc }));
  if (sealed.length > SEGMENT_HEAD_ROOM) throw new Error("a segment's head is larger than its room");
  const head = Buffer.concat([sealed, Buffer.alloc(SEGMENT_HEAD_ROOM - sealed.length, 0x20)]);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  const parts = [Buffer.from(SEGMENT_MAGIC, "latin1"), len, head, body, pad, blockBytes];
  let whole = 0;
  for (const part of parts) whole = crc32(part, whole);
  return { entry: { name: segmentName(baseId, seq), seq, bytes: fileBytes, crc: whole, removed: ops.filter((o) => o[0] === "r").length }, parts };
}

/** Write a segment encodeSegment made (temp file, fsync, rename). */
export function writeSegmentFile(indexDir: string, entry: SegmentEntry, parts: Uint8Array[]): void {
  atomicWrite(join(indexDir, entry.name), parts);
}

/**
 * One segment the manifest names, checked against the entry (its size and CRC-32) and its own head
 * (magic, base, sequence, sizes, CRC), its ops against their schema. Throws IndexDamagedError with
 * the reason, as the start of a sentence.
 */
export function readSegment(indexDir: string, entry: SegmentEntry, baseId: string): Segment {
  let bytes: Buffer;
  try {
    const fd = openOwnFile(join(indexDir, entry.name), "read");
    try {
      const size = fstatSync(fd).size;
      if (size !== entry.bytes) throw new IndexDamagedError(`segment ${entry.seq} is ${size} bytes, the manifest says ${entry.bytes}`);
      bytes = Buffer.allocUnsafe(size);
      readExactly(fd, bytes, 0);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    if (e instanceof IndexDamagedError) throw e;
    if (errCode(e) === "ENOENT") throw new IndexDamagedError(`segment ${entry.seq} named by the manifest is missing`);
    throw new IndexDamagedError(`segment ${entry.seq} cannot be read (${errCode(e) ?? e})`);
  }
  if (crc32(bytes) !== entry.crc) throw new IndexDamagedError(`checksum mismatch in segment ${entry.seq}`);
  return decodeSegment(bytes, entry.seq, baseId);
}

/** A segment's bytes (already checked against the manifest) to its ops and vectors. */
function decodeSegment(bytes: Buffer, seq: number, baseId: string): Segment {
  const bad = (why: string) => new IndexDamagedError(`segment ${seq} ${why}`);
  if (bytes.length < SEGMENT_MAGIC.length + 4 || bytes.toString("latin1", 0, SEGMENT_MAGIC.length) !== SEGMENT_MAGIC) throw bad("is not a segment");
  const headLen = bytes.readUInt32LE(SEGMENT_MAGIC.length);
  const headAt = SEGMENT_MAGIC.length + 4;
  if (headAt + headLen > bytes.length) throw bad("is cut short");
  const headBytes = bytes.subarray(headAt, headAt + headLen);
  let head: v.InferOutput<typeof SegmentHead>;
  try {
    head = v.parse(SegmentHead, JSON.parse(headBytes.toString("utf8")));
  } catch {
    throw bad("has a damaged header");
  }
  if (!headChecksumOk(headBytes, head)) throw bad("has a damaged header");
  if (head.baseId !== baseId || head.seq !== seq) throw bad("belongs to another index");
  const bodyAt = headAt + headLen;
  const pad = (4 - (head.opsBytes % 4)) % 4;
  const blockAt = bodyAt + head.opsBytes + pad;
  if (head.fileBytes !== bytes.length || blockAt + head.vectorCount * head.dim * 4 !== bytes.length) throw bad("does not have the size its header gives");
  if (crc32(bytes.subarray(bodyAt)) !== head.crc) throw bad("fails its checksum");
  let ops: Op[];
  try {
    ops = v.parse(opsSchemaOf(), JSON.parse(bytes.toString("utf8", bodyAt, bodyAt + head.opsBytes)));
  } catch {
    throw bad("holds operations that do not parse");
  }
  const vectors = new Float32Array(head.vectorCount * head.dim);
  new Uint8Array(vectors.buffer).set(bytes.subarray(blockAt));
  for (const op of ops) if (op[0] === "a" && op[9] >= head.vectorCount) throw bad("names a vector it does not hold");
  return { ops, dim: head.dim, vectors };
}

/**
 * The segment files in the index folder that the manifest does not name: `torn`, of its base and
 * past its last segment (an append whose manifest was never written: its change is lost), and
 * `stale`, of another base or before the manifest's segments (a merge's or a full save's leftovers,
 * already in the base or superseded).
 */
export function strayingSegments(indexDir: string, m: Manifest | undefined): { torn: string[]; stale: string[] } {
  const out = { torn: [] as string[], stale: [] as string[] };
  let names: string[];
  try {
    names = readdirSync(indexDir);
  } catch {
    return out;
  }
  const named = new Set(m?.segments.map((s) => s.name));
  const last = m?.segments.at(-1)?.seq ?? 0;
  for (const name of names) {
    const match = /^seg-([0-9a-z]+)-(\d{6})\.bin$/.exec(name);
    if (!match || named.has(name)) continue;
    if (m && match[1] === m.baseId && Number(match[2]) > last) out.torn.push(name);
    else out.stale.push(name);
  }
  return out;
}

/** Remove segment files (leftovers, or segments a new base took in); a file already gone is no matter. */
export function removeSegments(indexDir: string, names: string[]): void {
  for (const name of names) {
    try {
      if (lstatSync(join(indexDir, name)).isFile()) rmSync(join(indexDir, name), { force: true });
    } catch {}
  }
}

/**
 * When a merge is due: past this many segments (each is a file a cold load opens and replays), or
 * when the segments and the tombstoned chunks' bytes still in the base pass a quarter of the base
 * (so the index on disk stays within about 1.25× a freshly merged one).
 */
export const MERGE_SEGMENTS = 64;
export const MERGE_SHARE = 0.25;
/** Past these, a writer that may not merge in the background merges anyway (see IndexRequest.merge). */
export const MERGE_HARD_SEGMENTS = 512;
export const MERGE_HARD_SHARE = 1;

export function mergeDue(m: Manifest, base: { bytes: number; chunks: number }, hard = false): boolean {
  const segments = m.segments.length;
  if (segments === 0) return false;
  const segBytes = m.segments.reduce((a, s) => a + s.bytes, 0);
  const removed = m.segments.reduce((a, s) => a + s.removed, 0);
  const dead = base.chunks > 0 ? (removed * base.bytes) / base.chunks : 0;
  const share = (segBytes + dead) / Math.max(base.bytes, 1);
  return hard ? segments >= MERGE_HARD_SEGMENTS || share > MERGE_HARD_SHARE : segments >= MERGE_SEGMENTS || share > MERGE_SHARE;
}
