import type { Heal } from "../watch/gateway.ts";
import type { SkipReason } from "../index/scanner.ts";

/**
 * The one line that says an index was rebuilt, built or read differently than asked; the
 * decision is the core's (openOrRebuild), the words are here.
 */
export function rebuiltNotice(reason: string, chunks: number, missingVectors = 0): string {
  const vectors = missingVectors > 0 ? `; their vectors are added by the next 'memsearch index'` : "";
  return `memsearch: ${reason}; rebuilt it from the markdown (${plural(chunks, "chunk")}${vectors})`;
}

export function healNotices(h: Heal, model: string): string[] {
  const out = h.dropped ? [droppedNotice(h.dropped)] : [];
  const rest = healNotice(h, model);
  return rest ? [...out, rest] : out;
}

/** The one line that says the index named files of another place, and what was done. */
export function droppedNotice(d: NonNullable<Heal["dropped"]>): string {
  const more = d.files > 1 ? ` and ${plural(d.files - 1, "other")}` : "";
  return `memsearch: the index named files outside this project (${JSON.stringify(d.example)}${more}; copied or committed from elsewhere): left out ${plural(d.chunks, "chunk")} and indexed this project's own markdown`;
}

function healNotice(h: Heal, model: string): string | undefined {
  if (h.rebuilt) return rebuiltNotice(h.rebuilt.reason, h.rebuilt.chunks, h.rebuilt.missingVectors);
  if (h.built) return `memsearch: there was no index yet; indexed ${plural(h.built.chunks, "chunk")} first`;
  if (h.otherModel) return `memsearch: the index was built with embedding model '${h.otherModel}', not '${model}': keyword results only ('memsearch index' rebuilds it for '${model}')`;
  return undefined;
}

/** A file the index left out, and why. */
export function skippedNotice(path: string, reason: SkipReason): string {
  return `memsearch: skipped ${path}: ${reason === "not-markdown" ? "not a markdown file (.md, .markdown)" : "not UTF-8 text"}`;
}

/** A file indexed without what could not be text, and how much that was; the file itself is never changed. */
export function cleanedNotice(path: string, cleaned: number, dropped: number): string {
  const bad = "control characters or bytes that are not UTF-8";
  if (!cleaned) return `memsearch: cleaned ${path}: ${plural(dropped, "section")} of ${bad} left out`;
  const left = dropped ? `; ${plural(dropped, "section")} mostly of such bytes left out` : "";
  return `memsearch: cleaned ${path}: ${plural(cleaned, "section")} held ${bad} (indexed without them)${left}`;
}

/** What search says on a project with no index and no markdown to build one from. */
export function nothingIndexedLine(memoryDir: string): string {
  return `Nothing is indexed yet: no markdown in ${memoryDir} (notes appear there after Claude Code turns).`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
