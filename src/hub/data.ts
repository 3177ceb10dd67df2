/**
 * Everything the Memory Hub reads, in one place: the projects in view, their notes (the markdown),
 * their indexes (stats, search, expand), the conversations (recall, transcript). Only existing
 * core functions are called here, the way the CLI calls them, so the page shows what the commands
 * print. Every text that leaves here is redacted again: notes are redacted when written, but a
 * hand edit or a transcript may still hold a secret.
 */
import { projectTranscriptsOffThread, transcriptAgent, transcriptSources } from "../agents/registry.ts";
import type { AgentAdapter } from "../agents/types.ts";
import { closeSync, existsSync, fstatSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { DEFAULT_AGENT, noteAgent } from "../core/anchor.ts";
import { loadContext, type Context } from "../core/context.ts";
import { embedderFor } from "../index/embedder.ts";
import { resolveOllamaHost } from "../core/ollama-client.ts";
import { MemsearchError, NotFoundError, oneLine } from "../core/errors.ts";
import { chunkAnchor, expandChunk, type Expansion, type SectionRef } from "../index/expand.ts";
import type { IndexSummary } from "../index/format.ts";
import { indexStats, LoadedIndexes, readChunk, refreshIndex, searchIndex } from "../watch/gateway.ts";
import { fileStamp, isDirectory, readTextQuiet } from "../core/fsutil.ts";
import { projectsFile, readRegistry, type ProjectEntry } from "../memory/projects.ts";
import { recall } from "../recall/recall.ts";
import { transcriptHealLine } from "../conversations/db.ts";
import type { SearchResponse } from "../index/search.ts";
import type { StoredChunk } from "../index/types.ts";
import { dataFiles, userFiles } from "../core/project.ts";
import { dailyFiles, isDailyFile, localDay, noteDate, noteStamp, notesIn, sectionId, sectionText, type JournalNote } from "../memory/journal.ts";
import { clipRedacted, sanitize } from "../core/redact.ts";
import { checkProjectTranscript, claudeProjectsDir, findProjectTranscripts, openRegularFile } from "../transcript/claude-files.ts";
import { curatedFromRepository, findCuratedFiles } from "../transcript/claude-memory.ts";
import { accountTurns, turnsLine } from "../memory/accounting.ts";
import { forgetTurn } from "../memory/forget.ts";
import { readInjections, type InjectionRecord } from "../memory/injections.ts";
import { readModelCalls } from "../memory/ledger.ts";
import { costReport, dollars, formatUsd, type CostRow } from "../memory/prices.ts";
import { findTurn, listTurns, readTurnRange } from "../transcript/reader.ts";
import type { Turn, TurnItem } from "../transcript/types.ts";
import { clip, sha256Hex, stripControls } from "../core/text.ts";
import type { CostRowView, CostsPage, CuratedCard, CuratedView, DayPage, ForgetDone, NoteItem, NoteView, OllamaStatus, Overview, ProjectCard, PromptReceived, SearchHit, SearchPage, SessionsPage, TimelinePage, TurnCounts, TurnsView, TurnView } from "./types.ts";

export interface HubOptions {
  /** Every project of the registry, not only the one the hub was started in. */
  allProjects: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** A note: by its chunk (a search hit), or by its daily file and heading line (a timeline entry). */
export type NoteRef = { chunk: string } | { file: string; line: number };

interface Project {
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
const SNIPPET_CHARS = 600;
const BULLET_CHARS = 500;
const NOTE_CHARS = 40_000;
const TURN_TEXT_CHARS = 8_000;
const TOOL_OUTPUT_CHARS = 1_500;
const OLLAMA_CACHE_MS = 30_000;
const MAX_CACHED_STORES = 2;
/** Notes of one project sent for one day; the rest are counted. */
const DAY_NOTES = 500;
/** Sessions of the injection log sent at once, newest first; the rest are counted. */
const SESSIONS_SHOWN = 30;
const FIRST_WORDS_CHARS = 120;

const redact = (text: string, max: number) => clipRedacted(text, max);

export function projectId(root: string, dataDir: string): string {
  return sha256Hex(`${root}\0${dataDir}`).slice(0, 12);
}

export class HubData {
  readonly scope: "project" | "all";
  /** Names what is served: a second `memsearch hub` for the same key reuses the running one. */
  readonly key: string;
  private readonly list: Project[];
  private readonly env: NodeJS.ProcessEnv;
  private notesCache = new Map<string, { stamp: string; notes: JournalNote[] }>();
  /** Loaded indexes kept between requests: a cold load costs seconds at scale. */
  private indexes = new LoadedIndexes(MAX_CACHED_STORES);
  private ollama = new Map<string, { at: number; status: Promise<OllamaStatus> }>();
  /** Transcripts the hub itself pointed to (recall hits): the only paths a request may name. */
  private knownTranscripts = new Set<string>();

  private constructor(scope: "project" | "all", list: Project[], env: NodeJS.ProcessEnv) {
    this.scope = scope;
    this.list = list;
    this.env = env;
    this.key = scope === "all" ? "all" : `p-${sha256Hex(list[0]!.dataDir).slice(0, 16)}`;
  }

  /** The projects in view: the current one, and with allProjects every one in the registry. */
  static open(opts: HubOptions): HubData {
    const env = opts.env ?? process.env;
    const cwd = opts.cwd ?? process.cwd();
    const ctx = loadContext({}, cwd, env);
    const current: Project = { id: projectId(ctx.project.root, ctx.project.dataDir), name: basename(ctx.project.root) || ctx.project.root, root: ctx.project.root, dataDir: ctx.project.dataDir, current: true, ctx };
    if (!opts.allProjects) {
      // Its registry entry, for when a session last started here; the hub works without one.
      try {
        current.entry = readRegistry(projectsFile(env)).projects.find((e) => e.path === current.root && e.dataDir === current.dataDir);
      } catch {}
      return new HubData("project", [current], env);
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
    return new HubData("all", list, env);
  }

  // -------------------------------------------------------------------------------------------
  // Projects and their notes

  private project(id: string): Project {
    const p = this.list.find((x) => x.id === id);
    if (!p) throw new NotFoundError(`no project ${id} in this hub`);
    return p;
  }

  private context(p: Project): Context | undefined {
    if (p.ctx || p.problem) return p.ctx;
    try {
      p.ctx = loadContext({}, p.root, { ...this.env, MEMSEARCH_DIR: p.dataDir });
    } catch (e) {
      p.problem = oneLine(e);
    }
    return p.ctx;
  }

  private memoryDir(p: Project): string {
    return dataFiles(p.dataDir).memoryDir;
  }

  /** A project's notes, newest first; each daily file is parsed again only when it changed. */
  private notes(p: Project): JournalNote[] {
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
  private async indexSummary(p: Project): Promise<IndexSummary | undefined> {
    const ctx = this.context(p);
    if (!ctx) return undefined;
    return (await indexStats(ctx)).head;
  }

  private async card(p: Project, notes: JournalNote[], summary: IndexSummary | undefined): Promise<ProjectCard> {
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

  async overview(now = new Date()): Promise<Overview> {
    const days: Record<string, number> = {};
    const totals = { notes: 0, chunks: 0, files: 0, vectors: 0, indexBytes: 0, projects: this.list.length, knownProjects: 0, activeDays: 0, avgPerDay: 0, byAgent: {} as Record<string, number> };
    const cards: ProjectCard[] = [];
    const models = new Map<string, Context>();
    for (const p of this.list) {
      const notes = this.notes(p);
      let summary: IndexSummary | undefined;
      try {
        summary = await this.indexSummary(p);
      } catch (e) {
        p.problem ??= oneLine(e);
      }
      for (const n of notes) {
        days[n.day] = (days[n.day] ?? 0) + 1;
        const who = noteAgent(n.anchor);
        totals.byAgent[who] = (totals.byAgent[who] ?? 0) + 1;
      }
      totals.notes += notes.length;
      totals.chunks += summary?.chunks ?? 0;
      totals.files += summary?.files ?? 0;
      totals.vectors += summary?.vectors ?? 0;
      totals.indexBytes += summary?.bytes ?? 0;
      cards.push(await this.card(p, notes, summary));
      const ctx = this.context(p);
      if (ctx) {
        const model = summary?.model ?? ctx.config["embedding.model"];
        const k = `${ctx.config["embedding.provider"]}|${ctx.config["embedding.host"]}|${model}`;
        if (!models.has(k)) models.set(k, ctx);
      }
    }
    totals.activeDays = Object.keys(days).length;
    totals.avgPerDay = totals.activeDays ? Math.round((totals.notes / totals.activeDays) * 10) / 10 : 0;
    try {
      totals.knownProjects = readRegistry(projectsFile(this.env)).projects.length;
    } catch {
      totals.knownProjects = 0;
    }
    // Most recently active first; projects without any activity last.
    cards.sort((a, b) => (b.lastActive ?? "").localeCompare(a.lastActive ?? "") || a.name.localeCompare(b.name));
    const embedding = await Promise.all([...models.values()].map((ctx) => this.ollamaStatus(ctx)));
    return { scope: this.scope, version: pkg.version, today: localDay(now), totals, embedding, days, projects: cards, curated: this.curatedCard() };
  }

  /** Whether Ollama answers for a project's model; asked at most every 30 s. */
  private ollamaStatus(ctx: Context): Promise<OllamaStatus> {
    const c = ctx.config;
    const key = `${c["embedding.provider"]}|${c["embedding.host"]}|${c["embedding.model"]}`;
    const hit = this.ollama.get(key);
    if (hit && Date.now() - hit.at < OLLAMA_CACHE_MS) return hit.status;
    const model = redact(c["embedding.model"], 200);
    const status = (async (): Promise<OllamaStatus> => {
      // A setting the embedder refuses (a bad host, say) is this card's problem, not the page's.
      try {
        const embedder = embedderFor(c, "query");
        if (!embedder) return { model, host: null, ok: null, detail: "embeddings off: keyword search only" };
        let host: string | null = null;
        try {
          host = redact(resolveOllamaHost(c["embedding.host"], this.env), 300);
        } catch {}
        const probe = await embedder.probe(1_500);
        return probe.ok
          ? { model, host, ok: true, detail: `answers, ${probe.dim} dimensions` }
          : { model, host, ok: false, detail: redact(`${probe.reason.message}; keyword search only`, 500) };
      } catch (e) {
        return { model, host: null, ok: false, detail: redact(`${oneLine(e)}; keyword search only`, 500) };
      }
    })();
    this.ollama.set(key, { at: Date.now(), status });
    return status;
  }

  /** A project's notes, newest first; with `agent`, only those of turns with that agent. */
  async timeline(id: string, offset: number, limit: number, agent?: string): Promise<TimelinePage> {
    const p = this.project(id);
    const notes = agent === undefined ? this.notes(p) : this.notes(p).filter((n) => noteAgent(n.anchor) === agent);
    let summary: IndexSummary | undefined;
    try {
      summary = await this.indexSummary(p);
    } catch {}
    return {
      project: await this.card(p, notes, summary),
      total: notes.length,
      offset,
      notes: notes.slice(offset, offset + limit).map((n) => noteItem(p.id, n)),
    };
  }

  /** A day's notes in every project in view, newest first within each project. */
  day(date: string): DayPage {
    const groups: DayPage["groups"] = [];
    let total = 0;
    let previous: string | null = null;
    let next: string | null = null;
    for (const p of this.list) {
      const notes = this.notes(p);
      const mine = notes.filter((n) => n.day === date);
      for (const n of notes) {
        if (n.day < date && (previous === null || n.day > previous)) previous = n.day;
        if (n.day > date && (next === null || n.day < next)) next = n.day;
      }
      if (!mine.length) continue;
      total += mine.length;
      // Capped per project: one busy project must not hide the others of the day.
      groups.push({ project: p.id, projectName: p.name, total: mine.length, notes: mine.slice(0, DAY_NOTES).map((n) => noteItem(p.id, n)) });
    }
    return { scope: this.scope, date, total, groups, previous, next };
  }

  /** Every turn of each project's sessions accounted for, as `memsearch doctor` and `stats` count them. */
  async turns(): Promise<TurnsView> {
    const view: TurnsView = { projects: [], missingDays: {} };
    for (const p of this.list) {
      const base = { project: p.id, projectName: p.name };
      let a;
      try {
        a = await accountTurns({ root: p.root, memoryDir: this.memoryDir(p), dataDir: p.dataDir, projectsDir: claudeProjectsDir(this.env), cacheFile: userFiles(this.env).turnsCache, others: await projectTranscriptsOffThread(p.root, this.env) });
      } catch (e) {
        view.projects.push({ ...base, turns: 0, noted: 0, queued: 0, running: 0, missing: 0, notTurns: {}, toCapture: 0, since: null, line: "", sessions: [], missingTurns: [], problem: redact(oneLine(e), 500) });
        continue;
      }
      const counts = (c: TurnCounts) => ({ turns: c.turns, noted: c.noted, queued: c.queued, running: c.running, missing: c.missing, notTurns: { ...c.notTurns } });
      view.projects.push({
        ...base,
        ...counts(a),
        toCapture: a.toCapture,
        since: a.since ?? null,
        line: a.sessions.length ? redact(turnsLine(a), 1_000) : "",
        sessions: a.sessions.map((x) => ({ agent: x.agent, sessionId: redact(x.sessionId, 200), first: x.first ?? null, last: x.last ?? null, ...counts(x) })),
        missingTurns: a.missingTurns.map((m) => ({ agent: m.agent, sessionId: redact(m.sessionId, 200), turn: redact(m.turn, 200), at: m.at, prompt: redact(m.prompt, 200) })),
        problem: null,
      });
      for (const [day, d] of Object.entries(a.days)) if (d.missing) view.missingDays[day] = (view.missingDays[day] ?? 0) + d.missing;
    }
    return view;
  }

  // -------------------------------------------------------------------------------------------
  // Search, expand, transcript

  /** The CLI's search, through the index gateway (the watch process, else this hub's loaded indexes). */
  private async searchProject(p: Project, query: string, topK: number): Promise<SearchResponse | undefined> {
    const ctx = this.context(p);
    if (!ctx || !existsSync(ctx.project.dataDir)) return undefined;
    const found = await searchIndex(ctx, { query, topK }, { cache: this.indexes });
    return found.kind === "results" ? found.response : undefined;
  }

  /** Notes of every project in view, one ranking (the fused scores are comparable across indexes). */
  private async searchAll(query: string, topK: number): Promise<{ res: SearchResponse; owner: Map<string, Project> }> {
    const owner = new Map<string, Project>();
    const results: SearchResponse["results"] = [];
    let hybrid = false;
    const warnings = new Set<string>();
    for (const p of this.list) {
      let r: SearchResponse | undefined;
      try {
        r = await this.searchProject(p, query, topK);
      } catch (e) {
        warnings.add(`${p.name}: ${oneLine(e)}`);
        continue;
      }
      if (!r) continue;
      if (r.mode === "hybrid") hybrid = true;
      if (r.warning) warnings.add(r.warning);
      for (const x of r.results) {
        owner.set(x.chunk.chunkHash, p);
        results.push(x);
      }
    }
    results.sort((a, b) => b.score - a.score);
    return { res: { results: results.slice(0, topK), mode: hybrid ? "hybrid" : "bm25", warning: [...warnings].join("; ") || undefined }, owner };
  }

  async search(query: string, mode: "notes" | "recall", limit: number): Promise<SearchPage> {
    if (mode === "notes") {
      const { res, owner } = await this.searchAll(query, limit);
      return {
        query,
        mode,
        scope: this.scope,
        ranking: res.results.length ? res.mode : null,
        warnings: res.warning ? [redact(res.warning, 500)] : [],
        hits: res.results.map((r) => {
          const p = owner.get(r.chunk.chunkHash)!;
          return { project: p.id, projectName: p.name, score: round(r.score), date: r.kind === "curated" ? null : dateOfChunk(r.chunk), from: [r.kind === "curated" ? "curated" : "note"], note: noteHit(r.chunk), transcript: null, agent: r.kind === "curated" ? DEFAULT_AGENT : noteAgent(chunkAnchor(r.chunk)) };
        }),
      };
    }
    const current = this.list.find((p) => p.current)!;
    let owner = new Map<string, Project>();
    const res = await recall(
      { query, limit, project: current.root, allProjects: this.scope === "all", source: "all" },
      {
        env: this.env,
        // OpenCode's database read on a thread of its own: the hub answers every other request meanwhile.
        others: transcriptSources(this.env, { offThread: true }),
        searchNotes: async (q, topK) => {
          const found = await this.searchAll(q, topK);
          owner = found.owner;
          return found.res;
        },
      },
    );
    const hits: SearchHit[] = res.results.map((r) => {
      const p = r.note ? owner.get(r.note.chunkHash) : undefined;
      const c = r.sessionContent;
      const t = r.transcript ? { path: r.transcript.path, turn: r.transcript.turnUuid } : (r.anchorTranscript ?? (c?.turnUuid ? { path: c.path, turn: c.turnUuid } : undefined));
      if (t) this.knownTranscripts.add(t.path);
      return {
        project: p?.id ?? null,
        projectName: p?.name ?? null,
        // Fused ranks are small numbers: six decimals, as `recall --json-output` gives them.
        score: Math.round(r.score * 1e6) / 1e6,
        date: r.date ?? null,
        from: r.from,
        note: r.note ? { chunk: r.note.chunkHash, source: r.note.source, line: r.note.startLine, heading: redact(r.note.heading, 200), snippet: redact(r.note.snippet, SNIPPET_CHARS) } : null,
        transcript: t ? { path: t.path, turn: t.turn, role: r.transcript?.role ?? "user", snippet: redact(r.transcript?.snippet ?? c?.snippet ?? "", SNIPPET_CHARS), matched: r.transcript !== undefined } : null,
        agent: r.agent,
      };
    });
    const healed = res.transcripts.healed ? transcriptHealLine(res.transcripts.healed) : undefined;
    const warnings = [res.notes.warning, healed, res.transcripts.unavailable, ...(res.transcripts.update?.errors ?? []).slice(0, 3).map((e) => `${e.path}: ${e.message}`)].filter((w): w is string => !!w).map((w) => redact(w, 500));
    return { query, mode, scope: this.scope, ranking: res.notes.mode ?? null, warnings, hits };
  }

  /**
   * Claude Code's curated files of the project the hub was started in, found the way the watch
   * process and `memsearch index` find them (read, never written). Null when there is nothing.
   */
  curatedCard(): CuratedCard | null {
    const p = this.list.find((x) => x.current)!;
    const found = findCuratedFiles(p.root, { env: this.env });
    const m = found.memory;
    const exists = isDirectory(m.dir);
    if (!found.files.length && !exists) return null;
    return {
      project: p.id,
      memoryFolder: { dir: m.dir, from: m.from, exists, enabled: m.enabled },
      files: found.files.map((f, index) => ({ index, path: f.path, kind: f.kind, fromRepository: curatedFromRepository(f.path), bytes: sizeOf(f.path) })),
      ignored: m.ignored.map((i) => redact(`${i.file}: autoMemoryDirectory ${JSON.stringify(i.value)} ignored: ${i.why}`, 500)),
    };
  }

  /** One curated file of the list above, by its place in it: a request never names a path to read. */
  curatedFile(id: string, index: number): CuratedView {
    const p = this.project(id);
    if (!p.current) throw new NotFoundError("curated files are shown for the project the hub was started in");
    const f = findCuratedFiles(p.root, { env: this.env }).files[index];
    if (!f) throw new NotFoundError(`no curated file ${index} in ${p.name}`);
    const text = readCurated(f.path);
    if (text === undefined) throw new NotFoundError(`${f.path} could not be read`);
    return { path: f.path, kind: f.kind, fromRepository: curatedFromRepository(f.path), content: redact(text, NOTE_CHARS) };
  }

  /** A chunk of a project, as `memsearch expand` finds it. */
  private async chunk(p: Project, hash: string): Promise<StoredChunk> {
    const ctx = this.context(p);
    if (!ctx) throw new MemsearchError(redact(`project ${p.name}: ${p.problem}`, 500));
    // Reading would build an index, and so recreate the data folder of a project deleted meanwhile.
    if (!existsSync(ctx.project.dataDir)) throw new NotFoundError(`no memory left for ${p.name}: its folder is gone`);
    return (await readChunk(ctx, hash, { cache: this.indexes })).chunk;
  }

  /**
   * A note's whole section (`memsearch expand`): by chunk hash (a search hit), or by daily file and
   * heading line (a timeline entry; the section is found the way expand finds a chunk's own).
   */
  private async section(p: Project, ref: NoteRef): Promise<Expansion<SectionRef>> {
    if ("chunk" in ref) return expandChunk(await this.chunk(p, ref.chunk));
    const found = this.notes(p).find((n) => n.file === ref.file && n.line === ref.line);
    if (!found) throw new NotFoundError(`no note at ${ref.file}:${ref.line} in ${p.name}`);
    return expandChunk({ source: join(this.memoryDir(p), ref.file), startLine: found.line, endLine: found.endLine, heading: found.heading, headingLevel: 3 });
  }

  /** A note's section as the page shows it: redacted, with whether its transcript can be opened, and what names it for a forget. */
  async note(id: string, ref: NoteRef): Promise<NoteView> {
    const p = this.project(id);
    const x = await this.section(p, ref);
    const anchor = x.anchor ?? null;
    const name = basename(x.chunk.source);
    const daily = isDailyFile(name) && resolve(dirname(x.chunk.source)) === resolve(this.memoryDir(p)) && /^###\s/.test(x.content);
    return {
      forget: daily ? { file: name, id: this.shownId(p, name, x.startLine, x.content), line: x.startLine } : null,
      project: p.id,
      source: x.chunk.source,
      startLine: x.startLine,
      endLine: x.endLine,
      heading: redact(x.chunk.heading, 200),
      content: redact(x.content, NOTE_CHARS),
      anchor,
      transcriptAvailable: !!anchor && this.projectTranscript(anchor.transcript, p.root),
    };
  }

  /**
   * The id a forget names the note shown by (before redaction): the note's section of the daily
   * file as the journal reads it, when what was shown is that section (or its start: the markdown
   * lexer may end a section at a setext heading the journal does not see); else the text shown,
   * which then names no section, and a forget of it is refused (409) rather than taking another.
   */
  private shownId(p: Project, name: string, line: number, shown: string): string {
    const text = readTextQuiet(join(this.memoryDir(p), name)) ?? "";
    const n = notesIn(text, name).find((x) => x.line === line);
    const section = n && sectionText(text, n);
    return section !== undefined && stripControls(section).startsWith(shown) ? sectionId(section) : sectionId(shown);
  }

  /**
   * `memsearch forget` for a note of the timeline (its daily file and heading line): the section
   * leaves the markdown, its turn goes on the forgotten list, and the index is brought up to date.
   */
  async forget(id: string, ref: { file: string; id: string; line: number }): Promise<ForgetDone> {
    const p = this.project(id);
    const ctx = this.context(p);
    if (!ctx) throw new MemsearchError(redact(`project ${p.name}: ${p.problem}`, 500));
    if (!existsSync(ctx.project.dataDir)) throw new NotFoundError(`no memory left for ${p.name}: its folder is gone`);
    const res = await forgetTurn(p.dataDir, ref, { root: p.root, env: this.env });
    if (res.notes.length) await refreshIndex(ctx);
    return { project: p.id, turn: res.turn === undefined ? null : redact(res.turn, 300), removed: res.notes.length, alreadyForgotten: res.already, undo: res.undo };
  }

  /** What each prompt received, per session (the injection log). */
  sessions(id: string): Promise<SessionsPage> {
    return sessionsOf(this.project(id), this.env);
  }

  /** What the memory cost, over the projects in view. */
  costs(): CostsPage {
    return costsOf(this.list.map((p) => p.dataDir));
  }

  /** Throws unless `path` is a transcript of this project (any project's with `anyProject`), whichever agent's; returns another agent's reader. */
  private checkTranscript(path: string, root: string, anyProject = false): NonNullable<AgentAdapter["transcripts"]> | undefined {
    const other = transcriptAgent(path, this.env)?.transcripts;
    if (other) other.check(path, root, { env: this.env, anyProject });
    else checkProjectTranscript(path, root, { env: this.env, anyProject });
    return other;
  }

  private projectTranscript(path: string, root: string): boolean {
    try {
      this.checkTranscript(path, root);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The original turn of a note (`memsearch transcript PATH --turn ID`), redacted like the
   * command's output. The path comes from the note's own anchor, or from a recall hit this hub
   * returned: a request never names an arbitrary file to read.
   */
  async turn(ref: ({ project: string } & NoteRef) | { path: string; turn: string }): Promise<TurnView> {
    let path: string;
    let id: string;
    let root: string;
    let anyProject = false;
    if ("path" in ref) {
      if (!this.knownTranscripts.has(ref.path)) throw new NotFoundError("unknown transcript: open it from a search result");
      // A hit may carry a note's anchor: the same check as for a note, against the project in view.
      root = this.list.find((x) => x.current)!.root;
      anyProject = this.scope === "all";
      path = ref.path;
      id = ref.turn;
    } else {
      const p = this.project(ref.project);
      const { anchor } = await this.section(p, ref);
      if (!anchor || anchor.transcript === "-") throw new NotFoundError("this note has no transcript anchor");
      root = p.root;
      path = anchor.transcript;
      id = anchor.turn;
    }
    // Notes may come with a cloned repository: an anchor is followed only to this project's transcripts.
    const other = this.checkTranscript(path, root, anyProject);
    // Checked: the page may step from this turn to the ones beside it, by path.
    this.knownTranscripts.add(path);
    if (other) {
      // Another agent's (a Codex rollout, a Gemini CLI chat, an OpenCode session): its adapter reads it, redacted.
      const { sessionId, turns } = await other.read(path, this.env);
      const target = findTurn(turns, id);
      if (target === undefined) throw new NotFoundError(`turn ${id} is not in ${path} (${turns.length} turns)`);
      return turnView(path, sessionId ?? path, turns.map((x) => x.uuid), target, turns[target]!);
    }
    const index = await listTurns(path, { locate: id.replace(/\.+$/, "").toLowerCase() });
    const target = findTurn(index.turns, id) ?? index.located;
    if (target === undefined) throw new NotFoundError(`turn ${id} is not in ${path} (${index.turns.length} turns)`);
    // The reader redacts every text it returns (tool inputs and outputs before it clips them): what
    // is left here is the page's own clipping, and the tool's name, which the reader keeps as written.
    const [t] = await readTurnRange(index, target, target, { maxOutput: TOOL_OUTPUT_CHARS, redact: sanitize });
    if (!t) throw new NotFoundError(`turn ${id} could not be read from ${path}`);
    return turnView(path, index.sessionId, index.turns.map((x) => x.uuid), target, t);
  }
}

/** A turn as the page shows it, clipped (the readers redacted it already; a tool's name is kept as written, so redacted here). */
function turnView(path: string, session: string, uuids: string[], position: number, t: Turn): TurnView {
  return {
    path,
    session,
    turnCount: uuids.length,
    position,
    previous: uuids[position - 1] ?? null,
    next: uuids[position + 1] ?? null,
    uuid: t.uuid,
    timestamp: t.timestamp ?? null,
    user: clip(t.userText, TURN_TEXT_CHARS),
    items: t.items.map(turnItemView),
  };
}

/** One element of a turn as the page shows it, clipped (the readers redacted it already). */
function turnItemView(it: TurnItem): TurnView["items"][number] {
  if (it.kind === "assistant") return { kind: "assistant", text: clip(it.text, TURN_TEXT_CHARS) };
  if (it.kind === "user") return { kind: "user", text: clip(it.text, TURN_TEXT_CHARS) };
  if (it.kind === "compaction") return { kind: "compaction" };
  const c = it.call;
  return { kind: "tool", tool: { name: redact(c.name, 200), input: clip(c.input, 500), output: c.output === undefined ? null : clip(c.output, TOOL_OUTPUT_CHARS), isError: c.isError === true } };
}

// ---------------------------------------------------------------------------------------------
// What each prompt received, forget, and what the memory cost (HubData's methods below delegate here)

/** The prompts of the newest sessions of a project's injection log, each with its first words from the transcript. */
export async function sessionsOf(p: { id: string; name: string; root: string; dataDir: string }, env: NodeJS.ProcessEnv): Promise<SessionsPage> {
  const bySession = new Map<string, InjectionRecord[]>();
  // SessionStart's records say what its context gave; the page lists prompts.
  for (const r of readInjections(p.dataDir).filter((x) => !x.event)) {
    const key = r.session ?? "";
    if (!bySession.has(key)) bySession.set(key, []);
    bySession.get(key)!.push(r);
  }
  const all = [...bySession.entries()].sort((a, b) => b[1].at(-1)!.at.localeCompare(a[1].at(-1)!.at));
  const shown = all.slice(0, SESSIONS_SHOWN);
  const words = await promptWords(p.root, new Set(shown.map(([s]) => s)), env);
  return {
    project: p.id,
    projectName: p.name,
    total: all.length,
    sessions: shown.map(([session, recs]) => ({
      session: redact(session || "(no session id)", 300),
      first: recs[0]!.at,
      last: recs.at(-1)!.at,
      injectedChars: recs.reduce((n, r) => n + (r.decision === "injected" ? r.chars : 0), 0),
      prompts: recs.map((r) => promptReceived(r, r.prompt ? words.get(`${session} ${r.prompt}`) : undefined)),
    })),
  };
}

function promptReceived(r: InjectionRecord, firstWords: string | undefined): PromptReceived {
  const injected = r.considered.filter((c) => c.outcome === "injected");
  const best = r.considered.length ? Math.max(...r.considered.map((c) => c.score)) : null;
  let verdict: string;
  if (r.decision === "injected") verdict = `injected ${injected.length || ""} ${injected.length === 1 ? "memory" : "memories"}`.replace("  ", " ");
  else if (r.decision === "skipped" && /not typed by a person/.test(r.reason)) verdict = "skipped: not typed by a person";
  else if (r.decision === "nothing" && r.reason === "nothing through the gate") verdict = r.considered.length ? "nothing: best candidate below the gate" : "nothing: no candidate found";
  else verdict = `${r.decision}: ${r.reason}`;
  return {
    at: r.at,
    promptId: r.prompt ?? null,
    source: r.source ?? null,
    firstWords: firstWords ?? null,
    decision: r.decision,
    verdict: redact(verdict, 300),
    reason: redact(r.reason, 500),
    mode: r.mode,
    chars: r.chars,
    injected: injected.map((c) => ({ kind: c.kind, id: c.id, score: round(c.score), date: c.date ?? null, fromRepository: c.fromRepository === true, instructionLike: c.instructionLike === true })),
    bestScore: best === null ? null : round(best),
    considered: r.considered.length,
  };
}

/**
 * `session promptId` → the prompt's first words, from the project's transcripts of those sessions
 * (Claude Code names a transcript after its session). Redacted, then clipped.
 */
async function promptWords(root: string, sessions: Set<string>, env: NodeJS.ProcessEnv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const found = findProjectTranscripts(root, claudeProjectsDir(env));
  for (const path of found.files) {
    const session = basename(path, ".jsonl");
    if (!sessions.has(session)) continue;
    try {
      for (const t of (await listTurns(path)).turns) if (t.promptId) out.set(`${session} ${t.promptId}`, redact(t.userText.replace(/\s+/g, " ").trim(), FIRST_WORDS_CHARS));
    } catch {
      // An unreadable transcript leaves its prompts without words; the log still says what they received.
    }
  }
  return out;
}

function costRow(r: CostRow): CostRowView {
  const six = (x: number) => Math.round(x * 1e6) / 1e6;
  return { period: r.period, calls: r.calls, failed: r.failed, inTokens: r.inTokens, outTokens: r.outTokens, charsOnly: r.charsOnly, usd: six(r.usd), unpriced: r.unpriced, reportedUsd: six(r.reportedUsd), reportedCalls: r.reportedCalls, shown: formatUsd(r), reportedShown: r.reportedCalls ? dollars(r.reportedUsd) : "" };
}

/** The ledgers of the projects in view, added up per month and day. */
export function costsOf(dataDirs: string[]): CostsPage {
  const c = costReport(dataDirs.flatMap((d) => readModelCalls(d)));
  return { pricesAsOf: c.pricesAsOf, total: costRow(c.total), months: c.months.map(costRow), days: c.days.slice(0, 31).map(costRow) };
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

function noteItem(project: string, n: JournalNote): NoteItem {
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

function noteHit(c: StoredChunk): NonNullable<SearchHit["note"]> {
  // The anchor comment is for drilling down and the heading is shown apart: neither is for reading here.
  const text = c.content
    .replace(/<!--[\s\S]*?-->\s*/g, "")
    .replace(/^#{1,6}\s+.*(\n|$)/, "")
    .trim();
  return { chunk: c.chunkHash, source: c.source, line: c.startLine, heading: redact(c.heading, 200), snippet: redact(text, SNIPPET_CHARS) };
}

/** A chunk of a daily file is dated by the file, and by its heading's time when it has one. */
function dateOfChunk(c: StoredChunk): string | null {
  const name = basename(c.source);
  if (!isDailyFile(name)) return null;
  const time = /^\d{1,2}:\d{2}\b/.exec(c.heading)?.[0];
  return time ? `${name.slice(0, 10)} ${time}` : name.slice(0, 10);
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}




function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** A curated file's text: a regular file only (opened without waiting), at most a few megabytes read. */
function readCurated(path: string): string | undefined {
  let fd: number;
  try {
    fd = openRegularFile(path);
  } catch {
    return undefined;
  }
  try {
    if (fstatSync(fd).size > 4 * 1024 * 1024) return undefined;
    return readFileSync(fd, "utf8");
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
