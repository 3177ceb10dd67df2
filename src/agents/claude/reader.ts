/**
 * Claude Code transcript reader. Streams a session JSONL file once, tolerates anything it does not
 * understand (counted in `stats`, never fatal) and groups entries into turns: a turn opens at a real
 * user message and runs until the next one.
 *
 * Two depths:
 *  - `listTurns` (index): enough for the turn listing. Progress and snapshot lines, tool results
 *    and assistant lines are recognised from their bytes (see `peekEntry`, `toolUseIds`) and never
 *    parsed; only prompts, system entries and odd lines are.
 *  - `readTranscript` / `readTurnRange` (full): texts, tool calls paired with their results,
 *    compactions, summaries. `readTurnRange` parses only the byte range of the turns asked for.
 */
import { closeSync, fstatSync } from "node:fs";
import { basename } from "node:path";
import { errCode, InputError, UnrecognisedFormatError } from "../../core/errors.ts";
import { clipMarked } from "../../core/text.ts";
import { clipRedacted, type Redactor } from "../../core/redact.ts";
import { EmptyTranscriptError, openRegularFile } from "../../transcript/files.ts";
import { isSubagentPath } from "./files.ts";
import { isBlank, parseLine, peekEntry, scanLines, toolUseIds } from "../../transcript/lines.ts";
import { entryType, isObj, readUserEntry, turnId, type Obj } from "../../transcript/entries.ts";
import { cleanText, mediaPlaceholder, summarizeToolInput } from "../../transcript/sanitize.ts";
import { TurnSegmenter, type Closed } from "../../transcript/turns.ts";
import type { ToolCall, Turn } from "../../transcript/types.ts";
import type { Compaction, ReadStats, SessionSummary, Transcript } from "./types.ts";
import { asString as str } from "../turn.ts";

export { EmptyTranscriptError };

export const UNRECOGNISED_MESSAGE = "Unrecognized transcript format. Read the file directly to locate the relevant turns.";

const REQUEST_TYPES = ["api-request", "api-request-shape", "api-request-blob"];
/** Entry types Claude Code writes. */
const CLAUDE_TYPES = new Set([
  "user",
  "assistant",
  "system",
  "summary",
  "progress",
  "file-history-snapshot",
  "file-history-delta",
  "queue-operation",
  "attachment",
  "ai-title",
  "custom-title",
  "last-prompt",
  "agent-name",
  "mode",
  "permission-mode",
  "atis-latch",
  "tools-used",
  "pr-link",
  "cost-state",
  "tag",
  ...REQUEST_TYPES,
]);
/**
 * Entry types with nothing for a reader: skipped from their first bytes, never parsed. The
 * request records (2.1.3xx) hold the whole system prompt and injected context of each API call,
 * 40–60 KB a line: reading them would put our own recalled memories back into memory.
 */
const SKIP_TYPES = new Set(["progress", "file-history-snapshot", "file-history-delta", "queue-operation", "ai-title", "custom-title", "last-prompt", "agent-name", "mode", "permission-mode", "atis-latch", "tools-used", "pr-link", "cost-state", "tag", ...REQUEST_TYPES]);
/** Codex rollouts and OpenClaw sessions. */
const FOREIGN_TYPES = new Set(["event_msg", "response_item", "session_meta", "turn_context", "compacted", "message", "session"]);
/** The model Claude Code names on assistant lines it writes itself, not a model's reply. */
const SYNTHETIC_MODEL = "<synthetic>";
const SYNTHETIC_BYTES = Buffer.from(`"model":"${SYNTHETIC_MODEL}"`);
/** The format is decided from the first entries, as the reference does. */
const DETECT_LINES = 80;

export interface ReadOptions {
  /** Clip tool outputs to this many chars (default 4000). */
  maxOutput?: number;
  /** Read sidechain lines as the main thread (a subagent file). Default: detected. */
  subagent?: boolean;
  /**
   * Redact every text the read returns (user and assistant texts, tool inputs and outputs,
   * compaction and session summaries) with this, e.g. `sanitize`. Tool inputs and outputs are
   * redacted before they are clipped, so a secret the clip would cut is still caught whole. What
   * leaves the transcript for storage or a model reads it so.
   */
  redact?: Redactor;
}

