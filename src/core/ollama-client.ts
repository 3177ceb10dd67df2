/**
 * Everything that talks to a local Ollama goes through here: which host, how long a call may
 * take, a client that never writes to stdout, and what a failure means. The embedder and the
 * summariser differ only in what they ask for and in how a failure is worded for their reader.
 */
import { Ollama } from "ollama";
import { CONFIG_KEYS, type Config } from "./config.ts";
import { ConfigError, EmbedderError, type EmbedderErrorKind } from "./errors.ts";
import { clip, firstLine, oneLine, seconds } from "./text.ts";

export const DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434";
const DEFAULT_PORT = "11434";

// ---------------------------------------------------------------------------------------------
// Host

/**
 * The Ollama URL to connect to: the configured value, else $OLLAMA_HOST, else the default.
 * Accepts the shapes Ollama's own OLLAMA_HOST accepts, so one setting serves server and client
 * (the client itself ignores $OLLAMA_HOST).
 */
export function resolveOllamaHost(configured: string, env: Record<string, string | undefined> = process.env): string {
  const fromConfig = unquote(configured);
  if (fromConfig) return normaliseHost(fromConfig, "embedding.host");
  const fromEnv = unquote(env.OLLAMA_HOST ?? "");
  if (fromEnv) return normaliseHost(fromEnv, "OLLAMA_HOST");
  return DEFAULT_OLLAMA_HOST;
}

