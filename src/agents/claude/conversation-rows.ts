/**
 * One Claude Code transcript into the conversation index's rows, read from where the last read
 * stopped: the byte after its last complete line. A last line still being written is left for the
 * next read; a file that shrank or was replaced (another inode) is re-read from the start. Which
 * entries open a turn is the shared classifier's (transcript/entries.ts, through line-events.ts)
 * and where turns start and end the shared segmenter's (transcript/turns.ts), as for the
 * transcript reader (reader.ts). Besides the messages, each session's own record goes into the
 * session table: its plans, compaction summaries, final todo list and first prompt (redacted like
 * every row).
 */
import type { Database } from "bun:sqlite";
import type { Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import * as v from "valibot";
import { parseJson } from "../../core/json-file.ts";
import { clip } from "../../core/text.ts";
import { clipRedacted, sanitize } from "../../core/redact.ts";
import { parseLine, scanLines } from "../../transcript/lines.ts";
import { projectOfCwd } from "../../transcript/files.ts";
import { TurnSegmenter } from "../../transcript/turns.ts";
import { deleteFileRows, INPUTS_MAX, isFileRow, isRecord, MESSAGE_COLS, messageColumns, RESULTS_MAX, rollback, rowWriter, TEXT_MAX, type FileRow, type MessageColumns, type SessionKind } from "../../conversations/rows.ts";
import { isSubagentPath, slugDirOf } from "./files.ts";
import { lineEvent, type LineEvent, type SessionPart, type ToolResult, type ToolUse } from "./line-events.ts";

/** Title of a session table row (a plan's first line). */
const TITLE_MAX = 160;
/** Unresolved tool calls remembered per file between reads (results come within a turn). */
const PENDING_MAX = 200;

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
  /**
   * Plans not approved yet, by their session-table key: a plan file written (a draft), or the plan
   * an ExitPlanMode call asks the user to approve (`call`: its tool_use id, until the answer).
   */
  plans?: Record<string, PendingPlan>;
}

/** A plan waiting for the user's approval (FileState.plans). */
export interface PendingPlan {
  title: string;
  text: string;
  ref: string;
  turnUuid: string;
  ts?: string;
  call?: string;
}

/** Plans kept waiting per file between reads: a session drafts a few. */
const PLANS_MAX = 20;

/** A field of the state column: what is not of its shape is dropped, never the whole state (the file is a cache). */
const Maybe = <S extends v.GenericSchema>(schema: S) => v.fallback(v.optional(schema), undefined);
const Count = v.pipe(v.number(), v.integer());

const PendingPlanShape = v.object({ title: v.string(), text: v.string(), ref: v.string(), turnUuid: v.string(), ts: v.optional(v.string()), call: v.optional(v.string()) });

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
  plans: Maybe(
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.transform((r) => Object.fromEntries(Object.entries(r).filter(([, p]) => v.is(PendingPlanShape, p))) as Record<string, PendingPlan>),
    ),
  ),
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

/**
 * Read what is new in one file and write its rows, in one write transaction: the file's state
 * is read again inside it, so two processes updating at once never index the same bytes twice.
 */
