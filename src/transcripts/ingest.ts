/**
 * Keeps the transcript index in step with `~/.claude/projects/` ($CLAUDE_CONFIG_DIR/projects).
 * Transcripts are append-only JSONL, so each file is read from where the last read stopped: the
 * byte after its last complete line. A last line still being written is left for the next read;
 * a file that shrank or was replaced (another inode) is re-read from the start; a file gone from
 * disk loses its rows. Checking an unchanged file costs one stat. Never prints.
 */
import type { Database } from "bun:sqlite";
import { existsSync, readdirSync, statSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { gitTopLevel } from "../core/project.ts";
import { clip } from "../core/text.ts";
import { sanitize } from "../memory/redact.ts";
import { scanLines } from "../transcript/lines.ts";
import { isSubagentPath } from "../transcript/reader.ts";
import { lineEvent, type LineEvent, type ToolResult } from "./extract.ts";
import { ftsText } from "./fts.ts";

/** Stored text of one message (longer is clipped: a recall needs the gist, not a 100 KB paste). */
export const TEXT_MAX = 20_000;
/** Tool input summaries kept per message. */
export const INPUTS_MAX = 2_000;
/** Excerpt of the tool results of one message. */
export const RESULTS_MAX = 2_000;
/** Unresolved tool calls remembered per file between reads (results come within a turn). */
const PENDING_MAX = 200;

/** `~/.claude/projects`, or `$CLAUDE_CONFIG_DIR/projects`. */
export function claudeProjectsDir(env = process.env): string {
  const base = env.CLAUDE_CONFIG_DIR ? resolve(env.CLAUDE_CONFIG_DIR) : join(env.HOME ?? homedir(), ".claude");
  return join(base, "projects");
}

/** Every transcript below the projects folder: `<slug>/*.jsonl` and `<slug>/<session>/subagents/*.jsonl`. */
export function listTranscriptFiles(projectsDir: string): string[] {
  const out: string[] = [];
  for (const slug of safeReaddir(projectsDir)) {
    const dir = join(projectsDir, slug);
    for (const name of safeReaddir(dir)) {
      const p = join(dir, name);
      if (name.endsWith(".jsonl")) out.push(p);
      else {
        const sub = join(p, "subagents");
        for (const s of safeReaddir(sub)) if (s.endsWith(".jsonl")) out.push(join(sub, s));
      }
    }
  }
  return out.sort();
}

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
}

/** The state column as stored: checked field by field, anything odd dropped (the file is a cache). */
export function parseState(json: string): FileState {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return { pending: {} };
  }
  const o = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const s = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined);
  const pending: Record<string, number> = {};
  if (o.pending && typeof o.pending === "object" && !Array.isArray(o.pending)) {
    for (const [k, n] of Object.entries(o.pending as Record<string, unknown>)) if (Number.isInteger(n)) pending[k] = n as number;
  }
  return {
    subagent: typeof o.subagent === "boolean" ? o.subagent : undefined,
    turnUuid: s("turnUuid"),
    promptId: s("promptId"),
    lastMsgKey: s("lastMsgKey"),
    lastRowId: Number.isInteger(o.lastRowId) ? (o.lastRowId as number) : undefined,
    pending,
    cwd: s("cwd"),
    sessionId: s("sessionId"),
  };
}

interface FileRow {
  id: number;
  path: string;
  dev: number;
  ino: number;
  size: number;
  mtime: number;
  consumed: number;
  project: string | null;
  state: string;
}

function isFileRow(v: unknown): v is FileRow {
  if (!v || typeof v !== "object") return false;
  const r = v as Record<string, unknown>;
  return typeof r.id === "number" && typeof r.path === "string" && typeof r.size === "number" && typeof r.consumed === "number" && typeof r.state === "string";
}

/** A message row being built or updated by one read. */
interface Row {
  id?: number;
  dirty: boolean;
  session: string;
  turnUuid: string;
  promptId: string | null;
  uuid: string;
  msgKey: string;
  ts: number;
  role: "user" | "assistant";
  text: string;
  tools: string[];
  paths: string[];
  inputs: string;
  results: string;
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
}

