/**
 * Which Codex rollouts memsearch reads for a project: files under `$CODEX_HOME/sessions` (or
 * `archived_sessions`), plain files (a link could point anywhere), whose session was started in
 * the project (its `session_meta` cwd, by the project rule every agent shares: the git top level).
 * A note's anchor may come with a cloned repository: this is what stops it from opening any file.
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { isInside, realOr } from "../../core/project.ts";
import { ForeignTranscriptError, projectOfCwd, sameProject } from "../../transcript/files.ts";
import { firstJsonLine, requirePlainTranscript, transcriptPath } from "../files.ts";
import { codexHome } from "./install.ts";

const HEAD_BYTES = 256 * 1024;


/** The folders Codex keeps rollouts in. */
export function rolloutDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = codexHome(env);
  return [join(home, "sessions"), join(home, "archived_sessions")];
}

/**
 * True when the path lies in Codex's rollout folders, as written or with its links resolved (a
 * home reached through a link); whether it is a plain file is checkProjectRollout's to say.
 */
export function isCodexRolloutPath(path: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const abs = resolve(path);
  const real = realOr(abs);
  return rolloutDirs(env).some((d) => isInside(abs, d) || isInside(real, d));
}

/** The working folder the rollout's session started in (its first line), undefined when it has none. */
function rolloutCwd(path: string): string | undefined {
  const o = firstJsonLine(path, HEAD_BYTES) as { type?: unknown; payload?: { cwd?: unknown } } | undefined;
  return o?.type === "session_meta" && typeof o.payload?.cwd === "string" ? o.payload.cwd : undefined;
}

/** Throws unless `path` is a rollout of this project (of any project with `anyProject`). */
export function checkProjectRollout(path: string, root: string, o: { env?: NodeJS.ProcessEnv; anyProject?: boolean } = {}): void {
  const abs = transcriptPath(path);
  if (!isCodexRolloutPath(abs, o.env)) throw new ForeignTranscriptError(`refused: ${path} is not a Codex rollout (not under ${rolloutDirs(o.env)[0]})`);
  requirePlainTranscript(abs, path);
  if (o.anyProject) return;
  const cwd = rolloutCwd(abs);
  if (!cwd || !sameProject(projectOfCwd(cwd), root)) throw new ForeignTranscriptError(`refused: ${path} is another project's rollout (this project: ${root})`, true);
}

/** Every rollout on this machine, oldest folder first (`YYYY/MM/DD` under `sessions`; flat or dated under `archived_sessions`). */
export function allRollouts(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(dir, name);
      if (/^rollout-.*\.jsonl$/.test(name)) out.push(p);
      else if (depth < 3) walk(p, depth + 1);
    }
  };
  for (const d of rolloutDirs(env)) walk(d, 0);
  return out;
}
