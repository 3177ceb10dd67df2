import { loadConfig, type ConfigKey, type ConfigValue, type ResolvedConfig } from "./config.ts";
import { checkDataFolder, resolveProject, type ProjectPaths } from "./project.ts";

/** Everything a command needs to know about where it runs. */
export interface Context {
  project: ProjectPaths;
  resolved: ResolvedConfig;
  config: ResolvedConfig["values"];
  /** The environment it was loaded from (the hub loads other projects' with its own); absent: this process's. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Where the command runs and its configuration. Every entry point (hook, command, watch process,
 * hub) comes through here before it touches the data folder, so the folder is checked here:
 * UnsafeDataError when a cloned repository planted a link or a special file in it.
 */
export function loadContext(flags: Partial<Record<ConfigKey, ConfigValue | undefined>> = {}, cwd = process.cwd(), env = process.env): Context {
  const project = resolveProject(cwd, env);
  checkData(project, env);
  const resolved = loadConfig({ projectRoot: project.root, env, flags });
  return { project, resolved, config: resolved.values, env };
}

/**
 * The data folder check (checkDataFolder), again: for a process that lives on while the
 * repository can change under it (`git pull` during a session), before each write.
 */
export function checkData(project: ProjectPaths, env = process.env): void {
  checkDataFolder(project, { chosen: !!env.MEMSEARCH_DIR });
}
