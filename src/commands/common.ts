import type { Argv } from "yargs";
import type { ConfigKey, ConfigValue } from "../core/config.ts";

/** Flags shared by index, search, expand and watch (the reference's common options we support). */
export function embeddingFlags<T>(y: Argv<T>) {
  return y
    .option("provider", { alias: "p", type: "string", choices: ["ollama", "none"], describe: "Embedding provider (none = BM25 only)" })
    .option("model", { alias: "m", type: "string", describe: "Ollama embedding model" })
    .option("batch-size", { type: "number", describe: "Texts per embedding request" })
    .option("base-url", { type: "string", describe: "Ollama host (default $OLLAMA_HOST or http://127.0.0.1:11434)" });
}

export interface EmbeddingArgs {
  provider?: string;
  model?: string;
  batchSize?: number;
  baseUrl?: string;
}

export function embeddingOverrides(a: EmbeddingArgs): Partial<Record<ConfigKey, ConfigValue | undefined>> {
  return {
    "embedding.provider": a.provider,
    "embedding.model": a.model,
    "embedding.batch_size": a.batchSize,
    "embedding.host": a.baseUrl,
  };
}

export function jsonFlag<T>(y: Argv<T>) {
  return y.option("json-output", { alias: "j", type: "boolean", default: false, describe: "Print JSON" });
}
