/**
 * Other agents' transcripts in the conversation index, beside Claude Code's: Codex rollouts,
 * Gemini CLI chats, OpenCode sessions, each listed and read by its agent's adapter (given as a
 * TranscriptSource: this part never learns agent names). Unlike Claude Code's append-only files,
 * a Gemini chat is rewritten in place (upserts, rewinds) and an OpenCode session lives in a
 * database, so a transcript whose size or time changed is read again whole and its rows replaced;
 * an unchanged one costs nothing but its line in the listing. One gone from the listing keeps its
 * rows, archived, as a deleted Claude Code transcript does. Rows are redacted like every row.
 */
import type { Database } from "bun:sqlite";
import { dirname } from "node:path";
import { clip } from "../core/text.ts";
import { clipRedacted, sanitize } from "../core/redact.ts";
import { projectOfCwd } from "../transcript/files.ts";
import type { TranscriptSource, TranscriptStamp, Turn } from "../transcript/types.ts";
import { archiveFiles, deleteFileRows, INPUTS_MAX, inWrite, isKnownFile, KNOWN_COLS, metaValue, RESULTS_MAX, rowWriter, setMeta, TEXT_MAX, type KnownFile, type NewMessage } from "./rows.ts";

/** What an update counts (ingest.ts: UpdateReport). */
interface Counts {
  files: number;
  read: number;
  reread: number;
  archived: number;
  messages: number;
  bytes: number;
  errors: { path: string; message: string }[];
}

/** Bring the index up to date with each source's transcripts; what fails is said in `report.errors`, the rest still counts. */
export async function updateOtherTranscripts(db: Database, sources: readonly TranscriptSource[], report: Counts, now: number): Promise<void> {
  const cwdCache = new Map<string, string>();
  for (const source of sources) {
    const versionKey = `others_version:${source.agent}`;
    const version = source.version?.();
    if (version !== undefined && version === storedVersion(db, versionKey)) continue;
    const errors = report.errors.length;
    let listed: TranscriptStamp[];
    try {
      listed = await source.list();
    } catch (e) {
      // No listing: nothing is taken for gone.
      report.errors.push({ path: source.agent, message: (e as Error)?.message ?? String(e) });
      continue;
    }
    report.files += listed.length;
    const known = new Map<string, KnownFile>();
    for (const r of db.query(`SELECT ${KNOWN_COLS} FROM files WHERE agent = ?`).all(source.agent)) if (isKnownFile(r)) known.set(r.path, r);
    for (const t of listed) {
      const k = known.get(t.path);
      known.delete(t.path);
      if (k && k.gone_at == null && k.size === t.size && k.mtime === t.mtime) continue;
      try {
        const read = await source.read(t.path);
        const n = writeTranscript(db, source.agent, t, read, cwdCache);
        report.read++;
        if (k) report.reread++;
        report.messages += n;
        report.bytes += t.size;
      } catch (e) {
        report.errors.push({ path: t.path, message: (e as Error)?.message ?? String(e) });
      }
    }
    report.archived += archiveFiles(db, [...known.values()].filter((k) => k.gone_at == null), now);
    // A transcript that failed is tried again next time: the version is kept only when all were read.
    if (version !== undefined && report.errors.length === errors) setMeta(db, versionKey, version);
  }
}

function storedVersion(db: Database, key: string): string | undefined {
  const value = metaValue(db, key);
  return typeof value === "string" ? value : undefined;
}

/** Replace a transcript's rows with what it holds now, in one write transaction; returns the messages written. */
function writeTranscript(db: Database, agent: string, t: TranscriptStamp, read: { sessionId?: string; cwd?: string; turns: Turn[] }, cwdCache: Map<string, string>): number {
  const project = read.cwd ? projectOfCwd(read.cwd, cwdCache) : `${agent}-projects:${dirname(t.path)}`;
  const session = read.sessionId ?? t.path;
  return inWrite(db, () => {
    const cur = db.query("SELECT id FROM files WHERE path = ?").get(t.path) as { id?: unknown } | null;
    let fileId: number;
    if (cur && typeof cur.id === "number") {
      fileId = cur.id;
      deleteFileRows(db, fileId);
      db.query("UPDATE files SET size = ?, mtime = ?, consumed = ?, project = ?, session = ?, gone_at = NULL, agent = ? WHERE id = ?").run(t.size, t.mtime, t.size, project, session, agent, fileId);
    } else {
      const r = db.query("INSERT INTO files (path, dev, ino, size, mtime, consumed, project, session, state, agent) VALUES (?, 0, 0, ?, ?, ?, ?, ?, '{}', ?) RETURNING id").get(t.path, t.size, t.mtime, t.size, project, session, agent) as { id: number };
      fileId = r.id;
    }
    const w = rowWriter(db);
    let n = 0;
    let first = true;
    for (const turn of read.turns) {
      const parsed = turn.timestamp ? Date.parse(turn.timestamp) : NaN;
      const ts = Number.isFinite(parsed) ? parsed : t.mtime;
      const base = { session, turnUuid: turn.uuid, promptId: turn.promptId ?? null, ts };
      const user = clip(sanitize(turn.userText), TEXT_MAX);
      for (const m of messagesOf(turn, user, base)) {
        w.add(fileId, project, m);
        n++;
      }
      if (first && user.trim()) {
        first = false;
        w.session(fileId, project, session, { kind: "first_prompt", key: "first_prompt", title: "First prompt", text: user, ref: "", turnUuid: turn.uuid, ts });
      }
    }
    return n;
  });
}

/** A turn as two rows: the prompt, and everything the agent said and did for it (each kept only when it holds something to find). */
function messagesOf(turn: Turn, user: string, base: Pick<NewMessage, "session" | "turnUuid" | "promptId" | "ts">): NewMessage[] {
  const out: NewMessage[] = [];
  const empty = { tools: "", paths: "", inputs: "", results: "" };
  if (user) out.push({ ...base, ...empty, uuid: turn.uuid, msgKey: turn.uuid, role: "user", text: user });
  const text = clip(turn.assistantTexts.map(sanitize).join("\n\n"), TEXT_MAX);
  const inputs = clip(turn.tools.map((c) => sanitize(c.input)).filter(Boolean).join("\n"), INPUTS_MAX);
  // Redacted, then clipped: a clip first would leave pieces of a secret it cut.
  const results = clip(turn.tools.map((c) => (c.output ? clipRedacted(c.output, RESULTS_MAX) : "")).filter(Boolean).join("\n"), RESULTS_MAX);
  const tools = turn.tools.map((c) => c.name).join(" ");
  if (text || tools || results) out.push({ ...base, uuid: `${turn.uuid}:answer`, msgKey: `${turn.uuid}:answer`, role: "assistant", text, tools, paths: "", inputs, results });
  return out;
}
