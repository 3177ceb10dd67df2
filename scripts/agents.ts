/**
 * The coding agents' CLIs that the real-client suites drive (Claude Code, Codex CLI, Gemini CLI,
 * Copilot CLI, OpenCode), pinned in scripts/agents/package.json and its lockfile. They are about
 * 1.2 GB installed, so they are not dev dependencies (`npm ci && npm run demo` must stay small):
 * the test command installs them on demand into `.cache/agents/` (git-ignored), with `npm ci
 * --prefix`, and reuses that folder while it matches the lockfile (so a machine offline after the
 * first run still tests). `MEMSEARCH_AGENTS_DIR` names another folder (shared by several clones).
 *
 *   bun scripts/agents.ts          install them now (or say they are current)
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const MANIFEST = join(import.meta.dir, "agents");

export function agentsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MEMSEARCH_AGENTS_DIR ? resolve(env.MEMSEARCH_AGENTS_DIR) : join(ROOT, ".cache", "agents");
}

/** Where the installed packages are: `<agentsDir>/node_modules`. */
export function agentModules(env: NodeJS.ProcessEnv = process.env): string {
  return join(agentsDir(env), "node_modules");
}

/** The lockfile's hash, written beside a finished install: an install of another lockfile (or a cut one) is not reused. */
function wanted(): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(readFileSync(join(MANIFEST, "package.json")));
  h.update(readFileSync(join(MANIFEST, "package-lock.json")));
  return h.digest("hex");
}

const STAMP = ".installed";

export function agentsCurrent(env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    return readFileSync(join(agentsDir(env), STAMP), "utf8").trim() === wanted();
  } catch {
    return false;
  }
}

/**
 * Install the pinned agents unless the folder already holds exactly them. Returns a one-line
 * problem when npm could not (offline with an empty npm cache, say), else undefined; the suites
 * that need a missing CLI then fail saying so.
 */
export function ensureAgents(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = (l) => console.error(l)): string | undefined {
  const dir = agentsDir(env);
  if (agentsCurrent(env)) return undefined;
  const npm = Bun.which("npm");
  if (!npm) return `cannot install the agents' CLIs into ${dir}: npm is not on PATH`;
  mkdirSync(dir, { recursive: true });
  rmSync(join(dir, STAMP), { force: true });
  copyFileSync(join(MANIFEST, "package.json"), join(dir, "package.json"));
  copyFileSync(join(MANIFEST, "package-lock.json"), join(dir, "package-lock.json"));
  log(`installing the agents' CLIs for the real-client suites into ${dir} (once; about 650 MB to download)`);
  const t0 = performance.now();
  // --prefer-offline: npm's own cache first, so a machine that had them once needs no network.
  const p = Bun.spawnSync([npm, "ci", "--prefix", dir, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: dir,
    env: { ...env, npm_config_update_notifier: "false" },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (p.exitCode !== 0) {
    const why = (p.stderr.toString() + p.stdout.toString()).split("\n").map((l) => l.trim()).find((l) => /err/i.test(l)) ?? `npm ci exited with ${p.exitCode}`;
    return `cannot install the agents' CLIs into ${dir}: ${why}`;
  }
  writeFileSync(join(dir, STAMP), `${wanted()}\n`);
  log(`agents' CLIs installed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return undefined;
}

if (import.meta.main) {
  const dir = agentsDir();
  if (agentsCurrent()) console.log(`the agents' CLIs in ${dir} are current`);
  const problem = ensureAgents();
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
  if (!existsSync(agentModules())) process.exit(1);
}
