/**
 * Rows of the transcript database as they come back from SQLite: checked column by column, never
 * cast, so a database written by another version (or damaged) yields no row rather than a wrong one.
 */

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object";
}

const isNumber = (x: unknown): x is number => typeof x === "number";

/** A `files` row as the change check needs it. */
export interface KnownFile {
  id: number;
  path: string;
  dev: number;
  ino: number;
  size: number;
  mtime: number;
  /** When the file was found gone from disk (ms), null while it is there. */
  gone_at?: number | null;
}

/** A `files` row as a read of the file needs it (selected inside its transaction). */
export interface FileRow extends KnownFile {
  consumed: number;
  project: string | null;
  state: string;
}

export function isKnownFile(v: unknown): v is KnownFile {
  return (
    isRecord(v) &&
    isNumber(v.id) &&
    typeof v.path === "string" &&
    isNumber(v.dev) &&
    isNumber(v.ino) &&
    isNumber(v.size) &&
    isNumber(v.mtime) &&
    (v.gone_at === undefined || v.gone_at === null || isNumber(v.gone_at))
  );
}

export function isFileRow(v: unknown): v is FileRow {
  return isKnownFile(v) && isRecord(v) && isNumber(v.consumed) && typeof v.state === "string" && (v.project === null || typeof v.project === "string");
}

/** A `dirs` row: a folder's mtime when last listed, and whether all its files were read then (1). */
export function isDirRow(v: unknown): v is { path: string; mtime: number; settled: number } {
  return isRecord(v) && typeof v.path === "string" && isNumber(v.mtime) && isNumber(v.settled);
}

/** The `messages` columns every reader of a message needs, in this order. */
export const MESSAGE_COLS = "session, turn_uuid, prompt_id, uuid, ts, role, text, tools, paths, inputs, results";

export interface MessageColumns {
  session: string;
  turnUuid: string;
  promptId: string | null;
  uuid: string;
  ts: number;
  role: "user" | "assistant";
  text: string;
  /** Tool names, stored space-separated. */
  tools: string[];
  /** File paths the message touched, stored one per line. */
  paths: string[];
  inputs: string;
  results: string;
}

/** The MESSAGE_COLS of a row (selected unprefixed or as `m.*`), or undefined when the ones a hit needs are missing. */
export function messageColumns(r: unknown): MessageColumns | undefined {
  if (!isRecord(r) || typeof r.text !== "string" || typeof r.turn_uuid !== "string") return undefined;
  const str = (x: unknown) => (typeof x === "string" ? x : "");
  return {
    session: str(r.session),
    turnUuid: r.turn_uuid,
    promptId: typeof r.prompt_id === "string" ? r.prompt_id : null,
    uuid: str(r.uuid),
    ts: isNumber(r.ts) ? r.ts : 0,
    role: r.role === "user" ? "user" : "assistant",
    text: r.text,
    tools: str(r.tools).split(" ").filter(Boolean),
    paths: str(r.paths).split("\n").filter(Boolean),
    inputs: str(r.inputs),
    results: str(r.results),
  };
}
