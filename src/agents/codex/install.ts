/**
 * `memsearch install codex`: memsearch's four hooks in `$CODEX_HOME/hooks.json`, in a group of
 * their own per event (merged beside the user's, never replacing them), `features.hooks = true`
 * and a trust entry per hook in `config.toml`. Codex skips an unmanaged hook silently until it is
 * trusted: the entry is `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` with
 * `trusted_hash = "sha256:<hex of the handler's canonical JSON>"` (trustHash).
 */
import { sha256Hex } from "../../core/text.ts";
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { InputError } from "../../core/errors.ts";
import { mergeEntries, readAgentFile, readJsonSettings, removeEntries } from "../json-settings.ts";
import type { FileChange, InstallOptions, InstallPlan, WiredState } from "../types.ts";
import { checkEdit, MARK, parseEdited, parseToml, removeMarked, setKey, setTable, valueAt } from "./toml.ts";

/** Codex's event, its snake_case name in trust keys, our hook, its timeout (s; Codex clamps SessionEnd to 3). */
export const CODEX_HOOKS = [
  { event: "SessionStart", snake: "session_start", hook: "session-start", timeout: 10 },
  { event: "UserPromptSubmit", snake: "user_prompt_submit", hook: "user-prompt-submit", timeout: 5 },
  { event: "Stop", snake: "stop", hook: "stop", timeout: 10 },
  { event: "SessionEnd", snake: "session_end", hook: "session-end", timeout: 3 },
] as const;

/** Our handlers, whatever executable path they were installed with. */
const OURS = /\shook (session-start|user-prompt-submit|stop|session-end) --agent codex$/;

export function codexHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.CODEX_HOME || join(env.HOME || homedir(), ".codex");
  // Codex keys trust by the canonical path of its home.
  try {
    return realpathSync(home);
  } catch {
    return home;
  }
}

/** POSIX shell quoting: Codex runs a hook's command through the user's shell. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_/.:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function hookCommand(exe: string[], hook: string): string {
  return `${exe.map(shellQuote).join(" ")} hook ${hook} --agent codex`;
}

interface Handler {
  type: "command";
  command: string;
  timeout: number;
}

/** Key-sorted compact JSON, as Codex hashes it. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

/** The hash Codex compares a hook against (0.169; verified by the real-client suite). */
export function trustHash(snake: string, h: Handler): string {
  const doc = { event_name: snake, hooks: [{ async: false, command: h.command, timeout: h.timeout, type: "command" }] };
  return `sha256:${sha256Hex(canonical(doc))}`;
}

const HooksFile = v.looseObject({ hooks: v.optional(v.record(v.string(), v.array(v.unknown()))) });
type Group = { hooks?: unknown[] } & Record<string, unknown>;

const isOurGroup = (g: unknown): boolean => {
  const hs = (g as Group)?.hooks;
  return Array.isArray(hs) && hs.length > 0 && hs.every((h) => typeof (h as Handler)?.command === "string" && OURS.test((h as Handler).command));
};

interface Placed {
  snake: string;
  group: number;
  handler: Handler;
}

function readHooks(path: string): { doc: v.InferOutput<typeof HooksFile>; text?: string } {
  return readJsonSettings<v.InferOutput<typeof HooksFile>>(path, HooksFile, "(fix it, then run this again)");
}

/**
 * hooks.json's text with our groups in place (edited as text: the user's bytes stay): an outdated
 * one replaced where it stands (the user's groups keep their indices), a missing one appended.
 */
function mergeHooks(text: string | undefined, exe: string[]): { text: string; placed: Placed[] } {
  const handlers = CODEX_HOOKS.map((h) => ({ h, handler: { type: "command", command: hookCommand(exe, h.hook), timeout: h.timeout } satisfies Handler }));
  const merged = mergeEntries(
    text,
    handlers.map(({ h, handler }) => ({ event: h.event, entry: { hooks: [handler] } })),
    isOurGroup,
  );
  return { text: merged.text, placed: handlers.map(({ h, handler }, i) => ({ snake: h.snake, group: merged.placed[i]!.index, handler })) };
}

