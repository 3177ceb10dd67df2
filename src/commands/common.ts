import type { ConfigKey, ConfigValue } from "../core/config.ts";
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
    "embedding.batch_size": a.batchSize,
    "embedding.host": a.baseUrl,
  };
}

export const jsonFlag = flags({
  "json-output": { alias: "j", type: "boolean", default: false, describe: "Print JSON" },
});

/** Accepted by every command; cli.ts acts on it before any parsing (see color.ts). */
export const globalFlags = flags({
  color: { type: "boolean", describe: "Colour on a terminal (--no-color: never)" },
});
