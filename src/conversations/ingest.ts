/**
 * Keeps the transcript index in step with `~/.claude/projects/` ($CLAUDE_CONFIG_DIR/projects).
 * Transcripts are append-only JSONL, so each file is read from where the last read stopped: the
 * byte after its last complete line. A last line still being written is left for the next read;
 * a file that shrank or was replaced (another inode) is re-read from the start; a file gone from
 * disk (Claude Code deletes transcripts after `cleanupPeriodDays`) keeps its rows, marked archived
 * with the time it disappeared, until `archiveDays` prunes them. Checking an unchanged file costs
 * one stat, and only files that may have changed are checked (hot files, new ones; see HOT_MS).
 * Besides the messages, each session's own record goes into the session table: its plans,
 * compaction summaries, final todo list and first prompt (redacted like every row). Never prints.
 */
import type { Database } from "bun:sqlite";
import { existsSync, lstatSync, readdirSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import * as v from "valibot";
import { parseJson } from "../core/json-file.ts";
import { clip } from "../core/text.ts";
import { clipRedacted, sanitize } from "../core/redact.ts";
import { parseLine, scanLines } from "../transcript/lines.ts";
import { claudeProjectsDir, isSubagentPath, notRegularTranscript, projectOfCwd, slugDirOf } from "../transcript/claude-files.ts";
import { isDamage } from "./db.ts";
import { lineEvent, type LineEvent, type SessionKind, type SessionPart, type ToolResult } from "./extract.ts";
import { TurnSegmenter } from "../transcript/turns.ts";
import { deleteFileRows, INPUTS_MAX, inWrite, isDirRow, isFileRow, isKnownFile, isRecord, KNOWN_COLS, MESSAGE_COLS, messageColumns, metaValue, RESULTS_MAX, rollback, rowWriter, setMeta, TEXT_MAX, type FileRow, type KnownFile, type MessageColumns } from "./rows.ts";
import { updateOtherTranscripts } from "./others.ts";
import type { TranscriptSource } from "../transcript/types.ts";

/** Title of a session table row (a plan's first line). */
const TITLE_MAX = 160;
/** Unresolved tool calls remembered per file between reads (results come within a turn). */
const PENDING_MAX = 200;

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** What a file's reader knows between reads (the `state` column, JSON). */
export interface FileState {
  subagent?: boolean;
  /** The turn in progress: the user entry that opened it. */
  turnUuid?: string;
  promptId?: string;
  /** The last assistant message (its lines share message.id) and its row, to append to it. */
  lastMsgKey?: string;
  lastRowId?: number;
  /** tool_use id → row of the assistant message that made the call, for results still to come. */
  pending: Record<string, number>;
  cwd?: string;
  sessionId?: string;
  /** Lines consumed: a turn whose entry has no uuid is named by its line number (`line-N`), as the reader names it. */
  lines?: number;
  /** The session's first prompt is in the session table. */
  firstPrompt?: boolean;
  /** Plan slug of the session (Claude Code's plan file is `<config>/plans/<slug>.md`). */
  slug?: string;
}

/** A field of the state column: what is not of its shape is dropped, never the whole state (the file is a cache). */
const Maybe = <S extends v.GenericSchema>(schema: S) => v.fallback(v.optional(schema), undefined);
const Count = v.pipe(v.number(), v.integer());

const StateShape = v.object({
  subagent: Maybe(v.boolean()),
  turnUuid: Maybe(v.string()),
  promptId: Maybe(v.string()),
  lastMsgKey: Maybe(v.string()),
  lastRowId: Maybe(Count),
  pending: v.fallback(
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.transform((r) => Object.fromEntries(Object.entries(r).filter(([, n]) => Number.isInteger(n))) as Record<string, number>),
    ),
    {},
  ),
  cwd: Maybe(v.string()),
  sessionId: Maybe(v.string()),
  lines: Maybe(v.pipe(Count, v.minValue(0))),
  firstPrompt: Maybe(v.literal(true)),
  slug: Maybe(v.string()),
});

/** The state column as stored, checked against its shape. */
export function parseState(json: string): FileState {
  const r = parseJson(json, StateShape);
  return "value" in r ? r.value : { pending: {} };
}

/** A message row being built or updated by one read. */
interface Row extends MessageColumns {
  id?: number;
  dirty: boolean;
  msgKey: string;
}

export interface UpdateProgress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
}

