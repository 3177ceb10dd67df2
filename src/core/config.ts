import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, errCode, UsageError } from "./errors.ts";
import { atomicWrite } from "./fsutil.ts";
import { userFiles } from "./project.ts";

/**
 * Every configuration key, its type and default. Keys are `section.name`;
 * the table is the single source for validation, env names, `config list` and docs.
 */
type Kind = "string" | "int" | "float" | "bool" | "list" | "enum";
interface KeySpec {
  kind: Kind;
  default: unknown;
  values?: readonly string[];
  min?: number;
  max?: number;
  doc: string;
  /** Allowed in the per-project `.memsearch.toml`. */
  project?: boolean;
  /**
   * The only values the project file may choose (the ones that cost nothing and send nothing
   * anywhere); any other is machine-wide (see MACHINE_WIDE below).
   */
  projectValues?: readonly string[];
}

export const CONFIG_KEYS = {
  "embedding.provider": { kind: "enum", values: ["ollama", "none"], default: "ollama", doc: "Embedding provider; `none` keeps search on BM25 alone", project: true },
  "embedding.model": { kind: "string", default: "nomic-embed-text", doc: "Ollama embedding model", project: true },
  "embedding.host": { kind: "string", default: "", doc: "Ollama host; empty means $OLLAMA_HOST or http://127.0.0.1:11434" },
  "embedding.batch_size": { kind: "int", default: 64, min: 1, max: 2048, doc: "Texts per /api/embed request", project: true },
  "embedding.timeout_ms": { kind: "int", default: 30000, min: 100, doc: "Timeout of one Ollama request during indexing" },
  "embedding.query_timeout_ms": { kind: "int", default: 3000, min: 50, doc: "Timeout of embedding one search query" },
  "chunking.max_chunk_size": { kind: "int", default: 1500, min: 1, doc: "Largest chunk, in characters", project: true },
  "chunking.overlap_lines": { kind: "int", default: 2, min: 0, doc: "Lines shared by consecutive pieces of a split section", project: true },
  "indexing.ignore_files": { kind: "list", default: [], doc: "Ignore files read in each directory (gitignore semantics), e.g. .gitignore", project: true },
  "indexing.exclude": { kind: "list", default: [], doc: "Root-relative gitignore patterns never indexed", project: true },
  "indexing.curated": { kind: "bool", default: true, doc: "Index Claude Code's curated memory of the project too (its memory folder's MEMORY.md and topic files, the CLAUDE.md and CLAUDE.local.md files): read, never written", project: true },
  "watch.debounce_ms": { kind: "int", default: 1500, min: 0, doc: "Quiet time before a changed file is re-indexed", project: true },
  "search.top_k": { kind: "int", default: 5, min: 1, max: 1000, doc: "Results returned by search", project: true },
  "search.text_weight": { kind: "float", default: 0.8, min: 0, max: 1, doc: "How much keyword (BM25) evidence alone can count in hybrid ranking", project: true },
  "search.vector_weight": { kind: "float", default: 0.9, min: 0, max: 1, doc: "How much vector (cosine) evidence alone can count in hybrid ranking", project: true },
  "search.similarity": { kind: "float", default: 0.35, min: 0, max: 1, doc: "Lowest cosine similarity a vector match may have", project: true },
  "hooks.recall": { kind: "enum", values: ["inject", "synthesize", "hint", "off"], default: "inject", doc: "What UserPromptSubmit adds: relevant memories, `synthesize`: a short summary of them by the summariser's model (falls back to inject when it is slow or fails), a one-line hint, or nothing", project: true, projectValues: ["inject", "hint", "off"] },
  "hooks.inject_top_k": { kind: "int", default: 3, min: 1, max: 10, doc: "Memories (or conversation turns) injected per prompt", project: true },
  "hooks.inject_min_score": { kind: "float", default: 0.5, min: 0, max: 1, doc: "Relevance floor of an injected memory, 0–1, the same with any embedding model or none: the share of the prompt's rare-word weight a note holds (capped by how much information it holds), raised when its vector stands out from the rest of the index. Past conversation turns reach a prompt only through synthesize's model, which judges them", project: true },
  "hooks.inject_max_chars": { kind: "int", default: 1500, min: 200, max: 9500, doc: "Characters the prompt hook may add per prompt (notes or a synthesis); machine-wide, so a cloned repository cannot raise it" },
  "hooks.session_start_lines": { kind: "int", default: 80, min: 0, max: 200, doc: "Lines of the newest sessions' notes SessionStart gives a new session (whole turns; 0: none)", project: true },
  "conversations.archive_days": { kind: "int", default: 0, min: 0, doc: "Days an archived conversation (its transcript deleted by Claude Code) stays searchable, counted from its last activity; 0 keeps every one. Machine-wide: a repository cannot shorten it" },
  "summarizer.provider": { kind: "enum", values: ["claude", "ollama", "extract", "off"], default: "claude", doc: "Who writes turn notes: `claude -p`, a local Ollama chat model, a deterministic extract, or nobody", project: true, projectValues: ["extract", "off"] },
  "summarizer.model": { kind: "string", default: "haiku", doc: "Model for the claude summariser" },
  "summarizer.ollama_model": { kind: "string", default: "llama3.2", doc: "Ollama chat model when summarizer.provider = ollama" },
  "summarizer.timeout_ms": { kind: "int", default: 90000, min: 1000, doc: "Summariser time limit; the extract is used past it" },
} as const satisfies Record<string, KeySpec>;

