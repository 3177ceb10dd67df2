import * as v from "valibot";

/**
 * What the watch process and its clients say to each other over the project's socket: one JSON
 * object per line each way. Both ends check what they receive against these schemas, so a reply
 * from another version of memsearch, or a stray writer on the socket, is refused as a whole
 * rather than half-read: a client treats it as no answer and loads the index itself.
 */

const ChunkShape = v.object({
  content: v.string(),
  source: v.string(),
  heading: v.string(),
  headingLevel: v.number(),
  startLine: v.number(),
  endLine: v.number(),
  contentHash: v.string(),
  chunkHash: v.string(),
});

const RebuiltShape = v.object({ reason: v.string(), chunks: v.number(), missingVectors: v.number() });

const SearchRequest = v.object({
  op: v.literal("search"),
  query: v.string(),
  topK: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)),
  sourcePrefix: v.optional(v.string()),
  background: v.optional(v.boolean()),
});

const WatchRequestSchema = v.variant("op", [
  v.object({ op: v.literal("ping") }),
  SearchRequest,
  v.object({ op: v.literal("chunk"), hash: v.string() }),
  /** `wait`: answer once the re-index is done, with its report (the benchmark times it so). */
  v.object({ op: v.literal("index"), wait: v.optional(v.boolean()) }),
  v.object({ op: v.literal("stop") }),
]);

export type WatchRequest = v.InferOutput<typeof WatchRequestSchema>;
export type WatchOp = WatchRequest["op"];

/** A request the watch process could not serve; `exitCode` is the CLI's for the same error. */
const Failure = v.object({ ok: v.literal(false), error: v.string(), exitCode: v.optional(v.number()) });

/** `evidence` and `information` default to 0 from a watch process of an older release: its results are then gated on vectors alone, that is, quietly. */
/** `kind` defaults to "note" from a watch process of a release that knew no curated memory. */
const SearchResultShape = v.object({ chunk: ChunkShape, score: v.number(), bm25: v.number(), evidence: v.optional(v.number(), 0), information: v.optional(v.number(), 0), cosine: v.optional(v.number()), kind: v.optional(v.picklist(["note", "curated"]), "note"), instructionLike: v.optional(v.boolean()) });
const BackgroundShape = v.object({ mean: v.number(), sd: v.number(), sampled: v.number(), vectors: v.number() });

const Replies = {
  ping: v.object({ ok: v.literal(true), pid: v.number(), version: v.string(), chunks: v.number(), vectors: v.number(), lastError: v.optional(v.string()) }),
  search: v.object({
    ok: v.literal(true),
    results: v.array(SearchResultShape),
    mode: v.picklist(["hybrid", "bm25"]),
    warning: v.optional(v.string()),
    background: v.optional(BackgroundShape),
    /** The watch process had to rebuild a broken index to answer. */
    rebuilt: v.optional(RebuiltShape),
  }),
  chunk: v.object({ ok: v.literal(true), chunk: ChunkShape, rebuilt: v.optional(RebuiltShape) }),
  index: v.union([
    v.object({ ok: v.literal(true), queued: v.literal(true) }),
    v.object({ ok: v.literal(true), report: v.looseObject({ indexedChunks: v.number(), totalChunks: v.number() }) }),
  ]),
  stop: v.object({ ok: v.literal(true) }),
} satisfies Record<WatchOp, v.GenericSchema>;

export type WatchReply<Op extends WatchOp> = v.InferOutput<(typeof Replies)[Op]>;
export type WatchFailure = v.InferOutput<typeof Failure>;

/** A reply to `op` as the protocol allows it, or undefined for anything else. */
export function checkReply<Op extends WatchOp>(op: Op, raw: unknown): WatchReply<Op> | WatchFailure | undefined {
  const ok = v.safeParse(Replies[op], raw);
  if (ok.success) return ok.output as WatchReply<Op>;
  const failed = v.safeParse(Failure, raw);
  return failed.success ? failed.output : undefined;
}

/** A request as the protocol allows it, or why not (in one line, for the reply). */
export function checkRequest(raw: unknown): { request: WatchRequest } | { problem: string } {
  const r = v.safeParse(WatchRequestSchema, raw);
  if (r.success) return { request: r.output };
  const issue = r.issues[0];
  const where = issue.path?.map((p) => String(p.key)).join(".");
  return { problem: `bad request${where ? ` (${where})` : ""}: ${issue.message}` };
}

/**
 * How long each kind of reader waits for the watch process before it gives up on it (and, where
 * it may, loads the index itself). One table, so the budgets can be compared at a glance.
 */
export const WATCH_TIMEOUTS = {
  /** `search`, `recall`: a warm answer comes in milliseconds; this covers embedding the query. */
  search: 5_000,
  /** The prompt hook: inside its own budget, with room left for the hint or the transcript search. */
  promptSearch: 3_000,
  /** `expand`. */
  chunk: 3_000,
  /** After a note is written: the watch process only queues the re-index. */
  index: 2_000,
  /** `doctor`. */
  ping: 1_000,
  /** SessionEnd shares 1.5 s with every other plugin; an unresponsive watch process is killed instead. */
  stop: 400,
} as const satisfies Record<string, number>;
