/**
 * A line editor for the few keys memsearch owns in Codex's `config.toml`. Bun parses TOML but does
 * not write it, and a rewrite from the parsed value would lose the user's comments, order and
 * formatting; so these edits touch only the lines of our keys and leave every other byte as it
 * was. Each edit is checked by parsing the result: it must parse, hold our values, and hold
 * everything else exactly as before (checkEdit), else nothing is written.
 */
import { InputError } from "../../core/errors.ts";

/** Marks the lines memsearch wrote, so --uninstall removes exactly them. */
export const MARK = "# memsearch";

interface Header {
  /** 0-based line of `[table]`. */
  line: number;
  path: string[];
}

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => v !== null && typeof v === "object" && !Array.isArray(v);

export function parseToml(text: string, what: string): Tree {
  try {
    return Bun.TOML.parse(text) as Tree;
  } catch (e) {
    throw new InputError(`${what} is not valid TOML (${(e as Error).message}); fix it, then run this again`);
  }
}

/** An edited text parsed back: if our edit broke it, the edit is refused (the user's file was valid). */
export function parseEdited(text: string, what: string): Tree {
  try {
    return Bun.TOML.parse(text) as Tree;
  } catch (e) {
    throw new InputError(`memsearch could not edit ${what} without breaking it (${(e as Error).message}); nothing was written: set the keys by hand`);
  }
}