/** Our groups now in hooks.json, each where it stands, with the trust hash Codex compares it against. */
function ourGroups(doc: v.InferOutput<typeof HooksFile>): Placed[] {
  return CODEX_HOOKS.flatMap((h) =>
    (doc.hooks?.[h.event] ?? []).flatMap((g, group) => (isOurGroup(g) ? [{ snake: h.snake, group, handler: ((g as Group).hooks as Handler[])[0]! }] : [])),
  );
}

const stateKey = (hooksPath: string, p: Placed) => `${hooksPath}:${p.snake}:${p.group}:0`;

export function planCodexInstall(opts: InstallOptions & { uninstall?: boolean }): InstallPlan {
  const home = codexHome(opts.env);
  const hooksPath = join(home, "hooks.json");
  const configPath = join(home, "config.toml");
  const { doc, text: hooksText } = readHooks(hooksPath);
  const configText = readAgentFile(configPath) ?? "";
  const before = parseToml(configText, configPath);
  const changes: FileChange[] = [];
  const notes: string[] = [];
  if (opts.uninstall) {
    if (hooksText !== undefined && hooksText.trim()) {
      const nextText = removeEntries(hooksText, isOurGroup);
      if (nextText !== hooksText) changes.push({ path: hooksPath, before: hooksText, after: nextText });
    }
    // A trust entry is ours when we marked it, or when it trusts one of our groups (Codex writes
    // one itself when a user approves a hook): a user's own hook at any index keeps its trust.
    const ourHashes = new Set(ourGroups(doc).map((p) => trustHash(p.snake, p.handler)));
    const ourKeys = ourTrustKeys(configText, hooksPath, ourHashes);
    const isOurs = (p: string[]) => (p.length === 3 && p[0] === "hooks" && p[1] === "state" && ourKeys.has(p[2]!)) || (p.length === 1 && p[0] === "features");
    let after = removeMarked(configText, { keepTable: (p) => !isOurs(p), dropKey: (table, key) => table.length === 1 && table[0] === "features" && key === "hooks" });
    after = removeUnmarkedTrust(after, ourKeys);
    // Nothing of the user's was in it: install made it.
    const gone = !after.trim() && after !== configText;
    if (after !== configText) {
      const parsed = parseEdited(after, configPath);
      checkEdit(before, parsed, [["features", "hooks"], ...[...ourKeys].map((k) => ["hooks", "state", k])], configPath);
      // A config.toml that held only our lines was created by install: it goes with them.
      changes.push({ path: configPath, before: configText, after: gone ? undefined : after });
    }
    notes.push(changes.length ? `${opts.dryRun ? "would remove" : "removed"} memsearch's hooks from ${home}` : `memsearch is not wired into Codex (${home})`);
    return { agent: "codex", changes, notes };
  }
  const merged = mergeHooks(hooksText, opts.exe);
  if (merged.text !== hooksText) changes.push({ path: hooksPath, before: hooksText, after: merged.text });
  let config = configText;
  const enabled = valueAt(before, ["features", "hooks"]);
  if (enabled === false) throw new InputError(`${configPath} turns Codex hooks off (features.hooks = false): memsearch's hooks would never run; remove that line, then run this again`);
  if (enabled !== true) config = setKey(config, ["features"], "hooks", "true");
  const ours: string[][] = [["features", "hooks"]];
  for (const p of merged.placed) {
    const key = stateKey(hooksPath, p);
    const hash = trustHash(p.snake, p.handler);
    ours.push(["hooks", "state", key]);
    if (valueAt(before, ["hooks", "state", key, "trusted_hash"]) !== hash) config = setTable(config, ["hooks", "state", key], "trusted_hash", JSON.stringify(hash));
  }
  if (config !== configText) {
    const parsed = parseEdited(config, configPath);
    checkEdit(before, parsed, ours, configPath);
    if (valueAt(parsed, ["features", "hooks"]) !== true) throw new InputError(`memsearch could not turn Codex hooks on in ${configPath}; nothing was written`);
    changes.push({ path: configPath, before: configText || undefined, after: config });
  }
  notes.push(changes.length ? `${opts.dryRun ? "would wire" : "wired"} memsearch's hooks into Codex (${home}): SessionStart, UserPromptSubmit, Stop, SessionEnd, each trusted` : `memsearch is already wired into Codex (${home})`);
  return { agent: "codex", changes, notes };
}

