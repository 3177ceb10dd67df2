import type { CommandModule } from "yargs";
import { loadContext } from "../core/context.ts";
import { UsageError } from "../core/errors.ts";
import { expandChunk, resolveChunk } from "../core/expand.ts";
import { Store } from "../core/store.ts";
import { jsonFlag } from "./common.ts";
import { action, print, printJson } from "./output.ts";

interface Args {
  chunkHash: string;
  lines?: number;
  jsonOutput: boolean;
}

export const expandCommand: CommandModule<{}, Args> = {
  command: "expand <chunk-hash>",
  describe: "Show the whole section around a chunk, with its session anchor",
  builder: (y) =>
    jsonFlag(y)
      .positional("chunk-hash", { type: "string", demandOption: true })
      .option("lines", { alias: "n", type: "number", describe: "Instead of the section: the chunk plus N lines before and after" })
      .option("section", { type: "boolean", default: true, hidden: true, describe: "Accepted for compatibility; the section is the default" }) as never,
  handler: action((a: Args) => {
    if (a.lines !== undefined && (!Number.isInteger(a.lines) || a.lines < 0)) throw new UsageError("--lines must be a whole number ≥ 0");
    const ctx = loadContext();
    const { store } = Store.open(ctx.project.indexDir, ctx.config["embedding.model"]);
    const x = expandChunk(resolveChunk(store, String(a.chunkHash)), a.lines);
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
