/**
 * The Memory Hub's web server: 127.0.0.1 only, a random token every `/api/` request must carry,
 * the page's files from the binary itself. A running hub is recorded in `~/.memsearch/hub/` so a
 * second `memsearch hub` for the same data finds it and reuses it instead of starting another.
 */
import { fchmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import pkg from "../../package.json" with { type: "json" };
import { UsageError } from "../core/errors.ts";
import { atomicWrite, errCode, readTextQuiet } from "../core/fsutil.ts";
import { parseJson } from "../core/json-file.ts";
import { withFileLock } from "../core/lock.ts";
import { userFiles } from "../core/project.ts";
import { isAlive } from "../core/processes.ts";
import { handleApi, handleForget, json } from "./api.ts";
import { asset } from "./assets.ts";
import type { HubData } from "./data.ts";

export const HOST = "127.0.0.1";

export interface HubInfo {
  pid: number;
  port: number;
  token: string;
  url: string;
  key: string;
  version: string;
  startedAt: string;
}

/** Everything served says: nothing from elsewhere, no framing, no sniffing, no referrer. */
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
};

function hubDir(env = process.env): string {
  return userFiles(env).hubDir;
}

/** The hub folder, made for the user only: it holds the tokens. */
export function ensureHubDir(env = process.env): string {
  const dir = hubDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function hubUrl(port: number, token: string): string {
  return `http://${HOST}:${port}/?token=${token}`;
}

function stateFile(key: string, env = process.env): string {
  return join(hubDir(env), `${key}.json`);
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  // Bun's Web Crypto has node:crypto's constant-time compare; importing node:crypto here put it
  // (hoisted into the one bundle) in the start-up of every command and hook.
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * A request that changes memory (a forget) must come from the hub's own page: the token in the
 * `Authorization` header (which no form or link of another site can set) and the hub's own origin
 * (a page elsewhere, even one that learned the token, is not this page).
 */
function fromOwnPage(req: Request, port: number, token: string): { ok: true } | { ok: false; status: number; why: string } {
  const auth = req.headers.get("authorization");
  if (!auth?.startsWith("Bearer ") || !sameSecret(auth.slice(7).trim(), token)) return { ok: false, status: 401, why: "missing or wrong token: open the address `memsearch hub` printed" };
  const origin = req.headers.get("origin");
  const site = req.headers.get("sec-fetch-site");
  if ((origin !== `http://${HOST}:${port}` && origin !== `http://localhost:${port}`) || (site !== null && site !== "same-origin")) {
    return { ok: false, status: 403, why: "a change to memory must come from the hub's own page" };
  }
  if (!/^application\/json\b/.test(req.headers.get("content-type") ?? "")) return { ok: false, status: 415, why: "send JSON" };
  return { ok: true };
}

/** Larger bodies are not a forget request. */
const MAX_BODY = 4096;

/** The token, from `Authorization: Bearer …` (the page) or `?token=` (a hand-made request). */
function authorized(req: Request, url: URL, token: string): boolean {
  const auth = req.headers.get("authorization");
  if (auth?.startsWith("Bearer ")) return sameSecret(auth.slice(7).trim(), token);
  const q = url.searchParams.get("token");
  return q !== null && sameSecret(q, token);
}

function text(status: number, body: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8", ...SECURITY_HEADERS, ...extra } });
}

interface StartedHub {
  info: HubInfo;
  stop(): void;
}

/** Listen on 127.0.0.1 (a free port unless one is given) and serve `data`. */
function startServer(data: HubData, opts: { port?: number } = {}): StartedHub {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
  let port = 0;
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: HOST,
      port: opts.port ?? 0,
      // Past a search's own time limits: a first recall on a large history builds its index first.
      idleTimeout: 255,
      development: false,
      // Bun shares the port (SO_REUSEPORT) of a non-development server unless told not to: a port
      // already in use must fail, not be split between two hubs.
      reusePort: false,
      async fetch(req) {
        const url = new URL(req.url);
        // A page on another site that resolves its own name to 127.0.0.1 (DNS rebinding) sends its own Host.
        const host = req.headers.get("host");
        if (host !== `${HOST}:${port}` && host !== `localhost:${port}`) return text(403, "Forbidden: open the hub at the address memsearch printed.\n");
        if (req.method === "POST" && url.pathname === "/api/forget") {
          const own = fromOwnPage(req, port, token);
          if (!own.ok) return json({ error: own.why }, own.status, SECURITY_HEADERS);
          const body = await req.text();
          if (body.length > MAX_BODY) return json({ error: "request too large" }, 413, SECURITY_HEADERS);
          const res = await handleForget(data, body);
          for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.headers.set(k, v);
          return res;
        }
        if (req.method !== "GET" && req.method !== "HEAD") return text(405, "Method not allowed\n", { allow: "GET, HEAD" });
        if (url.pathname.startsWith("/api/")) {
          if (!authorized(req, url, token)) {
            return json({ error: "missing or wrong token: open the address `memsearch hub` printed" }, 401, { "www-authenticate": "Bearer", ...SECURITY_HEADERS });
          }
          const res = await handleApi(data, url.pathname, url.searchParams);
          for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.headers.set(k, v);
          return res;
        }
        const a = asset(url.pathname === "/index.html" ? "/" : url.pathname);
        if (!a) return text(404, "Not found\n");
        const headers = { "content-type": a.type, etag: a.etag, "cache-control": "no-cache", ...SECURITY_HEADERS };
        if (req.headers.get("if-none-match") === a.etag) return new Response(null, { status: 304, headers });
        return new Response(req.method === "HEAD" ? null : a.body, { headers });
      },
    });
  } catch (e) {
    if (errCode(e) === "EADDRINUSE" || /in use/i.test(String((e as Error)?.message))) throw new UsageError(`port ${opts.port} is in use; choose another with --port, or leave --port out for a free one`);
    if (errCode(e) === "EACCES") throw new UsageError(`port ${opts.port} needs privileges; choose one above 1023`);
    throw e;
  }
  port = server.port!;
  const info: HubInfo = { pid: process.pid, port, token, url: hubUrl(port, token), key: data.key, version: pkg.version, startedAt: new Date().toISOString() };
  return { info, stop: () => void server.stop(true) };
}

