/**
 * The projects the Memory Hub shows, and what every part of its data (data.ts) shares: each
 * project's context, notes (each daily file parsed again only when it changed) and loaded index,
 * and the transcripts this hub pointed to. Every text that leaves the hub is redacted again
 * (`redact`): notes are redacted when written, but a hand edit or a transcript may still hold a secret.
 */
import type { AgentTranscripts } from "../agents/types.ts";
import { transcriptReader } from "../agents/registry.ts";
import { basename, join } from "node:path";
import { loadContext, type Context } from "../core/context.ts";
import { NotFoundError, oneLine } from "../core/errors.ts";
import { fileStamp, isDirectory, readTextQuiet } from "../core/fsutil.ts";
import { dataFiles } from "../core/project.ts";
import { clipRedacted } from "../core/redact.ts";
import { sha256Hex } from "../core/text.ts";
import type { IndexSummary } from "../index/format.ts";
import { projectsFile, readRegistry, type ProjectEntry } from "../memory/projects.ts";
import { dailyFiles, noteDate, noteStamp, notesIn, type JournalNote } from "../memory/journal.ts";
import { noteAgent } from "../core/anchor.ts";
import { indexStats, LoadedIndexes } from "../watch/gateway.ts";
import type { NoteItem, OllamaStatus, ProjectCard } from "./types.ts";

export interface HubOptions {
  /** Every project of the registry, not only the one the hub was started in. */
  allProjects: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** A note: by its chunk (a search hit), or by its daily file and heading line (a timeline entry). */
export type NoteRef = { chunk: string } | { file: string; line: number };

export interface Project {
  id: string;
  name: string;
  root: string;
  dataDir: string;
  current: boolean;
  entry?: ProjectEntry;
  /** Loaded on first use: a project whose config is broken must not stop the others. */
  ctx?: Context;
  problem?: string;
}

/** Display limits: a note or a turn is read in the page, not dumped into it. */
export const SNIPPET_CHARS = 600;
const BULLET_CHARS = 500;
export const NOTE_CHARS = 40_000;
const MAX_CACHED_STORES = 2;
/** Notes of one project sent for one day; the rest are counted. */
export const DAY_NOTES = 500;

export const redact = (text: string, max: number) => clipRedacted(text, max);

export function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

export function projectId(root: string, dataDir: string): string {
  return sha256Hex(`${root}\0${dataDir}`).slice(0, 12);
}

export class HubProjects {
  readonly scope: "project" | "all";
  /** Names what is served: a second `memsearch hub` for the same key reuses the running one. */
  readonly key: string;
  readonly list: Project[];
  readonly env: NodeJS.ProcessEnv;
  private notesCache = new Map<string, { stamp: string; notes: JournalNote[] }>();
  /** Loaded indexes kept between requests: a cold load costs seconds at scale. */
  readonly indexes = new LoadedIndexes(MAX_CACHED_STORES);
  /** Whether Ollama answers, per embedding setting, asked at most every 30 s (overview.ts). */
  readonly ollama = new Map<string, { at: number; status: Promise<OllamaStatus> }>();
  /** Transcripts the hub itself pointed to (recall hits): the only paths a request may name. */
  readonly knownTranscripts = new Set<string>();

  private constructor(scope: "project" | "all", list: Project[], env: NodeJS.ProcessEnv) {
    this.scope = scope;
    this.list = list;
    this.env = env;
    this.key = scope === "all" ? "all" : `p-${sha256Hex(list[0]!.dataDir).slice(0, 16)}`;
  }

  /** The projects in view: the current one, and with allProjects every one in the registry. */
  static open(opts: HubOptions): HubProjects {
    const env = opts.env ?? process.env;
    const cwd = opts.cwd ?? process.cwd();
    const ctx = loadContext({}, cwd, env);
    const current: Project = { id: projectId(ctx.project.root, ctx.project.dataDir), name: basename(ctx.project.root) || ctx.project.root, root: ctx.project.root, dataDir: ctx.project.dataDir, current: true, ctx };
    if (!opts.allProjects) {
      // Its registry entry, for when a session last started here; the hub works without one.
      try {
        current.entry = readRegistry(projectsFile(env)).projects.find((e) => e.path === current.root && e.dataDir === current.dataDir);
      } catch {}
      return new HubProjects("project", [current], env);
    }
    // A registry that cannot be read stops here with its own message: all projects were asked for.
    const reg = readRegistry(projectsFile(env));
    const list: Project[] = [];
    for (const e of reg.projects) {
      const id = projectId(e.path, e.dataDir);
      if (id === current.id) list.push({ ...current, entry: e });
      else list.push({ id, name: e.name, root: e.path, dataDir: e.dataDir, current: false, entry: e });
    }
    if (!list.some((p) => p.current)) list.unshift(current);
    return new HubProjects("all", list, env);
  }