// Shells and .env files leave quotes in place; Ollama strips them too.
function unquote(value: string): string {
  return value.trim().replace(/^(["'])(.*)\1$/, "$2").trim();
}

function normaliseHost(raw: string, source: string): string {
  const invalid = () => new ConfigError(`${source}: '${raw}' is not an Ollama host (e.g. http://127.0.0.1:11434)`);
  const [scheme, rest] = splitScheme(raw);
  if (scheme !== "http" && scheme !== "https") throw invalid();
  // An explicit scheme means the web default port, as in Ollama's envconfig.Host.
  const defaultPort = rest === raw ? DEFAULT_PORT : scheme === "https" ? "443" : "80";
  const slash = rest.indexOf("/");
  const hostport = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash).replace(/\/+$/, "");
  const parts = splitHostPort(hostport);
  if (!parts) throw invalid();
  const port = parts.port || defaultPort;
  if (!/^\d+$/.test(port) || Number(port) > 65535) throw invalid();
  return `${scheme}://${connectable(parts.host)}:${Number(port)}${path}`;
}

function splitScheme(raw: string): [string, string] {
  const at = raw.indexOf("://");
  return at < 0 ? ["http", raw] : [raw.slice(0, at).toLowerCase(), raw.slice(at + 3)];
}

function splitHostPort(hostport: string): { host: string; port: string } | undefined {
  if (hostport.startsWith("[")) {
    const m = /^(\[[0-9a-fA-F:.%\w]*\])(?::(\d*))?$/.exec(hostport);
    return m ? { host: m[1]!, port: m[2] ?? "" } : undefined;
  }
  // A bare IPv6 address has several colons and no port.
  if ((hostport.match(/:/g) ?? []).length > 1) return { host: `[${hostport}]`, port: "" };
  const [host = "", port = ""] = hostport.split(":");
  if (/[\s@]/.test(host)) return undefined;
  return { host, port };
}

// A server bound to every interface (`:11434`, 0.0.0.0, [::]) is reached on loopback.
function connectable(host: string): string {
  if (host === "" || host === "0.0.0.0") return "127.0.0.1";
  if (host === "[::]") return "[::1]";
  return host.toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Timeouts

/** Why a call is made, which decides how long it may take. */
export type OllamaPurpose = "index" | "query" | "summary" | "session-start" | "doctor";

/** How long one call to Ollama may take: the one place these limits are chosen. */
export function ollamaTimeoutMs(config: Config, purpose: OllamaPurpose): number {
  switch (purpose) {
    // The first call loads the model into memory.
    case "index":
      return config["embedding.timeout_ms"];
    // Someone waits for the results; past this, search answers from keywords alone.
    case "query":
      return config["embedding.query_timeout_ms"];
    // Writing text is far slower than embedding it; past this the extract is written instead.
    case "summary":
      return config["summarizer.timeout_ms"];
    // The banner must not hold up the session: a slow Ollama is shown as unavailable.
    case "session-start":
      return 800;
    // Someone asked whether it works: a cold model load may take a while, but not forever.
    case "doctor":
      return 3_000;
  }
}

/** For an embedder built without a configuration (tests, scripts): what indexing uses by default. */
export const DEFAULT_TIMEOUT_MS: number = CONFIG_KEYS["embedding.timeout_ms"].default;

// ---------------------------------------------------------------------------------------------
// Client

/**
 * An `ollama` client for `host` whose every request gives up after `timeoutMs`. Its methods take
 * no AbortSignal, so the limit goes into fetch.
 *
 * The client console.logs when an error body is not JSON (or not valid JSON), which would corrupt
 * JSON a command or hook writes to stdout. Such bodies are rewritten here into the `{"error": …}`
 * shape the client reads silently, with the message the client itself would have made.
 */
export function ollamaClient(host: string, timeoutMs: number): Ollama {
  const timedFetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    if (res.ok) return res;
    const body = await res.text().catch(() => "");
    const json = res.headers.get("content-type")?.includes("application/json");
    const error = (json ? jsonError(body) : body) || `Error ${res.status}: ${res.statusText}`;
    return Response.json({ error }, { status: res.status, statusText: res.statusText });
  };
  return new Ollama({ host, fetch: timedFetch as typeof fetch });
}

function jsonError(body: string): string | undefined {
  try {
    const error = (JSON.parse(body) as { error?: unknown })?.error;
    return typeof error === "string" && error ? error : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Failures

/** Who a call was for, as a failure's message names them. */
export interface OllamaCall {
  host: string;
  model: string;
  timeoutMs: number;
}

/** What went wrong, before it is worded. */
type Fault = { kind: "timeout" | "down" | "model-missing" } | { kind: "http"; status: number; text: string } | { kind: "bad-response"; text: string };

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  // Bun's names for the same failures.
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
]);

function faultOf(err: unknown): Fault {
  const e = err as { name?: string; code?: string; cause?: { code?: string }; status_code?: number; message?: string };
  const text = String(e?.message ?? err);
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return { kind: "timeout" };
  // Bun puts the code on the error, Node on its cause.
  const code = e?.code ?? e?.cause?.code;
  if (code && NETWORK_CODES.has(code)) return { kind: "down" };
  // The client's ResponseError is not exported: it is known by its name.
  if (e?.name === "ResponseError" && typeof e.status_code === "number") {
    // Another program on the port may also 404; only Ollama's wording names a missing model.
    if (e.status_code === 404 && /model/i.test(text) && /not found/i.test(text)) return { kind: "model-missing" };
    return { kind: "http", status: e.status_code, text };
  }
  return { kind: "bad-response", text };
}

type Wording = { [K in Fault["kind"]]: (call: OllamaCall, fault: Extract<Fault, { kind: K }>) => string };

/**
 * How a failure reads, per use. Embedding failures are shown on their own (search, doctor, the
 * session-start banner), so each names its fix; a chat failure is the reason after `ollama: ` that
 * a note fell back to the extract.
 */
const WORDING: Record<"embed" | "chat", Wording> = {
  embed: {
    timeout: (c) => `Ollama did not answer within ${seconds(c.timeoutMs)} at ${c.host}`,
    down: (c) => `Ollama is not reachable at ${c.host} (start it with 'ollama serve')`,
    "model-missing": (c) => `embedding model '${c.model}' is not pulled (run 'ollama pull ${c.model}')`,
    http: (_, f) => `Ollama error ${f.status}: ${clip(oneLine(f.text), 200)}`,
    "bad-response": (c, f) => `Ollama at ${c.host} gave an unusable answer: ${clip(oneLine(f.text), 200)}`,
  },
  chat: {
    timeout: (c) => `timed out after ${seconds(c.timeoutMs)}`,
    down: (c) => `not reachable at ${c.host}`,
    "model-missing": (c) => `model '${c.model}' not found (run 'ollama pull ${c.model}')`,
    http: (_, f) => clip(`HTTP ${f.status}: ${firstLine(f.text)}`, 200),
    "bad-response": (_, f) => clip(firstLine(f.text), 200),
  },
};

/**
 * Whatever the client or fetch threw, as an EmbedderError whose kind tells the caller what to do
 * (fall back to keywords, rebuild the index) and whose one-line message says what to fix.
 */
export function ollamaError(err: unknown, call: OllamaCall, use: "embed" | "chat" = "embed"): EmbedderError {
  if (err instanceof EmbedderError) return err;
  const fault = faultOf(err);
  const word = WORDING[use][fault.kind] as (call: OllamaCall, fault: Fault) => string;
  return new EmbedderError(fault.kind satisfies EmbedderErrorKind, word(call, fault));
}

/** Vectors of another length than the index holds: only a rebuild can use them. */
export function dimensionError(got: number, expected: number): EmbedderError {
  return new EmbedderError(
    "dimension",
    `Ollama returned ${got}-d vectors but the index holds ${expected}-d vectors (embedding model changed? rebuild with 'memsearch index --force')`,
  );
}
