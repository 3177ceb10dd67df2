/**
 * The archive: conversations whose transcript Claude Code deleted (`cleanupPeriodDays`) and whose
 * rows the index keeps (files.gone_at set). What `transcript --turn` shows of a deleted file and
 * what `stats` says of the archive's size. Everything here was redacted before it was stored.
 * Never prints.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { ToolCall, Turn, TurnItem } from "../transcript/types.ts";
import { SCHEMA_VERSION } from "./db.ts";
import { isRecord, MESSAGE_COLS, messageColumns } from "./rows.ts";

export interface ArchivedFile {
  id: number;
  path: string;
  project: string;
  session: string;
  /** When it was found gone from disk (ms). */
  goneAt: number;
}

/** The archived transcript at `path` (as it was indexed), if the index holds one. */
export function archivedFile(db: Database, path: string): ArchivedFile | undefined {
  const r = db.query("SELECT id, path, project, session, gone_at FROM files WHERE path = ? AND gone_at IS NOT NULL").get(resolve(path));
  if (!isRecord(r) || typeof r.id !== "number" || typeof r.path !== "string" || typeof r.gone_at !== "number") return undefined;
  return { id: r.id, path: r.path, project: typeof r.project === "string" ? r.project : "", session: typeof r.session === "string" ? r.session : "", goneAt: r.gone_at };
}

/**
 * The turns of an archived transcript as the index kept them, in file order: the prompt, the
 * assistant's texts, and per message its tool calls (their input summaries; the results excerpt
 * kept per message shown on its last call). Thinking and full tool output were never stored.
 */
export function archivedTurns(db: Database, fileId: number): Turn[] {
  const turns: Turn[] = [];
  const byUuid = new Map<string, Turn>();
  for (const r of db.query(`SELECT ${MESSAGE_COLS} FROM messages WHERE file_id = ? ORDER BY id`).all(fileId)) {
    const m = messageColumns(r);
    if (!m) continue;
    let t = byUuid.get(m.turnUuid);
    if (!t) {
      t = {
        index: turns.length,
        uuid: m.turnUuid,
        ...(m.ts ? { timestamp: new Date(m.ts).toISOString() } : {}),
        ...(m.promptId ? { promptId: m.promptId } : {}),
        kind: "prompt",
        userText: "",
        assistantTexts: [],
        tools: [],
        items: [],
        toolCount: 0,
        line: 0,
        start: 0,
        end: 0,
      };
      byUuid.set(m.turnUuid, t);
      turns.push(t);
    }
    if (m.role === "user") {
      t.userText = t.userText ? `${t.userText}\n\n${m.text}` : m.text;
      if (m.text.startsWith("/")) t.kind = "command";
      continue;
    }
    if (m.text) {
      t.assistantTexts.push(m.text);
      t.items.push({ kind: "assistant", text: m.text });
    }
    const inputs = m.inputs ? m.inputs.split("\n") : [];
    m.tools.forEach((name, i) => {
      const last = i === m.tools.length - 1;
      const call: ToolCall = { id: "", name, input: inputs.length === m.tools.length ? inputs[i]! : "", output: last ? m.results : "" };
      t.tools.push(call);
      t.items.push({ kind: "tool", call } satisfies TurnItem);
      t.toolCount++;
    });
  }
  return turns;
}

export interface ArchiveStats {
  /** Transcripts deleted from disk whose conversations the index keeps. */
  transcripts: number;
  messages: number;
  /** Session table rows (plans, summaries, todo lists, first prompts) of those transcripts. */
  sessionRows: number;
  /** Characters of text kept for them (messages and session rows). */
  chars: number;
  /** The earliest a kept transcript disappeared (ms). */
  oldestGoneAt?: number;
}

/**
 * The archive's size, read from the index file without creating, healing or updating it (stats
 * must not write). Undefined when there is no index yet or it is of another version or unreadable.
 */
export function archiveStats(path: string): ArchiveStats | undefined {
  return readOnly(path, (db) => {
    const f = db.query("SELECT count(*) AS n, min(gone_at) AS oldest FROM files WHERE gone_at IS NOT NULL").get();
    const m = db
      .query("SELECT count(*) AS n, coalesce(sum(length(text) + length(inputs) + length(results)), 0) AS chars FROM messages WHERE file_id IN (SELECT id FROM files WHERE gone_at IS NOT NULL)")
      .get();
    const c = db.query("SELECT count(*) AS n, coalesce(sum(length(text)), 0) AS chars FROM session_content WHERE file_id IN (SELECT id FROM files WHERE gone_at IS NOT NULL)").get();
    if (!isRecord(f) || !isRecord(m) || !isRecord(c)) return undefined;
    return {
      transcripts: Number(f.n) || 0,
      messages: Number(m.n) || 0,
      sessionRows: Number(c.n) || 0,
      chars: (Number(m.chars) || 0) + (Number(c.chars) || 0),
      ...(typeof f.oldest === "number" ? { oldestGoneAt: f.oldest } : {}),
    };
  });
}

/**
 * An archived transcript and its turns, read from the index file at `dbPath` without creating or
 * changing it; undefined when the index holds no archived transcript at `path`.
 */
export function readArchivedTranscript(dbPath: string, path: string): { file: ArchivedFile; turns: Turn[] } | undefined {
  return readOnly(dbPath, (db) => {
    const file = archivedFile(db, path);
    return file ? { file, turns: archivedTurns(db, file.id) } : undefined;
  });
}

/**
 * `read` over the index file opened read-only (never created, healed or updated); undefined when
 * there is no index, it is of another version, or it cannot be read.
 */
function readOnly<T>(path: string, read: (db: Database) => T | undefined): T | undefined {
  if (!existsSync(path)) return undefined;
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true, strict: true });
    db.run("PRAGMA busy_timeout = 2000");
    const v = db.query("PRAGMA user_version").get();
    if (!isRecord(v) || v.user_version !== SCHEMA_VERSION) return undefined;
    return read(db);
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}