export interface UpdateOptions {
  /** Default: claudeProjectsDir(). */
  projectsDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Called after each file read, at most every `progressEveryMs`. */
  onProgress?: (p: UpdateProgress) => void;
  progressEveryMs?: number;
  /** Stat every file and list every folder, whenever the last full scan was (see HOT_MS). */
  full?: boolean;
  /**
   * Archived conversations (transcripts deleted from disk) whose last activity is older than this
   * many days are dropped; 0 or undefined keeps them all (`conversations.archive_days`).
   */
  archiveDays?: number;
  /** Other agents' transcripts, each source given by its adapter (others.ts). */
  others?: readonly TranscriptSource[];
}

export interface UpdateReport {
  /** Transcript files stat'ed: all of them in a full scan, the hot and new ones otherwise. */
  files: number;
  /** A full scan (every file stat'ed, every folder listed) rather than the hot files and changed folders. */
  full: boolean;
  /** Files read (new, grown, re-read). */
  read: number;
  /** Files re-read from the start (shrunk or replaced). */
  reread: number;
  /** Files gone from disk whose rows were kept as archived by this update. */
  archived: number;
  /** Archived files dropped for their age (`archiveDays`). */
  pruned: number;
  /** Message rows added or updated. */
  messages: number;
  bytes: number;
  ms: number;
  /** The index held nothing before this update. */
  firstBuild: boolean;
  errors: { path: string; message: string }[];
}

/**
 * A transcript is appended to only while its session runs, so most files never change again.
 * A file whose mtime, when last seen, was within HOT_MS of now is "hot" and stat'ed by every
 * update; a new file is found by listing only the folders whose own mtime changed; everything
 * else waits for the full scan (every file stat'ed, every folder listed, rows of deleted files
 * removed), run every FULL_SCAN_MS, on the first build and on `recall --reindex`. So:
 *  - an append to a hot file, and a new transcript anywhere (a new session changes its project
 *    folder's mtime, a new subagent its `subagents` folder's), are seen by the very next update;
 *  - a deleted file's rows go at the next update when its folder changed (it does: the entry is
 *    gone), else at the next full scan;
 *  - a session resumed after more than HOT_MS of quiet (a cold file appended to, or a new subagent
 *    below its cold session folder) is seen at the latest by the next full scan.
 * 8 hours: a session left open over a working day stays hot; stat'ing the few hundred files a heavy
 * user touches in that time costs about a millisecond, and a miss is bounded by the full scan anyway.
 */
export const HOT_MS = 8 * 3600_000;
/** How old the last full scan may be before an update runs one (the watch updates every 30 s). */
export const FULL_SCAN_MS = 10 * 60_000;
/**
 * A folder whose mtime is this recent may still change within the same mtime tick (coarse clocks):
 * it is listed again by the next update rather than trusted.
 */
const SETTLE_MS = 5_000;

interface DirMark {
  mtime: number;
  settled: boolean;
}


/** Rows whose path starts with `prefix` (which ends in "/"): a range on the path index. */
function underArgs(prefix: string): [string, string] {
  return [prefix, prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)];
}

function withSlash(dir: string): string {
  return dir.endsWith("/") ? dir : dir + "/";
}

function lastFullScanKey(projectsDir: string): string {
  return `last_full_scan:${projectsDir}`;
}

/** When the last full scan of this projects folder started (ms since epoch), if any. */
export function lastFullScan(db: Database, projectsDir: string): number | undefined {
  const value = metaValue(db, lastFullScanKey(projectsDir));
  return typeof value === "number" ? value : undefined;
}

/** Set (or with undefined, forget) the time of the last full scan: tests, and nothing else. */
export function setLastFullScan(db: Database, projectsDir: string, ms: number | undefined): void {
  if (ms === undefined) db.query("DELETE FROM meta WHERE key = ?").run(lastFullScanKey(projectsDir));
  else setMeta(db, lastFullScanKey(projectsDir), ms);
}

/**
 * Walks the projects folder: `<projects>` (depth 0), `<slug>` (1), `<slug>/<session>` (2),
 * `<slug>/<session>/subagents` (3). Transcripts are the `.jsonl` files at depths 1 and 3.
 */
class Walker {
  /** Folders stat'ed and listed by this update, with the mark to store. */
  readonly listed = new Map<string, DirMark>();
  /** Folders visited (stat'ed) by this update. */
  private seen = new Set<string>();
  /** `.jsonl` paths found in the listed folders. */
  readonly files: string[] = [];
  /** Stored folders whose listing no longer holds them (with everything below). */
  readonly goneDirs: string[] = [];

