import { anchorLine, showAnchors } from "../core/anchor.ts";
import { loadContext, type Context } from "../core/context.ts";
import { UsageError } from "../core/errors.ts";
import type { StoredChunk } from "../index/types.ts";
import { readChunk } from "../watch/gateway.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { healNotices } from "./notices.ts";
import { notice, print, printJson } from "./output.ts";

/** The chunk, with what opening the index had to repair said on stderr. */
async function findChunk(ctx: Context, hash: string): Promise<StoredChunk> {
  const { chunk, heal } = await readChunk(ctx, hash);
  for (const line of healNotices(heal, ctx.config["embedding.model"])) notice(line);
  return chunk;
}

export const expandCommand = command({
  command: "expand <chunk-hash>",
  describe: "Show the whole section around a chunk, with its session anchor",
  flags: {
    ...jsonFlag,
    "chunk-hash": { positional: true, type: "string", demandOption: true },
    lines: { type: "number", describe: "Instead of the section: the chunk plus N lines before and after" },
    section: { type: "boolean", default: true, hidden: true, describe: "Accepted for compatibility; the section is the default" },
  },
  run: async (a) => {
    if (a.lines !== undefined && (!Number.isInteger(a.lines) || a.lines < 0)) throw new UsageError("--lines must be a whole number ≥ 0");
    const ctx = loadContext();
    const { expandChunk } = await import("../index/expand.ts");
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
    if (x.anchor) head.push(anchorLine(x.anchor), `[Transcript: ${x.anchor.transcript}]`);
    // The note's own anchor is in the header: the body does not say it a second time.
    const body = x.anchor ? x.content.replace(/^[ \t]*<!--\s*session:[^\n]*-->[ \t]*\n?/m, "") : x.content;
    print([...head, "", showAnchors(body)].join("\n"));
  },
});