type Mode = "index" | "full";

interface BuilderOptions {
  mode: Mode;
  maxOutput: number;
  subagent?: boolean;
  redact?: Redactor;
  /** Validate the format and emptiness (off when reading a range of an already-read file). */
  validate: boolean;
  /** Record which turn holds an entry whose uuid starts with this. */
  locate?: string;
}

function newStats(): ReadStats {
  return {
    lines: 0,
    malformed: 0,
    oversized: 0,
    skipped: {},
    unknownTypes: 0,
    unknownBlocks: 0,
    sidechain: 0,
    meta: 0,
    attachments: 0,
    orphanResults: 0,
    untrustedSummaries: 0,
  };
}

class Builder {
  readonly stats = newStats();
  readonly turns: Turn[] = [];
  readonly compactions: Compaction[] = [];
  readonly rawSummaries: SessionSummary[] = [];
  readonly uuids = new Set<string>();
  sessionId?: string;
  located?: Turn;

  /** Where turns start and end: the same segmenter as the conversation index's. */
  private readonly seg: TurnSegmenter<Turn>;
  /** Per message.id: blocks already taken (lines of one message may repeat blocks). */
  private seen = new Map<string, Set<string>>();
  private lastTextMsg?: string;
  private pending = new Map<string, ToolCall>();
  /** tool_use ids of the current turn (a block repeated on another line counts once). */
  private toolIds = new Set<string>();
  private detectLines = 0;
  private claudeEntries = 0;
  private foreignEntries = 0;
  private objects = 0;
  private nonBlank = 0;
  private decided = false;

  private readonly locateBytes?: Buffer;

  constructor(private readonly o: BuilderOptions) {
    this.seg = new TurnSegmenter({ subagent: o.subagent });
    if (o.locate) this.locateBytes = Buffer.from(o.locate);
  }

  get subagent(): boolean | undefined {
    return this.seg.subagent;
  }

  /** The turn in progress (a slash command not yet acted on included). */
  private get cur(): Turn | undefined {
    return this.seg.open?.turn;
  }

  /** One line of the file. */
  line(buf: Uint8Array, s: number, e: number, offset: number, lineNo: number): void {
    this.stats.lines++;
    if (buf[s] !== 123 && isBlank(buf, s, e)) return;
    this.nonBlank++;
    const peek = peekEntry(buf, s, e);
    if (peek.type !== undefined && SKIP_TYPES.has(peek.type)) {
      this.objects++;
      this.count(peek.type);
      this.skip(peek.type);
      return;
    }
    // When locating an entry by uuid, a line holding the uuid is always parsed.
    const locating = this.locateBytes !== undefined && this.located === undefined && this.cur !== undefined && Buffer.from(buf.buffer, buf.byteOffset + s, e - s).indexOf(this.locateBytes) >= 0;
    if (this.o.mode === "index" && !locating) {
      // An index needs neither tool results (they never open a turn) nor assistant lines without
      // a tool call (only the fact that Claude answered matters): both are known from a peek.
      // Its sidechain flag matters only while the file's kind is undecided (else it is never read).
      if (peek.type === "user" && peek.content === "array" && peek.firstBlock === "tool_result" && (peek.sidechain !== undefined || this.subagent !== undefined)) {
        this.objects++;
        this.count("user");
        if (peek.sidechain !== undefined) this.seg.leftOut(peek.sidechain);
        return;
      }
      const assistant = peek.type === "assistant" || (peek.type === undefined && peek.role === "assistant");
      if (assistant && peek.sidechain !== undefined) {
        const ids = toolUseIds(buf, s, e);
        if (ids) {
          this.objects++;
          this.count("assistant");
          // A line without a tool call may be one Claude Code wrote itself (it never holds one).
          const synthetic = ids.length === 0 && Buffer.from(buf.buffer, buf.byteOffset + s, e - s).indexOf(SYNTHETIC_BYTES) >= 0;
          this.answered(peek.sidechain, ids, synthetic);
          return;
        }
      }
    }
    const entry = parseLine(buf, s, e);
    if (!entry) {
      this.stats.malformed++;
      this.count(undefined);
      return;
    }
    this.objects++;
    const type = str(entry.type);
    this.count(type ?? (entry.role !== undefined ? "message" : undefined));
    this.entry(entry, offset, lineNo);
  }

