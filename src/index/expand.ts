import { anchorsIn, parseAnchor, type Anchor } from "../core/anchor.ts";
import { readOwnBytes } from "../core/fsutil.ts";
import { headingsOf } from "./chunker.ts";
import { isMarkdownPath, markdownText } from "./scanner.ts";
import { InputError, NotFoundError, UsageError } from "../core/errors.ts";
import type { Store } from "./store.ts";
import type { StoredChunk } from "./types.ts";

/** What finding a section needs of a chunk: where it is and its heading. */
export type SectionRef = Pick<StoredChunk, "source" | "startLine" | "endLine" | "heading" | "headingLevel">;

export interface Expansion<C extends SectionRef = StoredChunk> {
  chunk: C;
  /** 1-based inclusive lines of what is returned. */
  startLine: number;
  endLine: number;
  content: string;
  anchor?: Anchor;
}

/**
 * The chunk for a full hash or an unambiguous prefix of one. With `allows` (the project's places,
 * core/places.ts), a chunk whose file lies outside them, as named or once its links are resolved,
 * is refused: its file is never opened.
 */
export function resolveChunk(store: Store, hash: string, allows?: (source: string) => boolean): StoredChunk {
  const found = findChunk(store, hash);
  if (allows && !allows(found.source)) throw new InputError(`chunk ${hash.trim()} names a file outside this project (${JSON.stringify(found.source)}): not opened`);
  return found;
}

function findChunk(store: Store, hash: string): StoredChunk {
  const h = hash.trim().toLowerCase();
  if (!/^[0-9a-f]{4,64}$/.test(h)) throw new UsageError(`not a chunk hash: "${hash}" (16 hex characters, as printed by search)`);
  const exact = store.getChunk(h);
  if (exact) return exact;
  const found = h.length < 16 ? store.findByPrefix(h) : [];
  if (found.length === 1) return found[0]!;
  if (found.length > 1) throw new UsageError(`chunk hash prefix "${hash}" is ambiguous (${found.length} chunks); give more characters`);
  throw new NotFoundError(`Chunk not found: ${hash}`);
}

/**
 * The chunk's own section: from its heading to the next heading of the same or a higher
 * level (the reference walked back one section too far and returned the previous sibling).
 * With `lines`, the chunk's lines plus that many lines of context on each side instead.
 */
export function expandChunk<C extends SectionRef>(chunk: C, lines?: number): Expansion<C> {
  // The index names the file, and an index may come with a cloned repository: only a markdown
  // file, itself no link and no special file (a FIFO would never answer), is opened.
  if (!isMarkdownPath(chunk.source)) throw new NotFoundError(`Source file is not markdown, not opened: ${chunk.source}`);
  let text: string;
  try {
    // As the index read it: the same lines, without control characters or unreadable bytes
    // (they would reach the terminal); nothing when the file is no longer text.
    text = markdownText(readOwnBytes(chunk.source))?.text ?? "";
  } catch {
    throw new NotFoundError(`Source file not found: ${chunk.source}`);
  }
  const all = text.replace(/\r\n?/g, "\n").split("\n");
  let start: number;
  let end: number;
  if (lines !== undefined) {
    start = Math.max(1, chunk.startLine - lines);
    end = Math.min(all.length, chunk.endLine + lines);
  } else {
    const heads = headingsOf(text);
    // A chunk's heading is the last heading at or before its first line (split sections have none inside).
    const own = chunk.headingLevel === 0 ? undefined : heads.filter((h) => h.line <= chunk.startLine).pop();
    start = own ? own.line : chunk.startLine;
    const next = heads.find((h) => h.line > start && (!own || h.level <= own.level));
    end = Math.max(next ? next.line - 1 : all.length, Math.min(chunk.endLine, all.length));
  }
  while (end > start && all[end - 1]!.trim() === "") end--;
  const content = all.slice(start - 1, end).join("\n");
  return { chunk, startLine: start, endLine: end, content, anchor: parseAnchor(content) };
}

/** The anchor of a chunk's note: in the chunk, else (a piece of a split section) at the top of its section. */
export function chunkAnchor<C extends SectionRef & { content: string }>(chunk: C): Anchor | undefined {
  const own = anchorsIn(chunk.content)[0];
  if (own) return own;
  try {
    return expandChunk(chunk).anchor;
  } catch {
    return undefined;
  }
}
