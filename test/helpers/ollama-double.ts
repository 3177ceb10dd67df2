/**
 * A local HTTP stand-in for Ollama: the REST shapes of /api/embed, /api/tags, /api/show,
 * /api/chat and /api/generate, with switchable failure modes. Tests, the benchmark and e2e
 * runs of the compiled binary talk to it through the real `ollama` client, so the product
 * code path is the one a user's machine runs.
 *
 * Standalone: `bun test/helpers/ollama-double.ts --port 11434 --dim 768 [--models a,b] [--mode slow --delay 500]`
 */

export type DoubleMode = "ok" | "wrong-dim" | "http-500" | "slow" | "non-json-error";

export interface OllamaDoubleOptions {
  dim?: number;
  models?: string[];
  mode?: DoubleMode;
  delayMs?: number;
  chatReply?: string;
  /** Fixed port for the standalone server; tests leave it to the OS. */
  port?: number;
  /**
   * What a text embeds to, instead of the hashed bag of words (the text comes without its model
   * card prefix; the vector must have `dim` values). The evaluation's GloVe double serves a real
   * model's word vectors through this same server (scripts/eval/glove.ts).
   */
  embed?: (text: string) => number[];
  /**
   * Like `embed`, for a model that embeds many texts at once and answers later (the evaluation's
   * TF.js sentence encoder, scripts/eval/use.ts): it gets a request's texts together, each without
   * its model card prefix. Takes the place of `embed` when both are given; a throw is Ollama's 500.
   */
  embedMany?: (texts: string[]) => Promise<number[][]>;
}

export interface RecordedRequest {
  path: string;
  body: any;
}

export interface OllamaDouble {
  host: string;
  port: number;
  requests: RecordedRequest[];
  setMode(mode: DoubleMode): void;
  stop(): Promise<void>;
}

// Model cards' prefixes: stripped so a query and a document about the same words land close.
const INSTRUCTION_PREFIXES = [
  /^search_(document|query|clustering|classification):\s*/i,
  /^represent this sentence for searching relevant passages:\s*/i,
  /^task: [^|]*\|\s*query:\s*/i,
  /^title: [^|]*\|\s*text:\s*/i,
];

const WORD = /[\p{L}\p{N}]+/gu;
// Keeps every vector non-zero (empty text included) without drowning the word signal.
const FLOOR = 0.02;

export function stripInstruction(text: string): string {
  for (const prefix of INSTRUCTION_PREFIXES) text = text.replace(prefix, "");
  return text;
}