  /** An assistant line seen in an index without parsing it (its tool_use ids found by a byte search). */
  private answered(sidechain: boolean, toolIds: string[], synthetic: boolean): void {
    if (this.seg.leftOut(sidechain)) {
      this.stats.sidechain++;
      return;
    }
    const t = this.answeringTurn();
    if (!t) return;
    if (!synthetic) t.replied = true;
    for (const id of toolIds) {
      if (this.toolIds.has(id)) continue;
      this.toolIds.add(id);
      t.toolCount++;
    }
  }

  /** The turn an assistant line belongs to; none before the first user prompt (counted as skipped). */
  private answeringTurn(): Turn | undefined {
    const a = this.seg.answer();
    if (!a) this.skip("assistant:before-first-turn");
    return a?.turn;
  }

  private readonly skips = new Map<string, number>();

  private skip(key: string): void {
    this.skips.set(key, (this.skips.get(key) ?? 0) + 1);
  }

  /** Format detection over the first entries. */
  private count(type: string | undefined): void {
    if (this.decided || !this.o.validate) return;
    this.detectLines++;
    if (type !== undefined) {
      if (CLAUDE_TYPES.has(type)) this.claudeEntries++;
      else if (FOREIGN_TYPES.has(type)) this.foreignEntries++;
    }
    if (this.detectLines >= DETECT_LINES) this.decide();
  }

  private decide(): void {
    this.decided = true;
    if (this.objects === 0) return; // reported by finish()
    if (this.claudeEntries === 0 || this.foreignEntries > this.claudeEntries) throw new UnrecognisedFormatError(UNRECOGNISED_MESSAGE);
  }

  private entry(o: Obj, offset: number, lineNo: number): void {
    const uuid = str(o.uuid);
    if (uuid !== undefined) this.uuids.add(uuid);
    if (this.sessionId === undefined && typeof o.sessionId === "string" && o.sessionId) this.sessionId = o.sessionId;
    const type = entryType(o);
    const left = type === "user" || type === "assistant" ? this.seg.leftOut(o.isSidechain === true) : (type === "system" || type === "attachment") && o.isSidechain === true && !this.subagent;
    if (left) {
      this.stats.sidechain++;
      return;
    }
    switch (type) {
      case "user":
        this.user(o, offset, lineNo);
        break;
      case "assistant":
        this.assistant(o);
        break;
      case "system":
        this.system(o);
        break;
      case "summary": {
        const summary = str(o.summary);
        const leaf = str(o.leafUuid);
        if (summary !== undefined && leaf !== undefined) this.rawSummaries.push({ summary, leafUuid: leaf });
        else this.stats.malformed++;
        break;
      }
      case "attachment":
        this.attachment(o);
        break;
      default:
        this.stats.unknownTypes++;
        this.skip(type ?? "(no type)");
    }
    if (this.o.locate && uuid !== undefined && this.located === undefined && this.cur && uuid.startsWith(this.o.locate)) this.located = this.cur;
  }

  private user(o: Obj, offset: number, lineNo: number): void {
    const full = this.o.mode === "full";
    const u = readUserEntry(o, () => this.stats.unknownBlocks++);
    switch (u.kind) {
      case "meta":
        this.stats.meta++;
        return;
      case "malformed":
        this.stats.malformed++;
        return;
      case "compact-summary":
        this.compactSummary(u.text);
        return;
      case "results":
        if (!full) return;
        for (const b of u.results) this.result(b);
        // Text beside tool results is an interruption notice or a reminder, never a new prompt.
        if (u.text && this.cur) this.cur.items.push({ kind: "user", text: u.text });
        return;
      case "prompt":
      case "command":
        this.open(o, u.text, u.kind, offset, lineNo);
        return;
      case "interrupt":
        if (full && this.cur) this.cur.items.push({ kind: "user", text: u.text });
        return;
      case "other":
        this.skip(`user:${u.what}`);
    }
  }