  constructor(
    private readonly now: number,
    /** Folders as stored: a folder whose mtime is unchanged is not listed (empty map: list everything). */
    private readonly stored: Map<string, DirMark>,
  ) {}

  /** Stat `dir`; list it when it is new or changed, and go down into the folders it has that are new. */
  visit(dir: string, depth: number): void {
    if (this.seen.has(dir)) return;
    this.seen.add(dir);
    let st: Stats;
    try {
      st = statSync(dir);
    } catch {
      return; // gone: its parent changed and says so, or the full scan does
    }
    if (!st.isDirectory()) return;
    const old = this.stored.get(dir);
    if (old && old.settled && old.mtime === st.mtimeMs) return;
    // Stat before listing: an entry made after the listing changes the mtime again.
    this.listed.set(dir, { mtime: st.mtimeMs, settled: this.now - st.mtimeMs > SETTLE_MS });
    if (depth === 2) {
      this.visit(join(dir, "subagents"), 3);
      return;
    }
    const names = safeReaddir(dir);
    const here = new Set<string>();
    for (const name of names) {
      const p = join(dir, name);
      here.add(p);
      if (depth === 0) this.visit(p, 1);
      else if (depth === 1) {
        if (name.endsWith(".jsonl")) this.files.push(p);
        else if (!this.stored.has(p)) this.visit(p, 2); // a new session folder (a known one is checked on its own)
      } else if (name.endsWith(".jsonl")) this.files.push(p);
    }
    if (old && depth < 3) {
      // Stored folders directly below this one that are gone.
      const prefix = withSlash(dir);
      for (const d of this.stored.keys()) if (d.startsWith(prefix) && !d.includes("/", prefix.length) && !here.has(d)) this.goneDirs.push(d);
    }
  }
}

/** Bring the index up to date with the transcripts on disk. */
export async function updateTranscriptIndex(db: Database, opts: UpdateOptions = {}): Promise<UpdateReport> {
  const t0 = performance.now();
  const now = Date.now();
  const projectsDir = opts.projectsDir ?? claudeProjectsDir(opts.env);
  const firstBuild = db.query("SELECT 1 AS x FROM files LIMIT 1").get() === null;
  const last = lastFullScan(db, projectsDir);
  const full = opts.full === true || firstBuild || last === undefined || now - last >= FULL_SCAN_MS || last > now + 60_000;

  const scan = full ? scanAll(db, projectsDir, now) : scanChanged(db, projectsDir, now);
  const report: UpdateReport = { files: scan.check.size, full, read: 0, reread: 0, archived: 0, pruned: 0, messages: 0, bytes: 0, ms: 0, firstBuild, errors: [] };
  await ingestAll(db, changedFiles(scan.check, projectsDir), report, { ...opts, projectsDir });
  archiveGone(db, scan.gone, report, now);
  if (opts.others?.length) await updateOtherTranscripts(db, opts.others, report, now);
  if (opts.archiveDays && opts.archiveDays > 0) report.pruned = pruneArchive(db, now - opts.archiveDays * 86_400_000);
  saveListing(db, scan, report, projectsDir, full, now);
  report.ms = performance.now() - t0;
  return report;
}

/** What one update looks at: the folders it listed, the files to compare with their rows, and the rows of files gone. */
interface Scan {
  walker: Walker;
  /** The listing the last update stored. */
  stored: Map<string, DirMark>;
  /** Files to stat and compare with their row (path → row, or undefined when new). */
  check: Map<string, KnownFile | undefined>;
  /** Rows of files gone from the listings, by id. */
  gone: Map<number, KnownFile>;
}

function storedListing(db: Database, projectsDir: string): Map<string, DirMark> {
  const stored = new Map<string, DirMark>();
  for (const r of db.query("SELECT path, mtime, settled FROM dirs WHERE path = ? OR (path >= ? AND path < ?)").all(projectsDir, ...underArgs(withSlash(projectsDir)))) {
    if (isDirRow(r)) stored.set(r.path, { mtime: r.mtime, settled: r.settled === 1 });
  }
  return stored;
}

function knownUnder(db: Database, dir: string): KnownFile[] {
  return db.query(`SELECT ${KNOWN_COLS} FROM files WHERE path >= ? AND path < ?`).all(...underArgs(withSlash(dir))).filter(isKnownFile);
}