function fnv1a(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Deterministic stand-in for a sentence embedding: a signed hashed bag of words, L2-normalised.
 * Shared words raise cosine similarity; unrelated texts sit near zero. Each word lands in two
 * slots so a single hash collision cannot make unrelated texts look alike.
 */
export function fakeEmbedding(text: string, dim: number): number[] {
  const v = new Float64Array(dim).fill(FLOOR);
  for (const word of stripInstruction(text).toLowerCase().match(WORD) ?? []) {
    for (let seed = 0; seed < 2; seed++) {
      const h = fnv1a(word, seed);
      v[h % dim]! += h & 0x80000000 ? -1 : 1;
    }
  }
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += v[i]! * v[i]!;
  const scale = 1 / Math.sqrt(norm);
  const out = new Array<number>(dim);
  for (let i = 0; i < dim; i++) out[i] = v[i]! * scale;
  return out;
}

/** Ollama names an untagged model `name:latest`. */
function withTag(model: string): string {
  return model.includes(":") ? model : `${model}:latest`;
}

function json(body: unknown, status = 200): Response {
  return Response.json(body, { status });
}

function modelNotFound(model: string, phrasing: "embed" | "show"): Response {
  const error =
    phrasing === "embed" ? `model "${model}" not found, try pulling it first` : `model '${model}' not found`;
  return json({ error }, 404);
}

interface DoubleState {
  dim: number;
  embed: (text: string, dim: number) => number[];
  embedMany?: (texts: string[], dim: number) => Promise<number[][]>;
  models: Set<string>;
  mode: DoubleMode;
  delayMs: number;
  chatReply: string;
}

function vectorDim(state: DoubleState): number {
  return state.mode === "wrong-dim" ? Math.max(1, Math.floor(state.dim / 2)) : state.dim;
}

async function handleEmbed(state: DoubleState, body: any): Promise<Response> {
  const model = String(body?.model ?? "");
  if (!state.models.has(withTag(model))) return modelNotFound(model, "embed");
  const input: string[] = body?.input == null ? [] : Array.isArray(body.input) ? body.input : [body.input];
  const dim = vectorDim(state);
  let embeddings: number[][];
  try {
    embeddings = state.embedMany ? await state.embedMany(input.map(String), dim) : input.map((text) => state.embed(String(text), dim));
  } catch (e) {
    return json({ error: e instanceof Error ? e.message : String(e) }, 500);
  }
  return json({
    model,
    embeddings,
    total_duration: 1_000_000 * input.length,
    load_duration: 100_000,
    prompt_eval_count: input.reduce((n, t) => n + String(t).split(/\s+/).length, 0),
  });
}

async function handleLegacyEmbeddings(state: DoubleState, body: any): Promise<Response> {
  const model = String(body?.model ?? "");
  if (!state.models.has(withTag(model))) return modelNotFound(model, "embed");
  const prompt = String(body?.prompt ?? "");
  try {
    const [embedding] = state.embedMany ? await state.embedMany([prompt], vectorDim(state)) : [state.embed(prompt, vectorDim(state))];
    return json({ embedding });
  } catch (e) {
    return json({ error: e instanceof Error ? e.message : String(e) }, 500);
  }
}

function modelDetails() {
  return {
    parent_model: "",
    format: "gguf",
    family: "nomic-bert",
    families: ["nomic-bert"],
    parameter_size: "137M",
    quantization_level: "F16",
  };
}

function handleTags(state: DoubleState): Response {
  const models = [...state.models].map((name) => ({
    name,
    model: name,
    modified_at: "2025-01-01T00:00:00.000000000Z",
    size: 274302450,
    digest: fnv1a(name, 0).toString(16).padStart(8, "0").repeat(8),
    details: modelDetails(),
  }));
  return json({ models });
}

function handleShow(state: DoubleState, body: any): Response {
  const model = String(body?.model ?? body?.name ?? "");
  if (!state.models.has(withTag(model))) return modelNotFound(model, "show");
  return json({
    license: "Apache-2.0",
    modelfile: `FROM ${model}`,
    parameters: "num_ctx 8192",
    template: "{{ .Prompt }}",
    details: modelDetails(),
    model_info: {
      "general.architecture": "nomic-bert",
      "general.parameter_count": 136727040,
      "nomic-bert.embedding_length": state.dim,
      "nomic-bert.context_length": 2048,
    },
    capabilities: ["embedding"],
    modified_at: "2025-01-01T00:00:00.000000000Z",
  });
}

const DEFAULT_CHAT_REPLY = "- User asked about the project; assistant answered.";

/** Non-streamed replies are one JSON object; streamed ones are NDJSON ending in `done: true`. */
function chatLike(body: any, final: Record<string, unknown>, partial: Record<string, unknown>): Response {
  if (body?.stream === false) return json(final);
  const lines = [JSON.stringify({ ...partial, done: false }), JSON.stringify(final)].join("\n") + "\n";
  return new Response(lines, { headers: { "content-type": "application/x-ndjson" } });
}

function handleChat(state: DoubleState, body: any): Response {
  const model = String(body?.model ?? "");
  const base = { model, created_at: new Date().toISOString() };
  const message = { role: "assistant", content: state.chatReply };
  // As Ollama reports it: the prompt's tokens (here its words) and the answer's.
  const prompt_eval_count = (Array.isArray(body?.messages) ? body.messages : []).reduce((n: number, m: any) => n + String(m?.content ?? "").split(/\s+/).length, 0);
  return chatLike(
    body,
    { ...base, message, done: true, done_reason: "stop", total_duration: 1_000_000, prompt_eval_count, eval_count: 12 },
    { ...base, message },
  );
}

function handleGenerate(state: DoubleState, body: any): Response {
  const model = String(body?.model ?? "");
  const base = { model, created_at: new Date().toISOString() };
  return chatLike(
    body,
    { ...base, response: state.chatReply, done: true, done_reason: "stop", total_duration: 1_000_000 },
    { ...base, response: state.chatReply },
  );
}

function route(state: DoubleState, method: string, path: string, body: any): Response | Promise<Response> {
  if (method === "GET" && path === "/") return new Response("Ollama is running");
  if (method === "GET" && path === "/api/version") return json({ version: "0.6.0" });
  if (method === "GET" && path === "/api/tags") return handleTags(state);
  if (method !== "POST") return new Response("404 page not found", { status: 404 });
  switch (path) {
    case "/api/embed":
      return handleEmbed(state, body);
    case "/api/embeddings":
      return handleLegacyEmbeddings(state, body);
    case "/api/show":
      return handleShow(state, body);
    case "/api/chat":
      return handleChat(state, body);
    case "/api/generate":
      return handleGenerate(state, body);
    default:
      return new Response("404 page not found", { status: 404 });
  }
}

function failure(mode: DoubleMode): Response | undefined {
  if (mode === "http-500") return json({ error: "boom" }, 500);
  if (mode === "non-json-error") {
    return new Response("upstream exploded", { status: 500, headers: { "content-type": "text/plain" } });
  }
  return undefined;
}

async function readBody(req: Request): Promise<any> {
  const text = await req.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startOllamaDouble(opts: OllamaDoubleOptions = {}): Promise<OllamaDouble> {
  const custom = opts.embed;
  const many = opts.embedMany;
  const state: DoubleState = {
    dim: opts.dim ?? 768,
    // wrong-dim mode asks for fewer values than the model gives: a custom model's are cut short.
    embed: custom ? (text, dim) => custom(stripInstruction(text)).slice(0, dim) : fakeEmbedding,
    embedMany: many && (async (texts, dim) => (await many(texts.map(stripInstruction))).map((v) => v.slice(0, dim))),
    models: new Set((opts.models ?? ["nomic-embed-text"]).map(withTag)),
    mode: opts.mode ?? "ok",
    delayMs: opts.delayMs ?? 200,
    chatReply: opts.chatReply ?? DEFAULT_CHAT_REPLY,
  };
  const requests: RecordedRequest[] = [];
  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: "127.0.0.1",
    // Slow mode must be able to outlast a client timeout without the server hanging up first.
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = await readBody(req);
      requests.push({ path, body });
      if (state.mode === "slow") await Bun.sleep(state.delayMs);
      return failure(state.mode) ?? route(state, req.method, path, body);
    },
  });
  const port = server.port!;
  return {
    host: `http://127.0.0.1:${port}`,
    port,
    requests,
    setMode(mode) {
      state.mode = mode;
    },
    async stop() {
      await server.stop(true);
    },
  };
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(args: string[]): Promise<void> {
  const num = (name: string) => (flag(args, name) === undefined ? undefined : Number(flag(args, name)));
  const double = await startOllamaDouble({
    port: num("port") ?? 11434,
    dim: num("dim"),
    delayMs: num("delay"),
    models: flag(args, "models")?.split(","),
    mode: flag(args, "mode") as DoubleMode | undefined,
    chatReply: flag(args, "chat-reply"),
  });
  const shutdown = () => void double.stop().then(() => process.exit(0));
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  process.stdout.write(`${double.host}\n`);
}

if (import.meta.main) await main(process.argv.slice(2));