  private compactSummary(text: string): void {
    const last = this.compactions[this.compactions.length - 1];
    if (last && last.summary === undefined) last.summary = text;
    else this.compactions.push({ summary: text });
  }

  /** Start a turn; a slash command only counts once Claude acts on it. */
  private open(o: Obj, text: string, kind: "prompt" | "command", offset: number, lineNo: number): void {
    const turn: Turn = {
      index: -1,
      uuid: turnId(o, lineNo),
      timestamp: str(o.timestamp),
      ...(str(o.promptId) ? { promptId: str(o.promptId) } : {}),
      kind,
      userText: text,
      assistantTexts: [],
      tools: [],
      items: [],
      toolCount: 0,
      replied: false,
      line: lineNo,
      start: offset,
      end: offset,
    };
    this.ended(this.seg.start(turn, kind === "command"), offset);
    this.seen.clear();
    this.toolIds.clear();
    this.lastTextMsg = undefined;
  }

  /** The turn a new prompt or the end of the input closed, at byte `end`. */
  private ended(r: Closed<Turn>, end: number): void {
    if (r.dropped) {
      // A local command (/mcp, /model…): no turn.
      this.skip("user:local-command");
      if (this.located === r.dropped) this.located = undefined;
    }
    const t = r.closed;
    if (!t) return;
    t.end = end;
    t.index = this.turns.length;
    this.turns.push(t);
  }

  private assistant(o: Obj): void {
    const msg = o.message;
    if (!isObj(msg)) {
      this.stats.malformed++;
      return;
    }
    const t = this.answeringTurn();
    if (!t) return;
    // Claude Code writes a `<synthetic>` reply itself (a local command's "No response requested.", an API error): no model answered.
    if (msg.model !== SYNTHETIC_MODEL) t.replied = true;
    const full = this.o.mode === "full";
    const msgId = str(msg.id) ?? str(o.uuid) ?? "";
    let seen = this.seen.get(msgId);
    if (!seen) {
      seen = new Set();
      this.seen.set(msgId, seen);
    }
    const content = typeof msg.content === "string" ? [{ type: "text", text: msg.content }] : msg.content;
    if (!Array.isArray(content)) {
      this.stats.malformed++;
      return;
    }
    for (const b of content) {
      if (!isObj(b)) {
        this.stats.unknownBlocks++;
        continue;
      }
      switch (b.type) {
        case "text":
          if (full && typeof b.text === "string") this.assistantText(t, b.text, msgId, seen);
          break;
        case "tool_use":
        case "server_tool_use":
          this.toolUse(t, b, full);
          break;
        case "thinking":
        case "redacted_thinking":
          break;
        default: {
          const bt = typeof b.type === "string" ? b.type : "";
          if (!bt.endsWith("_tool_result")) this.stats.unknownBlocks++;
          else if (full) this.result(b);
        }
      }
    }
  }

  /** An assistant text block, once per message (lines of one message may repeat a block); the lines of one message make one text. */
  private assistantText(t: Turn, raw: string, msgId: string, seen: Set<string>): void {
    const key = "t:" + raw;
    if (seen.has(key)) return;
    seen.add(key);
    const text = cleanText(raw);
    if (!text) return;
    const last = t.items[t.items.length - 1];
    if (last?.kind === "assistant" && this.lastTextMsg === msgId) {
      last.text += "\n\n" + text;
      t.assistantTexts[t.assistantTexts.length - 1] = last.text;
    } else {
      t.items.push({ kind: "assistant", text });
      t.assistantTexts.push(text);
    }
    this.lastTextMsg = msgId;
  }

  /** A tool call, counted once by its id; read in full mode, waiting for its result. */
  private toolUse(t: Turn, b: Obj, full: boolean): void {
    const id = str(b.id) ?? "";
    if (id && this.toolIds.has(id)) return;
    if (id) this.toolIds.add(id);
    t.toolCount++;
    if (!full) return;
    const name = str(b.name) ?? "?";
    const call: ToolCall = { id, name, input: summarizeToolInput(name, b.input, undefined, this.o.redact) };
    t.tools.push(call);
    t.items.push({ kind: "tool", call });
    if (id) this.pending.set(id, call);
    this.lastTextMsg = undefined;
  }

