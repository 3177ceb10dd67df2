/**
 * `memsearch install gemini`: memsearch's four hooks in Gemini CLI's user settings
 * (`<gemini home>/settings.json`, `hooks`), in a group of their own per event, merged beside the
 * user's groups and never replacing them. User-level hooks run with no trust step (0.61).
 * Gemini CLI's events: SessionStart, BeforeAgent (the prompt), AfterAgent (the answer), SessionEnd.
 */
import { join } from "node:path";
import * as v from "valibot";
import { InputError } from "../../core/errors.ts";
import { planSettingsInstall, planSettingsUninstall, readJsonSettings } from "../json-settings.ts";
import type { InstallOptions, InstallPlan, WiredState } from "../types.ts";
import { shellQuote } from "../codex/install.ts";
import { geminiHome } from "./files.ts";

/** Gemini CLI's event, our hook, its timeout (ms, as Gemini CLI counts it). */
export const GEMINI_HOOKS = [
  { event: "SessionStart", hook: "session-start", timeout: 10_000 },
  { event: "BeforeAgent", hook: "user-prompt-submit", timeout: 5_000 },
  { event: "AfterAgent", hook: "stop", timeout: 10_000 },
  { event: "SessionEnd", hook: "session-end", timeout: 3_000 },
] as const;

/** The name our handlers carry (Gemini CLI shows it, and `hooksConfig.disabled` lists hooks by it). */
export const HOOK_NAME = "memsearch";

/** Our handlers, whatever executable path they were installed with. */
const OURS = /\shook (session-start|user-prompt-submit|stop|session-end) --agent gemini$/;

export function geminiHookCommand(exe: string[], hook: string): string {
  return `${exe.map(shellQuote).join(" ")} hook ${hook} --agent gemini`;
}

const Settings = v.looseObject({
  hooks: v.optional(v.record(v.string(), v.array(v.unknown()))),
  hooksConfig: v.optional(v.looseObject({ enabled: v.optional(v.boolean()), disabled: v.optional(v.array(v.unknown())) })),
});
type SettingsDoc = v.InferOutput<typeof Settings>;

interface Handler {
  name: string;
  type: "command";
  command: string;
  timeout: number;
}

const isOurGroup = (g: unknown): boolean => {
  const hs = (g as { hooks?: unknown })?.hooks;
  return Array.isArray(hs) && hs.length > 0 && hs.every((h) => typeof h?.command === "string" && OURS.test(h.command));
};

function settingsPath(env?: NodeJS.ProcessEnv): string {
  return join(geminiHome(env), "settings.json");
}

function readSettings(path: string): { doc: SettingsDoc; text?: string } {
  // Gemini CLI also reads comments in this file; rewriting it would lose them.
  return readJsonSettings<SettingsDoc>(path, Settings, "(memsearch edits only plain JSON, without comments); add memsearch's hooks by hand or fix the file, then run this again");
}

/** Why Gemini CLI would not run our hooks whatever the `hooks` object says, if it would not. */
function switchedOff(doc: SettingsDoc): string | undefined {
  if (doc.hooksConfig?.enabled === false) return "hooksConfig.enabled = false";
  if (doc.hooksConfig?.disabled?.includes(HOOK_NAME)) return `hooksConfig.disabled lists "${HOOK_NAME}"`;
  return undefined;
}


export function planGeminiInstall(opts: InstallOptions & { uninstall?: boolean }): InstallPlan {
  const path = settingsPath(opts.env);
  const { doc, text } = readSettings(path);
  const plan = { agent: "gemini", label: "Gemini CLI", path, text, ours: isOurGroup, dryRun: opts.dryRun };
  if (opts.uninstall) return planSettingsUninstall(plan);
  const off = switchedOff(doc);
  if (off) throw new InputError(`${path} turns memsearch's hooks off (${off}): they would never run; change that, then run this again`);
  // Each event gets a group of its own holding our one handler.
  const entries = GEMINI_HOOKS.map((h) => ({ event: h.event, entry: { hooks: [{ name: HOOK_NAME, type: "command", command: geminiHookCommand(opts.exe, h.hook), timeout: h.timeout } satisfies Handler] } }));
  return planSettingsInstall({ ...plan, entries });
}

export function geminiWired(opts: InstallOptions): WiredState {
  const path = settingsPath(opts.env);
  let doc: SettingsDoc;
  try {
    doc = readSettings(path).doc;
  } catch (e) {
    return { wired: false, detail: (e as Error).message };
  }
  const missing = GEMINI_HOOKS.filter((h) => !(doc.hooks?.[h.event] ?? []).some(isOurGroup)).map((h) => `${h.event} not in ${path}`);
  const off = switchedOff(doc);
  if (off) missing.push(off);
  return missing.length ? { wired: false, detail: `${missing.join("; ")} (memsearch install gemini)` } : { wired: true, detail: `4 hooks in ${path}` };
}
