/**
 * Notes the user forgot that came back in the markdown (a `git pull`, a checkout, a restore): the
 * index leaves their sections out, and says so, instead of indexing them again with no word. The
 * list is `.memsearch/forgotten.json`, which memory/forgotten.ts writes and owns; the index reads
 * only which turns it names (and of which session), through a schema of that much.
 */
import { dirname } from "node:path";
import * as v from "valibot";
import { isLineId, parseAnchor } from "../core/anchor.ts";
import { fileStamp } from "../core/fsutil.ts";
import { readJson } from "../core/json-file.ts";
import { dataFiles } from "../core/project.ts";
import { headingsOf } from "./chunker.ts";

const Id = v.pipe(v.string(), v.maxLength(300));
const ListShape = v.object({ turns: v.array(v.looseObject({ turn: Id, session: v.optional(Id), promptId: v.optional(Id) })) });

/** Whether a note's turn (of a session) is on the forgotten list. */
export type ForgottenTurns = (turn: string, session: string) => boolean;

let cached: { file: string; stamp: string; has: ForgottenTurns } | undefined;

/** The forgotten turns of the project whose index folder is `indexDir` (none when there is no list, or it cannot be read). */
export function forgottenTurns(indexDir: string): ForgottenTurns {
  const file = dataFiles(dirname(indexDir)).forgotten;
  const stamp = fileStamp(file);
  if (!stamp) return () => false;
  if (cached?.file === file && cached.stamp === stamp) return cached.has;
  const r = readJson(file, ListShape);
  const bySession = new Map<string, Set<string>>();
  const any = new Set<string>();
  for (const t of "value" in r ? r.value.turns : []) {
    for (const id of t.promptId ? [t.turn, t.promptId] : [t.turn]) {
      // The journal's rule (namesTurn): a line id names a turn only with its session; any other id alone.
      if (t.session === undefined || !isLineId(id)) any.add(id);
      else (bySession.get(t.session) ?? bySession.set(t.session, new Set()).get(t.session)!).add(id);
    }
  }
  const has: ForgottenTurns = (turn, session) => any.has(turn) || bySession.get(session)?.has(turn) === true;
  cached = { file, stamp, has };
  return has;
}

/**
 * The text with every section whose anchor names a forgotten turn blanked out, line for line (so
 * every other chunk keeps its lines), and the turns left out.
 */
export function withoutForgotten(text: string, forgotten: ForgottenTurns): { text: string; turns: string[] } {
  if (!text.includes("<!--")) return { text, turns: [] };
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const hits: { line: number; turn: string }[] = [];
  lines.forEach((l, i) => {
    if (!l.includes("<!--")) return;
    const a = parseAnchor(l);
    if (a && forgotten(a.turn, a.session)) hits.push({ line: i + 1, turn: a.turn });
  });
  if (!hits.length) return { text, turns: [] };
  const heads = headingsOf(text);
  for (const h of hits) {
    const own = heads.filter((x) => x.line <= h.line).pop();
    const start = own ? own.line : h.line;
    const next = heads.find((x) => x.line > start && (!own || x.level <= own.level));
    const end = next ? next.line - 1 : lines.length;
    for (let i = start; i <= end; i++) lines[i - 1] = "";
  }
  return { text: lines.join("\n"), turns: [...new Set(hits.map((h) => h.turn))] };
}