export async function ingestFile(db: Database, path: string, st: Stats, cwdCache: Map<string, string>, plansDir: string): Promise<{ read: boolean; reread: boolean; messages: number; bytes: number }> {
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
    const written = r.flush(Math.floor(st.mtimeMs));
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
      case "prompt":
        return this.prompt(ev, offset, lineNo);
      case "assistant":
        return this.assistant(ev);
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

  /** A prompt, or a slash command: a command nobody acted on (a local one) is dropped by the segmenter, its row never added. */
  private prompt(ev: Extract<LineEvent, { kind: "prompt" }>, offset: number, lineNo: number): void {
    const row = this.newRow("user", ev.uuid, ev.uuid, ev.ts, ev.uuid, ev.promptId);
    row.text = clip(sanitize(ev.text), TEXT_MAX);
    this.seg.start({ row, offset, lines: lineNo - 1 }, ev.command);
    if (ev.command) return;
    this.openTurn(row);
    if (!this.state.firstPrompt && !this.state.subagent && row.text) {
      this.state.firstPrompt = true;
      this.addSession("first_prompt", "first_prompt", "First prompt", row.text, "", row.turnUuid, ev.ts);
    }
  }

  /** An assistant line: its words and tool calls into its message's row (the lines of one message share a row). */
  private assistant(ev: Extract<LineEvent, { kind: "assistant" }>): void {
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
    for (const tool of ev.tools) this.toolCall(row, tool);
    this.results(ev.results);
    if (ev.slug && !this.state.slug && /^[\w-]{1,100}$/.test(ev.slug)) this.state.slug = ev.slug;
    for (const p of ev.session) this.sessionPart(p, ev.ts);
  }

  /** A tool call on its message's row, waiting for its result (a call a repeated line holds again counts once). */
  private toolCall(row: Row, tool: ToolUse): void {
    if (tool.id && this.pending.has(tool.id)) return;
    row.tools.push(tool.name);
    for (const p of tool.paths) if (!row.paths.includes(p)) row.paths.push(sanitize(p));
    if (tool.input && row.inputs.length < INPUTS_MAX) row.inputs = clip(row.inputs ? `${row.inputs}\n${sanitize(tool.input)}` : sanitize(tool.input), INPUTS_MAX);
    if (tool.id) this.pending.set(tool.id, row);
    row.dirty = true;
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
    // One row per plan file: the plan revised and approved again replaces the earlier text.
    const key = `plan:${file || p.toolId}`;
    const plans = (this.state.plans ??= {});
    const plan: PendingPlan = { title: clip(oneLineTitle(text), TITLE_MAX) || "Plan", text, ref: sanitize(file), turnUuid: turn, ts };
    if (!p.asks) plans[key] = plan;
    // ExitPlanMode: the plan it passes, else the file written for it, waits for the user's answer.
    else if (text.trim()) plans[key] = { ...plan, call: p.toolId };
    else if (plans[key]) plans[key].call = p.toolId;
  }

  /**
   * The user's answer to an ExitPlanMode call: approved, its plan becomes the session's (a plan
   * approved again replaces the earlier one); refused ("No, keep planning", or a client that
   * disabled the tool, as `claude -p` does), it is dropped with the draft it asked about.
   */
  private answered(r: ToolResult): void {
    const plans = this.state.plans;
    const key = plans && Object.keys(plans).find((k) => plans[k]!.call === r.toolUseId);
    if (!plans || key === undefined) return;
    const p = plans[key]!;
    delete plans[key];
    if (!r.error) this.addSession("plan", key, p.title, p.text, p.ref, p.turnUuid, p.ts);
  }

  private addSession(kind: SessionKind, key: string, title: string, text: string, ref: string, turnUuid: string, ts: string | undefined): void {
    if (this.state.subagent || !text.trim()) return;
    this.session.set(key, { kind, key, title, text, ref, turnUuid, ts: msOf(ts) });
  }

  private openTurn(row: Row): void {
    this.add(row);
    this.state.turnUuid = row.turnUuid;
    this.state.promptId = row.promptId ?? undefined;
    this.state.lastMsgKey = undefined;
    this.pending.clear(); // results never cross turns
    // An ExitPlanMode never answered in its turn was not approved: its plan is a draft again.
    for (const p of Object.values(this.state.plans ?? {})) delete p.call;
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
      if (!this.state.subagent) this.answered(r);
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
    return {
      dirty: true,
      session: "",
      turnUuid,
      promptId: promptId ?? null,
      uuid,
      msgKey,
      ts: msOf(ts),
      role,
      text: "",
      tools: [],
      paths: [],
      inputs: "",
      results: "",
    };
  }

  /**
   * Write the rows of this read; returns how many were added or changed. `fileTs`: the file's
   * mtime as stat'ed for this read, the time of a row whose line records none.
   */
  flush(fileTs: number): number {
    const project = this.project ?? this.fallbackProject();
    this.project = project;
    const session = this.state.sessionId ?? basename(this.path).replace(/\.jsonl$/i, "");
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
    const plans = Object.entries(this.state.plans ?? {});
    if (plans.length) this.state.plans = Object.fromEntries(plans.slice(-PLANS_MAX));
    else delete this.state.plans;
    return n;
  }

  /** No cwd in the file: the identity of another transcript of the same Claude Code project folder, else the folder. */
  private fallbackProject(): string {
    const dir = slugDirOf(this.path);
    const sib = this.db.query("SELECT project FROM files WHERE path LIKE ? AND project IS NOT NULL AND project NOT LIKE 'claude-projects:%' LIMIT 1").get(`${dir}/%`) as { project?: unknown } | null;
    if (sib && typeof sib.project === "string") return sib.project;
    return `claude-projects:${basename(dir)}`;
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

/** An entry's time in ms, 0 when it records none (the file's time stands in: flush). */
function msOf(ts: string | undefined): number {
  const t = ts ? Date.parse(ts) : NaN;
  return Number.isFinite(t) ? t : 0;
}

/** A plan's title: its first non-empty line, heading marks left out. */
function oneLineTitle(text: string): string {
  for (const line of text.split("\n")) {
    const t = line.replace(/^#+\s*/, "").trim();
    if (t) return t;
  }
  return "";
}
