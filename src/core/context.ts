import { loadConfig, type ConfigKey, type ConfigValue, type ResolvedConfig } from "./config.ts";
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
