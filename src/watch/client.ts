import { sha256Hex } from "../core/text.ts";
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { atomicWrite } from "../core/fsutil.ts";
import { readJson } from "../core/json-file.ts";
import { isAlive, mayBeSameProcess } from "../core/processes.ts";
import { dataFiles } from "../core/project.ts";
import { checkReply, type WatchFailure, type WatchReply, type WatchRequest } from "./protocol.ts";

/**
 * The watch process (`memsearch watch`) keeps the index in memory and answers over a local
 * socket, so a hook or a CLI search does not pay for loading the index. This is the transport
 * and the PID file, shared by the server (daemon.ts) and the one client (gateway.ts).
 */

/** `startTime`: the process's own start time (processes.ts), which tells a reused PID apart; older files lack it. */
const WatchInfoShape = v.object({ pid: v.pipe(v.number(), v.integer()), socket: v.string(), startedAt: v.string(), version: v.string(), startTime: v.optional(v.string()) });
export type WatchInfo = v.InferOutput<typeof WatchInfoShape>;

/**
 * Socket paths are limited to ~104 bytes, and project paths can be long, so the socket
 * lives in a per-user temp folder named by a hash of the data folder.
 */
export function socketPath(dataDir: string): string {
  const id = sha256Hex(dataDir).slice(0, 16);
  if (process.platform === "win32") return `\\\\.\\pipe\\memsearch-${id}`;
  const uid = typeof process.getuid === "function" ? process.getuid() : "u";
  return join(tmpdir(), `memsearch-${uid}`, `${id}.sock`);
}

export function ensureSocketDir(sock: string): void {
  if (process.platform === "win32") return;
  mkdirSync(join(sock, ".."), { recursive: true, mode: 0o700 });
}

/** The running watch process of this data folder, or undefined (a stale or unreadable PID file is removed). */
export function readWatchInfo(dataDir: string): WatchInfo | undefined {
  const file = dataFiles(dataDir).watchPid;
  const info = readJson(file, WatchInfoShape);
  // Missing: no watch process. Being written right now never happens (atomicWrite).
  if ("missing" in info) return undefined;
  // A PID alone may have been reused since (a crash, a file committed to the repository).
  if ("value" in info && isAlive(info.value.pid) && mayBeSameProcess(info.value.pid, info.value.startTime, Date.parse(info.value.startedAt) || undefined)) return info.value;
  try {
    rmSync(file, { force: true });
  } catch {}
  return undefined;
}

export function writeWatchInfo(dataDir: string, info: WatchInfo): void {
  atomicWrite(dataFiles(dataDir).watchPid, JSON.stringify(info));
}

/**
 * Send one request to the watch process: its reply as the protocol allows it, or undefined when
 * none arrives within `timeoutMs` or what arrives is not a reply to this request.
 */
export async function askWatch<R extends WatchRequest>(dataDir: string, req: R, timeoutMs: number): Promise<WatchReply<R["op"]> | WatchFailure | undefined> {
  const line = await exchange(socketPath(dataDir), JSON.stringify(req), timeoutMs);
  if (line === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  return checkReply(req.op, raw);
}

/** One line out, one line back. Bun.connect rather than node:net: loading node:net cost a prompt hook more. */
function exchange(path: string, request: string, timeoutMs: number): Promise<string | undefined> {
  if (process.platform === "win32") return exchangeOverNodeNet(path, request, timeoutMs);
  return new Promise((resolve) => {
    let done = false;
    let buf = "";
    let sock: { end(): void } | undefined;
    const finish = (v: string | undefined) => {
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
          s.write(request + "\n");
        },
        data(_s, chunk) {
          buf += decoder.decode(chunk, { stream: true });
          const nl = buf.indexOf("\n");
          if (nl >= 0) finish(buf.slice(0, nl));
        },
        close: () => finish(undefined),
        error: () => finish(undefined),
      },
    }).catch(() => finish(undefined));
  });
}

/** Windows named pipes: node:net, loaded only there. */
async function exchangeOverNodeNet(path: string, request: string, timeoutMs: number): Promise<string | undefined> {
  const { connect } = await import("node:net");
  return new Promise((resolve) => {
    let buf = "";
    const sock = connect(path);
    const finish = (v: string | undefined) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    sock.on("connect", () => sock.write(request + "\n"));
    sock.on("data", (d) => {
      buf += d.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl >= 0) finish(buf.slice(0, nl));
    });
    sock.on("error", () => finish(undefined));
    sock.on("close", () => finish(undefined));
  });
}