  /** The project the hub was started in. */
  current(): Project {
    return this.list.find((p) => p.current)!;
  }

  project(id: string): Project {
    const p = this.list.find((x) => x.id === id);
    if (!p) throw new NotFoundError(`no project ${id} in this hub`);
    return p;
  }

  context(p: Project): Context | undefined {
    if (p.ctx || p.problem) return p.ctx;
    try {
      p.ctx = loadContext({}, p.root, { ...this.env, MEMSEARCH_DIR: p.dataDir });
    } catch (e) {
      p.problem = oneLine(e);
    }
    return p.ctx;
  }

  memoryDir(p: Project): string {
    return dataFiles(p.dataDir).memoryDir;
  }

  /** A project's notes, newest first; each daily file is parsed again only when it changed. */
  notes(p: Project): JournalNote[] {
    const dir = this.memoryDir(p);
    const out: JournalNote[] = [];
    for (const name of dailyFiles(dir)) {
      const file = join(dir, name);
      const stamp = fileStamp(file);
      if (!stamp) continue;
      let hit = this.notesCache.get(file);
      if (hit?.stamp !== stamp) {
        hit = { stamp, notes: newestFirst(notesIn(readTextQuiet(file) ?? "", name)) };
        this.notesCache.set(file, hit);
      }
      out.push(...hit.notes);
    }
    return out;
  }

  /** What `memsearch stats` reports for a project: an unusable index is rebuilt first, as stats does. */
  async indexSummary(p: Project): Promise<IndexSummary | undefined> {
    const ctx = this.context(p);
    if (!ctx) return undefined;
    return (await indexStats(ctx)).head;
  }

  async card(p: Project, notes: JournalNote[], summary: IndexSummary | undefined): Promise<ProjectCard> {
    const newest = notes[0];
    const noteAt = newest ? noteDate(newest) : undefined;
    const seen = p.entry ? Date.parse(p.entry.lastSeen) : NaN;
    const lastActive = noteAt && !(noteAt.getTime() < seen) ? noteAt.toISOString() : Number.isFinite(seen) ? new Date(seen).toISOString() : null;
    return {
      id: p.id,
      name: p.name,
      path: p.root,
      exists: isDirectory(p.root),
      current: p.current,
      notes: notes.length,
      chunks: summary?.chunks ?? 0,
      lastNote: newest ? noteStamp(newest) : null,
      lastActive,
      problem: p.problem === undefined ? null : redact(p.problem, 500),
    };
  }

  /** Throws unless `path` is a transcript of this project (any project's with `anyProject`), whichever agent's; returns its agent's reader. */
  checkTranscript(path: string, root: string, anyProject = false): AgentTranscripts {
    const reader = transcriptReader(path, this.env).transcripts;
    reader.check(path, root, { env: this.env, anyProject });
    return reader;
  }

  projectTranscript(path: string, root: string): boolean {
    try {
      this.checkTranscript(path, root);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * A day's notes, newest first: by their time where both have one (`memsearch import` appends a
 * day's older turns after its newer ones), else by their place in the file.
 */
function newestFirst(notes: JournalNote[]): JournalNote[] {
  return notes
    .map((n, i) => ({ n, i, t: n.time ? n.time.padStart(5, "0") : undefined }))
    .sort((a, b) => (a.t !== undefined && b.t !== undefined && a.t !== b.t ? b.t.localeCompare(a.t) : b.i - a.i))
    .map((x) => x.n);
}

export function noteItem(project: string, n: JournalNote): NoteItem {
  return {
    project,
    file: n.file,
    day: n.day,
    time: n.time,
    line: n.line,
    heading: redact(n.heading, 200),
    bullets: n.bullets.map((b) => redact(b, BULLET_CHARS)),
    session: n.anchor?.session ?? null,
    agent: noteAgent(n.anchor),
  };
}
