/**
 * `memsearch install copilot`: memsearch's four hooks in Copilot CLI's user settings
 * (`$COPILOT_HOME/settings.json`, `hooks`), one handler per event appended beside the user's and
 * never replacing them. The events are named in their PascalCase form, whose payloads carry
 * Claude Code's field names (hook.ts). User-level hooks run with no trust step (1.0.102).
 */
import { join } from "node:path";
import * as v from "valibot";
import { InputError } from "../../core/errors.ts";
import { parseJson } from "../../core/json-file.ts";
import { planSettingsUninstall, renderSettings } from "../json-settings.ts";
import type { FileChange, InstallOptions, InstallPlan, WiredState } from "../types.ts";
import { readAgentFile, shellQuote } from "../codex/install.ts";
import { copilotHome } from "./files.ts";

/** Copilot CLI's event, our hook, its timeout (seconds, as Copilot CLI counts it). */
export const COPILOT_HOOKS = [
  { event: "SessionStart", hook: "session-start", timeoutSec: 10 },
  { event: "UserPromptSubmit", hook: "user-prompt-submit", timeoutSec: 5 },
  { event: "Stop", hook: "stop", timeoutSec: 10 },
  { event: "SessionEnd", hook: "session-end", timeoutSec: 3 },
] as const;

/** Our handlers, whatever executable path they were installed with. */
const OURS = /\shook (session-start|user-prompt-submit|stop|session-end) --agent copilot$/;

export function copilotHookCommand(exe: string[], hook: string): string {
  return `${exe.map(shellQuote).join(" ")} hook ${hook} --agent copilot`;
}

const Settings = v.looseObject({ hooks: v.optional(v.record(v.string(), v.array(v.unknown()))) });
type SettingsDoc = v.InferOutput<typeof Settings>;

interface Handler {
  type: "command";
  bash: string;
  timeoutSec: number;
}

const isOurs = (h: unknown): boolean => typeof (h as { bash?: unknown })?.bash === "string" && OURS.test((h as { bash: string }).bash);

export function copilotSettingsPath(env?: NodeJS.ProcessEnv): string {
  return join(copilotHome(env), "settings.json");
}

function readSettings(path: string): { doc: SettingsDoc; text?: string } {
  const text = readAgentFile(path);
  if (text === undefined || !text.trim()) return { doc: {}, text };
  const r = parseJson(text, Settings);
  if ("problem" in r) throw new InputError(`${path}: ${r.problem} (memsearch edits only plain JSON); fix the file or add memsearch's hooks by hand, then run this again`);
  // Checked above; the file as written is what is merged into, its keys in the user's order.
  return { doc: JSON.parse(text) as SettingsDoc, text };
}


export function planCopilotInstall(opts: InstallOptions & { uninstall?: boolean }): InstallPlan {
  const path = copilotSettingsPath(opts.env);
  const { doc, text } = readSettings(path);
  const changes: FileChange[] = [];
  if (opts.uninstall) return planSettingsUninstall({ agent: "copilot", label: "Copilot CLI", path, text, doc, ours: isOurs });
  const hooks: Record<string, unknown[]> = { ...(doc.hooks ?? {}) };
  for (const h of COPILOT_HOOKS) {
    const handlers = [...(hooks[h.event] ?? [])];
    const ours: Handler = { type: "command", bash: copilotHookCommand(opts.exe, h.hook), timeoutSec: h.timeoutSec };
    // An outdated handler of ours is replaced where it stands; the user's keep their places.
    const at = handlers.findIndex(isOurs);
    if (at < 0) handlers.push(ours);
    else handlers[at] = ours;
    hooks[h.event] = handlers;
  }
  const next = { ...doc, hooks };
  if (text === undefined || JSON.stringify(next) !== JSON.stringify(doc)) changes.push({ path, before: text, after: renderSettings(next) });
  const events = COPILOT_HOOKS.map((h) => h.event).join(", ");
  return { agent: "copilot", changes, notes: [changes.length ? `memsearch's hooks wired into Copilot CLI (${path}): ${events}` : `memsearch is already wired into Copilot CLI (${path})`] };
}

export function copilotWired(opts: InstallOptions): WiredState {
  const path = copilotSettingsPath(opts.env);
  let doc: SettingsDoc;
  try {
    doc = readSettings(path).doc;
  } catch (e) {
    return { wired: false, detail: (e as Error).message };
  }
  const missing = COPILOT_HOOKS.filter((h) => !(doc.hooks?.[h.event] ?? []).some(isOurs)).map((h) => h.event);
  return missing.length ? { wired: false, detail: `${missing.join(", ")} not in ${path} (memsearch install copilot)` } : { wired: true, detail: `4 hooks in ${path}` };
}
