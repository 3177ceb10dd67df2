/**
 * Embeddings from a local Ollama: model prefixes, batching and checks on the vectors that come
 * back. The connection, its time limits and what a failure means live in ollama-client.ts; every
 * failure is an EmbedderError whose kind tells the caller whether to fall back to BM25 (down,
 * timeout, model-missing) or to rebuild the index (dimension).
 */
import type { Ollama } from "ollama";
import type { Config } from "../core/config.ts";
import { EmbedderError, type EmbedderErrorKind } from "../core/errors.ts";
import { DEFAULT_TIMEOUT_MS, dimensionError, ollamaClient, ollamaError, ollamaTimeoutMs, resolveOllamaHost, type OllamaCall } from "../core/ollama-client.ts";

export { EmbedderError, type EmbedderErrorKind } from "../core/errors.ts";

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
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
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
      const e = ollamaError(err, this.callInfo(timeoutMs));
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
    if (this.expectDim !== undefined && dim !== this.expectDim) throw dimensionError(dim, this.expectDim);
    if (this.knownDim !== undefined && dim !== this.knownDim) {
      throw new EmbedderError("bad-response", `Ollama returned ${dim}-d vectors after ${this.knownDim}-d ones`);
    }
    this.knownDim = dim;
  }

  private async call<T>(timeoutMs: number, fn: (client: Ollama) => Promise<T>): Promise<T> {
    try {
      return await fn(ollamaClient(this.host, timeoutMs));
    } catch (err) {
      throw ollamaError(err, this.callInfo(timeoutMs));
    }
  }

  private callInfo(timeoutMs: number): OllamaCall {
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
    timeoutMs: ollamaTimeoutMs(config, purpose),
  });
}
