import { basename, dirname, resolve } from "node:path";
import { loadContext, type Context } from "../core/context.ts";
import { ConflictError, InputError, NotFoundError, UsageError, oneLine } from "../core/errors.ts";
import { forgetTurn, noteHolding, notesOfTurn, readForgotten, restoreHandNote, undoForget, type ForgetResult, type ForgetTarget } from "../memory/forget.ts";
import { changeList } from "../memory/forgotten.ts";
import { MANUAL_SESSION } from "../core/anchor.ts";
import { anchorPromptId } from "../agents/registry.ts";
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
    undo: { type: "string", describe: "Take a turn off the forgotten list, so that memsearch import may write it again (a note of your own: put its text back)" },
  },
  run: async (a) => {
    const asked = [a.id !== undefined, a.list, a.undo !== undefined].filter(Boolean).length;
    if (asked !== 1) throw new UsageError("give one of: a chunk hash or turn id, --list, or --undo <turn id>");
    // yargs gives a bare --undo as "": no turn to look for.
    if (a.undo !== undefined && !a.undo.trim()) throw new UsageError("--undo needs a turn id");
    const ctx = loadContext();
    const { dataDir } = ctx.project;
    if (a.list) {
      const listed = readForgotten(dataDir);
      // Listing nothing would say that nothing is forgotten, which a damaged list cannot tell.
      if (listed.problem) throw new InputError(`${listed.problem}: fix or remove it`);
      if (a.jsonOutput) return printJson({ forgotten: listed.entries });
      if (!listed.entries.length) return print("No forgotten turns.");
      return print(
        [`${listed.entries.length} forgotten turn${listed.entries.length === 1 ? "" : "s"} (memsearch forget --undo <turn id> lets import write a turn again, or puts a note of your own back):`, ...listed.entries.map((e) => `  ${e.turn}  forgotten ${e.at.slice(0, 16).replace("T", " ")}${e.file ? `  was in ${e.file}` : ""}${e.summary ? `: ${JSON.stringify(clip(e.summary, 80))}` : ""}`)].join("\n"),
      );
    }
    if (a.undo !== undefined) {
      const gone = await undoForget(dataDir, a.undo);
      // A line id may come off the list in several sessions; a note of your own (its id is its own) has its text put back.
      const undone = gone.length === 1 ? gone[0] : gone;
      const hand = gone.filter((e) => e.session === MANUAL_SESSION);
      const others = gone.filter((e) => e.session !== MANUAL_SESSION);
      const where = others.length > 1 ? ` (in ${others.length} sessions)` : "";
      const importLine = others.length ? `Turn ${others[0]!.turn}${where} is no longer forgotten: memsearch import writes its note again while its transcript is on disk.` : undefined;
      if (!hand.length) {
        if (a.jsonOutput) return printJson({ undone, restored: null });
        return print(importLine!);
      }
      const files: string[] = [];
      for (const [i, entry] of hand.entries()) {
        try {
          files.push(await restoreHandNote(dataDir, entry));
        } catch (e) {
          // Back on the list with their text: nothing the user wrote is lost.
          const left = hand.slice(i);
          await changeList(dataDir, (entries) => ({ entries: [...entries, ...left.filter((g) => !entries.some((x) => x.turn === g.turn && x.session === g.session))], result: undefined }));
          throw e;
        }
      }
      await reindexAfter(ctx);
      if (a.jsonOutput) return printJson({ undone, restored: files.length === 1 ? files[0] : files });
      return print([...hand.map((e, i) => `Put your note ${e.turn} back in ${files[i]}.`), ...(importLine ? [importLine] : [])].join("\n"));
    }
    const target = await targetOf(ctx, String(a.id));
    const res = await forgetTurn(dataDir, target, { dryRun: a.dryRun, promptIdOf: anchorPromptId(ctx.project.root) });
    const indexed = !a.dryRun && res.notes.length ? await reindexAfter(ctx) : true;
    if (a.jsonOutput) return printJson({ turn: res.turn ?? null, dry_run: res.dryRun, already_forgotten: res.already, indexed, undo: res.undo, removed: res.notes.map((n) => ({ file: n.file, line: n.line, heading: n.heading, first_bullet: n.bullets[0] ?? null })) });
    print(forgetLines(res).join("\n"));
  },
});

/** The index after the markdown changed; false (and said) when it could not follow. */
async function reindexAfter(ctx: Context): Promise<boolean> {
  try {
    const { refreshIndex } = await import("../watch/gateway.ts");
    await refreshIndex(ctx);
    return true;
  } catch (e) {
    notice(`Warning: the markdown changed, but the index could not be updated (${oneLine(e)}); run memsearch index`);
    return false;
  }
}

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

/** What forget did (or would do), and truthfully what `--undo` can do about it. */
function forgetLines(r: ForgetResult): string[] {
  const what = r.undo === "restore" ? `your note ${r.turn}` : r.turn ? `turn ${r.turn}` : "a note without a turn anchor";
  const shown = r.notes.map((n) => `  ${n.file}:${n.line}  ${noteStamp(n)}${n.bullets[0] ? `  ${JSON.stringify(clip(n.bullets[0], 80))}` : ""}`);
  const undo =
    r.undo === "restore"
      ? `memsearch forget --undo ${r.turn} puts its text back (kept in forgotten.json until then)`
      : r.undo === "import"
        ? `memsearch forget --undo ${r.turn} lets import write it again from its transcript`
        : "--undo cannot bring it back: it has no turn id (edit the file, or git, to restore it)";
  if (r.dryRun) return [`Would forget ${what}: ${r.notes.length} note${r.notes.length === 1 ? "" : "s"} removed${r.undo === "import" ? ", and the turn never written again" : ""}; ${undo}. Nothing changed.`, ...shown];
  const head = r.notes.length ? `Forgot ${what}: removed ${r.notes.length} note${r.notes.length === 1 ? "" : "s"}` : `${r.undo === "restore" ? "Your note" : "Turn"} ${r.turn} was already forgotten; no note of it is left`;
  const never = r.undo === "import" ? "; the hooks, memsearch import and a rebuild will not write it again" : "";
  return [`${head}${never}; ${undo}.`, ...shown];
}
