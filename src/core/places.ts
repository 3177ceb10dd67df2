/**
 * The places a project's index may hold chunks from, and so the only files `expand` opens: the
 * project itself (its memory folder, its CLAUDE.md files, folders indexed by hand inside it), its
 * data folder's memory (MEMSEARCH_DIR may put it elsewhere), Claude Code's memory folder of the
 * project, and the paths the user named for this project on this machine (`memsearch index
 * <path>` or `watch <path>` outside the project).
 *
 * An index file is bytes a repository can bring (committed) or a copy can carry (`cp -r A B`): it
 * names files by absolute path, and without this check B's search served A's notes and `expand`
 * opened whatever markdown the file named. The named paths are kept in the user's folder
 * (`~/.memsearch/named-paths.json`), never in the project's, so a repository cannot add to them.
 */
import { mkdirSync } from "node:fs";
import { basename, dirname, isAbsolute, join, normalize, resolve } from "node:path";
import * as v from "valibot";
import { resolveMemoryFolder } from "./claude-home.ts";
import { atomicWrite } from "./fsutil.ts";
import { readJson } from "./json-file.ts";
import { withFileLock } from "./lock.ts";
import { isInside, realOr, userFiles, type ProjectPaths } from "./project.ts";

export interface ProjectPlaces {
  /** The folders (and files) chunks may come from, as given and with links resolved. */
  roots: string[];
  /** Whether a chunk of `source` may be served and its file opened: inside a root as written and once its links are resolved. */
  allows(source: string): boolean;
}

/** Paths one project may name, at most: a list that long is a mistake, not a habit. */
const NAMED_MAX = 1_000;
const PATH_MAX = 4_096;

const AbsolutePath = v.pipe(v.string(), v.minLength(1), v.maxLength(PATH_MAX), v.check((p) => !p.includes("\0") && isAbsolute(p) && resolve(p) === p));
const NamedFile = v.object({ v: v.literal(1), projects: v.record(v.string(), v.pipe(v.array(AbsolutePath), v.maxLength(NAMED_MAX))) });
type Named = v.InferOutput<typeof NamedFile>;

function namedFile(env: NodeJS.ProcessEnv): string {
  return userFiles(env).namedPaths;
}

/** The paths the user named for the project at `root` on this machine (real paths). */
export function namedPaths(root: string, env = process.env): string[] {
  const r = readJson(namedFile(env), NamedFile);
  return "value" in r ? (r.value.projects[resolve(root)] ?? []) : [];
}

/** Every place the project's chunks may come from. */
export function projectPlaces(project: Pick<ProjectPaths, "root" | "memoryDir">, env = process.env): ProjectPlaces {
  const given = [project.root, project.memoryDir, resolveMemoryFolder(project.root, { env }).dir, ...namedPaths(project.root, env)];
  const roots = [...new Set(given.flatMap((p) => [resolve(p), realOr(p)]))];
  const within = (p: string) => roots.some((r) => p === r || isInside(p, r));
  // A folder's links resolved once (a day's notes share one folder). The file itself is not
  // resolved: every reader opens a source without following a link (core/fsutil.ts).
  const realDirs = new Map<string, string>();
  const realDir = (d: string) => realDirs.get(d) ?? realDirs.set(d, realOr(d)).get(d)!;
  return {
    roots,
    allows(source) {
      if (typeof source !== "string" || source.includes("\0") || !isAbsolute(source) || normalize(source) !== source) return false;
      return within(source) && within(join(realDir(dirname(source)), basename(source)));
    },
  };
}

/**
 * Record the paths the user gave a command (real paths) that lie outside the project's places,
 * so the index keeps what it indexes from them. Returns the paths added.
 */
export async function nameOutsidePaths(project: Pick<ProjectPaths, "root" | "memoryDir">, paths: string[], env = process.env): Promise<string[]> {
  const places = projectPlaces(project, env);
  const outside = [...new Set(paths.map((p) => realOr(p)))].filter((p) => !places.allows(p));
  if (!outside.length) return [];
  const file = namedFile(env);
  mkdirSync(dirname(file), { recursive: true });
  return withFileLock(`${file}.lock`, () => {
    const r = readJson(file, NamedFile);
    // A record that cannot be read is replaced: it only ever held what the user named here.
    const now: Named = "value" in r ? r.value : { v: 1, projects: {} };
    const key = resolve(project.root);
    const list = now.projects[key] ?? [];
    const added = outside.filter((p) => !list.includes(p));
    now.projects[key] = [...list, ...added].slice(-NAMED_MAX);
    atomicWrite(file, JSON.stringify(now, null, 1) + "\n");
    return added;
  });
}

/** Whether `path` holds the project (a folder above it, or the file system root). */
export function holdsProject(path: string, root: string): boolean {
  const p = realOr(path);
  return p !== realOr(root) && isInside(realOr(root), p);
}
