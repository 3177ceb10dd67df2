/**
 * What `install` does the same way in an agent's JSON settings file whose `hooks` maps each event
 * to a list (Gemini CLI's groups, Copilot CLI's handlers): written back two-space indented, and
 * `--uninstall` taking out exactly the entries that are memsearch's.
 */
import * as v from "valibot";
import { InputError } from "../core/errors.ts";
import { parseJson } from "../core/json-file.ts";
import { readAgentFile } from "./codex/install.ts";
import type { FileChange, InstallPlan } from "./types.ts";

export const renderSettings = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`;

/**
 * The settings file at `path`, as text and as parsed (`{}` when it is missing or empty); anything
 * but plain JSON of `schema`'s shape is refused with `refusal` (what to do about it) after the reason.
 */
export function readJsonSettings<D>(path: string, schema: v.GenericSchema, refusal: string): { doc: D; text?: string } {
  const text = readAgentFile(path);
  if (text === undefined || !text.trim()) return { doc: {} as D, text };
  const r = parseJson(text, schema);
  if ("problem" in r) throw new InputError(`${path}: ${r.problem} ${refusal}`);
  // Checked above; the file as written is what is merged into, its keys in the user's order.
  return { doc: JSON.parse(text) as D, text };
}

/**
 * The plan that puts memsearch's entry in each event's list: an outdated entry of ours (`ours`) is
 * replaced where it stands, else ours goes last; the user's entries keep their places.
 */
export function planSettingsInstall<D extends { hooks?: Record<string, unknown[]> }>(o: { agent: string; label: string; path: string; text?: string; doc: D; ours: (entry: unknown) => boolean; entries: { event: string; entry: unknown }[]; dryRun?: boolean }): InstallPlan {
  const hooks: Record<string, unknown[]> = { ...(o.doc.hooks ?? {}) };
  for (const { event, entry } of o.entries) {
    const list = [...(hooks[event] ?? [])];
    const at = list.findIndex(o.ours);
    if (at < 0) list.push(entry);
    else list[at] = entry;
    hooks[event] = list;
  }
  const next = { ...o.doc, hooks };
  const changes: FileChange[] = [];
  if (o.text === undefined || JSON.stringify(next) !== JSON.stringify(o.doc)) changes.push({ path: o.path, before: o.text, after: renderSettings(next) });
  const events = o.entries.map((e) => e.event).join(", ");
  return { agent: o.agent, changes, notes: [changes.length ? `${o.dryRun ? "would wire" : "wired"} memsearch's hooks into ${o.label} (${o.path}): ${events}` : `memsearch is already wired into ${o.label} (${o.path})`] };
}

/**
 * The plan that removes memsearch's entries (`ours`) from the file at `path` (its text as read,
 * and as parsed): an event left with none is dropped, then `hooks` if no event is left, then the
 * file if nothing is left in it.
 */
export function planSettingsUninstall<D extends { hooks?: Record<string, unknown[]> }>(o: { agent: string; label: string; path: string; text?: string; doc: D; ours: (entry: unknown) => boolean; dryRun?: boolean }): InstallPlan {
  const hooks: Record<string, unknown[]> = {};
  for (const [event, entries] of Object.entries(o.doc.hooks ?? {})) {
    const kept = entries.filter((e) => !o.ours(e));
    if (kept.length) hooks[event] = kept;
  }
  const { hooks: _drop, ...rest } = o.doc;
  const next = Object.keys(hooks).length ? { ...rest, hooks } : rest;
  const changes: FileChange[] = [];
  if (o.text !== undefined && JSON.stringify(next) !== JSON.stringify(o.doc)) changes.push({ path: o.path, before: o.text, after: Object.keys(next).length ? renderSettings(next) : undefined });
  return { agent: o.agent, changes, notes: [changes.length ? `${o.dryRun ? "would remove" : "removed"} memsearch's hooks from ${o.path}` : `memsearch is not wired into ${o.label} (${o.path})`] };
}
