import { loadConfig, type ConfigKey, type ConfigValue, type ResolvedConfig } from "./config.ts";
import { OllamaEmbedder, resolveOllamaHost } from "./embedder.ts";
import { resolveProject, type ProjectPaths } from "./project.ts";

/** Everything a command needs to know about where it runs. */
export interface Context {
  project: ProjectPaths;
  resolved: ResolvedConfig;
  config: ResolvedConfig["values"];
}

export function loadContext(flags: Partial<Record<ConfigKey, ConfigValue | undefined>> = {}, cwd = process.cwd(), env = process.env): Context {
  const project = resolveProject(cwd, env);
  const resolved = loadConfig({ projectRoot: project.root, env, flags });
  return { project, resolved, config: resolved.values };
}

/** The embedder the config asks for, or null when embeddings are turned off. */
export function embedderFor(config: Context["config"], purpose: "index" | "query" = "index"): OllamaEmbedder | null {
  if (config["embedding.provider"] === "none") return null;
  return new OllamaEmbedder({
    host: resolveOllamaHost(config["embedding.host"]),
    model: config["embedding.model"],
    batchSize: config["embedding.batch_size"],
    timeoutMs: purpose === "index" ? config["embedding.timeout_ms"] : config["embedding.query_timeout_ms"],
  });
}