export interface UpdateReport {
  /** Transcript files on disk. */
  files: number;
  /** Files read (new, grown, re-read). */
  read: number;
  /** Files re-read from the start (shrunk or replaced). */
  reread: number;
  /** Files gone from disk whose rows were removed. */
  removed: number;
  /** Message rows added or updated. */
  messages: number;
  bytes: number;
  ms: number;
  /** The index held nothing before this update. */
  firstBuild: boolean;
  errors: { path: string; message: string }[];
}

/** Identity of a cwd: the main worktree's git top level, else the cwd itself (also when it no longer exists). */
export function projectOfCwd(cwd: string, cache?: Map<string, string>): string {
  const hit = cache?.get(cwd);
  if (hit) return hit;
  const abs = resolve(cwd);
  const id = existsSync(abs) ? (gitTopLevel(abs) ?? abs) : abs;
  cache?.set(cwd, id);
  return id;
}

/** Bring the index up to date with the transcripts on disk. */
export async function updateTranscriptIndex(db: Database, opts: UpdateOptions = {}): Promise<UpdateReport> {
  const t0 = performance.now();
  const projectsDir = opts.projectsDir ?? claudeProjectsDir(opts.env);
  const paths = listTranscriptFiles(projectsDir);
  const known = new Map<string, FileRow>();
  for (const r of db.query("SELECT id, path, dev, ino, size, mtime, consumed, project, state FROM files").all()) if (isFileRow(r)) known.set(r.path, r);
  const firstBuild = known.size === 0;
  const report: UpdateReport = { files: paths.length, read: 0, reread: 0, removed: 0, messages: 0, bytes: 0, ms: 0, firstBuild, errors: [] };

  const todo: { path: string; st: Stats }[] = [];
  for (const path of paths) {
    let st: Stats;
    try {
      st = statSync(path);
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    const k = known.get(path);
    if (k && k.dev === st.dev && k.ino === st.ino && k.size === st.size && k.mtime === st.mtimeMs) continue;
    todo.push({ path, st });
  }
  const bytesTotal = todo.reduce((n, t) => n + t.st.size, 0);
  const cwdCache = new Map<string, string>();
  let lastProgress = 0;
  for (let i = 0; i < todo.length; i++) {
    const { path, st } = todo[i]!;
    try {
      const r = await ingestFile(db, path, st, cwdCache);
      if (r.read) report.read++;
      if (r.reread) report.reread++;
      report.messages += r.messages;
      report.bytes += r.bytes;
    } catch (e) {
      report.errors.push({ path, message: (e as Error)?.message ?? String(e) });
    }
    const now = performance.now();
    if (opts.onProgress && (now - lastProgress >= (opts.progressEveryMs ?? 200) || i === todo.length - 1)) {
      lastProgress = now;
      opts.onProgress({ filesDone: i + 1, filesTotal: todo.length, bytesDone: todo.slice(0, i + 1).reduce((n, t) => n + t.st.size, 0), bytesTotal });
    }
  }

  // Files gone from disk (only those under this projects folder: another CLAUDE_CONFIG_DIR's stay).
  const onDisk = new Set(paths);
  const prefix = projectsDir.endsWith("/") ? projectsDir : projectsDir + "/";
  for (const [path, row] of known) {
    if (onDisk.has(path) || !path.startsWith(prefix)) continue;
    if (existsSync(path)) continue;
    inWrite(db, () => {
      deleteFileRows(db, row.id);
      db.query("DELETE FROM files WHERE id = ?").run(row.id);
    });
    report.removed++;
  }
  report.ms = performance.now() - t0;
  return report;
}

function inWrite<T>(db: Database, fn: () => T): T {
  db.run("BEGIN IMMEDIATE");
  try {
    const r = fn();
    db.run("COMMIT");
    return r;
  } catch (e) {
    db.run("ROLLBACK");
    throw e;
  }
}

function deleteFileRows(db: Database, fileId: number): void {
  db.query("DELETE FROM msg_fts WHERE rowid IN (SELECT id FROM messages WHERE file_id = ?)").run(fileId);
  db.query("DELETE FROM messages WHERE file_id = ?").run(fileId);
}

/**
 * Read what is new in one file and write its rows, in one write transaction: the file's state
 * is read again inside it, so two processes updating at once never index the same bytes twice.
 */
async function ingestFile(db: Database, path: string, st: Stats, cwdCache: Map<string, string>): Promise<{ read: boolean; reread: boolean; messages: number; bytes: number }> {
  db.run("BEGIN IMMEDIATE");
  try {
    const cur = db.query("SELECT id, path, dev, ino, size, mtime, consumed, project, state FROM files WHERE path = ?").get(path);
    let row = isFileRow(cur) ? cur : undefined;
    let reread = false;
    if (row && (row.dev !== st.dev || row.ino !== st.ino || st.size < row.consumed)) {
      // Replaced or cut: what we indexed may no longer be in it.
      deleteFileRows(db, row.id);
      db.query("UPDATE files SET consumed = 0, state = '{}', project = NULL WHERE id = ?").run(row.id);
      row = { ...row, consumed: 0, state: "{}", project: null };
      reread = true;
    }
    if (row && row.dev === st.dev && row.ino === st.ino && row.size === st.size && row.mtime === st.mtimeMs) {
      db.run("COMMIT"); // another process got there first
      return { read: false, reread: false, messages: 0, bytes: 0 };
    }
    if (!row) {
      const ins = db.query("INSERT INTO files (path, dev, ino, size, mtime, consumed, state) VALUES (?, ?, ?, 0, 0, 0, '{}') RETURNING id").get(path, st.dev, st.ino) as { id: number };
      row = { id: ins.id, path, dev: st.dev, ino: st.ino, size: 0, mtime: 0, consumed: 0, project: null, state: "{}" };
    }
    const r = new FileReader(db, row, parseState(row.state), path, cwdCache);
    const consumed = await r.read(st.size);
    const written = r.flush();
    db.query("UPDATE files SET dev = ?, ino = ?, size = ?, mtime = ?, consumed = ?, project = ?, session = ?, state = ? WHERE id = ?").run(
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
    db.run("ROLLBACK");
    throw e;
  }
}

class FileReader {
  /** Rows of this read (new or changed), in file order. */
  private rows: Row[] = [];
  private byId = new Map<number, Row>();
  private lastRow?: Row;
  /** tool_use id → row, for this read. */
  private pending = new Map<string, Row | number>();
  /** A slash command waiting for Claude to act on it (else it was a local command: no turn). */
  private pendingCommand?: { offset: number; row: Row; turnUuid: string; promptId?: string };
  project?: string;

  constructor(
    private db: Database,
    private file: FileRow,
    readonly state: FileState,
    private path: string,
    private cwdCache: Map<string, string>,
  ) {
    this.project = file.project ?? undefined;
    if (state.subagent === undefined && isSubagentPath(path)) state.subagent = true;
    for (const [k, id] of Object.entries(state.pending)) this.pending.set(k, id);
  }

  /** Read from the last stop to `size`; returns the new stop (start of the first line not consumed). */
  async read(size: number): Promise<number> {
    let consumed = this.file.consumed;
    if (size <= consumed) return consumed;
    const res = await scanLines(
      this.path,
      (buf, s, e, offset) => {
        // A last line with no newline after it is still being written: leave it for the next read.
        if (offset + (e - s) >= size) return false;
        this.line(lineEvent(buf, s, e), offset);
        consumed = offset + (e - s) + 1;
      },
      { start: consumed, end: size },
    );
    if (res.binary) return size; // not a transcript: nothing to index, do not look again until it changes
    if (this.pendingCommand) {
      // Re-read from the command next time, when we know whether Claude acts on it.
      consumed = this.pendingCommand.offset;
      this.pendingCommand = undefined;
    }
    return consumed;
  }

  private line(ev: LineEvent, offset: number): void {
    if (ev.kind === "skip") return;
    if (this.state.subagent === undefined && ev.kind !== "results") this.state.subagent = ev.sidechain;
    if (ev.sidechain && !this.state.subagent) return; // sidechain lines of a main file: their own files hold them
    if (ev.sessionId && !this.state.sessionId) this.state.sessionId = ev.sessionId;
    if (ev.cwd && !this.state.cwd) {
      this.state.cwd = ev.cwd;
      this.project = projectOfCwd(ev.cwd, this.cwdCache);
    }
    switch (ev.kind) {
      case "prompt": {
        this.pendingCommand = undefined; // a command nobody acted on was a local one
        const row = this.newRow("user", ev.uuid, ev.uuid, ev.ts, ev.uuid, ev.promptId);
        row.text = clip(sanitize(ev.text), TEXT_MAX);
        if (ev.command) {
          this.pendingCommand = { offset, row, turnUuid: ev.uuid, promptId: ev.promptId };
          return;
        }
        this.openTurn(row);
        return;
      }
      case "assistant": {
        if (this.pendingCommand) {
          this.openTurn(this.pendingCommand.row);
          this.pendingCommand = undefined;
        }
        if (!this.state.turnUuid) return; // before the first prompt: no turn to belong to
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
        return;
      }
      case "results":
        this.results(ev.results);
        return;
    }
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
      const s = sanitize(clip(r.text, RESULTS_MAX));
      row.results = clip(row.results ? `${row.results}\n${s}` : s, RESULTS_MAX);
      row.dirty = true;
    }
  }

  /** A row of an earlier read, to append to. */
  private loadRow(id: number): Row | undefined {
    const have = this.byId.get(id);
    if (have) return have;
    const r = this.db.query("SELECT id, session, turn_uuid, prompt_id, uuid, msg_key, ts, role, text, tools, paths, inputs, results FROM messages WHERE id = ? AND file_id = ?").get(id, this.file.id) as
      | Record<string, unknown>
      | null;
    if (!r || typeof r.text !== "string" || typeof r.turn_uuid !== "string") return undefined;
    const row: Row = {
      id,
      dirty: false,
      session: String(r.session),
      turnUuid: r.turn_uuid,
      promptId: typeof r.prompt_id === "string" ? r.prompt_id : null,
      uuid: String(r.uuid),
      msgKey: String(r.msg_key),
      ts: Number(r.ts) || 0,
      role: r.role === "user" ? "user" : "assistant",
      text: r.text,
      tools: String(r.tools ?? "").split(" ").filter(Boolean),
      paths: String(r.paths ?? "").split("\n").filter(Boolean),
      inputs: String(r.inputs ?? ""),
      results: String(r.results ?? ""),
    };
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
    const insert = this.db.query(
      "INSERT INTO messages (file_id, project, session, turn_uuid, prompt_id, uuid, msg_key, ts, role, text, tools, paths, inputs, results) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    );
    const update = this.db.query("UPDATE messages SET text = ?, tools = ?, paths = ?, inputs = ?, results = ? WHERE id = ?");
    const ftsDelete = this.db.query("DELETE FROM msg_fts WHERE rowid = ?");
    const ftsInsert = this.db.query("INSERT INTO msg_fts (rowid, content, paths, tools, detail) VALUES (?, ?, ?, ?, ?)");
    let n = 0;
    for (const row of this.rows) {
      if (!row.dirty) continue;
      if (!row.text && !row.tools.length && !row.results) continue; // a thinking-only line: nothing to find
      const tools = row.tools.join(" ");
      const paths = row.paths.join("\n");
      if (row.id === undefined) {
        const r = insert.get(this.file.id, project, row.session || session, row.turnUuid, row.promptId, row.uuid, row.msgKey, row.ts || fileTs, row.role, row.text, tools, paths, row.inputs, row.results) as { id: number };
        row.id = r.id;
      } else {
        update.run(row.text, tools, paths, row.inputs, row.results, row.id);
        ftsDelete.run(row.id);
      }
      ftsInsert.run(row.id, ftsText(row.text), ftsText(paths), tools, ftsText(`${row.inputs}\n${row.results}`));
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
    const dir = isSubagentPath(this.path) ? dirname(dirname(dirname(this.path))) : dirname(this.path);
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
