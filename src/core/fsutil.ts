import { closeSync, constants as fsConstants, fchmodSync, fchownSync, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { errCode, StorageError } from "./errors.ts";
import { oneLine, sha256Hex } from "./text.ts";

/**
 * Write a file so that readers see the old content or the new, never a torn one:
 * temp file in the same directory, fsync, rename. On failure (disk full…) the
 * temp file is removed and the old file is untouched. Parts may come from a generator, so a
 * large file is produced and written piece by piece; `finalize` may then patch bytes already
 * written (a header that records sizes known only at the end).
 */
export function atomicWrite(path: string, data: string | Uint8Array | Iterable<Uint8Array> | ((fd: number) => Iterable<Uint8Array>), finalize?: (fd: number) => void): void {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  let fd: number | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openOwnFile(tmp, "create");
    // A function is given the descriptor: its parts may also write ahead of themselves (writeAt).
    const parts: Iterable<string | Uint8Array> = typeof data === "string" || data instanceof Uint8Array ? [data] : typeof data === "function" ? data(fd) : data;
    for (const part of parts) writeAll(fd, typeof part === "string" ? Buffer.from(part) : part);
    finalize?.(fd);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (e) {
    if (fd !== undefined) try { closeSync(fd); } catch {}
    rmSync(tmp, { force: true });
    throw storageError(path, e);
  }
}

/**
 * Replace a file of someone else's program (an agent's settings) atomically, keeping what the
 * rename would otherwise reset: its permission bits (a 0600 file holding tokens stays 0600) and its
 * owner and group. A file that is not there is created with the default mode.
 */
export function rewriteKeeping(path: string, data: string | Uint8Array): void {
  let st: { mode: number; uid: number; gid: number } | undefined;
  try {
    st = lstatSync(path);
  } catch (e) {
    if (errCode(e) !== "ENOENT") throw storageError(path, e);
  }
  atomicWrite(
    path,
    data,
    st &&
      ((fd) => {
        fchmodSync(fd, st.mode & 0o7777);
        if (st.uid !== process.getuid?.() || st.gid !== process.getgid?.()) fchownSync(fd, st.uid, st.gid);
      }),
  );
}

function writeAll(fd: number, buf: Uint8Array, position?: number): void {
  let off = 0;
  while (off < buf.byteLength) off += writeSync(fd, buf, off, buf.byteLength - off, position === undefined ? null : position + off);
}

/** Overwrite bytes at `position` of an open file (used by atomicWrite finalizers). */
export function writeAt(fd: number, buf: Uint8Array, position: number): void {
  writeAll(fd, buf, position);
}

// Absent on Windows, where a repository cannot plant a symbolic link by being cloned.
const NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;
// A FIFO must neither block the open nor be read or written: see the fstat check below.
const NONBLOCK = fsConstants.O_NONBLOCK ?? 0;
const OWN_FLAGS = {
  read: fsConstants.O_RDONLY,
  append: fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT,
  create: fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL,
} as const;

/**
 * Open a file memsearch keeps (`read`, `append`, or `create` a new one, failing if the name is
 * taken): never through a symbolic link (ELOOP) and only a regular file (ENOTREG otherwise), so a
 * link or a FIFO planted in a cloned repository is neither followed nor waited on (a folder: EISDIR).
 */
export function openOwnFile(path: string, mode: keyof typeof OWN_FLAGS, perm = 0o644): number {
  const fd = openSync(path, OWN_FLAGS[mode] | NOFOLLOW | NONBLOCK, perm);
  let kind = "file";
  try {
    const st = fstatSync(fd);
    kind = st.isFile() ? "file" : st.isDirectory() ? "folder" : "special";
  } finally {
    if (kind !== "file") closeSync(fd);
  }
  if (kind === "folder") throw Object.assign(new Error(`${path} is a folder`), { code: "EISDIR" });
  if (kind !== "file") throw Object.assign(new Error(`${path} is not a regular file`), { code: "ENOTREG" });
  return fd;
}

/** A file memsearch keeps, as text, read as openOwnFile allows; throws as readFileSync does (ELOOP for a link). */
export function readOwnText(path: string): string {
  return readOwnBytes(path).toString("utf8");
}

/** readOwnText's bytes, for a reader that judges the encoding itself. */
export function readOwnBytes(path: string): Buffer {
  const fd = openOwnFile(path, "read");
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The last `maxBytes` of a file memsearch keeps (a log), never through a link, from its first
 * whole line; undefined when it cannot be read. A log rotates well below such a bound: a larger
 * one came with the repository, and only its end is read, whatever its size.
 */
export function readOwnTail(path: string, maxBytes: number): string | undefined {
  let fd: number;
  try {
    fd = openOwnFile(path, "read");
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.allocUnsafe(size - start);
    let got = 0;
    while (got < buf.byteLength) {
      const n = readSync(fd, buf, got, buf.byteLength - got, start + got);
      if (n <= 0) break;
      got += n;
    }
    const bytes = buf.subarray(0, got);
    // Started mid-file: the first line is a piece of one.
    const from = start > 0 ? bytes.indexOf(10) + 1 : 0;
    return from > 0 || start === 0 ? bytes.subarray(from).toString("utf8") : "";
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Append to a file memsearch keeps (a log), made if missing, never through a link. */
export function appendOwnFile(path: string, data: string): void {
  const fd = openOwnFile(path, "append");
  try {
    writeAll(fd, Buffer.from(data));
  } finally {
    closeSync(fd);
  }
}

/**
 * Append a line to a log kept bounded: past `maxBytes` it becomes `oldPath` (replacing the older
 * one) and a new one starts, so the two never hold more than twice that. One write in append mode,
 * so lines of concurrent writers never interleave; no fsync (a log line is not a commit point).
 */
export function appendBounded(path: string, oldPath: string, line: string, maxBytes: number): void {
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {}
  if (size > 0 && size + line.length > maxBytes) renameSync(path, oldPath);
  // The first line may come before anything else has made the folder.
  if (size === 0) mkdirSync(dirname(path), { recursive: true });
  appendOwnFile(path, line);
}

/**
 * A new, empty file at `path`, open for writing: made under a temp name and renamed over `path`,
 * which replaces whatever was there (a link included) instead of writing through it. For logs a
 * child process writes into.
 */
export function freshFile(path: string, perm = 0o644): number {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const fd = openOwnFile(tmp, "create", perm);
  try {
    renameSync(tmp, path);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw storageError(path, e);
  }
  return fd;
}

export { errCode };

/** A write failure as one line naming the file and the cause a user can act on. */
export function storageError(path: string, e: unknown): StorageError {
  if (e instanceof StorageError) return e;
  const code = errCode(e);
  const why =
    code === "ENOSPC" || code === "EDQUOT"
      ? "disk full"
      : code === "EACCES" || code === "EPERM" || code === "EROFS"
        ? "permission denied"
        : oneLine(e);
  return new StorageError(`cannot write ${path}: ${why}; the file is unchanged`);
}

/** A file memsearch keeps, as text, or undefined when it cannot be read (gone, unreadable, a link, not a regular file). */
export function readTextQuiet(path: string): string | undefined {
  try {
    return readOwnText(path);
  } catch {
    return undefined;
  }
}

/** A file's mtime in ms, or 0 when it cannot be stat'ed (gone). */
export function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * An id from outside (hook input: session, prompt) as a file name: anything outside a safe
 * alphabet replaced, no leading dot, a long one cut and hashed so two long ids stay two names.
 */
export function safeName(id: string): string {
  const clean = id.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_");
  if (clean.length <= 80) return clean || "unknown";
  return `${clean.slice(0, 40)}-${sha256Hex(id).slice(0, 16)}`;
}

/** Whether anything is at `p`, a link (even a broken one) included: it is looked at, never followed. */
export function lexists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Whether `p` is a folder (false when it cannot be looked at). */
export function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `p` is a regular file (false when it cannot be looked at). */
export function isRegularFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Modification time, size, inode and change time: a file replaced or written since has another
 * stamp ("" when missing). The change time is what a rewrite in place that puts the size and the
 * modification time back (`rsync --inplace -t`, a restore, `touch -d`) cannot put back: setting a
 * time is itself a change.
 */
export function fileStamp(p: string): string {
  try {
    const s = statSync(p);
    return `${s.mtimeMs}:${s.size}:${s.ino}:${s.ctimeMs}`;
  } catch {
    return "";
  }
}