export type ConfigKey = keyof typeof CONFIG_KEYS;
export type ConfigValue = string | number | boolean | string[];
export type Config = { [K in ConfigKey]: (typeof CONFIG_KEYS)[K]["default"] extends readonly unknown[] ? string[] : (typeof CONFIG_KEYS)[K]["default"] extends number ? number : (typeof CONFIG_KEYS)[K]["default"] extends boolean ? boolean : string };

export type Source = "default" | "global" | "project" | "env" | "flag";
export interface ResolvedConfig {
  values: Config;
  sources: Record<ConfigKey, { source: Source; detail?: string }>;
  files: { global: string; project: string };
  /** What the project file set that is machine-wide only, left out (said in `config list` and the SessionStart status line). */
  ignored: IgnoredKey[];
}

/**
 * A project's `.memsearch.toml` comes with the repository, which anyone may have written. The
 * settings that spend the user's money, send the user's data somewhere, or load a model of any
 * size are machine-wide: set in ~/.memsearch/config.toml, the environment or a flag, never by a
 * clone. Those are the keys without `project` (hosts, timeouts, the summariser's models) and the
 * values outside a key's `projectValues` (the claude or Ollama summariser, `synthesize`).
 */
export interface IgnoredKey {
  key: ConfigKey;
  value: ConfigValue;
}

/** Whether the project file may set `key` to `value`. */
export function projectMaySet(key: ConfigKey, value: ConfigValue): boolean {
  const spec: KeySpec = CONFIG_KEYS[key];
  if (!spec.project) return false;
  return !spec.projectValues || (typeof value === "string" && spec.projectValues.includes(value));
}

/** The one line saying what a project file tried to set and was not allowed to. */
export function ignoredLine(ignored: IgnoredKey[], projectFile: string): string | undefined {
  if (!ignored.length) return undefined;
  const what = ignored.map((i) => `${i.key} = ${JSON.stringify(i.value)}`).join(", ");
  return `${projectFile} sets ${what}: ignored, machine-wide only (cost or data leaving this machine; set it in ~/.memsearch/config.toml)`;
}

export const isConfigKey = (k: string): k is ConfigKey => Object.hasOwn(CONFIG_KEYS, k);

export function envNameOf(key: ConfigKey): string {
  return "MEMSEARCH_" + key.replace(/\./g, "_").toUpperCase();
}

export function globalConfigPath(env = process.env): string {
  return userFiles(env).config;
}
export function projectConfigPath(projectRoot: string): string {
  return join(projectRoot, ".memsearch.toml");
}

