/**
 * What `install` does the same way in an agent's JSON settings file whose `hooks` maps each event
 * to a list (Gemini CLI's groups, Copilot CLI's handlers, Codex's hooks.json groups): memsearch's
 * entries edited in as text, so every byte of the user's stays as it was (json-text.ts), and
 * `--uninstall` taking out exactly the entries that are memsearch's, and what install made to hold them.
 */
import * as v from "valibot";
import { InputError } from "../core/errors.ts";
import { parseJson } from "../core/json-file.ts";
import { lstatSync } from "node:fs";
import { errCode, readOwnText } from "../core/fsutil.ts";
import { appendChild, indentUnit, member, render, replaceValue, removeChild, scanJson, type JNode } from "./json-text.ts";
import type { FileChange, InstallPlan } from "./types.ts";

/** A file of the agent's, read as it is; a link is refused (writing would replace it with a file). */
export function readAgentFile(path: string): string | undefined {
  try {
    if (lstatSync(path).isSymbolicLink()) throw new InputError(`${path} is a symbolic link; memsearch edits only a plain file (edit it by hand, or replace the link with the file)`);
  } catch (e) {
    if (e instanceof InputError) throw e;
    if (errCode(e) === "ENOENT") return undefined;
  }
  try {
    return readOwnText(path);
  } catch (e) {
    throw new InputError(`cannot read ${path} (${errCode(e) ?? String(e)})`);
  }
}

/** A file install creates: the settings holding only memsearch's entries, two-space indented. */
export const renderSettings = (doc: unknown): string => `${render(doc, "  ", "")}\n`;

const BOM = "\ufeff";

/**
 * The settings file at `path`, as text and as parsed (`{}` when it is missing or empty); anything
 * but plain JSON of `schema`'s shape, an object, is refused with `refusal` (what to do about it)
 * after the reason. A byte order mark is kept where it is (the JSON after it is read).
 */
export function readJsonSettings<D>(path: string, schema: v.GenericSchema, refusal: string): { doc: D; text?: string } {
  const text = readAgentFile(path);
  if (text === undefined || !text.trim()) return { doc: {} as D, text };
  const body = text.startsWith(BOM) ? text.slice(1) : text;
  const r = parseJson(body, schema);
  if ("problem" in r) throw new InputError(`${path}: ${r.problem} ${refusal}`);
  const doc = JSON.parse(body) as unknown;
  if (Array.isArray(doc)) throw new InputError(`${path} holds a JSON list where settings are an object (${"{"}…${"}"}); memsearch leaves it as it is: fix the file, then run this again`);
  return { doc: doc as D, text };
}

/** Where one of our entries stands: its event, and its index in that event's list. */
export interface Placed {
  event: string;
  index: number;
}

const valueOf = (text: string, n: JNode): unknown => JSON.parse(text.slice(n.start, n.end));

/**
 * `text` (undefined or blank: no file) with memsearch's entry in each event's list: an entry of
 * ours (`ours`) is replaced where it stands, else ours goes last; the user's keep their places.
 */
export function mergeEntries(text: string | undefined, entries: { event: string; entry: unknown }[], ours: (entry: unknown) => boolean): { text: string; placed: Placed[] } {
  if (text === undefined || !text.trim()) {
    const hooks: Record<string, unknown[]> = {};
    for (const e of entries) hooks[e.event] = [e.entry];
    return { text: renderSettings({ hooks }), placed: entries.map((e) => ({ event: e.event, index: 0 })) };
  }
  let t = text;
  const unit = indentUnit(text);
  const placed: Placed[] = [];
  for (const { event, entry } of entries) {
    const root = scanJson(t);
    const hooks = member(root, "hooks");
    if (!hooks) {
      t = appendChild(t, root, { [event]: [entry] }, "hooks", unit);
      placed.push({ event, index: 0 });
      continue;
    }
    const list = member(hooks.value, event);
    if (!list) {
      t = appendChild(t, hooks.value, [entry], event, unit);
      placed.push({ event, index: 0 });
      continue;
    }
    const at = list.value.children.findIndex((c) => ours(valueOf(t, c.value)));
    if (at < 0) {
      t = appendChild(t, list.value, entry, undefined, unit);
      placed.push({ event, index: list.value.children.length });
      continue;
    }
    if (!Bun.deepEquals(valueOf(t, list.value.children[at]!.value), entry)) t = replaceValue(t, list.value.children[at]!, entry, unit);
    placed.push({ event, index: at });
  }
  return { text: t, placed };
}

/** `text` without memsearch's entries, and what install made to hold them; undefined: nothing of the file is left (install made it). */
export function removeEntries(text: string, ours: (entry: unknown) => boolean): string | undefined {
  let t: string | undefined = text;
  for (;;) {
    const root = scanJson(t);
    const h = root.kind === "object" ? root.children.findIndex((c) => c.key === "hooks") : -1;
    const hooks = root.children[h]?.value;
    if (!hooks || hooks.kind !== "object") return t;
    let path: number[] | undefined;
    hooks.children.some((ev, e) => {
      if (ev.value.kind !== "array") return false;
      const i = ev.value.children.findIndex((c) => ours(valueOf(t!, c.value)));
      if (i >= 0) path = [h, e, i];
      return i >= 0;
    });
    if (!path) return t;
    t = removeChild(t, path);
    if (t === undefined) return undefined;
  }
}

/**
 * The plan that puts memsearch's entry in each event's list: an outdated entry of ours (`ours`) is
 * replaced where it stands, else ours goes last; the user's entries keep their places.
 */
export function planSettingsInstall(o: { agent: string; label: string; path: string; text?: string; ours: (entry: unknown) => boolean; entries: { event: string; entry: unknown }[]; dryRun?: boolean }): InstallPlan {
  const after = mergeEntries(o.text, o.entries, o.ours).text;
  const changes: FileChange[] = after !== o.text ? [{ path: o.path, before: o.text, after }] : [];
  const events = o.entries.map((e) => e.event).join(", ");
  return { agent: o.agent, changes, notes: [changes.length ? `${o.dryRun ? "would wire" : "wired"} memsearch's hooks into ${o.label} (${o.path}): ${events}` : `memsearch is already wired into ${o.label} (${o.path})`] };
}

/**
 * The plan that removes memsearch's entries (`ours`) from the file at `path` (its text as read):
 * with them what install made to hold them (an event's list, `hooks`, the file itself), and
 * nothing the user made, so an install and an uninstall give back the user's bytes.
 */
export function planSettingsUninstall(o: { agent: string; label: string; path: string; text?: string; ours: (entry: unknown) => boolean; dryRun?: boolean }): InstallPlan {
  const changes: FileChange[] = [];
  if (o.text !== undefined && o.text.trim()) {
    const after = removeEntries(o.text, o.ours);
    if (after !== o.text) changes.push({ path: o.path, before: o.text, after });
  }
  return { agent: o.agent, changes, notes: [changes.length ? `${o.dryRun ? "would remove" : "removed"} memsearch's hooks from ${o.path}` : `memsearch is not wired into ${o.label} (${o.path})`] };
}