/** Every folder listed, every file compared with its row. */
function scanAll(db: Database, projectsDir: string, now: number): Scan {
  const scan: Scan = { walker: new Walker(now, new Map()), stored: storedListing(db, projectsDir), check: new Map(), gone: new Map() };
  scan.walker.visit(projectsDir, 0);
  const known = new Map(knownUnder(db, projectsDir).map((r) => [r.path, r]));
  for (const p of scan.walker.files) scan.check.set(p, known.get(p));
  for (const [p, row] of known) if (!scan.check.has(p)) scan.gone.set(row.id, row);
  return scan;
}

/** Between full scans: the hot files, and the folders whose listing may have changed. */
function scanChanged(db: Database, projectsDir: string, now: number): Scan {
  const stored = storedListing(db, projectsDir);
  const scan: Scan = { walker: new Walker(now, stored), stored, check: new Map(), gone: new Map() };
  const { walker, check, gone } = scan;
  const prefix = withSlash(projectsDir);
  walker.visit(projectsDir, 0);
  for (const [dir, m] of stored) {
    const depth = dir === projectsDir ? 0 : dir.slice(prefix.length).split("/").length;
    if (depth === 1 || (depth >= 2 && (m.mtime >= now - HOT_MS || !m.settled))) walker.visit(dir, depth);
  }
  for (const r of db.query(`SELECT ${KNOWN_COLS} FROM files WHERE mtime >= ? AND +path >= ? AND +path < ? AND gone_at IS NULL`).all(now - HOT_MS, ...underArgs(prefix))) if (isKnownFile(r)) check.set(r.path, r);
  // The listed folders: their new files, and the rows of files no longer in them.
  const listedFiles = new Set(walker.files);
  for (const dir of walker.listed.keys()) {
    if (dir === projectsDir) continue;
    const p = withSlash(dir);
    for (const r of knownUnder(db, dir)) {
      if (r.path.includes("/", p.length)) continue;
      if (listedFiles.has(r.path)) {
        listedFiles.delete(r.path); // known: checked when hot, else by the full scan
        if (r.gone_at != null) check.set(r.path, r); // archived and back on disk: read now
      }
      else gone.set(r.id, r);
    }
  }
  for (const p of listedFiles) if (!check.has(p)) check.set(p, undefined);
  for (const d of walker.goneDirs) for (const r of knownUnder(db, d)) gone.set(r.id, r);
  return scan;
}

/**
 * The files whose stat differs from their row (or that have none), in path order. Only regular
 * files are ever read: a FIFO, socket or device named `*.jsonl` is left alone, and a symbolic link
 * only counts when it leads to a regular file inside the projects folder.
 */
