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
import { InputError } from "../core/errors.ts";
import { atomicWrite, isDirectory, readTextQuiet } from "../core/fsutil.ts";
import { withFileLock } from "../core/lock.ts";
import { dataFiles, userDir } from "../core/project.ts";
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
  return join(userDir(env), "projects.json");
}

function isIsoTime(v: unknown): v is string {
  return typeof v === "string" && v.length <= 40 && !Number.isNaN(Date.parse(v));
}

function isPath(v: unknown): v is string {
  return typeof v === "string" && v.length > 0 && v.length <= PATH_MAX && !v.includes("\0") && resolve(v) === v;
}

/** One entry, checked field by field; undefined when it is not a usable entry. */
function checkEntry(v: unknown): ProjectEntry | undefined {
  if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (!isPath(o.path) || !isIsoTime(o.firstSeen) || !isIsoTime(o.lastSeen)) return undefined;
  const dataDir = o.dataDir === undefined ? join(o.path, ".memsearch") : o.dataDir;
  if (!isPath(dataDir)) return undefined;
  const name = typeof o.name === "string" && o.name.trim() && o.name.length <= 255 ? o.name : basename(o.path) || o.path;
  return { path: o.path, name, dataDir, firstSeen: o.firstSeen, lastSeen: o.lastSeen };
}

/** The registry's text, checked: InputError when it is not a registry at all. */
export function parseRegistry(text: string, file = "projects.json"): Registry {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${file} is not valid JSON (${(e as Error).message}); move it aside and the next session starts a new one`);
  }
  const list = v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>).projects : undefined;
  if (!Array.isArray(list)) throw new InputError(`${file} is not a projects registry (no "projects" list); move it aside and the next session starts a new one`);
  const out: Registry = { projects: [], invalid: [] };
  const seen = new Set<string>();
  for (const item of list) {
    const e = checkEntry(item);
    if (e && !seen.has(e.path)) {
      seen.add(e.path);
      out.projects.push(e);
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
