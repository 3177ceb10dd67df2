/**
 * The hub's JSON API: every parameter is checked here (shape and range) before data.ts sees it,
 * and every failure is one JSON `{error}` with a status a page can act on.
 */
import pkg from "../../package.json" with { type: "json" };
import { NOTE_AGENTS } from "../agents/names.ts";
import { ConflictError, MemsearchError, NotFoundError, UsageError, oneLine } from "../core/errors.ts";
import { sanitize } from "../core/redact.ts";
import { ForeignTranscriptError } from "../transcript/files.ts";
import { isDay } from "../core/since.ts";
import { isDailyFile } from "../memory/journal.ts";
import type { HubData, NoteRef } from "./data.ts";
import * as v from "valibot";
import { parseJson } from "../core/json-file.ts";
import { writeErr } from "../core/stdio.ts";

const MAX_QUERY = 500;
const MAX_PAGE = 200;
const PROJECT_ID = /^[0-9a-f]{12}$/;
const CHUNK = /^[0-9a-f]{4,64}$/;

type Params = URLSearchParams;

function one(q: Params, name: string): string | undefined {
  const all = q.getAll(name);
  if (all.length > 1) throw new UsageError(`give ${name} once`);
  return all[0];
}

function need(q: Params, name: string): string {
  const v = one(q, name);
  if (v === undefined || v === "") throw new UsageError(`${name} is required`);
  return v;
}

function int(q: Params, name: string, min: number, max: number, fallback?: number): number {
  const v = one(q, name);
  if (v === undefined || v === "") {
    if (fallback === undefined) throw new UsageError(`${name} is required`);
    return fallback;
  }
  if (!/^\d{1,9}$/.test(v)) throw new UsageError(`${name} must be a whole number`);
  const n = Number(v);
  if (n < min || n > max) throw new UsageError(`${name} must be between ${min} and ${max}`);
  return n;
}

function matching(q: Params, name: string, ok: RegExp | ((v: string) => boolean), what: string): string {
  const v = need(q, name);
  if (!(typeof ok === "function" ? ok(v) : ok.test(v))) throw new UsageError(`${name} must be ${what}`);
  return v;
}

function project(q: Params): string {
  return matching(q, "project", PROJECT_ID, "a project id (12 hex characters)");
}

/** A note is named by its chunk (a search hit) or by its daily file and heading line (a timeline entry). */
function noteRef(q: Params): NoteRef {
  if (q.has("chunk")) return { chunk: matching(q, "chunk", CHUNK, "a chunk hash (hex)").toLowerCase() };
  return { file: matching(q, "file", isDailyFile, "a daily file name (YYYY-MM-DD.md)"), line: int(q, "line", 1, 10_000_000) };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers } });
}

/** `agent`: one of the agents' names, or absent. */
function agentParam(q: Params): string | undefined {
  const a = one(q, "agent");
  if (a === undefined) return undefined;
  if (!(NOTE_AGENTS as readonly string[]).includes(a)) throw new UsageError(`agent must be one of ${NOTE_AGENTS.join(", ")}`);
  return a;
}

/** Answer one `/api/…` request (the token was checked by the server). */
export async function handleApi(data: HubData, path: string, q: Params): Promise<Response> {
  try {
    switch (path) {
      case "/api/ping":
        return json({ ok: true, version: pkg.version, key: data.key, pid: process.pid });
      case "/api/overview":
        return json(await data.overview());
      case "/api/timeline":
        return json(await data.timeline(project(q), int(q, "offset", 0, 100_000_000, 0), int(q, "limit", 1, MAX_PAGE, 40), agentParam(q)));
      case "/api/turns":
        return json(await data.turns());
      case "/api/day":
        return json(data.day(matching(q, "date", isDay, "a day (YYYY-MM-DD)")));
      case "/api/search": {
        const query = need(q, "q").trim();
        if (!query) throw new UsageError("q is required");
        if (query.length > MAX_QUERY) throw new UsageError(`q is longer than ${MAX_QUERY} characters`);
        const mode = one(q, "mode") ?? "notes";
        if (mode !== "notes" && mode !== "recall") throw new UsageError("mode must be notes or recall");
        return json(await data.search(query, mode, int(q, "limit", 1, 100, 10)));
      }
      case "/api/curated":
        return json(data.curatedFile(project(q), int(q, "index", 0, 1_000_000)));
      case "/api/sessions":
        return json(await data.sessions(project(q)));
      case "/api/costs":
        return json(data.costs());
      case "/api/note":
        return json(await data.note(project(q), noteRef(q)));
      case "/api/transcript": {
        if (q.has("path")) {
          const path = need(q, "path");
          const turn = need(q, "turn");
          if (path.length > 4096 || path.includes("\0") || !path.endsWith(".jsonl")) throw new UsageError("path must be a .jsonl transcript");
          if (turn.length > 200) throw new UsageError("turn is too long");
          return json(await data.turn({ path, turn }));
        }
        return json(await data.turn({ project: project(q), ...noteRef(q) }));
      }
      default:
        return json({ error: `no such endpoint: ${path}` }, 404);
    }
  } catch (e) {
    const status = e instanceof UsageError ? 400 : e instanceof ForeignTranscriptError ? 403 : e instanceof NotFoundError ? 404 : 500;
    if (status === 500 && !(e instanceof MemsearchError) && process.env.MEMSEARCH_DEBUG) writeErr(`${(e as Error)?.stack ?? e}\n`);
    // Errors echo settings and file names: redacted like everything else the page shows.
    return json({ error: sanitize(oneLine(e)) }, status);
  }
}

/**
 * A forget from the page: the note by its daily file and the id of its section's text as the page
 * showed it (NoteView.forget), where it stood, and the user's confirmation. A line alone would name
 * whatever stands there now.
 */
const ForgetRequest = v.object({
  project: v.pipe(v.string(), v.regex(PROJECT_ID)),
  file: v.pipe(v.string(), v.check(isDailyFile, "a daily file name (YYYY-MM-DD.md)")),
  id: v.pipe(v.string(), v.regex(/^[0-9a-f]{16}$/)),
  line: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000_000)),
  confirmed: v.literal(true),
});

/** POST /api/forget (the server checked the token, the origin and the content type). */
export async function handleForget(data: HubData, body: string): Promise<Response> {
  const r = parseJson(body, ForgetRequest);
  if (!("value" in r)) return json({ error: sanitize(`bad forget request: ${r.problem}`) }, 400);
  const { project, file, id, line } = r.value;
  try {
    return json(await data.forget(project, { file, id, line }));
  } catch (e) {
    // 409: the note is no longer the one the page showed; the page says so and reads again.
    const status = e instanceof UsageError ? 400 : e instanceof ConflictError ? 409 : e instanceof NotFoundError ? 404 : 500;
    return json({ error: sanitize(oneLine(e)) }, status);
  }
}