/** The dotted path of a standard table header line, as the TOML parser reads it; undefined for other lines. */
function headerPath(line: string): string[] | undefined {
  if (!/^\s*\[[^[]/.test(line)) return undefined;
  let t: unknown;
  try {
    t = Bun.TOML.parse(`${line}\n`);
  } catch {
    return undefined;
  }
  const path: string[] = [];
  while (isTree(t) && Object.keys(t).length === 1) {
    const k = Object.keys(t)[0]!;
    path.push(k);
    t = t[k];
  }
  return path.length ? path : undefined;
}

function headers(lines: string[]): Header[] {
  const out: Header[] = [];
  let multi: string | undefined;
  lines.forEach((l, i) => {
    // A header-looking line inside a multi-line string is text, not a table.
    if (multi === undefined) {
      const p = headerPath(l);
      if (p) out.push({ line: i, path: p });
    }
    for (const m of l.matchAll(/"""|'''/g)) multi = multi === undefined ? m[0] : multi === m[0] ? undefined : multi;
  });
  return out;
}

const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** `"…"` as a TOML basic string; a key with control characters is not ours to write. */
export function quoteKey(k: string): string {
  if (/[\u0000-\u001f\u007f]/.test(k)) throw new InputError(`cannot write a TOML key with control characters: ${JSON.stringify(k)}`);
  return `"${k.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The lines of a table: from its header to before the next header (or the end). */
function tableRange(lines: string[], hs: Header[], path: string[]): [number, number] | undefined {
  const i = hs.findIndex((h) => same(h.path, path));
  if (i < 0) return undefined;
  return [hs[i]!.line, i + 1 < hs.length ? hs[i + 1]!.line : lines.length];
}

function split(text: string): string[] {
  return text.split("\n");
}

/** Ends with exactly the text's own line ending habit: `\n` between lines, one at the end when there were lines. */
function join(lines: string[]): string {
  return lines.join("\n");
}

/** The value of a dotted path in a parsed document. */
export function valueAt(t: unknown, path: string[]): unknown {
  for (const k of path) {
    if (!isTree(t)) return undefined;
    t = t[k];
  }
  return t;
}

/**
 * Set `key = value` in table `table` (a literal TOML value), adding the table at the end when it is
 * not there. The line is marked, so unsetMarked removes it. An existing key line is left alone.
 */
export function setKey(text: string, table: string[], key: string, value: string): string {
  const lines = split(text);
  const hs = headers(lines);
  const r = tableRange(lines, hs, table);
  const line = `${key} = ${value} ${MARK}`;
  if (!r) return appendBlock(text, [`[${table.map(quoteIfNeeded).join(".")}] ${MARK}`, line]);
  // After the table's last non-blank line, so a blank line before the next table stays.
  let at = r[1];
  while (at > r[0] + 1 && !lines[at - 1]!.trim()) at--;
  lines.splice(at, 0, line);
  return join(lines);
}

function quoteIfNeeded(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : quoteKey(k);
}

/**
 * Text with a block of lines appended after one blank line. A text that does not end with a line
 * break gets none at the end either: removeMarked, taking the block and the blank line before it,
 * then gives the text back byte for byte.
 */
function appendBlock(text: string, block: string[]): string {
  if (text !== "" && !text.endsWith("\n")) return `${text}\n${text.trim() ? "\n" : ""}${block.join("\n")}`;
  return `${text}${text.trim() ? "\n" : ""}${block.join("\n")}\n`;
}

/**
 * Make table `table` hold exactly `key = value` (both literal): replace the key's line when the
 * table has it, else add the table (marked) at the end.
 */
export function setTable(text: string, table: string[], key: string, value: string): string {
  const lines = split(text);
  const r = tableRange(lines, headers(lines), table);
  if (!r) return appendBlock(text, [`[${table.map(quoteIfNeeded).join(".")}] ${MARK}`, `${key} = ${value}`]);
  const re = new RegExp(`^\\s*${key}\\s*=`);
  for (let i = r[0] + 1; i < r[1]; i++) {
    if (re.test(lines[i]!)) {
      lines[i] = `${key} = ${value}`;
      return join(lines);
    }
  }
  lines.splice(r[0] + 1, 0, `${key} = ${value}`);
  return join(lines);
}

/** Which marked lines are memsearch's: a user may end a line of their own with the same comment. */
export interface Ours {
  /** A marked table to leave (true) or take whole. */
  keepTable(path: string[]): boolean;
  /** A marked `key = value` line of table `table` to take. */
  dropKey(table: string[], key: string): boolean;
}

/**
 * Remove what setKey and setTable added: a marked table whole (and the blank line before it), a
 * marked key line alone, each only where `ours` says it is ours. Unmarked lines stay, whoever
 * wrote them, and so do marked lines of the user's.
 */
export function removeMarked(text: string, ours: Ours): string {
  const lines = split(text);
  const hs = headers(lines);
  const drop = new Set<number>();
  hs.forEach((h, i) => {
    if (!lines[h.line]!.trimEnd().endsWith(MARK) || ours.keepTable(h.path)) return;
    const end = i + 1 < hs.length ? hs[i + 1]!.line : lines.length;
    let start = h.line;
    for (let j = start; j < end; j++) if (lines[j]!.trim() && !lines[j]!.trimEnd().endsWith(MARK) && !/^\s*trusted_hash\s*=/.test(lines[j]!)) return;
    if (start > 0 && !lines[start - 1]!.trim()) start--;
    let stop = end;
    // The table's trailing blank lines go with it only when it ran to the end of the file.
    if (end < lines.length) while (stop > h.line + 1 && !lines[stop - 1]!.trim()) stop--;
    for (let j = start; j < stop; j++) drop.add(j);
  });
  lines.forEach((l, i) => {
    const key = /^\s*([A-Za-z0-9_-]+)\s*=/.exec(l)?.[1];
    if (drop.has(i) || key === undefined || !l.trimEnd().endsWith(MARK) || headerPath(l)) return;
    const table = hs.filter((h) => h.line < i).at(-1)?.path ?? [];
    if (ours.dropKey(table, key)) drop.add(i);
  });
  const kept = lines.filter((_, i) => !drop.has(i));
  let out = join(kept);
  if (text.endsWith("\n") && !out.endsWith("\n") && out) out += "\n";
  return out;
}

/** Every value of `before` except under the given paths, and the same of `after`: equal, else the edit touched something else. */
export function checkEdit(before: Tree, after: Tree, ours: string[][], what: string): void {
  const strip = (t: Tree) => {
    const c = structuredClone(t);
    for (const p of ours) {
      const parent = valueAt(c, p.slice(0, -1));
      if (isTree(parent)) delete parent[p.at(-1)!];
    }
    return prune(c);
  };
  if (!Bun.deepEquals(strip(before), strip(after))) throw new InputError(`memsearch could not edit ${what} without changing other settings; nothing was written`);
}

/** Empty tables left by removing our keys do not count as a change. */
function prune(t: unknown): unknown {
  if (!isTree(t)) return t;
  const out: Tree = {};
  for (const [k, v] of Object.entries(t)) {
    const p = prune(v);
    if (isTree(p) && !Object.keys(p).length) continue;
    out[k] = p;
  }
  return out;
}
