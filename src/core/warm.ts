import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { atomicWrite } from "./fsutil.ts";

/**
 * The warm process: `memsearch watch` keeps the index in memory and answers over a local
 * socket, so a hook or a CLI search does not pay for loading the index. Everything here
 * is shared by the server (watch) and its clients (search, hooks, doctor).
 */

export interface WatchInfo {
  pid: number;
  socket: string;
  startedAt: string;
  version: string;
}

/** Request / response of the socket protocol: one JSON object per line each way. */
export type WarmRequest =
  | { op: "ping" }
  | { op: "search"; query: string; topK: number; sourcePrefix?: string }
  | { op: "chunk"; hash: string }
  | { op: "index"; wait?: boolean }
  | { op: "stop" };

export interface WarmResponse {
  ok: boolean;
  error?: string;
  [k: string]: unknown;
}

export function pidFile(dataDir: string): string {
  return join(dataDir, "watch.pid");
}

/**
 * Socket paths are limited to ~104 bytes, and project paths can be long, so the socket
 * lives in a per-user temp folder named by a hash of the data folder.
 */
export function socketPath(dataDir: string): string {
  const id = createHash("sha256").update(dataDir).digest("hex").slice(0, 16);
  if (process.platform === "win32") return `\\\\.\\pipe\\memsearch-${id}`;
  const uid = typeof process.getuid === "function" ? process.getuid() : "u";
  return join(tmpdir(), `memsearch-${uid}`, `${id}.sock`);
}

export function ensureSocketDir(sock: string): void {
  if (process.platform === "win32") return;
  mkdirSync(join(sock, ".."), { recursive: true, mode: 0o700 });
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  // An exited process nobody has reaped yet still answers kill(0) on Linux.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** The running watch process of this data folder, or undefined (a stale PID file is removed). */
export function readWatchInfo(dataDir: string): WatchInfo | undefined {
  let info: WatchInfo;
  try {
    info = JSON.parse(readFileSync(pidFile(dataDir), "utf8"));
  } catch {
    return undefined;
  }
  if (isAlive(info.pid)) return info;
  rmSync(pidFile(dataDir), { force: true });
  return undefined;
}

export function writeWatchInfo(dataDir: string, info: WatchInfo): void {
  atomicWrite(pidFile(dataDir), JSON.stringify(info));
}

/**
 * Send one request to the warm process; undefined when none answers within `timeoutMs`.
 * Bun.connect rather than node:net: loading node:net cost a prompt hook ~6 ms more.
 */
export function askWarm(dataDir: string, req: WarmRequest, timeoutMs: number): Promise<WarmResponse | undefined> {
  const path = socketPath(dataDir);
  if (process.platform === "win32") return askOverNodeNet(path, req, timeoutMs);
  return new Promise((resolve) => {
    let done = false;
    let buf = "";
    let sock: { end(): void } | undefined;
    const finish = (v: WarmResponse | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock?.end();
      resolve(v);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const decoder = new TextDecoder();
    Bun.connect({
      unix: path,
      socket: {
        open(s) {
          sock = s;
          s.write(JSON.stringify(req) + "\n");
        },
        data(_s, chunk) {
          buf += decoder.decode(chunk, { stream: true });
          const nl = buf.indexOf("\n");
          if (nl >= 0) finish(parseLine(buf.slice(0, nl)));
        },
        close: () => finish(undefined),
        error: () => finish(undefined),
      },
    }).catch(() => finish(undefined));
  });
}

function parseLine(line: string): WarmResponse | undefined {
  try {
    return JSON.parse(line) as WarmResponse;
  } catch {
    return undefined;
  }
}

/** Windows named pipes: node:net, loaded only there. */
async function askOverNodeNet(path: string, req: WarmRequest, timeoutMs: number): Promise<WarmResponse | undefined> {
  const { connect } = await import("node:net");
  return new Promise((resolve) => {
    let buf = "";
    const sock = connect(path);
    const finish = (v: WarmResponse | undefined) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    sock.on("connect", () => sock.write(JSON.stringify(req) + "\n"));
    sock.on("data", (d) => {
      buf += d.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl >= 0) finish(parseLine(buf.slice(0, nl)));
    });
    sock.on("error", () => finish(undefined));
    sock.on("close", () => finish(undefined));
  });
}
