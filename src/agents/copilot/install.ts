/**
 * `memsearch install copilot`: memsearch's four hooks in Copilot CLI's user settings
 * (`$COPILOT_HOME/settings.json`, `hooks`), one handler per event appended beside the user's and
 * never replacing them. The events are named in their PascalCase form, whose payloads carry
 * Claude Code's field names (hook.ts). User-level hooks run with no trust step (1.0.102).
 */
import { join } from "node:path";
import * as v from "valibot";
import { planSettingsInstall, planSettingsUninstall, readJsonSettings } from "../json-settings.ts";
import type { InstallOptions, InstallPlan, WiredState } from "../types.ts";
import { shellQuote } from "../codex/install.ts";
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
  return readJsonSettings<SettingsDoc>(path, Settings, "(memsearch edits only plain JSON); fix the file or add memsearch's hooks by hand, then run this again");
}


export function planCopilotInstall(opts: InstallOptions & { uninstall?: boolean }): InstallPlan {
  const path = copilotSettingsPath(opts.env);
  const { text } = readSettings(path);
  const plan = { agent: "copilot", label: "Copilot CLI", path, text, ours: isOurs, dryRun: opts.dryRun };
  if (opts.uninstall) return planSettingsUninstall(plan);
  const entries = COPILOT_HOOKS.map((h) => ({ event: h.event, entry: { type: "command", bash: copilotHookCommand(opts.exe, h.hook), timeoutSec: h.timeoutSec } satisfies Handler }));
  return planSettingsInstall({ ...plan, entries });
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