/** A trust key of one of our hooks in this hooks.json (any group index). */
function OURS_KEY(hooksPath: string, key: string): boolean {
  if (!key.startsWith(`${hooksPath}:`)) return false;
  return /^:(session_start|user_prompt_submit|stop|session_end):\d+:0$/.test(key.slice(hooksPath.length));
}

const TRUST_HEADER = /^\s*\[hooks\.state\."((?:[^"\\]|\\.)*)"\]\s*(#.*)?$/;
const TRUSTED_HASH = /^\s*trusted_hash\s*=\s*"([^"]*)"\s*(#.*)?$/;

/**
 * The trust keys of config.toml that are ours: a key of one of our hooks in this hooks.json whose
 * table we marked, or whose hash is one of our groups' (a user's own hook at the same index has
 * another hash, and keeps its trust).
 */
function ourTrustKeys(text: string, hooksPath: string, ourHashes: Set<string>): Set<string> {
  const keys = new Set<string>();
  const lines = text.split("\n");
  lines.forEach((l, i) => {
    const m = TRUST_HEADER.exec(l);
    if (!m) return;
    let key: string;
    try {
      key = JSON.parse(`"${m[1]}"`);
    } catch {
      return;
    }
    if (!OURS_KEY(hooksPath, key)) return;
    const hash = TRUSTED_HASH.exec(lines[i + 1] ?? "")?.[1];
    if (l.trimEnd().endsWith(MARK) || (hash !== undefined && ourHashes.has(hash))) keys.add(key);
  });
  return keys;
}

/** Trust tables of ours that lost their mark (a hand edit, or Codex's own approval) are ours all the same. */
function removeUnmarkedTrust(text: string, ours: Set<string>): string {
  const lines = text.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const m = TRUST_HEADER.exec(l);
    let key: string | undefined;
    try {
      key = m ? JSON.parse(`"${m[1]}"`) : undefined;
    } catch {}
    if (key !== undefined && ours.has(key) && TRUSTED_HASH.test(lines[i + 1] ?? "") && !(lines[i + 2] ?? "").trim()) {
      if (out.length && !out.at(-1)!.trim()) out.pop();
      i += 1;
      continue;
    }
    out.push(l);
  }
  return out.join("\n");
}

export function codexWired(opts: InstallOptions): WiredState {
  const home = codexHome(opts.env);
  const hooksPath = join(home, "hooks.json");
  let doc;
  let config;
  try {
    doc = readHooks(hooksPath).doc;
    config = parseToml(readAgentFile(join(home, "config.toml")) ?? "", "config.toml");
  } catch (e) {
    return { wired: false, detail: (e as Error).message };
  }
  const missing: string[] = [];
  for (const h of CODEX_HOOKS) {
    const groups = doc.hooks?.[h.event] ?? [];
    const at = groups.findIndex(isOurGroup);
    if (at < 0) {
      missing.push(`${h.event} not in ${hooksPath}`);
      continue;
    }
    const handler = ((groups[at] as Group).hooks as Handler[])[0]!;
    if (valueAt(config, ["hooks", "state", stateKey(hooksPath, { snake: h.snake, group: at, handler }), "trusted_hash"]) !== trustHash(h.snake, handler)) missing.push(`${h.event} not trusted`);
  }
  if (valueAt(config, ["features", "hooks"]) === false) missing.push("features.hooks = false");
  return missing.length ? { wired: false, detail: `${missing.join("; ")} (memsearch install codex)` } : { wired: true, detail: `4 hooks in ${hooksPath}, trusted` };
}

export { MARK };
