/**
 * The projects registry, `~/.memsearch/projects.json`: every project a SessionStart hook has seen,
 * so `memsearch projects` and the Memory Hub can show them all (each project keeps its memory in
 * its own folder; nothing else knows where they are).
 *
 * Several sessions may start at once: a write is a read-change-write under a lock, and the file
 * is replaced atomically, so readers never take a lock. Entries this version cannot read are kept
 * as they are when the file is rewritten: the registry is never pruned behind the user's back.
 */
import { mkdirSync, renameSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import * as v from "valibot";
import { InputError } from "../core/errors.ts";
import { atomicWrite, isDirectory, readTextQuiet } from "../core/fsutil.ts";
import { parseJson } from "../core/json-file.ts";
import { withFileLock } from "../core/lock.ts";
import { dataFiles, userFiles } from "../core/project.ts";
import { journalNotes, noteDate, noteStamp } from "./journal.ts";

export interface ProjectEntry {
  /** The project root (see resolveProject). */
  path: string;
  /** Its folder name, for display. */
  name: string;
  /** Where its memory lives (`<path>/.memsearch` unless MEMSEARCH_DIR said otherwise). */
  dataDir: string;
  /** ISO times. */
  firstSeen: string;
  lastSeen: string;
}

export interface Registry {
  projects: ProjectEntry[];
  /** Entries present in the file that are not valid entries (kept on rewrite, never shown). */
  invalid: unknown[];
}

const FORMAT = 1;
/** A SessionStart within this long of the last recorded one skips the write (and the lock). */
const REFRESH_MS = 10 * 60_000;
const PATH_MAX = 4096;

export function projectsFile(env = process.env): string {
  return userFiles(env).projects;
}

const IsoTime = v.pipe(v.string(), v.maxLength(40), v.check((t) => !Number.isNaN(Date.parse(t))));
/** An absolute path as resolve() writes it: no NUL, nothing to normalise. */
const AbsolutePath = v.pipe(v.string(), v.minLength(1), v.maxLength(PATH_MAX), v.check((p) => !p.includes("\0") && resolve(p) === p));

/** One entry; an older one without `dataDir` keeps its memory in `<path>/.memsearch`, one without a usable `name` is named for its folder. */
const EntryShape = v.pipe(
  v.object({
    path: AbsolutePath,
    name: v.optional(v.unknown()),
    dataDir: v.optional(AbsolutePath),
    firstSeen: IsoTime,
    lastSeen: IsoTime,
  }),
  v.transform(
    (o): ProjectEntry => ({
      path: o.path,
      name: typeof o.name === "string" && o.name.trim() && o.name.length <= 255 ? o.name : basename(o.path) || o.path,
      dataDir: o.dataDir ?? join(o.path, ".memsearch"),
      firstSeen: o.firstSeen,
      lastSeen: o.lastSeen,
    }),
  ),
);

/** The file: a `projects` list, each item checked on its own (an unusable one is kept, never shown). */
const RegistryShape = v.looseObject({ projects: v.array(v.unknown()) });

/** The registry's text, checked: InputError when it is not a registry at all. */
export function parseRegistry(text: string, file = "projects.json"): Registry {
  const checked = parseJson(text, RegistryShape);
  if (!("value" in checked)) {
    // The shape asks for nothing but the list: any other problem is its absence.
    const why = checked.problem.startsWith("not valid JSON") ? `is ${checked.problem}` : `is not a projects registry (no "projects" list)`;
    throw new InputError(`${file} ${why}; move it aside and the next session starts a new one`);
  }
  const out: Registry = { projects: [], invalid: [] };
  const seen = new Set<string>();
  for (const item of checked.value.projects) {
    const e = v.safeParse(EntryShape, item);
    if (e.success && !seen.has(e.output.path)) {
      seen.add(e.output.path);
      out.projects.push(e.output);
    } else out.invalid.push(item);
  }
  return out;
}

/** The registry, or an empty one when there is no file yet. Never takes the lock: the file is replaced atomically. */
export function readRegistry(file = projectsFile()): Registry {
  const text = readTextQuiet(file);
  if (text === undefined) return { projects: [], invalid: [] };
  return parseRegistry(text, file);
}

interface RecordResult {
  /** False when a recent record made the write unnecessary. */
  written: boolean;
  /** Where an unreadable registry was moved before a new one was started. */
  setAside?: string;
}

/**
 * SessionStart: add the project, or bump its `lastSeen`. Cheap on the common path (one read, no
 * lock, no write when the project was seen in the last few minutes with the same data folder).
 * A registry that cannot be parsed is renamed aside, never overwritten.
 */
export async function recordProject(root: string, dataDir: string, opts: { file?: string; now?: Date; timeoutMs?: number } = {}): Promise<RecordResult> {
  const file = opts.file ?? projectsFile();
  const now = opts.now ?? new Date();
  const path = resolve(root);
  const data = resolve(dataDir);
  const fresh = (r: Registry) => r.projects.find((p) => p.path === path && p.dataDir === data && now.getTime() - Date.parse(p.lastSeen) < REFRESH_MS && Date.parse(p.lastSeen) <= now.getTime());
  try {
    if (fresh(readRegistry(file))) return { written: false };
  } catch {
    // Unreadable: decided under the lock below.
  }
  mkdirSync(join(file, ".."), { recursive: true });
  return withFileLock(
    `${file}.lock`,
    () => {
      const text = readTextQuiet(file);
      let reg: Registry = { projects: [], invalid: [] };
      let setAside: string | undefined;
      if (text !== undefined) {
        try {
          reg = parseRegistry(text, file);
        } catch {
          setAside = `${file}.unreadable-${now.getTime()}`;
          renameSync(file, setAside);
        }
      }
      if (fresh(reg)) return { written: false };
      const at = now.toISOString();
      const entry = reg.projects.find((p) => p.path === path);
      if (entry) {
        entry.lastSeen = at;
        entry.dataDir = data;
      } else reg.projects.push({ path, name: basename(path) || path, dataDir: data, firstSeen: at, lastSeen: at });
      atomicWrite(file, JSON.stringify({ version: FORMAT, projects: [...reg.projects, ...reg.invalid] }, null, 2) + "\n");
      return setAside ? { written: true, setAside } : { written: true };
    },
    { timeoutMs: opts.timeoutMs ?? 2_000, staleMs: 15_000 },
  );
}

export interface ProjectSummary extends ProjectEntry {
  /** Whether the project folder is still there (a gone one is shown as such, never dropped). */
  exists: boolean;
  notes: number;
  /** Local `YYYY-MM-DD HH:MM` of the newest note. */
  lastNote?: string;
  /** The later of the newest note and the last session start (ISO). */
  lastActive: string;
}

/** A registry entry with what its memory folder holds. */
export function summarizeProject(e: ProjectEntry): ProjectSummary {
  const notes = journalNotes(dataFiles(e.dataDir).memoryDir);
  const newest = notes[0];
  const noteAt = newest ? noteDate(newest) : undefined;
  const seen = Date.parse(e.lastSeen);
  const lastActive = noteAt && noteAt.getTime() > seen ? noteAt.toISOString() : e.lastSeen;
  return {
    ...e,
    exists: isDirectory(e.path),
    notes: notes.length,
    ...(newest ? { lastNote: noteStamp(newest) } : {}),
    lastActive,
  };
}