/** Parse and validate a value given as text (env var, `config set`, flag). */
export function parseValue(key: ConfigKey, raw: string, where: string): ConfigValue {
  const spec: KeySpec = CONFIG_KEYS[key];
  switch (spec.kind) {
    case "list": {
      const t = raw.trim();
      if (t.startsWith("[")) {
        try {
          const arr = JSON.parse(t);
          if (Array.isArray(arr)) return checkValue(key, arr, where);
        } catch {}
        throw new ConfigError(`${where}: ${key} must be a JSON list of strings or comma-separated values`);
      }
      return t === "" ? [] : t.split(",").map((s) => s.trim()).filter(Boolean);
    }
    case "int":
    case "float": {
      if (!/^\s*-?\d+(\.\d+)?\s*$/.test(raw)) throw new ConfigError(`${where}: ${key} must be a number, got "${raw}"`);
      return checkValue(key, Number(raw), where);
    }
    case "bool": {
      const t = raw.trim().toLowerCase();
      if (["1", "true", "yes", "on"].includes(t)) return true;
      if (["0", "false", "no", "off"].includes(t)) return false;
      throw new ConfigError(`${where}: ${key} must be true or false, got "${raw}"`);
    }
    default:
      return checkValue(key, raw, where);
  }
}

/** Check a typed value (from TOML or parsed text) against the key's spec. */
export function checkValue(key: ConfigKey, value: unknown, where: string): ConfigValue {
  const spec: KeySpec = CONFIG_KEYS[key];
  const bad = (want: string) => new ConfigError(`${where}: ${key} must be ${want}, got ${JSON.stringify(value)}`);
  switch (spec.kind) {
    case "int":
    case "float": {
      if (typeof value !== "number" || !Number.isFinite(value)) throw bad("a number");
      if (spec.kind === "int" && !Number.isInteger(value)) throw bad("a whole number");
      if (spec.min !== undefined && value < spec.min) throw bad(`at least ${spec.min}`);
      if (spec.max !== undefined && value > spec.max) throw bad(`at most ${spec.max}`);
      return value;
    }
    case "bool":
      if (typeof value !== "boolean") throw bad("true or false");
      return value;
    case "list":
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw bad("a list of strings");
      return value as string[];
    case "enum":
      if (typeof value !== "string" || !spec.values!.includes(value)) throw bad(`one of ${spec.values!.join(", ")}`);
      return value;
    default:
      if (typeof value !== "string") throw bad("a string");
      return value;
  }
}

/** 1-based line of the first bad line: the line after the longest prefix that still parses. */
function tomlErrorLine(text: string): number {
  const lines = text.split("\n");
  let good = 0;
  for (let k = 1; k <= lines.length; k++) {
    try {
      Bun.TOML.parse(lines.slice(0, k).join("\n"));
      good = k;
    } catch {}
  }
  return Math.min(good + 1, lines.length);
}

/** Line where `section` / `name` is written, for messages about a key. */
function keyLine(text: string, section: string, name: string): number {
  const lines = text.split("\n");
  let current = "";
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    const sec = /^\[\s*([^\]]+?)\s*\]/.exec(l);
    if (sec) {
      current = sec[1]!.replace(/["']/g, "");
      if (!name && current === section) return i + 1;
      continue;
    }
    const m = /^["']?([A-Za-z0-9_.-]+)["']?\s*=/.exec(l);
    if (!m) continue;
    const full = current ? `${current}.${m[1]}` : m[1]!;
    if (full === (name ? `${section}.${name}` : section)) return i + 1;
  }
  return 1;
}

/**
 * Read one TOML config file into validated flat keys. Missing file → {}. A project file's
 * machine-wide keys are left out, and listed in `ignored` when given.
 */
export function readConfigFile(path: string, scope: "global" | "project", ignored: IgnoredKey[] = []): Partial<Record<ConfigKey, ConfigValue>> {
  if (!existsSync(path)) return {};
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`${path}: cannot read config file (${errCode(e) ?? e})`);
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    const reason = (e as Error).message.replace(/^TOML Parse error:\s*/, "");
    throw new ConfigError(`${path}:${tomlErrorLine(text)}: malformed TOML: ${reason}`);
  }
  const out: Partial<Record<ConfigKey, ConfigValue>> = {};
  for (const [section, body] of Object.entries(parsed)) {
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new ConfigError(`${path}:${keyLine(text, section, "")}: unknown key "${section}" (keys live in sections such as [embedding])`);
    }
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      const key = `${section}.${name}`;
      const line = keyLine(text, section, name);
      if (!isConfigKey(key)) throw new ConfigError(`${path}:${line}: unknown key "${key}"`);
      const checked = checkValue(key, value, `${path}:${line}`);
      if (scope === "project" && !projectMaySet(key, checked)) {
        ignored.push({ key, value: checked });
        continue;
      }
      out[key] = checked;
    }
  }
  return out;
}

