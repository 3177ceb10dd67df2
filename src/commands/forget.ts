import { basename, dirname, resolve } from "node:path";
import { loadContext, type Context } from "../core/context.ts";
import { ConflictError, NotFoundError, UsageError, oneLine } from "../core/errors.ts";
import { forgetTurn, noteHolding, notesOfTurn, readForgotten, undoForget, type ForgetResult, type ForgetTarget } from "../memory/forget.ts";
import { isDailyFile, noteStamp } from "../memory/journal.ts";
import { clip } from "../core/text.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { notice, print, printJson } from "./output.ts";

export const forgetCommand = command({
  command: "forget [id]",
  describe: "Remove a turn's note from memory for good (by chunk hash or turn id): neither the hooks, import nor a rebuild write it again",
  flags: {
    ...jsonFlag,
    id: { positional: true, type: "string", describe: "A chunk hash (as search prints it) or a turn id (as expand prints it)" },
    "dry-run": { alias: "n", type: "boolean", default: false, describe: "Show what would be removed; change nothing" },
    list: { type: "boolean", default: false, describe: "Show the forgotten turns" },
    undo: { type: "string", describe: "Take a turn off the forgotten list, so that memsearch import may write it again" },
  },
  run: async (a) => {
    const asked = [a.id !== undefined, a.list, a.undo !== undefined].filter(Boolean).length;
    if (asked !== 1) throw new UsageError("give one of: a chunk hash or turn id, --list, or --undo <turn id>");
    const ctx = loadContext();
    const { dataDir } = ctx.project;
    if (a.list) {
      const listed = readForgotten(dataDir);
      if (listed.problem) notice(`Warning: ${listed.problem}`);
      if (a.jsonOutput) return printJson({ forgotten: listed.entries });
      if (!listed.entries.length) return print("No forgotten turns.");
      return print(
        [`${listed.entries.length} forgotten turn${listed.entries.length === 1 ? "" : "s"} (memsearch forget --undo <turn id> lets import write one again):`, ...listed.entries.map((e) => `  ${e.turn}  forgotten ${e.at.slice(0, 16).replace("T", " ")}${e.file ? `  was in ${e.file}` : ""}${e.summary ? `: ${JSON.stringify(clip(e.summary, 80))}` : ""}`)].join("\n"),
      );
    }
    if (a.undo !== undefined) {
      const gone = await undoForget(dataDir, a.undo);
      if (a.jsonOutput) return printJson({ undone: gone.length === 1 ? gone[0] : gone });
      const where = gone.length > 1 ? ` (in ${gone.length} sessions)` : "";
      return print(`Turn ${gone[0]!.turn}${where} is no longer forgotten: memsearch import may write its note again.`);
    }
    const target = await targetOf(ctx, String(a.id));
    const res = await forgetTurn(dataDir, target, { dryRun: a.dryRun, root: ctx.project.root });
    let indexed = true;
    if (!a.dryRun && res.notes.length) {
      try {
        const { refreshIndex } = await import("../watch/gateway.ts");
        await refreshIndex(ctx);
      } catch (e) {
        indexed = false;
        notice(`Warning: the note is gone from the markdown, but the index could not be updated (${oneLine(e)}); run memsearch index`);
      }
    }
    if (a.jsonOutput) return printJson({ turn: res.turn ?? null, dry_run: res.dryRun, already_forgotten: res.already, indexed, removed: res.notes.map((n) => ({ file: n.file, line: n.line, heading: n.heading, first_bullet: n.bullets[0] ?? null })) });
    print(forgetLines(res).join("\n"));
  },
});

/** A turn id some note holds, else a chunk hash of a daily file's note. */
async function targetOf(ctx: Context, id: string): Promise<ForgetTarget> {
  const given = id.trim();
  if (!given) throw new UsageError("give the chunk hash or turn id to forget");
  if (notesOfTurn(ctx.project.memoryDir, given).length || readForgotten(ctx.project.dataDir).has(given)) return { turn: given };
  if (!/^[0-9a-f]{4,64}$/i.test(given)) throw new NotFoundError(`no note holds turn ${given}, and it is not a chunk hash`);
  const { readChunk } = await import("../watch/gateway.ts");
  const { chunk } = await readChunk(ctx, given);
  const name = basename(chunk.source);
  if (resolve(dirname(chunk.source)) !== resolve(ctx.project.memoryDir) || !isDailyFile(name)) throw new UsageError(`chunk ${given} is not in a daily memory file (${chunk.source}): edit that file by hand`);
  // The index may be older than the file: the note is the one that still holds the chunk's text, never whatever stands at its line now.
  const held = noteHolding(ctx.project.memoryDir, name, chunk.startLine, chunk.content);
  if (!held) throw new ConflictError(`chunk ${given} is no longer in ${name} as it was indexed (the file changed since): nothing was forgotten; run memsearch index, then search again`);
  return { file: name, id: held.id, line: held.note.line };
}

function forgetLines(r: ForgetResult): string[] {
  const what = r.turn ? `turn ${r.turn}` : "a note without a turn anchor";
  const shown = r.notes.map((n) => `  ${n.file}:${n.line}  ${noteStamp(n)}${n.bullets[0] ? `  ${JSON.stringify(clip(n.bullets[0], 80))}` : ""}`);
  if (r.dryRun) return [`Would forget ${what}: ${r.notes.length} note${r.notes.length === 1 ? "" : "s"} removed${r.turn ? ", and the turn never written again" : ""}. Nothing changed.`, ...shown];
  const head = r.notes.length ? `Forgot ${what}: removed ${r.notes.length} note${r.notes.length === 1 ? "" : "s"}` : `Turn ${r.turn} was already forgotten; no note of it is left`;
  const tail = r.turn ? `; the hooks, memsearch import and a rebuild will not write it again (memsearch forget --undo ${r.turn} lets import write it)` : "";
  return [`${head}${tail}.`, ...shown];
}
