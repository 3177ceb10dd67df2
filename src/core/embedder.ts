/**
 * Embeddings from a local Ollama through the `ollama` client. Every failure becomes an
 * EmbedderError whose kind tells the caller whether to fall back to BM25 (down, timeout,
 * model-missing) or to rebuild the index (dimension).
 */
import { Ollama } from "ollama";
import type { Config } from "./config.ts";
import { ConfigError, EmbedderError, type EmbedderErrorKind } from "./errors.ts";
import { clip } from "./text.ts";

const squash = (s: string) => s.replace(/\s+/g, " ").trim();

export { EmbedderError, type EmbedderErrorKind } from "./errors.ts";

export const DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434";
const DEFAULT_PORT = "11434";

/** A probe failure as plain data, ready for JSON output or a hook's systemMessage. */
export interface EmbedderFailure {
  kind: EmbedderErrorKind;
  message: string;
}

export type ProbeResult = { ok: true; dim: number } | { ok: false; reason: EmbedderFailure };

export interface OllamaEmbedderOptions {
  host: string;
  model: string;
  /** Texts per /api/embed request. */
  batchSize?: number;
  /** Per-request timeout; Ollama loading a model on first use can take seconds. */
  timeoutMs?: number;
  /** Dimension the index already holds; any other length is refused. */
  expectDim?: number;
}

// ---------------------------------------------------------------------------------------------
// Host

/**
 * The Ollama URL to connect to: the configured value, else $OLLAMA_HOST, else the default.
 * Accepts the shapes Ollama's own OLLAMA_HOST accepts, so one setting serves server and client.
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
// Model prefixes

interface Prefixes {
  document: string;
  query: string;
}

// From the model cards: missing prefixes silently hurt recall.
const PREFIXES: Record<string, Prefixes> = {
  "nomic-embed-text": { document: "search_document: ", query: "search_query: " },
  "nomic-embed-text-v2-moe": { document: "search_document: ", query: "search_query: " },
  "mxbai-embed-large": { document: "", query: "Represent this sentence for searching relevant passages: " },
  embeddinggemma: { document: "title: none | text: ", query: "task: search result | query: " },
};

/** `registry.ollama.ai/library/nomic-embed-text:v1.5` → `nomic-embed-text`. */
export function modelBaseName(model: string): string {
  const last = model.trim().toLowerCase().split("/").pop() ?? "";
  return last.split(":")[0] ?? "";
}

export function modelPrefixes(model: string): { document: (text: string) => string; query: (text: string) => string } {
  const p = PREFIXES[modelBaseName(model)] ?? { document: "", query: "" };
  return { document: (text) => p.document + text, query: (text) => p.query + text };
}