export interface LoadOptions {
  projectRoot: string;
  env?: NodeJS.ProcessEnv;
  flags?: Partial<Record<ConfigKey, ConfigValue | undefined>>;
}

/** defaults → ~/.memsearch/config.toml → <project>/.memsearch.toml → MEMSEARCH_* → flags. */
export function loadConfig({ projectRoot, env = process.env, flags = {} }: LoadOptions): ResolvedConfig {
  const files = { global: globalConfigPath(env), project: projectConfigPath(projectRoot) };
  const values = {} as Record<ConfigKey, ConfigValue>;
  const sources = {} as ResolvedConfig["sources"];
  for (const key of Object.keys(CONFIG_KEYS) as ConfigKey[]) {
    const d = CONFIG_KEYS[key].default;
    values[key] = Array.isArray(d) ? [...d] : (d as ConfigValue);
    sources[key] = { source: "default" };
  }
  const layer = (vals: Partial<Record<ConfigKey, ConfigValue | undefined>>, source: Source, detail?: string) => {
    for (const [k, v] of Object.entries(vals) as [ConfigKey, ConfigValue | undefined][]) {
      if (v === undefined) continue;
      values[k] = v;
      sources[k] = { source, detail };
    }
  };
  layer(readConfigFile(files.global, "global"), "global", files.global);
  const ignored: IgnoredKey[] = [];
  layer(readConfigFile(files.project, "project", ignored), "project", files.project);
  for (const key of Object.keys(CONFIG_KEYS) as ConfigKey[]) {
    const name = envNameOf(key);
    const raw = env[name];
    if (raw !== undefined) layer({ [key]: parseValue(key, raw, `environment variable ${name}`) }, "env", name);
  }
  layer(flags, "flag");
  return { values: values as Config, sources, files, ignored };
}

/** TOML text of flat keys, grouped by section, for `config list` and `config set`. */
export function toToml(vals: Partial<Record<string, ConfigValue>>): string {
  const bySection = new Map<string, [string, ConfigValue][]>();
  for (const [key, v] of Object.entries(vals)) {
    if (v === undefined) continue;
    const dot = key.indexOf(".");
    const sec = key.slice(0, dot);
    if (!bySection.has(sec)) bySection.set(sec, []);
    bySection.get(sec)!.push([key.slice(dot + 1), v]);
  }
  const parts: string[] = [];
  for (const [sec, entries] of bySection) {
    parts.push(`[${sec}]\n` + entries.map(([n, v]) => `${n} = ${tomlValue(v)}`).join("\n"));
  }
  return parts.join("\n\n") + (parts.length ? "\n" : "");
}

function tomlValue(v: ConfigValue): string {
  if (Array.isArray(v)) return `[${v.map((s) => JSON.stringify(s)).join(", ")}]`;
  if (typeof v === "string") return JSON.stringify(v);
  return String(v);
}

/** Set one key in a config file, keeping the other keys; the write is atomic. */
export function writeConfigKey(path: string, scope: "global" | "project", key: string, raw: string): ConfigValue {
  if (!isConfigKey(key)) throw new UsageError(`unknown config key "${key}" (see 'memsearch config list --resolved')`);
  const value = parseValue(key, raw, key);
  if (scope === "project" && !projectMaySet(key, value)) {
    const spec: KeySpec = CONFIG_KEYS[key];
    const some = spec.project && spec.projectValues ? ` (a project may set it to ${spec.projectValues.join(", ")})` : "";
    throw new UsageError(`"${key} = ${raw}" can only be set in the global config${some}`);
  }
  const current = readConfigFile(path, scope);
  current[key] = value;
  atomicWrite(path, toToml(current));
  return value;
}

export function keyDocs(): { key: ConfigKey; default: unknown; doc: string; env: string }[] {
  return (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((key) => ({ key, default: CONFIG_KEYS[key].default, doc: CONFIG_KEYS[key].doc, env: envNameOf(key) }));
}
