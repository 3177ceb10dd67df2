/**
 * What `install` does the same way in an agent's JSON settings file whose `hooks` maps each event
 * to a list (Gemini CLI's groups, Copilot CLI's handlers): written back two-space indented, and
 * `--uninstall` taking out exactly the entries that are memsearch's.
 */
import type { FileChange, InstallPlan } from "./types.ts";

export const renderSettings = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`;

/**
 * The plan that removes memsearch's entries (`ours`) from the file at `path` (its text as read,
 * and as parsed): an event left with none is dropped, then `hooks` if no event is left, then the
 * file if nothing is left in it.
 */
export function planSettingsUninstall<D extends { hooks?: Record<string, unknown[]> }>(o: { agent: string; label: string; path: string; text?: string; doc: D; ours: (entry: unknown) => boolean }): InstallPlan {
  const hooks: Record<string, unknown[]> = {};
  for (const [event, entries] of Object.entries(o.doc.hooks ?? {})) {
    const kept = entries.filter((e) => !o.ours(e));
    if (kept.length) hooks[event] = kept;
  }
  const { hooks: _drop, ...rest } = o.doc;
  const next = Object.keys(hooks).length ? { ...rest, hooks } : rest;
  const changes: FileChange[] = [];
  if (o.text !== undefined && JSON.stringify(next) !== JSON.stringify(o.doc)) changes.push({ path: o.path, before: o.text, after: Object.keys(next).length ? renderSettings(next) : undefined });
  return { agent: o.agent, changes, notes: [changes.length ? `memsearch's hooks removed from ${o.path}` : `memsearch is not wired into ${o.label} (${o.path})`] };
}
