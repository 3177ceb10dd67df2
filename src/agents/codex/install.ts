/**
 * `memsearch install codex`: memsearch's four hooks in `$CODEX_HOME/hooks.json`, in a group of
 * their own per event (merged beside the user's, never replacing them), `features.hooks = true`
 * and a trust entry per hook in `config.toml`. Codex skips an unmanaged hook silently until it is
 * trusted: the entry is `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` with
 * `trusted_hash = "sha256:<hex of the handler's canonical JSON>"` (trustHash).
 */
import { sha256Hex } from "../../core/text.ts";
import { lstatSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { InputError } from "../../core/errors.ts";
import { errCode, readOwnText } from "../../core/fsutil.ts";
import { parseJson } from "../../core/json-file.ts";
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

interface Placed {
  snake: string;
  group: number;
  handler: Handler;
}

function readHooks(path: string): { doc: v.InferOutput<typeof HooksFile>; text?: string } {
  const text = readAgentFile(path);
  if (text === undefined) return { doc: {} };
  const r = parseJson(text, HooksFile);
  if ("problem" in r) throw new InputError(`${path}: ${r.problem}; fix it, then run this again`);
  return { doc: r.value, text };
}

/** hooks.json with our groups in place: an outdated one replaced where it stands (the user's groups keep their indices), a missing one appended. */
function mergeHooks(doc: v.InferOutput<typeof HooksFile>, exe: string[]): { doc: typeof doc; placed: Placed[] } {
  const hooks: Record<string, unknown[]> = { ...(doc.hooks ?? {}) };
  const placed: Placed[] = [];
  for (const h of CODEX_HOOKS) {
    const groups = [...(hooks[h.event] ?? [])];
    const handler: Handler = { type: "command", command: hookCommand(exe, h.hook), timeout: h.timeout };
    let at = groups.findIndex(isOurGroup);
    if (at < 0) at = groups.push({ hooks: [handler] }) - 1;
    else groups[at] = { hooks: [handler] };
    hooks[h.event] = groups;
    placed.push({ snake: h.snake, group: at, handler });
  }
  return { doc: { ...doc, hooks }, placed };
}

function unmergeHooks(doc: v.InferOutput<typeof HooksFile>): typeof doc {
  if (!doc.hooks) return doc;
  const hooks: Record<string, unknown[]> = {};
  for (const [event, groups] of Object.entries(doc.hooks)) {
    const kept = groups.filter((g) => !isOurGroup(g));
    if (kept.length) hooks[event] = kept;
  }
  const { hooks: _drop, ...rest } = doc;
  return Object.keys(hooks).length ? { ...rest, hooks } : rest;
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
    const next = unmergeHooks(doc);
    const nextText = Object.keys(next).length ? `${JSON.stringify(next, null, 2)}\n` : undefined;
    if (hooksText !== undefined && JSON.stringify(next) !== JSON.stringify(doc)) changes.push({ path: hooksPath, before: hooksText, after: nextText });
    const stateOf = (p: string[]) => p.length === 3 && p[0] === "hooks" && p[1] === "state" && OURS_KEY(hooksPath, p[2]!);
    // Our trust tables go even when written unmarked by hand; any other marked line of ours too.
    let after = removeMarked(configText, (p) => !(stateOf(p) || (p.length === 1 && p[0] === "features")));
    after = removeUnmarkedTrust(after, hooksPath);
    if (after !== configText) {
      const parsed = parseEdited(after, configPath);
      checkEdit(before, parsed, [["features", "hooks"], ...trustPaths(before, hooksPath)], configPath);
      // A config.toml that held only our lines was created by install: it goes with them.
      changes.push({ path: configPath, before: configText, after: after.trim() ? after : undefined });
    }
    notes.push(changes.length ? `${opts.dryRun ? "would remove" : "removed"} memsearch's hooks from ${home}` : `memsearch is not wired into Codex (${home})`);
    return { agent: "codex", changes, notes };
  }
  const merged = mergeHooks(doc, opts.exe);
  const hooksAfter = `${JSON.stringify(merged.doc, null, 2)}\n`;
  if (hooksText === undefined || JSON.stringify(merged.doc) !== JSON.stringify(doc)) changes.push({ path: hooksPath, before: hooksText, after: hooksAfter });
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

function trustPaths(t: Record<string, unknown>, hooksPath: string): string[][] {
  const state = valueAt(t, ["hooks", "state"]);
  if (!state || typeof state !== "object") return [];
  return Object.keys(state).filter((k) => OURS_KEY(hooksPath, k)).map((k) => ["hooks", "state", k]);
}

/** Trust entries of our hooks that lost their mark (a hand edit) are ours all the same. */
function removeUnmarkedTrust(text: string, hooksPath: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const m = /^\s*\[hooks\.state\."((?:[^"\\]|\\.)*)"\]\s*$/.exec(l);
    if (m && OURS_KEY(hooksPath, JSON.parse(`"${m[1]}"`)) && /^\s*trusted_hash\s*=/.test(lines[i + 1] ?? "") && !(lines[i + 2] ?? "").trim()) {
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
