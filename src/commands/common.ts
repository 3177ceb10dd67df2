import { CONFIG_KEYS, type ConfigKey, type ConfigValue } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { flags, type Args } from "./declare.ts";

/** Flags shared by index, search and watch (the reference's common options we support). */
export const embeddingFlags = flags({
  provider: { alias: "p", type: "string", choices: ["ollama", "none"], describe: "Embedding provider (none = BM25 only)" },
  model: { alias: "m", type: "string", describe: "Ollama embedding model" },
  "batch-size": { type: "number", describe: "Texts per embedding request" },
  "base-url": { type: "string", describe: "Ollama host (default $OLLAMA_HOST or http://127.0.0.1:11434)" },
});

type EmbeddingArgs = Args<typeof embeddingFlags>;

export function embeddingOverrides(a: EmbeddingArgs): Partial<Record<ConfigKey, ConfigValue | undefined>> {
  return {
    "embedding.provider": a.provider,
    "embedding.model": a.model,
    "embedding.batch_size": checkFlag("--batch-size", "embedding.batch_size", a.batchSize),
    "embedding.host": a.baseUrl,
  };
}

/**
 * A number flag's value held to its config key's range, naming the flag. yargs reads `abc` as NaN
 * and passes 0 or -1 as they are; left to the core, they fail only once files are read (an index
 * emptied, a batch of no texts), so they are refused before the command does anything.
 */
export function checkFlag(flag: string, key: ConfigKey, value: unknown): number | undefined {
  const spec: { kind: string; min?: number; max?: number } = CONFIG_KEYS[key];
  return value === undefined ? undefined : checkNumber(flag, value, { whole: spec.kind === "int", min: spec.min, max: spec.max });
}

/** A number flag's value within `min`..`max` (a whole number when `whole`), else the UsageError naming the flag. */
export function checkNumber(flag: string, value: unknown, o: { whole: boolean; min?: number; max?: number }): number {
  const ok = typeof value === "number" && Number.isFinite(value) && (!o.whole || Number.isInteger(value)) && (o.min === undefined || value >= o.min) && (o.max === undefined || value <= o.max);
  if (ok) return value;
  const what = o.whole ? "a whole number" : "a number";
  const range = o.min !== undefined && o.max !== undefined ? ` from ${o.min} to ${o.max}` : o.min !== undefined ? ` ≥ ${o.min}` : o.max !== undefined ? ` ≤ ${o.max}` : "";
  // yargs keeps no text of a value it could not read as a number: only a number it read is shown back.
  const got = typeof value === "number" && Number.isFinite(value) ? ` (got ${value})` : "";
  throw new UsageError(`${flag} must be ${what}${range}${got}`);
}

/** Every command that prints results prints them as JSON with this (snake_case keys, as the reference's). */
export const jsonFlag = flags({
  "json-output": { alias: ["j", "json"], type: "boolean", default: false, describe: "Print JSON" },
});

/** Accepted by every command; cli.ts acts on it before any parsing (see color.ts). */
export const globalFlags = flags({
  color: { type: "string", describe: "When to colour: auto (a terminal), always or never; --no-color: never" },
});

/** The words of a query as typed (`search redis pool`, or one quoted argument), joined; "" when none. */
export function queryText(words: readonly string[] | undefined): string {
  return (words ?? []).join(" ").trim();
}

/** The one sentence for a search or recall without a query, given none or an empty one alike. */
export function needsQuery(cmd: "search" | "recall"): UsageError {
  return new UsageError(`${cmd} needs a query: the words to look for, e.g. memsearch ${cmd} redis timeout`);
}