function changedFiles(check: Map<string, KnownFile | undefined>, projectsDir: string): { path: string; st: Stats }[] {
  const todo: { path: string; st: Stats }[] = [];
  for (const [path, k] of check) {
    let st: Stats;
    try {
      st = lstatSync(path);
      if (st.isSymbolicLink() && notRegularTranscript(path, projectsDir) === undefined) st = statSync(path);
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    // An archived file back on disk is read again whatever its stat says: it is no longer archived.
    if (k && k.gone_at == null && k.dev === st.dev && k.ino === st.ino && k.size === st.size && k.mtime === st.mtimeMs) continue;
    todo.push({ path, st });
  }
  return todo.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function ingestAll(db: Database, todo: { path: string; st: Stats }[], report: UpdateReport, opts: UpdateOptions): Promise<void> {
  const bytesTotal = todo.reduce((n, t) => n + t.st.size, 0);
  const cwdCache = new Map<string, string>();
  const plansDir = join(dirname(resolve(opts.projectsDir ?? claudeProjectsDir(opts.env))), "plans");
  let lastProgress = 0;
  let bytesDone = 0;
  for (let i = 0; i < todo.length; i++) {
    const { path, st } = todo[i]!;
    try {
      const r = await ingestFile(db, path, st, cwdCache, plansDir);
      if (r.read) report.read++;
      if (r.reread) report.reread++;
      report.messages += r.messages;
      report.bytes += r.bytes;
    } catch (e) {
      // A damaged index is not this transcript's fault: the caller heals the index.
      if (isDamage(e)) throw e;
      report.errors.push({ path, message: (e as Error)?.message ?? String(e) });
    }
    bytesDone += st.size;
    const t = performance.now();
    if (opts.onProgress && (t - lastProgress >= (opts.progressEveryMs ?? 200) || i === todo.length - 1)) {
      lastProgress = t;
      opts.onProgress({ filesDone: i + 1, filesTotal: todo.length, bytesDone, bytesTotal });
    }
  }
}

/**
 * Files gone from disk (only those under this projects folder: another CLAUDE_CONFIG_DIR's are not
 * looked at) keep their rows, marked archived with the time they were found gone.
 */
function archiveGone(db: Database, gone: Map<number, KnownFile>, report: UpdateReport, now: number): void {
  const todo = [...gone.values()].filter((row) => row.gone_at == null && !existsSync(row.path));
  if (!todo.length) return;
  inWrite(db, () => {
    const mark = db.query("UPDATE files SET gone_at = ? WHERE id = ? AND gone_at IS NULL");
    for (const row of todo) report.archived += mark.run(now, row.id).changes;
  });
}

/** Drop the archived files whose last activity (their mtime when last read) is before `beforeMs`; returns how many. */
export function pruneArchive(db: Database, beforeMs: number): number {
  const old = db.query("SELECT id FROM files WHERE gone_at IS NOT NULL AND +mtime < ?").all(beforeMs) as { id: unknown }[];
  if (!old.length) return 0;
  return inWrite(db, () => {
    const del = db.query("DELETE FROM files WHERE id = ?");
    for (const r of old) {
      deleteFileRows(db, Number(r.id));
      del.run(Number(r.id));
    }
    return old.length;
  });
}

/**
 * What was listed, for the next update; nothing written when nothing changed. A folder holding a
 * file that failed is listed again next time, so the file is retried (it has no row to be hot by).
 */
function saveListing(db: Database, scan: Scan, report: UpdateReport, projectsDir: string, full: boolean, now: number): void {
  const { walker, stored } = scan;
  for (const e of report.errors) {
    const m = walker.listed.get(dirname(e.path));
    if (m) m.settled = false;
  }
  const dirsGone: string[] = full ? [...stored.keys()].filter((d) => !walker.listed.has(d)) : walker.goneDirs;
  const dirsSet = [...walker.listed].filter(([d, m]) => {
    const o = stored.get(d);
    return !o || o.mtime !== m.mtime || o.settled !== m.settled;
  });
  if (!full && !dirsGone.length && !dirsSet.length) return;
  inWrite(db, () => {
    const del = db.query("DELETE FROM dirs WHERE path = ?");
    const delUnder = db.query("DELETE FROM dirs WHERE path >= ? AND path < ?");
    for (const d of dirsGone) {
      del.run(d);
      if (!full) delUnder.run(...underArgs(withSlash(d)));
    }
    const put = db.query("INSERT INTO dirs (path, mtime, settled) VALUES (?, ?, ?) ON CONFLICT(path) DO UPDATE SET mtime = excluded.mtime, settled = excluded.settled");
    for (const [d, m] of dirsSet) put.run(d, m.mtime, m.settled ? 1 : 0);
    // The scan's start: anything that changed while it ran is looked at again by the next one.
    if (full) setLastFullScan(db, projectsDir, now);
  });
}

/**
 * Read what is new in one file and write its rows, in one write transaction: the file's state
 * is read again inside it, so two processes updating at once never index the same bytes twice.
 */
async function ingestFile(db: Database, path: string, st: Stats, cwdCache: Map<string, string>, plansDir: string): Promise<{ read: boolean; reread: boolean; messages: number; bytes: number }> {
  db.run("BEGIN IMMEDIATE");
  try {
    const cur = db.query("SELECT id, path, dev, ino, size, mtime, consumed, project, state, gone_at FROM files WHERE path = ?").get(path);
    let row = isFileRow(cur) ? cur : undefined;
    let reread = false;
    if (row && (row.dev !== st.dev || row.ino !== st.ino || st.size < row.consumed || row.gone_at != null)) {
      // Replaced or cut: what we indexed may no longer be in it. An archived file back on disk is
      // another file (its inode may have been reused): read from the start.
      deleteFileRows(db, row.id);
      db.query("UPDATE files SET consumed = 0, state = '{}', project = NULL WHERE id = ?").run(row.id);
      row = { ...row, consumed: 0, state: "{}", project: null };
      reread = true;
    }
    if (row && row.gone_at == null && row.dev === st.dev && row.ino === st.ino && row.size === st.size && row.mtime === st.mtimeMs) {
      db.run("COMMIT"); // another process got there first
      return { read: false, reread: false, messages: 0, bytes: 0 };
    }
    if (!row) {
      const ins = db.query("INSERT INTO files (path, dev, ino, size, mtime, consumed, state) VALUES (?, ?, ?, 0, 0, 0, '{}') RETURNING id").get(path, st.dev, st.ino) as { id: number };
      row = { id: ins.id, path, dev: st.dev, ino: st.ino, size: 0, mtime: 0, consumed: 0, project: null, state: "{}", gone_at: null };
    }
    const r = new FileReader(db, row, parseState(row.state), path, cwdCache, plansDir);
    const consumed = await r.read(st.size);
    const written = r.flush();
    db.query("UPDATE files SET dev = ?, ino = ?, size = ?, mtime = ?, consumed = ?, project = ?, session = ?, state = ?, gone_at = NULL WHERE id = ?").run(
      st.dev,
      st.ino,
      st.size,
      st.mtimeMs,
      consumed,
      r.project ?? null,
      r.state.sessionId ?? null,
      JSON.stringify(r.state),
      row.id,
    );
    db.run("COMMIT");
    return { read: true, reread, messages: written, bytes: consumed - row.consumed };
  } catch (e) {
    rollback(db);
    throw e;
  }
}

/** What opened a turn of this read: its row, and where its line starts (to read a waiting command again). */
interface OpenedBy {
  /** Undefined for the turn an earlier read opened. */
  row?: Row;
  offset: number;
  /** Lines before it. */
  lines: number;
}

class FileReader {
  /** Rows of this read (new or changed), in file order. */
  private rows: Row[] = [];
  private byId = new Map<number, Row>();
  private lastRow?: Row;
  /** tool_use id → row, for this read. */
  private pending = new Map<string, Row | number>();
  /**
   * Where turns start and end: the transcript reader's own segmenter. The turn open when the last
   * read stopped was a real one (a slash command still waiting for Claude is read again, below).
   */
  private seg: TurnSegmenter<OpenedBy>;
  /** Session table rows of this read, by key (a later todo list replaces an earlier one). */
  private session = new Map<string, SessionRow>();
  project?: string;

  constructor(
    private db: Database,
    private file: FileRow,
    readonly state: FileState,
    private path: string,
    private cwdCache: Map<string, string>,
    private plansDir: string,
  ) {
    this.project = file.project ?? undefined;
    if (state.subagent === undefined && isSubagentPath(path)) state.subagent = true;
    this.seg = new TurnSegmenter<OpenedBy>({ subagent: state.subagent, open: state.turnUuid ? { turn: { offset: -1, lines: -1 }, command: false, answered: true } : undefined });
    for (const [k, id] of Object.entries(state.pending)) this.pending.set(k, id);
  }

  /** Read from the last stop to `size`; returns the new stop (start of the first line not consumed). */
  async read(size: number): Promise<number> {
    let consumed = this.file.consumed;
    if (size <= consumed) return consumed;
    let lines = this.state.lines ?? 0;
    const res = await scanLines(
      this.path,
      (buf, s, e, offset, lineNo) => {
        let next = offset + (e - s) + 1;
        let counted = lineNo;
        if (offset + (e - s) >= size) {
          // A last line with no newline after it may still be being written: it is read only when
          // it is already one whole JSON object (as the reader reads it), else left for the next read.
          if (!parseLine(buf, s, e)) return false;
          next = size;
          // Its newline, when it comes, starts the next read as an empty line: it is this line's end, not a line of its own.
          counted = lineNo - 1;
        }
        this.line(lineEvent(buf, s, e, lineNo), offset, lineNo);
        consumed = next;
        lines = counted;
      },
      { start: consumed, end: size, linesBefore: lines },
    );
    if (res.binary) return size; // not a transcript: nothing to index, do not look again until it changes
    const open = this.seg.open;
    if (open?.command && !open.answered) {
      // Re-read from the command next time, when we know whether Claude acts on it.
      consumed = open.turn.offset;
      lines = open.turn.lines;
    }
    this.state.lines = lines;
    return consumed;
  }

  private line(ev: LineEvent, offset: number, lineNo: number): void {
    if (ev.kind === "skip") return;
    if (this.seg.leftOut(ev.sidechain)) return; // sidechain lines of a main file: their own files hold them
    this.state.subagent = this.seg.subagent;
    if (ev.sessionId && !this.state.sessionId) this.state.sessionId = ev.sessionId;
    if (ev.cwd && !this.state.cwd) {
      this.state.cwd = ev.cwd;
      this.project = projectOfCwd(ev.cwd, this.cwdCache);
    }
    switch (ev.kind) {
      case "prompt": {
        const row = this.newRow("user", ev.uuid, ev.uuid, ev.ts, ev.uuid, ev.promptId);
        row.text = clip(sanitize(ev.text), TEXT_MAX);
        // A command nobody acted on (a local one) is dropped by the segmenter: its row is never added.
        this.seg.start({ row, offset, lines: lineNo - 1 }, ev.command);
        if (!ev.command) {
          this.openTurn(row);
          if (!this.state.firstPrompt && !this.state.subagent && row.text) {
            this.state.firstPrompt = true;
            this.addSession("first_prompt", "first_prompt", "First prompt", row.text, "", row.turnUuid, ev.ts);
          }
        }
        return;
      }
      case "assistant": {
        const a = this.seg.answer();
        if (!a) return; // before the first prompt: no turn to belong to
        if (a.confirmed && a.turn.row) this.openTurn(a.turn.row);
        if (!this.state.turnUuid) return;
        let row = this.state.lastMsgKey === ev.msgKey ? this.lastAssistantRow() : undefined;
        if (!row) {
          row = this.newRow("assistant", ev.uuid || ev.msgKey, ev.msgKey, ev.ts, this.state.turnUuid, this.state.promptId);
          this.add(row);
          this.state.lastMsgKey = ev.msgKey;
        }
        for (const t of ev.texts) {
          const s = sanitize(t);
          if (row.text.includes(s)) continue; // lines of one message may repeat a block
          row.text = clip(row.text ? `${row.text}\n\n${s}` : s, TEXT_MAX);
          row.dirty = true;
        }
        for (const tool of ev.tools) {
          if (tool.id && this.pending.has(tool.id)) continue;
          row.tools.push(tool.name);
          for (const p of tool.paths) if (!row.paths.includes(p)) row.paths.push(sanitize(p));
          if (tool.input && row.inputs.length < INPUTS_MAX) row.inputs = clip(row.inputs ? `${row.inputs}\n${sanitize(tool.input)}` : sanitize(tool.input), INPUTS_MAX);
          if (tool.id) this.pending.set(tool.id, row);
          row.dirty = true;
        }
        this.results(ev.results);
        if (ev.slug && !this.state.slug && /^[\w-]{1,100}$/.test(ev.slug)) this.state.slug = ev.slug;
        for (const p of ev.session) this.sessionPart(p, ev.ts);
        return;
      }
      case "summary":
        this.addSession("summary", `summary:${ev.uuid}`, "Compaction summary", clip(sanitize(ev.text), TEXT_MAX), "", this.state.turnUuid ?? "", ev.ts);
        return;
      case "results":
        this.results(ev.results);
        return;
      case "other":
        return;
    }
  }

  /** A plan or todo list a tool call carried (subagents' own are left to their session's). */
  private sessionPart(p: SessionPart, ts: string | undefined): void {
    if (this.state.subagent) return;
    const turn = this.state.turnUuid ?? "";
    const text = clip(sanitize(p.text), TEXT_MAX);
    if (p.kind === "todos") {
      this.addSession("todos", "todos", "Todo list", text, "", turn, ts);
      return;
    }
    // A file written counts as a plan only in Claude Code's plans folder.
    if (p.viaWrite && dirname(resolve(p.file ?? "")) !== this.plansDir) return;
    const file = p.file ?? (this.state.slug ? join(this.plansDir, `${this.state.slug}.md`) : "");
    const title = clip(
      oneLineTitle(text),
      TITLE_MAX,
    );
    // One row per plan file: the plan revised and approved again replaces the earlier text.
    this.addSession("plan", `plan:${file || p.toolId}`, title || "Plan", text, sanitize(file), turn, ts);
  }

  private addSession(kind: SessionKind, key: string, title: string, text: string, ref: string, turnUuid: string, ts: string | undefined): void {
    if (this.state.subagent || !text.trim()) return;
    const t = ts ? Date.parse(ts) : NaN;
    this.session.set(key, { kind, key, title, text, ref, turnUuid, ts: Number.isFinite(t) ? t : 0 });
  }

  private openTurn(row: Row): void {
    this.add(row);
    this.state.turnUuid = row.turnUuid;
    this.state.promptId = row.promptId ?? undefined;
    this.state.lastMsgKey = undefined;
    this.pending.clear(); // results never cross turns
  }

  private add(row: Row): void {
    this.rows.push(row);
    this.lastRow = row;
  }

  private lastAssistantRow(): Row | undefined {
    if (this.lastRow && this.lastRow.role === "assistant") return this.lastRow;
    if (this.state.lastRowId !== undefined) return this.loadRow(this.state.lastRowId);
    return undefined;
  }

  private results(results: ToolResult[]): void {
    for (const r of results) {
      const ref = this.pending.get(r.toolUseId);
      if (ref === undefined) continue;
      this.pending.delete(r.toolUseId);
      const row = typeof ref === "number" ? this.loadRow(ref) : ref;
      if (!row || !r.text || row.results.length >= RESULTS_MAX) continue;
      // Redacted, then clipped: a clip first would leave pieces of a secret it cut.
      const s = clipRedacted(r.text, RESULTS_MAX);
      row.results = clip(row.results ? `${row.results}\n${s}` : s, RESULTS_MAX);
      row.dirty = true;
    }
  }

  /** A row of an earlier read, to append to. */
  private loadRow(id: number): Row | undefined {
    const have = this.byId.get(id);
    if (have) return have;
    const r = this.db.query(`SELECT ${MESSAGE_COLS}, msg_key FROM messages WHERE id = ? AND file_id = ?`).get(id, this.file.id);
    const m = messageColumns(r);
    if (!m || !isRecord(r)) return undefined;
    const row: Row = { ...m, id, dirty: false, msgKey: String(r.msg_key) };
    this.byId.set(id, row);
    this.rows.push(row);
    return row;
  }

  private newRow(role: Row["role"], uuid: string, msgKey: string, ts: string | undefined, turnUuid: string, promptId: string | undefined): Row {
    const t = ts ? Date.parse(ts) : NaN;
    return {
      dirty: true,
      session: "",
      turnUuid,
      promptId: promptId ?? null,
      uuid,
      msgKey,
      ts: Number.isFinite(t) ? t : 0,
      role,
      text: "",
      tools: [],
      paths: [],
      inputs: "",
      results: "",
    };
  }

  /** Write the rows of this read; returns how many were added or changed. */
  flush(): number {
    const project = this.project ?? this.fallbackProject();
    this.project = project;
    const session = this.state.sessionId ?? basename(this.path).replace(/\.jsonl$/i, "");
    const fileTs = this.fileTime();
    const w = rowWriter(this.db);
    let n = 0;
    for (const c of this.session.values()) w.session(this.file.id, project, session, { ...c, ts: c.ts || fileTs });
    for (const row of this.rows) {
      if (!row.dirty) continue;
      if (!row.text && !row.tools.length && !row.results) continue; // a thinking-only line: nothing to find
      const cols = { text: row.text, tools: row.tools.join(" "), paths: row.paths.join("\n"), inputs: row.inputs, results: row.results };
      if (row.id === undefined) {
        row.id = w.add(this.file.id, project, { ...cols, session: row.session || session, turnUuid: row.turnUuid, promptId: row.promptId, uuid: row.uuid, msgKey: row.msgKey, ts: row.ts || fileTs, role: row.role });
      } else w.update(row.id, cols);
      n++;
    }
    // What the next read needs: the last assistant row, and the calls still waiting for a result.
    const last = this.lastRow;
    if (last?.role === "assistant" && last.id !== undefined) this.state.lastRowId = last.id;
    else if (last) this.state.lastRowId = undefined;
    const pending: Record<string, number> = {};
    let k = 0;
    for (const [id, ref] of this.pending) {
      const rowId = typeof ref === "number" ? ref : ref.id;
      if (rowId === undefined || k++ >= PENDING_MAX) continue;
      pending[id] = rowId;
    }
    this.state.pending = pending;
    return n;
  }

  /** No cwd in the file: the identity of another transcript of the same Claude Code project folder, else the folder. */
  private fallbackProject(): string {
    const dir = slugDirOf(this.path);
    const sib = this.db.query("SELECT project FROM files WHERE path LIKE ? AND project IS NOT NULL AND project NOT LIKE 'claude-projects:%' LIMIT 1").get(`${dir}/%`) as { project?: unknown } | null;
    if (sib && typeof sib.project === "string") return sib.project;
    return `claude-projects:${basename(dir)}`;
  }

  private fileTime(): number {
    try {
      return Math.floor(statSync(this.path).mtimeMs);
    } catch {
      return Date.now();
    }
  }
}

/** A row of the session table being written by one read. */
interface SessionRow {
  kind: SessionKind;
  key: string;
  title: string;
  text: string;
  /** The plan file, for a plan. */
  ref: string;
  turnUuid: string;
  ts: number;
}

/** A plan's title: its first non-empty line, heading marks left out. */
function oneLineTitle(text: string): string {
  for (const line of text.split("\n")) {
    const t = line.replace(/^#+\s*/, "").trim();
    if (t) return t;
  }
  return "";
}
