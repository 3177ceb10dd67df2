/**
 * Lines this machine wrote, told from lines a repository brought: a log kept in the project (the
 * model-call ledger) is committed as easily as any file, and a committed ledger showed costs nobody
 * spent. Each line this machine writes carries `"mac"`, an HMAC-SHA-256 of the line's own bytes
 * under a key kept in the user's folder (`~/.memsearch/machine.key`, made on first use, 0600). A
 * repository can copy a line, never make one: the key never leaves this machine, and the mark
 * covers the whole line. The same key marks what a queued turn may read (memory/pending.ts).
 */
import { closeSync, linkSync, mkdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { errCode, openOwnFile, readOwnText } from "./fsutil.ts";
import { userFiles } from "./project.ts";

const KEY_RE = /^[0-9a-f]{64}$/;
const MARK_RE = /,"mac":"([0-9a-f]{32})"\}$/;

let cached: { file: string; key: string } | undefined;

/** This machine's key; with `create`, made when there is none yet. undefined: no key (nothing was marked here). */
export function machineKey(env = process.env, create = false): string | undefined {
  const file = userFiles(env).machineKey;
  if (cached?.file === file) return cached.key;
  let read = readKey(file);
  if (read.state !== "ok" && read.state !== "unreadable" && create) {
    mkdirSync(dirname(file), { recursive: true });
    // Written whole under another name, then linked into place: a process that finds the key
    // never reads it half written (two Stop hooks of one moment both make their first mark).
    const key = `${randomHex(32)}\n`;
    const tmp = `${file}.${process.pid}.${randomHex(4)}`;
    try {
      writeNew(tmp, key);
      placeKey(tmp, file, key);
    } finally {
      rmSync(tmp, { force: true });
    }
    read = readKey(file); // another process may have made it first: theirs is the key
  }
  if (read.state !== "ok") return undefined;
  cached = { file, key: read.key };
  return read.key;
}

/** File systems' answers to a hard link they cannot make. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/** The key written at `tmp`, put at `file` unless a key is there already (another process's: theirs is the key). */
function placeKey(tmp: string, file: string, key: string): void {
  let code: string | undefined;
  try {
    return linkSync(tmp, file);
  } catch (e) {
    code = errCode(e);
    if (code !== "EEXIST" && !NO_LINKS.has(code ?? "")) throw e;
  }
  // A key file that holds no key (its writer killed, by an older version) marks nothing: replaced.
  if (code === "EEXIST") {
    if (readKey(file).state === "invalid") renameSync(tmp, file);
    return;
  }
  // A file system without hard links: made in place, as the only way left.
  try {
    writeNew(file, key);
  } catch (e) {
    if (errCode(e) !== "EEXIST") throw e;
  }
}

/** A new file (never one already there, never through a link), only the user's, holding `text`. */
function writeNew(path: string, text: string): void {
  const fd = openOwnFile(path, "create", 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * The key file as read: a key, none there, a file that holds no key (replaced when a key is
 * made), or one that cannot be read (a link, no permission: left alone, nothing is marked).
 */
function readKey(file: string): { state: "ok"; key: string } | { state: "absent" | "invalid" | "unreadable" } {
  let text: string;
  try {
    text = readOwnText(file);
  } catch (e) {
    return { state: errCode(e) === "ENOENT" ? "absent" : "unreadable" };
  }
  const k = text.trim();
  return KEY_RE.test(k) ? { state: "ok", key: k } : { state: "invalid" };
}

// Bun's hasher, not node:crypto's createHmac (the same HMAC): node:crypto brings Node's streams
// with it, milliseconds the Stop hook and the prompt hook would pay on every turn.
const mac = (key: string, body: string) => new Bun.CryptoHasher("sha256", key).update(body).digest("hex").slice(0, 32);

const randomHex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");

/** A JSON object line (`{…}`, a final newline allowed), marked as this machine's. */
export function markLine(line: string, env = process.env): string {
  const body = line.replace(/\n$/, "");
  if (!body.endsWith("}") || body === "{}") throw new Error("only a non-empty JSON object line can be marked");
  return `${body.slice(0, -1)},"mac":"${markOf(body, env)}"}\n`;
}

/** A mark of `text` under this machine's key (made when there is none), for a field of a file kept in a project; throws when no key can be kept. */
export function markOf(text: string, env = process.env): string {
  const key = machineKey(env, true);
  if (key === undefined) throw new Error(`no key in ${userFiles(env).machineKey}`);
  return mac(key, text);
}

/** Whether `mark` is this machine's mark of `text`. */
export function isMarkOf(mark: string | undefined, text: string, env = process.env): boolean {
  const key = mark === undefined ? undefined : machineKey(env);
  return key !== undefined && mac(key, text) === mark;
}

/** The line as it was before it was marked, when this machine marked it; undefined otherwise. */
export function unmarkLine(line: string, key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  const m = MARK_RE.exec(line);
  if (!m) return undefined;
  const body = `${line.slice(0, m.index)}}`;
  return mac(key, body) === m[1] ? body : undefined;
}
