/**
 * Typed errors thrown by the core. The command layer turns them into a one-line
 * message and an exit code; the core itself never prints.
 */
export class MemsearchError extends Error {
  /** Process exit code the CLI should use. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** Bad flag, bad value, missing argument. */
export class UsageError extends MemsearchError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** Malformed or invalid configuration (TOML syntax, unknown key, wrong type). */
export class ConfigError extends MemsearchError {}

/** A path, chunk or transcript the user named does not exist. */
export class NotFoundError extends MemsearchError {}

/**
 * What the user named is no longer what they were shown: a note changed, moved or went since
 * (another tab, the CLI, a `git pull`, a hand edit). Nothing was done; look again.
 */
export class ConflictError extends MemsearchError {}

/** The input exists but cannot be read as what it should be. */
export class InputError extends MemsearchError {}

/** The transcript is not a Claude Code transcript (the reference exits 3 here). */
export class UnrecognisedFormatError extends MemsearchError {
  constructor(message: string) {
    super(message, 3);
  }
}

/**
 * The index file cannot be used as it is: damaged, cut short, not an index at all. Never the
 * user's problem to fix by hand: the index is a cache of the markdown and is rebuilt from it.
 */
export class IndexDamagedError extends MemsearchError {
  /** What is wrong, in a few words ("checksum mismatch in the vectors"). */
  readonly reason: string;
  constructor(reason: string) {
    super(`the index is unreadable (${reason})`);
    this.reason = reason;
  }
}

/**
 * The vector block failed its CRC-32 when a search first read it (a command's search checks it in
 * the scan that scores it, not before: Store.open's `deferVectorCheck`). Nothing it read was
 * ranked; the search opens the index again, checked at load, and heals it as any damage found there.
 */
export class VectorsDamagedError extends IndexDamagedError {}

/** Writing to disk failed (disk full, permissions); nothing already written was replaced. */
export class StorageError extends MemsearchError {}

/**
 * The project's data folder holds something memsearch never makes (a symbolic link, a special
 * file) or lies outside the project: following it could read or write anywhere, or hang, so the
 * folder is not used at all and nothing is written.
 */
export class UnsafeDataError extends MemsearchError {}

// Error handlers want a thrown value's message on one line; they find it next to the errors.
export { oneLine } from "./text.ts";

/** What went wrong talking to Ollama (see ollama-client.ts); each kind has its own fix for the user. */
export type EmbedderErrorKind = "down" | "model-missing" | "http" | "timeout" | "dimension" | "bad-response";

/** Ollama could not answer (an embedding or a chat call): the message is one line naming the fix. */
export class EmbedderError extends MemsearchError {
  readonly kind: EmbedderErrorKind;
  constructor(kind: EmbedderErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/**
 * Orama's internals do not have the shape memsearch depends on (orama-internals.ts): the Orama
 * version changed. A bug in memsearch to fix there, never the user's to work around.
 */
export class OramaShapeError extends MemsearchError {
  /** The field that is missing or changed, as a path ("db.data.index.fieldLengths"). */
  readonly field: string;
  constructor(field: string, expected: string, writtenFor: string, installed: string) {
    super(`Orama's internals changed: ${field} is missing or no longer ${expected} (memsearch was written for Orama ${writtenFor}, this is ${installed}); the Orama version changed, update src/index/orama-internals.ts`);
    this.field = field;
  }
}

/** The code of a system error (`ENOENT`, `EPERM`…), undefined for anything else. */
export function errCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined;
}