  /** A tool_result (user entry) or a server tool result (assistant entry): fill its call. */
  private result(b: Obj): void {
    const id = str(b.tool_use_id);
    const call = id === undefined ? undefined : this.pending.get(id);
    if (!call) {
      this.stats.orphanResults++;
      return;
    }
    this.pending.delete(id!);
    const c = b.content;
    let out: string;
    if (typeof c === "string") out = c;
    else if (Array.isArray(c)) {
      const parts: string[] = [];
      let results = 0;
      for (const x of c) {
        if (!isObj(x)) continue;
        if (x.type === "text" && typeof x.text === "string") parts.push(x.text);
        else if (x.type === "image" || x.type === "document") parts.push(mediaPlaceholder(x));
        else if (typeof x.type === "string" && x.type.endsWith("_result")) results++;
        else this.stats.unknownBlocks++;
      }
      if (results) parts.push(`[${results} results]`);
      out = parts.join("\n");
    } else if (c === undefined || c === null) out = "";
    else out = JSON.stringify(c) ?? "";
    const text = cleanText(out);
    call.outputChars = text.length;
    call.output = this.o.redact ? clipRedacted(text, this.o.maxOutput, this.o.redact, clipMarked) : clipMarked(text, this.o.maxOutput);
    if (b.is_error === true) call.isError = true;
  }

  private system(o: Obj): void {
    const sub = str(o.subtype) ?? "(none)";
    if (sub !== "compact_boundary") {
      this.skip(`system:${sub}`);
      return;
    }
    const meta = isObj(o.compactMetadata) ? o.compactMetadata : {};
    const c: Compaction = { uuid: str(o.uuid), timestamp: str(o.timestamp), trigger: str(meta.trigger) };
    if (typeof meta.preTokens === "number") c.preTokens = meta.preTokens;
    this.compactions.push(c);
    if (this.o.mode === "full" && this.cur) this.cur.items.push({ kind: "compaction", trigger: c.trigger, preTokens: c.preTokens });
  }

  private attachment(o: Obj): void {
    this.stats.attachments++;
    const a = o.attachment;
    // A message typed while Claude was working, delivered mid-turn.
    if (isObj(a) && a.type === "queued_command" && typeof a.prompt === "string" && this.o.mode === "full" && this.cur) {
      const text = cleanText(a.prompt);
      if (text) this.cur.items.push({ kind: "user", text });
    }
  }

  finish(end: number, path: string): void {
    if (this.o.validate) {
      if (this.nonBlank === 0) throw new EmptyTranscriptError(path);
      if (this.objects === 0) throw new InputError(`not a JSONL transcript (no line is a JSON object): ${path}`);
      if (!this.decided) this.decide();
    }
    this.ended(this.seg.finish(), end);
    for (const t of this.turns) for (const c of t.tools) if (c.output === undefined) c.unpaired = true;
    for (const [k, n] of this.skips) this.stats.skipped[k] = n;
    if (this.o.redact) this.redactTexts(this.o.redact);
  }

  /** The texts not clipped by the reader, redacted whole (tool inputs and outputs were, before their clip). */
  private redactTexts(redact: Redactor): void {
    const seen = new Map<string, string>();
    const r = (text: string) => {
      let out = seen.get(text);
      if (out === undefined) seen.set(text, (out = redact(text)));
      return out;
    };
    for (const t of this.turns) {
      t.userText = r(t.userText);
      t.assistantTexts = t.assistantTexts.map(r);
      for (const it of t.items) if (it.kind === "user" || it.kind === "assistant") it.text = r(it.text);
    }
    for (const c of this.compactions) if (c.summary !== undefined) c.summary = r(c.summary);
    for (const s of this.rawSummaries) s.summary = r(s.summary);
  }

