/**
 * `memsearch install gemini`: memsearch's four hooks in Gemini CLI's user settings
 * (`<gemini home>/settings.json`, `hooks`), in a group of their own per event, merged beside the
 * user's groups and never replacing them. User-level hooks run with no trust step (0.61).
 * Gemini CLI's events: SessionStart, BeforeAgent (the prompt), AfterAgent (the answer), SessionEnd.
 */
import { join } from "node:path";
import * as v from "valibot";
import { InputError } from "../../core/errors.ts";
import { parseJson } from "../../core/json-file.ts";
import { planSettingsUninstall, renderSettings } from "../json-settings.ts";
import type { FileChange, InstallOptions, InstallPlan, WiredState } from "../types.ts";
import { readAgentFile, shellQuote } from "../codex/install.ts";
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
  const text = readAgentFile(path);
  if (text === undefined || !text.trim()) return { doc: {}, text };
  const r = parseJson(text, Settings);
  // Gemini CLI also reads comments in this file; rewriting it would lose them.
  if ("problem" in r) throw new InputError(`${path}: ${r.problem} (memsearch edits only plain JSON, without comments); add memsearch's hooks by hand or fix the file, then run this again`);
  // Checked above; the file as written is what is merged into, its keys in the user's order.
  return { doc: JSON.parse(text) as SettingsDoc, text };
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
  const changes: FileChange[] = [];
  if (opts.uninstall) return planSettingsUninstall({ agent: "gemini", label: "Gemini CLI", path, text, doc, ours: isOurGroup });
  const off = switchedOff(doc);
  if (off) throw new InputError(`${path} turns memsearch's hooks off (${off}): they would never run; change that, then run this again`);
  const hooks: Record<string, unknown[]> = { ...(doc.hooks ?? {}) };
  for (const h of GEMINI_HOOKS) {
    const groups = [...(hooks[h.event] ?? [])];
    const handler: Handler = { name: HOOK_NAME, type: "command", command: geminiHookCommand(opts.exe, h.hook), timeout: h.timeout };
    // An outdated group of ours is replaced where it stands; the user's groups keep their places.
    const at = groups.findIndex(isOurGroup);
    if (at < 0) groups.push({ hooks: [handler] });
    else groups[at] = { hooks: [handler] };
    hooks[h.event] = groups;
  }
  const next = { ...doc, hooks };
  if (text === undefined || JSON.stringify(next) !== JSON.stringify(doc)) changes.push({ path, before: text, after: renderSettings(next) });
  const events = GEMINI_HOOKS.map((h) => h.event).join(", ");
  return { agent: "gemini", changes, notes: [changes.length ? `memsearch's hooks wired into Gemini CLI (${path}): ${events}` : `memsearch is already wired into Gemini CLI (${path})`] };
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