// ---------------------------------------------------------------------------------------------
// Errors

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))}s`;
}

function isModelMissing(status: number, text: string): boolean {
  // Another program on the port may also 404; only Ollama's wording names a missing model.
  return status === 404 && /model/i.test(text) && /not found/i.test(text);
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
]);

interface CallContext {
  host: string;
  model: string;
  timeoutMs: number;
}

/** Turns whatever the client or fetch threw into an EmbedderError with the fix in its message. */
export function classifyError(err: unknown, ctx: CallContext): EmbedderError {
  if (err instanceof EmbedderError) return err;
  const e = err as { name?: string; code?: string; cause?: { code?: string }; status_code?: number; message?: string };
  const message = String(e?.message ?? err);
  if (e?.name === "TimeoutError" || e?.name === "AbortError") {
    return new EmbedderError("timeout", `Ollama did not answer within ${seconds(ctx.timeoutMs)} at ${ctx.host}`);
  }
  const code = e?.code ?? e?.cause?.code;
  if (code && NETWORK_CODES.has(code)) {
    return new EmbedderError("down", `Ollama is not reachable at ${ctx.host} (start it with 'ollama serve')`);
  }
  if (e?.name === "ResponseError" && typeof e.status_code === "number") {
    if (isModelMissing(e.status_code, message)) return modelMissing(ctx.model);
    return new EmbedderError("http", `Ollama error ${e.status_code}: ${clip(squash(message), 200)}`);
  }
  return new EmbedderError("bad-response", `Ollama at ${ctx.host} gave an unusable answer: ${clip(squash(message), 200)}`);
}

function modelMissing(model: string): EmbedderError {
  return new EmbedderError("model-missing", `embedding model '${model}' is not pulled (run 'ollama pull ${model}')`);
}

function dimensionMismatch(got: number, expected: number): EmbedderError {
  return new EmbedderError(
    "dimension",
    `Ollama returned ${got}-d vectors but the index holds ${expected}-d vectors (embedding model changed? rebuild with 'memsearch index --force')`,
  );
}

// ---------------------------------------------------------------------------------------------
// stdout guard

// The client console.logs on non-JSON error bodies, which would corrupt JSON on stdout.
// A depth count keeps overlapping calls from restoring each other's replacement.
let quietDepth = 0;
let savedLog: typeof console.log = console.log;

async function withStdoutGuard<T>(fn: () => Promise<T>): Promise<T> {
  if (quietDepth++ === 0) {
    savedLog = console.log;
    console.log = (...args: unknown[]) => console.error(...args);
  }
  try {
    return await fn();
  } finally {
    if (--quietDepth === 0) console.log = savedLog;
  }
}

// ---------------------------------------------------------------------------------------------
// Vector checks

function toVectors(raw: unknown, count: number, host: string): Float32Array[] {
  const embeddings = (raw as { embeddings?: unknown })?.embeddings;
  if (!Array.isArray(embeddings) || embeddings.length !== count) {
    const got = Array.isArray(embeddings) ? embeddings.length : "no";
    throw new EmbedderError("bad-response", `Ollama at ${host} returned ${got} vectors for ${count} texts`);
  }
  return embeddings.map((v) => toVector(v, host));
}

function toVector(v: unknown, host: string): Float32Array {
  const bad = (why: string) => new EmbedderError("bad-response", `Ollama at ${host} returned ${why}`);
  if (!Array.isArray(v) || v.length === 0) throw bad("an empty or malformed vector");
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== "number" || !Number.isFinite(x)) throw bad("a vector with non-finite values");
    out[i] = x;
  }
  return out;
}

function embeddingLength(modelInfo: unknown): number | undefined {
  if (!modelInfo || typeof modelInfo !== "object") return undefined;
  const info = modelInfo as Record<string, unknown>;
  const arch = info["general.architecture"];
  const exact = typeof arch === "string" ? info[`${arch}.embedding_length`] : undefined;
  const any = exact ?? Object.entries(info).find(([k]) => k.endsWith(".embedding_length"))?.[1];
  return typeof any === "number" && Number.isInteger(any) && any > 0 ? any : undefined;
}

// ---------------------------------------------------------------------------------------------
// Embedder

export class OllamaEmbedder {
  readonly host: string;
  readonly model: string;
  readonly batchSize: number;
  readonly timeoutMs: number;
  private readonly expectDim: number | undefined;
  private readonly prefixes: ReturnType<typeof modelPrefixes>;
  private knownDim: number | undefined;

  constructor(opts: OllamaEmbedderOptions) {
    this.host = resolveOllamaHost(opts.host);
    this.model = opts.model;
    this.batchSize = Math.max(1, Math.floor(opts.batchSize ?? 64));
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.expectDim = opts.expectDim;
    this.knownDim = opts.expectDim;
    this.prefixes = modelPrefixes(opts.model);
  }

  /** Vector length, known once a probe or an embed has answered (or from expectDim). */
  get dim(): number | undefined {
    return this.knownDim;
  }

  async embedDocuments(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize).map(this.prefixes.document);
      out.push(...(await this.embedRaw(batch, this.timeoutMs)));
    }
    return out;
  }

  async embedQuery(text: string, timeoutMs = this.timeoutMs): Promise<Float32Array> {
    const [vector] = await this.embedRaw([this.prefixes.query(text)], timeoutMs);
    return vector!;
  }

  /** Is the server up and the model pulled? Never throws. */
  async probe(timeoutMs = this.timeoutMs): Promise<ProbeResult> {
    try {
      const dim = (await this.dimFromShow(timeoutMs)) ?? (await this.embedRaw(["probe"], timeoutMs))[0]!.length;
      this.acceptDim(dim);
      return { ok: true, dim };
    } catch (err) {
      const e = classifyError(err, this.context(timeoutMs));
      return { ok: false, reason: { kind: e.kind, message: e.message } };
    }
  }

  /** The dimension the server says the model has (from /api/show), without checking it against vectors seen. */
  async reportedDim(timeoutMs = this.timeoutMs): Promise<number | undefined> {
    try {
      return await this.dimFromShow(timeoutMs);
    } catch {
      return undefined;
    }
  }

  private async dimFromShow(timeoutMs: number): Promise<number | undefined> {
    const info = await this.call(timeoutMs, (c) => c.show({ model: this.model }));
    const caps = (info as { capabilities?: unknown }).capabilities;
    if (Array.isArray(caps) && caps.length > 0 && !caps.includes("embedding")) {
      throw new EmbedderError(
        "bad-response",
        `model '${this.model}' cannot make embeddings (set embedding.model to one such as nomic-embed-text)`,
      );
    }
    return embeddingLength(info.model_info);
  }

  private async embedRaw(input: string[], timeoutMs: number): Promise<Float32Array[]> {
    if (input.length === 0) return [];
    const res = await this.call(timeoutMs, (c) => c.embed({ model: this.model, input, truncate: true }));
    const vectors = toVectors(res, input.length, this.host);
    for (const v of vectors) this.acceptDim(v.length);
    return vectors;
  }

  private acceptDim(dim: number): void {
    if (this.expectDim !== undefined && dim !== this.expectDim) throw dimensionMismatch(dim, this.expectDim);
    if (this.knownDim !== undefined && dim !== this.knownDim) {
      throw new EmbedderError("bad-response", `Ollama returned ${dim}-d vectors after ${this.knownDim}-d ones`);
    }
    this.knownDim = dim;
  }

  private async call<T>(timeoutMs: number, fn: (client: Ollama) => Promise<T>): Promise<T> {
    // The client's methods take no AbortSignal; a fetch wrapper is the only way to bound them.
    const timed = (url: string | URL | Request, init?: RequestInit) =>
      fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const client = new Ollama({ host: this.host, fetch: timed as typeof fetch });
    try {
      return await withStdoutGuard(() => fn(client));
    } catch (err) {
      throw classifyError(err, this.context(timeoutMs));
    }
  }

  private context(timeoutMs: number): CallContext {
    return { host: this.host, model: this.model, timeoutMs };
  }
}

/** The embedder the config asks for, or null when embeddings are turned off. */
export function embedderFor(config: Config, purpose: "index" | "query" = "index"): OllamaEmbedder | null {
  if (config["embedding.provider"] === "none") return null;
  return new OllamaEmbedder({
    host: resolveOllamaHost(config["embedding.host"]),
    model: config["embedding.model"],
    batchSize: config["embedding.batch_size"],
    timeoutMs: purpose === "index" ? config["embedding.timeout_ms"] : config["embedding.query_timeout_ms"],
  });
}