/** A hub's record, as another process wrote it: the URL is rebuilt from the checked port and token. */
const HubRecord = v.object({
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
  port: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
  token: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{16,128}$/)),
  key: v.string(),
  version: v.string(),
  startedAt: v.string(),
});

function checkInfo(text: string): HubInfo | undefined {
  const r = parseJson(text, HubRecord);
  if (!("value" in r)) return undefined;
  const o = r.value;
  return { pid: o.pid, port: o.port, token: o.token, url: hubUrl(o.port, o.token), key: o.key, version: o.version, startedAt: o.startedAt };
}

/** The hub serving `key`, if one runs and answers with that key; a stale record is removed. */
export async function findRunningHub(key: string, env = process.env): Promise<HubInfo | undefined> {
  const file = stateFile(key, env);
  const raw = readTextQuiet(file);
  if (raw === undefined) return undefined;
  const info = checkInfo(raw);
  if (info && info.key === key && isAlive(info.pid) && (await answers(info))) return info;
  // Remove only what was judged: a hub that started meanwhile has written a new record.
  if (readTextQuiet(file) === raw) rmSync(file, { force: true });
  return undefined;
}

async function answers(info: HubInfo): Promise<boolean> {
  try {
    const r = await fetch(`http://${HOST}:${info.port}/api/ping`, { headers: { authorization: `Bearer ${info.token}` }, signal: AbortSignal.timeout(2_000) });
    if (!r.ok) return false;
    const body = (await r.json()) as { key?: unknown };
    return body.key === info.key;
  } catch {
    return false;
  }
}

/**
 * A hub for `data`: the one already running for the same key (reused), else a new server in this
 * process, recorded for the next `memsearch hub` to find. Checked and started under a lock, so two
 * hubs started at once for the same data end up as one.
 */
export async function openHub(data: HubData, opts: { port?: number; env?: NodeJS.ProcessEnv } = {}): Promise<{ reused: true; info: HubInfo } | ({ reused: false } & StartedHub)> {
  const env = opts.env ?? process.env;
  const dir = ensureHubDir(env);
  return withFileLock(
    join(dir, `${data.key}.lock`),
    async () => {
      const running = await findRunningHub(data.key, env);
      if (running) return { reused: true as const, info: running };
      const started = startServer(data, { port: opts.port });
      const file = stateFile(data.key, env);
      try {
        // The token is as good as a password to this hub: for the user only, from the first byte.
        atomicWrite(file, JSON.stringify(started.info, null, 2) + "\n", userOnly);
      } catch (e) {
        started.stop();
        throw e;
      }
      return { reused: false as const, ...started };
    },
    { timeoutMs: 15_000, staleMs: 60_000 },
  );
}

/** Forget this process's record (on exit); another hub's record is left alone. */
export function dropRecord(info: HubInfo, env = process.env): void {
  const file = stateFile(info.key, env);
  try {
    const rec = checkInfo(readTextQuiet(file) ?? "");
    if (rec?.pid === info.pid && rec.port === info.port) {
      rmSync(file, { force: true });
      rmSync(launchPageFile(info.key, env), { force: true });
    }
  } catch {}
}

const userOnly = (fd: number) => fchmodSync(fd, 0o600);

function launchPageFile(key: string, env = process.env): string {
  return join(hubDir(env), `${key}.open.html`);
}

/**
 * A local page that sends the browser on to the hub. The browser is started with this file, not
 * the address: a command line is readable by every user of the machine (ps, /proc), the token in
 * the address would be too, for as long as the browser runs.
 */
export function writeLaunchPage(info: HubInfo, env = process.env): string {
  const file = launchPageFile(info.key, env);
  const url = info.url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  const html = `<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0;url=${url}">\n<title>Memory Hub</title>\n<p><a href="${url}">Open the Memory Hub</a></p>\n`;
  ensureHubDir(env);
  atomicWrite(file, html, userOnly);
  return file;
}
