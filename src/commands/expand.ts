import type { CommandModule } from "yargs";
import { loadContext, type Context } from "../core/context.ts";
import { MemsearchError, UsageError } from "../core/errors.ts";
import type { StoredChunk } from "../core/types.ts";
import { askWarm, readWatchInfo } from "../core/warm.ts";
import { jsonFlag } from "./common.ts";
import { healNotices, warmNotices } from "./notices.ts";
import { action, notice, print, printJson } from "./output.ts";

interface Args {
  chunkHash: string;
  lines?: number;
  jsonOutput: boolean;
}

/** From the warm process when one runs (its index is the freshest), else from the index file. */
async function findChunk(ctx: Context, hash: string): Promise<StoredChunk> {
  if (readWatchInfo(ctx.project.dataDir)) {
    const r = await askWarm(ctx.project.dataDir, { op: "chunk", hash }, 3_000);
    if (r?.ok) {
      for (const line of warmNotices(r)) notice(line);
      return r.chunk as StoredChunk;
    }
    if (r) throw new MemsearchError(String(r.error), Number(r.exitCode) || 1);
  }
  const [{ resolveChunk }, { openOrRebuild }] = await Promise.all([import("../core/expand.ts"), import("../core/index-heal.ts")]);
  const healed = await openOrRebuild(ctx);
  for (const line of healNotices(healed, ctx.config["embedding.model"])) notice(line);
  return resolveChunk(healed.store, hash);
}

export const expandCommand: CommandModule<{}, Args> = {
  command: "expand <chunk-hash>",
  describe: "Show the whole section around a chunk, with its session anchor",
  builder: (y) =>
    jsonFlag(y)
      .positional("chunk-hash", { type: "string", demandOption: true })
      .option("lines", { alias: "n", type: "number", describe: "Instead of the section: the chunk plus N lines before and after" })
      .option("section", { type: "boolean", default: true, hidden: true, describe: "Accepted for compatibility; the section is the default" }) as never,
  handler: action(async (a: Args) => {
    if (a.lines !== undefined && (!Number.isInteger(a.lines) || a.lines < 0)) throw new UsageError("--lines must be a whole number ≥ 0");
    const ctx = loadContext();
    const { expandChunk } = await import("../core/expand.ts");
    const x = expandChunk(await findChunk(ctx, String(a.chunkHash)), a.lines);
    if (a.jsonOutput) {
      return printJson({
        chunk_hash: x.chunk.chunkHash,
        source: x.chunk.source,
        heading: x.chunk.heading,
        start_line: x.startLine,
        end_line: x.endLine,
        content: x.content,
        ...(x.anchor ? { anchor: x.anchor } : {}),
      });
    }
    const head = [`Source: ${x.chunk.source} (lines ${x.startLine}-${x.endLine})`];
    if (x.chunk.heading) head.push(`[Heading: ${x.chunk.heading}]`);
    if (x.anchor) head.push(`[Session: ${x.anchor.session}  Turn: ${x.anchor.turn}]`, `[Transcript: ${x.anchor.transcript}]`);
    print([...head, "", x.content].join("\n"));
  }),
};
