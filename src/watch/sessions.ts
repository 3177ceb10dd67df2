import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { readTextQuiet, safeName } from "../core/fsutil.ts";
import { parseJson, readJsonFile } from "../core/json-file.ts";
import { dataFiles, makeDataDir } from "../core/project.ts";
import { claudeProcess, isAlive, processStartTime, type ProcessId } from "../core/processes.ts";

/**
 * The Claude Code sessions of a project, so the watch process lives exactly as long as one of
 * them does: SessionStart registers, SessionEnd unregisters, and a hook-started watch process
 * checks now and then whether any registered session is still alive (Claude Code killed or its
 * terminal closed never runs SessionEnd).
 *
 * A session is `.memsearch/sessions/<safe session id>` holding {pid, startTime, at}: the Claude
 * Code process and its start time, so a PID reused after a crash is not taken for the session.
 */

const SessionRecordShape = v.object({
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
  /** Start time of `pid` as the OS tells it (Linux: /proc stat field 22; macOS: ps lstart); absent where unknown. */
  startTime: v.optional(v.string()),
  /** When the record was last written. */
  at: v.string(),
});

export type SessionRecord = v.InferOutput<typeof SessionRecordShape>;

export function sessionsDir(dataDir: string): string {
  return dataFiles(dataDir).sessionsDir;
}

function sessionFile(dataDir: string, sessionId: string): string {
  return join(sessionsDir(dataDir), safeName(sessionId));
}

// ---------------------------------------------------------------------------------------------
// Session files.

/** Write through a dot-named temp file: readers skip dot names and never see a half file. */
function writeRecord(path: string, rec: SessionRecord): void {
  const dir = join(path, "..");
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${Math.random().toString(36).slice(2, 10)}-${process.pid}.tmp`);
  try {
    writeFileSync(tmp, JSON.stringify(rec), { flag: "wx" });
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

function readRecord(path: string): SessionRecord | undefined {
  return readJsonFile(path, SessionRecordShape);
}

/** SessionStart: record (or refresh) this session as run by the Claude Code process above us. */
export function registerSession(dataDir: string, sessionId: string, who: ProcessId = claudeProcess()): SessionRecord {
  const rec: SessionRecord = { pid: who.pid, ...(who.startTime ? { startTime: who.startTime } : {}), at: new Date().toISOString() };
  makeDataDir(dataDir);
  writeRecord(sessionFile(dataDir, sessionId), rec);
  return rec;
}

/**
 * Any hook of a session may call this (cheap: one read and one small write): re-registers a
 * session whose file is missing or predates start times, else only refreshes its `at`.
 */
export function touchSession(dataDir: string, sessionId: string): void {
  const path = sessionFile(dataDir, sessionId);
  const rec = readRecord(path);
  if (!rec || (!rec.startTime && process.platform !== "win32")) {
    registerSession(dataDir, sessionId);
    return;
  }
  writeRecord(path, { ...rec, at: new Date().toISOString() });
}

/** Alive = the PID runs and, where the record has one, with the same start time (PIDs get reused). */
export function isSessionAlive(rec: Pick<SessionRecord, "pid" | "startTime">): boolean {
  if (!isAlive(rec.pid)) return false;
  if (!rec.startTime) return true;
  const now = processStartTime(rec.pid);
  // Alive but unreadable (e.g. /proc mounted hidepid): nothing disproves it.
  return now === undefined || now === rec.startTime;
}

/** How many registered sessions are alive; the files of dead ones are removed. */
export function liveSessions(dataDir: string): number {
  const dir = sessionsDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let live = 0;
  for (const n of names) {
    if (n.startsWith(".")) continue; // a record being written
    const path = join(dir, n);
    const raw = readTextQuiet(path);
    if (raw === undefined) continue; // removed meanwhile
    const checked = parseJson(raw, SessionRecordShape);
    if ("value" in checked && isSessionAlive(checked.value)) {
      live++;
      continue;
    }
    // Remove only what we judged: a session re-registering under the same id meanwhile stays.
    if (readTextQuiet(path) === raw) rmSync(path, { force: true });
  }
  return live;
}

/** SessionEnd: remove this session; return how many other sessions of the project are still alive. */
export function unregisterSession(dataDir: string, sessionId: string): number {
  rmSync(sessionFile(dataDir, sessionId), { force: true });
  return liveSessions(dataDir);
}
