/**
 * Claude Code's transcripts in the conversation index, kept in step with
 * `~/.claude/projects/` ($CLAUDE_CONFIG_DIR/projects): the walk of that folder and what each update
 * looks at. Transcripts are append-only JSONL, so each file is read from where the last read
 * stopped (conversation-rows.ts); a file gone from disk (Claude Code deletes transcripts after
 * `cleanupPeriodDays`) keeps its rows, marked archived with the time it disappeared. Checking an
 * unchanged file costs one stat, and only files that may have changed are checked (hot files, new
 * ones; see HOT_MS).
 */
import type { Database } from "bun:sqlite";
import { existsSync, lstatSync, readdirSync, statSync, type Stats } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isDamage } from "../../conversations/db.ts";
import type { AppendedSource, AppendedUpdate, UpdateReport } from "../../conversations/ingest.ts";
import { archiveFiles, inWrite, isDirRow, isKnownFile, KNOWN_COLS, metaValue, setMeta, type KnownFile } from "../../conversations/rows.ts";
import { claudeProjectsDir, notRegularTranscript } from "./files.ts";
import { ingestFile } from "./conversation-rows.ts";

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
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

/** Claude Code's transcripts below `projectsDir` (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects) as the conversation index reads them. */
export function conversationSource(o: { projectsDir?: string; env?: NodeJS.ProcessEnv } = {}): AppendedSource {
  const projectsDir = o.projectsDir ?? claudeProjectsDir(o.env);
  return { agent: "claude", update: (db, report, u) => updateFrom(db, projectsDir, report, u) };
}

/** One update of the files below `projectsDir`: the hot and new ones, or (a full scan) every one. */
async function updateFrom(db: Database, projectsDir: string, report: UpdateReport, u: AppendedUpdate): Promise<void> {
  const last = lastFullScan(db, projectsDir);
  const full = u.full || u.firstBuild || last === undefined || u.now - last >= FULL_SCAN_MS || last > u.now + 60_000;
  report.full = full;
  const scan = full ? scanAll(db, projectsDir, u.now) : scanChanged(db, projectsDir, u.now);
  report.files += scan.check.size;
  await ingestAll(db, changedFiles(scan.check, projectsDir), report, { ...u, plansDir: join(dirname(resolve(projectsDir)), "plans") });
  archiveGone(db, scan.gone, report, u.now);
  saveListing(db, scan, report, projectsDir, full, u.now);
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

async function ingestAll(db: Database, todo: { path: string; st: Stats }[], report: UpdateReport, opts: AppendedUpdate & { plansDir: string }): Promise<void> {
  const bytesTotal = todo.reduce((n, t) => n + t.st.size, 0);
  const cwdCache = new Map<string, string>();
  const plansDir = opts.plansDir;
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
  report.archived += archiveFiles(db, [...gone.values()].filter((row) => row.gone_at == null && !existsSync(row.path)), now);
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

