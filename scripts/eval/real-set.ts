/**
 * A set of real coding sessions for the benchmark of real work (scripts/eval/real.ts): a manifest
 * naming, per project, its sessions in time order, each with its transcript (Claude Code JSONL as
 * published), its first prompt as the person typed it, and the files it edited. The data is read
 * where it lies, outside the repository (its sources and licences are the manifest's own notes);
 * nothing of it is copied into the project.
 *
 * The sessions of one project may have run in different folders (several people, several
 * machines): each session's transcript is replayed under the benchmark's own project folder, its
 * recorded root replaced by it, so that the project identity, the notes' paths and the
 * conversation index see one project as they would on the user's machine.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import * as v from "valibot";

export class RealSetError extends Error {
  override name = "RealSetError";
}

const Session = v.object({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  file: v.pipe(v.string(), v.minLength(1)),
  start: v.pipe(v.string(), v.check((s) => Number.isFinite(Date.parse(s)), "start is not a date")),
  end: v.optional(v.string()),
  cwd: v.optional(v.string()),
  /** The project root the session ran under, when it differs from the project's. */
  root: v.optional(v.string()),
  firstPrompt: v.string(),
  /** `typed` (a person wrote it), or what else opened the session (a plan handed over, a slash command). */
  firstPromptKind: v.optional(v.string()),
  editedFiles: v.array(v.string()),
});

const Project = v.object({
  slug: v.pipe(v.string(), v.regex(/^[\w.-]+$/, "a slug is letters, digits, dots and dashes")),
  repo: v.optional(v.string()),
  licence: v.optional(v.string()),
  root: v.pipe(v.string(), v.minLength(1)),
  sessions: v.array(Session),
});

const Manifest = v.object({ projects: v.pipe(v.array(Project), v.minLength(1)) });

export interface RealSession {
  id: string;
  start: string;
  end?: string;
  firstPrompt: string;
  /** Whether a person typed the first prompt (only those are asked; the others' sessions still become memory). */
  typed: boolean;
  editedFiles: string[];
}

export interface RealProject {
  slug: string;
  repo?: string;
  sessions: RealSession[];
  /** Folders under the root the sessions ran in (created, so their working directories exist). */
  subdirs: string[];
  /** A session's transcript with its recorded root replaced by `root`. */
  transcript(id: string, root: string): string;
}

export interface RealSet {
  path: string;
  projects: RealProject[];
}

/** Whether a parsed JSON file is a manifest of real sessions rather than a LoCoMo set. */
export function isRealSet(raw: unknown): boolean {
  return !!raw && typeof raw === "object" && !Array.isArray(raw) && Array.isArray((raw as { projects?: unknown }).projects);
}

export function loadRealSet(path: string, raw: unknown, only?: string[]): RealSet {
  const parsed = v.safeParse(Manifest, raw);
  if (!parsed.success) throw new RealSetError(`${path} is not a manifest of real sessions: ${v.summarize(parsed.issues).split("\n")[0]}`);
  const base = dirname(resolve(path));
  const projects = parsed.output.projects
    .filter((p) => !only?.length || only.includes(p.slug))
    .map((p): RealProject => {
      const sessions = [...p.sessions].filter((s) => s.firstPrompt.trim()).sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
      const files = new Map(sessions.map((s) => [s.id, { path: resolve(base, s.file), root: s.root ?? p.root }]));
      for (const [id, f] of files) {
        try {
          if (!statSync(f.path).isFile()) throw new Error();
        } catch {
          throw new RealSetError(`${path}: the transcript of session ${id} is not a file: ${f.path}`);
        }
      }
      const subdirs = new Set<string>();
      for (const s of p.sessions) {
        const root = s.root ?? p.root;
        if (s.cwd && isAbsolute(s.cwd) && s.cwd.startsWith(root + "/")) subdirs.add(relative(root, s.cwd));
      }
      return {
        slug: p.slug,
        repo: p.repo,
        sessions: sessions.map((s) => ({ id: s.id, start: s.start, end: s.end, firstPrompt: s.firstPrompt, typed: (s.firstPromptKind ?? "typed") === "typed", editedFiles: [...new Set(s.editedFiles)] })),
        subdirs: [...subdirs],
        transcript(id, root) {
          const f = files.get(id);
          if (!f) throw new RealSetError(`no session ${id} in ${p.slug}`);
          // The root as it appears inside JSON strings (a Windows path's backslashes are escaped there).
          const recorded = JSON.stringify(f.root).slice(1, -1);
          return readFileSync(f.path, "utf8").split(recorded).join(JSON.stringify(root).slice(1, -1));
        },
      };
    });
  if (!projects.length) throw new RealSetError(`${path}: no project left${only?.length ? ` (asked for ${only.join(", ")})` : ""}`);
  return { path, projects };
}