  summaries(): SessionSummary[] {
    const out: SessionSummary[] = [];
    for (const s of this.rawSummaries) {
      if (this.uuids.has(s.leafUuid)) out.push(s);
      else this.stats.untrustedSummaries++;
    }
    return out;
  }
}

/** Size of a readable regular file, or the typed error for anything else (never waits on a FIFO). */
export function checkTranscriptPath(path: string): number {
  const fd = openRegularFile(path);
  try {
    const size = fstatSync(fd).size;
    if (size === 0) throw new EmptyTranscriptError(path);
    return size;
  } finally {
    closeSync(fd);
  }
}

async function run(path: string, o: BuilderOptions, range?: { start: number; end: number; linesBefore: number }): Promise<{ b: Builder; size: number }> {
  const size = checkTranscriptPath(path);
  const b = new Builder(o);
  let res;
  try {
    res = await scanLines(path, (buf, s, e, off, n) => b.line(buf, s, e, off, n), range ?? {});
  } catch (e) {
    const code = errCode(e);
    if (code === "EACCES" || code === "EPERM" || code === "EISDIR" || code === "EIO") throw new InputError(`cannot read transcript: ${path} (${code})`);
    throw e;
  }
  if (res.binary) throw new InputError(`not a JSONL transcript (binary data): ${path}`);
  b.stats.oversized += res.oversized;
  b.stats.lines += res.oversized;
  b.finish(range ? range.end : res.bytes, path);
  return { b, size };
}

function transcriptOf(path: string, b: Builder, size: number, withSummaries: boolean): Transcript {
  return {
    path,
    sessionId: b.sessionId ?? basename(path).replace(/\.jsonl$/i, ""),
    subagent: b.subagent === true,
    turns: b.turns,
    compactions: b.compactions,
    summaries: withSummaries ? b.summaries() : [],
    stats: b.stats,
    size,
  };
}

/** Read a transcript fully: turns with texts, tool calls paired with results, compactions, summaries. */
export async function readTranscript(path: string, opts: ReadOptions = {}): Promise<Transcript> {
  const subagent = opts.subagent ?? (isSubagentPath(path) ? true : undefined);
  const { b, size } = await run(path, { mode: "full", maxOutput: opts.maxOutput ?? 4000, subagent, validate: true, redact: opts.redact });
  return transcriptOf(path, b, size, true);
}

export interface TurnIndex extends Transcript {
  /** Turn holding an entry whose uuid starts with `locate`, when asked. */
  located?: number;
}

/**
 * The turns of a transcript without their content (uuid, time, user text, tool count, byte range):
 * tool results and progress lines are not parsed. `items`, `tools` and `assistantTexts` are empty.
 */
export async function listTurns(path: string, opts: { subagent?: boolean; locate?: string } = {}): Promise<TurnIndex> {
  const subagent = opts.subagent ?? (isSubagentPath(path) ? true : undefined);
  const { b, size } = await run(path, { mode: "index", maxOutput: 0, subagent, validate: true, locate: opts.locate });
  const t: TurnIndex = transcriptOf(path, b, size, false);
  if (b.located) t.located = b.located.index;
  return t;
}

/** Fully read the turns `from..to` (inclusive) of an index, parsing only their byte range. */
export async function readTurnRange(index: Pick<Transcript, "path" | "turns"> & { subagent?: boolean }, from: number, to: number, opts: ReadOptions = {}): Promise<Turn[]> {
  const first = index.turns[from];
  const last = index.turns[to];
  if (!first || !last || to < from) return [];
  const { b } = await run(
    index.path,
    { mode: "full", maxOutput: opts.maxOutput ?? 4000, subagent: index.subagent, validate: false, redact: opts.redact },
    { start: first.start, end: last.end, linesBefore: first.line - 1 },
  );
  const turns = b.turns;
  // The range holds exactly the same turns as the index (same rules, same bytes).
  if (turns.length !== to - from + 1) {
    const all = await readTranscript(index.path, { ...opts, subagent: index.subagent });
    return all.turns.slice(from, to + 1);
  }
  turns.forEach((t, i) => (t.index = from + i));
  return turns;
}

export { findTurn } from "../../transcript/find-turn.ts";
