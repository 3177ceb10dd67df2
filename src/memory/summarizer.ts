/**
 * Turns the last turn of a session into 2–6 third-person bullet notes. The configured provider
 * (`claude -p` or a local Ollama chat model) is tried first; whatever goes wrong, a deterministic
 * extract is written instead, so a turn is never lost. Text is sanitised before it is sent
 * anywhere and the bullets again when they come back.
 */
import { tmpdir } from "node:os";
import type { ResolvedConfig } from "../core/config.ts";
import { DEFAULT_OLLAMA_HOST, ollamaClient, ollamaError, ollamaTimeoutMs, resolveOllamaHost } from "../core/ollama-client.ts";
import { clip, clipMiddle, firstLine, oneLine, seconds } from "../core/text.ts";
import type { LastTurn, ToolCall } from "../transcript/types.ts";
import { sanitize } from "../core/redact.ts";
import * as v from "valibot";
import { parseJson } from "../core/json-file.ts";
import { recordModelCall, type LedgerTarget, type ModelCall } from "./ledger.ts";

export type SummarizerProvider = "claude" | "ollama" | "extract";

export interface SummarizeOptions {
  provider: SummarizerProvider;
  claudeModel: string;
  ollamaHost: string;
  ollamaModel: string;
  timeoutMs: number;
  /** Default `claude`, looked up on the PATH of `env`. */
  claudeBin?: string;
  env?: NodeJS.ProcessEnv;
  /** Record every model call in this project's ledger (memory/ledger.ts), as made for this purpose. */
  ledger?: LedgerTarget;
  /** Where paths are written from: see PathBase. */
  paths?: PathBase;
}

/**
 * The project's root and the user's home. A note names a file by its path in the project
 * (`cli/lib/format.ts`), whatever folder the turn's shell was in, and a file outside the project
 * by `~/…`: a home path would put the user's name in the notes, where it is indexed.
 */
export interface PathBase {
  root: string;
  home?: string;
}

/** A text with the project root and the home folder taken off the paths it holds. */
export function relativePaths(text: string, base: PathBase | undefined): string {
  if (!base) return text;
  let out = replaceFolder(text, base.root, "", ".");
  if (base.home) out = replaceFolder(out, base.home, "~/", "~");
  return out;
}

/**
 * Each path that is `folder` or lies in it, rewritten: `inside` for `folder/`, `whole` for the
 * folder itself. Only whole path segments count: `/app` is not the start of `/app2/lib`, nor of a
 * URL's `https://host/app`.
 */
function replaceFolder(text: string, folder: string, inside: string, whole: string): string {
  const f = folder.replace(/[\\/]+$/, "");
  if (f.length <= 1) return text;
  const escaped = f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // Not after a path's own characters (another path ends in it); then a separator, or a character
  // no path segment goes on with. Before a full stop the folder is left whole: "." then "." reads "..".
  const at = new RegExp(`(?<![\\w.~/\\\\-])${escaped}(?:([\\\\/])|(?=[^\\w.\\-]|$))`, "g");
  return text.replace(at, (_m, sep: string | undefined) => (sep ? inside : whole));
}

export interface Summary {
  bullets: string[];
  provider: SummarizerProvider;
  /** Why the configured provider was not used (then `provider` is `extract`). */
  fallbackReason?: string;
}

const MAX_BULLETS = 6;
const BULLET_MAX_CHARS = 500;
// claude takes 200k tokens; the turn goes on stdin, so only sanity bounds it.
const CLAUDE_MAX_INPUT = 400_000;
// Ollama's default context is a few thousand tokens and it truncates silently from the front,
// which would drop our instructions: keep the input well inside it.
const OLLAMA_MAX_INPUT = 12_000;

/**
 * The summariser's options as the configuration gives them: the one place that reads its keys.
 * `provider` overrides the configured one (`import --summarizer`); "off" asks for the extract.
 */
export function summarizerOptions(config: ResolvedConfig["values"], over: { provider?: SummarizerProvider; timeoutMs?: number; ledger?: LedgerTarget; paths?: PathBase } = {}): SummarizeOptions {
  const configured = config["summarizer.provider"];
  let ollamaHost: string;
  try {
    ollamaHost = resolveOllamaHost(config["embedding.host"]);
  } catch {
    // A malformed host is the embedder's error to report; the summariser falls back to the extract.
    ollamaHost = DEFAULT_OLLAMA_HOST;
  }
  return {
    provider: over.provider ?? (configured === "off" ? "extract" : (configured as SummarizerProvider)),
    claudeModel: config["summarizer.model"],
    ollamaHost,
    ollamaModel: config["summarizer.ollama_model"],
    timeoutMs: over.timeoutMs ?? ollamaTimeoutMs(config, "summary"),
    ...(over.ledger ? { ledger: over.ledger } : {}),
    ...(over.paths ? { paths: over.paths } : {}),
  };
}

/** Why a provider produced nothing usable; the message becomes `fallbackReason`. */
class SummarizerFailure extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** A model's answer and what the provider said it used. */
interface ModelReply {
  text: string;
  usage?: Pick<ModelCall, "inTokens" | "outTokens" | "cacheReadTokens" | "cacheWriteTokens" | "reportedUsd">;
}

/**
 * Makes one model call and records it in the ledger when asked to: provider, model, sizes,
 * duration, outcome. The record is one appended line; a ledger that cannot be written changes nothing.
 */
async function accounted(provider: "claude" | "ollama", input: string, opts: SummarizeOptions, call: () => Promise<ModelReply>): Promise<string> {
  const started = performance.now();
  const record = (outcome: ModelCall["outcome"], reply?: ModelReply) => {
    if (!opts.ledger) return;
    recordModelCall(opts.ledger.dataDir, {
      v: 1,
      at: new Date().toISOString(),
      provider,
      model: provider === "claude" ? opts.claudeModel : opts.ollamaModel,
      purpose: opts.ledger.purpose,
      inChars: input.length,
      outChars: reply?.text.length ?? 0,
      ...reply?.usage,
      ms: Math.round(performance.now() - started),
      outcome,
    });
  };
  let reply: ModelReply;
  try {
    reply = await call();
  } catch (e) {
    // A provider that is not there (no claude on PATH) was never called: nothing to account for.
    if (!(e instanceof SummarizerFailure && e.message.includes("not found"))) record(e instanceof SummarizerFailure && e.timedOut ? "timeout" : "failed");
    throw e;
  }
  record("ok", reply);
  return reply.text;
}

// ---------------------------------------------------------------------------------------------
// Prompt

export const SUMMARY_INSTRUCTIONS = `You are a note-taker. You read the transcript of ONE turn of a conversation between a User and an AI coding assistant called Claude Code, and you write notes about it for a project journal. You observe from outside: you are not Claude Code, you do not answer the User, do not continue the conversation, do not give advice and do not ask questions.

Write between 2 and 6 bullet lines. Every line starts with "- ". Output the bullet lines and nothing else: no title, no introduction, no closing remark.

- The first bullet says, in one sentence, what the User asked for.
- The following bullets say what Claude Code did, found, changed or decided, and anything left unfinished. Name the specific files, commands, errors, results and decisions. Prefer the outcome the User saw over the mechanics of how it was reached.
- Write in the third person ("User asked…", "Claude Code changed…").
- Write in the primary language of the [User] text. If the User wrote in Chinese, write the notes in Chinese; if in English, in English.
- Content shown as [REDACTED:…] or [private] stays hidden; do not guess it.`;

export function buildPrompt(turnText: string, maxChars = CLAUDE_MAX_INPUT): string {
  return `${SUMMARY_INSTRUCTIONS}\n\nTranscript:\n${clipMiddle(turnText, maxChars)}\n`;
}

// ---------------------------------------------------------------------------------------------
// Parsing model output

/**
 * Bullet lines of a model's answer, normalised to `- `, at most 6. Prose, headings and a
 * reasoning model's `<think>` block are dropped.
 */
export function parseBullets(output: string): string[] {
  const text = output.replace(/<think>[\s\S]*?<\/think>/gi, "");
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*[-*•]\s+(.*\S)/.exec(line);
    if (!m) continue;
    out.push(`- ${m[1]}`);
    if (out.length === MAX_BULLETS) break;
  }
  return out;
}

function finishBullets(bullets: string[]): string[] {
  return bullets.map((b) => {
    return clip(oneLine(sanitize(b)), BULLET_MAX_CHARS);
  });
}

// ---------------------------------------------------------------------------------------------
// claude -p

/** The environment of the summariser's claude: our own hooks switched off, not nested. */
export function claudeEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  // The child's Stop hook would summarise the summariser's own turn, forever (memsearch#604).
  env.MEMSEARCH_DISABLE = "1";
  env.MEMSEARCH_NO_WATCH = "1";
  // Set inside Claude Code; a nested claude refuses or behaves as a sub-agent when it sees it.
  delete env.CLAUDECODE;
  return env;
}

export function claudeArgs(model: string): string[] {
  // No tools, no MCP servers, no saved session: a pure text-in, text-out call.
  // JSON out: the answer with the tokens and cost claude reports (a plain-text answer is still read).
  return ["-p", "--strict-mcp-config", "--tools", "", "--model", model, "--no-session-persistence", "--output-format", "json"];
}

const Tokens = v.optional(v.pipe(v.number(), v.finite(), v.minValue(0)));

/** What `claude -p --output-format json` prints: the fields read here, checked. */
const ClaudeResultSchema = v.object({
  type: v.literal("result"),
  is_error: v.optional(v.boolean()),
  result: v.optional(v.string()),
  total_cost_usd: Tokens,
  usage: v.optional(
    v.object({
      input_tokens: Tokens,
      output_tokens: Tokens,
      cache_creation_input_tokens: Tokens,
      cache_read_input_tokens: Tokens,
    }),
  ),
});

/** claude's printed answer: its JSON result with the usage it reports, or plain text as it is. */
export function readClaudeOutput(stdout: string): ModelReply {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith("{")) return { text: stdout };
  const r = parseJson(trimmed, ClaudeResultSchema);
  if (!("value" in r)) return { text: stdout };
  const o = r.value;
  if (o.is_error) throw new SummarizerFailure(`claude reported an error: ${clip(firstLine(o.result ?? ""), 200) || "no detail"}`);
  const u = o.usage;
  const read = u?.cache_read_input_tokens ?? 0;
  const write = u?.cache_creation_input_tokens ?? 0;
  const usage: ModelReply["usage"] = {};
  if (u?.input_tokens !== undefined) usage.inTokens = u.input_tokens + read + write;
  if (u?.output_tokens !== undefined) usage.outTokens = u.output_tokens;
  if (read) usage.cacheReadTokens = read;
  if (write) usage.cacheWriteTokens = write;
  if (o.total_cost_usd !== undefined) usage.reportedUsd = o.total_cost_usd;
  return { text: o.result ?? "", usage };
}

/** `claude -p` with `prompt` on stdin: its answer, or a SummarizerFailure saying why there is none. */
function runClaude(prompt: string, opts: SummarizeOptions): Promise<string> {
  return accounted("claude", prompt, opts, () => callClaude(prompt, opts));
}

async function callClaude(prompt: string, opts: SummarizeOptions): Promise<ModelReply> {
  const env = claudeEnv(opts.env ?? process.env);
  const bin = opts.claudeBin ?? "claude";
  const path = Bun.which(bin, { PATH: env.PATH ?? "" });
  if (!path) throw new SummarizerFailure(`${bin.includes("/") ? bin : "claude"} not found${bin.includes("/") ? "" : " on PATH"}`);
  const run = await runWithTimeout([path, ...claudeArgs(opts.claudeModel)], prompt, env, opts.timeoutMs);
  if (run.timedOut) throw new SummarizerFailure(`claude timed out after ${seconds(opts.timeoutMs)}`, true);
  if (run.signal) throw new SummarizerFailure(`claude was killed by ${run.signal}`);
  if (run.exitCode !== 0) {
    const why = firstLine(run.stderr) || firstLine(run.stdout);
    throw new SummarizerFailure(`claude exited with status ${run.exitCode}${why ? `: ${clip(why, 200)}` : ""}`);
  }
  return readClaudeOutput(run.stdout);
}

async function summarizeWithClaude(prompt: string, opts: SummarizeOptions): Promise<string[]> {
  const bullets = parseBullets(await runClaude(prompt, opts));
  if (bullets.length === 0) throw new SummarizerFailure("claude returned no bullets");
  return bullets;
}

interface RunResult {
  exitCode: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs a command with `input` on stdin (turns can exceed argv limits) in its own process group,
 * so a timeout kills the whole tree and leaves no orphans behind.
 */
async function runWithTimeout(cmd: string[], input: string, env: Record<string, string>, timeoutMs: number): Promise<RunResult> {
  const proc = Bun.spawn(cmd, {
    stdin: new TextEncoder().encode(input),
    stdout: "pipe",
    stderr: "pipe",
    env,
    // Outside the project: the summariser needs no CLAUDE.md and must not run project hooks.
    cwd: tmpdir(),
    detached: true,
  });
  let timedOut = false;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-proc.pid, signal);
    } catch {
      try {
        proc.kill(signal);
      } catch {}
    }
  };
  let hardKill: ReturnType<typeof setTimeout> | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup("SIGTERM");
    // A child that ignores SIGTERM still goes.
    hardKill = setTimeout(() => killGroup("SIGKILL"), 1_000);
  }, timeoutMs);
  try {
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    const signal = proc.signalCode == null ? undefined : String(proc.signalCode);
    return { exitCode, signal, stdout, stderr, timedOut };
  } finally {
    clearTimeout(timer);
    if (hardKill) clearTimeout(hardKill);
    // Whatever the leader left running in its group (a grandchild) goes with it.
    if (timedOut) killGroup("SIGKILL");
  }
}

// ---------------------------------------------------------------------------------------------
// Ollama

/** One chat call to the Ollama model: its answer, or a SummarizerFailure saying why there is none. */
function runOllama(system: string, user: string, opts: SummarizeOptions): Promise<string> {
  return accounted("ollama", system + user, opts, () => callOllama(system, user, opts));
}

async function callOllama(system: string, user: string, opts: SummarizeOptions): Promise<ModelReply> {
  const client = ollamaClient(opts.ollamaHost, opts.timeoutMs);
  try {
    const res = await client.chat({
      model: opts.ollamaModel,
      messages: [
        { role: "system", content: system },
        { role: "user", content: user },
      ],
      stream: false,
    });
    const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined);
    const inTokens = count(res?.prompt_eval_count);
    const outTokens = count(res?.eval_count);
    return { text: String(res?.message?.content ?? ""), usage: { ...(inTokens !== undefined ? { inTokens } : {}), ...(outTokens !== undefined ? { outTokens } : {}) } };
  } catch (e) {
    const call = { host: opts.ollamaHost, model: opts.ollamaModel, timeoutMs: opts.timeoutMs };
    const err = ollamaError(e, call, "chat");
    throw new SummarizerFailure(`ollama: ${err.message}`, err.kind === "timeout");
  }
}

async function summarizeWithOllama(turnText: string, opts: SummarizeOptions): Promise<string[]> {
  const bullets = parseBullets(await runOllama(SUMMARY_INSTRUCTIONS, `Transcript:\n${clipMiddle(turnText, OLLAMA_MAX_INPUT)}`, opts));
  if (bullets.length === 0) throw new SummarizerFailure("ollama returned no bullets");
  return bullets;
}

// ---------------------------------------------------------------------------------------------
// Deterministic extract

/** First sentence of the first non-empty line, at most `max` characters. */
export function firstSentence(text: string, max = 200): string {
  const line = firstLine(text);
  // Western stops need a space after them (`v1.2`, `e.g`); CJK stops are followed by text directly.
  const m = /^(.+?(?:[.!?](?=\s|$)|[。！？]))/u.exec(line);
  return clip((m ? m[1]! : line).trim(), max);
}

/**
 * Words that carry no outcome: what a reply says when it is done ("Done!", "Perfect!", "The plan is
 * ready.") or about to act ("Let me check…"). A sentence of these only is never the outcome.
 */
const FILLER = new Set(
  (
    "a an the and or but so to of in on at for with by from as is are was were be been being it its this that these those " +
    "i i'll i've i'm me my we we've let's let you your yours he she they them there here now then just also very really " +
    "all any some not no yes ok okay done perfect great good nice excellent sure fine ready plan complete completed finished " +
    "everything thing things working works work looks look looking should would could will can may might do does did has have had " +
    "what which who how why when where if into out up down about again still see check checking next step steps go going"
  ).split(" "),
);

/** Markdown a reply decorates a line with: list marks, heading marks, emphasis, check marks. */
function plainLine(line: string): string {
  return line
    .replace(/^\s*(?:[-*+•]|\d+[.)]|#{1,6})\s+/u, "")
    .replace(/\*\*|__/g, "")
    .replace(/^[\s\p{Extended_Pictographic}\uFE0F✓✔]+/u, "")
    .trim();
}

interface Sentence {
  text: string;
  /** From a list item, a heading or a table row (the detail under a reply's lead), not its prose. */
  structure: boolean;
}

/** Sentences of a reply, code blocks left out (a code line is no outcome). */
function sentencesOf(text: string): Sentence[] {
  const out: Sentence[] = [];
  let code = false;
  for (const raw of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(raw)) {
      code = !code;
      continue;
    }
    if (code) continue;
    const structure = /^\s*(?:[-*+•|]|\d+[.)]\s|#{1,6}\s)/u.test(raw);
    const line = plainLine(raw);
    if (!line) continue;
    // As firstSentence: a Western stop needs a space after it (`v1.2`), a CJK stop does not.
    for (const part of line.split(/(?<=[.!?])(?<!\b(?:e\.g|i\.e|vs|etc|cf)\.)\s+|(?<=[。！？])/u)) if (part.trim()) out.push({ text: part.trim(), structure });
  }
  return out;
}

/**
 * How much a sentence says: its content words, and twice over what names a thing (a path, an
 * identifier, code, a number). Fillers, intentions ("Let me…"), offers and questions to the user
 * ("Want me to…?") and a lead-in to a list ("Here's what changed:") score nothing.
 */
export function sentenceScore(sentence: string): number {
  if (/^(?:let me|let's|now let me|i'll|i will|first,? let me)\b/i.test(sentence)) return 0;
  if (/\?\s*$/.test(sentence) || /\b(?:here(?:'s| is| are)|the following|as follows)\b[^.]*:\s*$/i.test(sentence)) return 0;
  // A label before a list ("New file:", "Key changes:").
  if (/:\s*$/.test(sentence) && sentence.split(/\s+/).length < 4) return 0;
  let score = 0;
  for (const w of sentence.split(/\s+/)) {
    const bare = w.replace(/^[("'`\[]+|[)"'`\],.:;!?]+$/g, "");
    if (!bare) continue;
    if (/[`/\\]|\w\.\w|[a-z][A-Z]|\w_\w|\d/.test(w)) score += 2;
    else if (/\p{L}{3,}/u.test(bare) && !FILLER.has(bare.toLowerCase())) score++;
  }
  return score;
}

/** Below this a reply's sentence is filler or a bare status ("Done!", "Found it.", "Build is clean.", "Committed and pushed."). */
const INFORMATIVE = 3;

/**
 * The outcome of a reply: its first sentence that says something (sentenceScore), in the final
 * message first, then in the ones before it; the final message's first sentence when none does.
 * Claude states its conclusion first ("The issue was…", "Fixed: …") and the detail after it, in
 * lists and headings: a prose sentence is taken before a list item's.
 */
export function outcomeSentence(texts: string[], max = 200): string {
  for (let i = texts.length - 1; i >= 0; i--) {
    const said = sentencesOf(texts[i]!).filter((s) => sentenceScore(s.text) >= INFORMATIVE);
    const first = said.find((s) => !s.structure) ?? said[0];
    if (first) return clip(first.text, max);
  }
  return texts.length ? firstSentence(texts[texts.length - 1]!, max) : "";
}

const PATH_KEYS = ["file_path", "path", "notebook_path"];
const PATH_TOOLS = new Set(["Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead"]);

/** A file path a tool call names, if its input holds one. */
function pathOf(tool: ToolCall): string | undefined {
  const input = tool.input.trim();
  if (input.startsWith("{")) {
    try {
      const args = JSON.parse(input) as Record<string, unknown>;
      for (const key of PATH_KEYS) if (typeof args[key] === "string" && args[key]) return args[key] as string;
    } catch {}
    return undefined;
  }
  // The reader renders file tools' input as the bare path.
  if (PATH_TOOLS.has(tool.name) && /^[^\s]+$/.test(input) && /[/\\.]/.test(input)) return input;
  return undefined;
}

/**
 * Blocks an editor or a front end puts around what the person typed (Conductor's
 * `<system_instruction>` naming attached files, an IDE's `<ide_opened_file>` and `<ide_selection>`):
 * not the ask, and the same words in every note would make unrelated turns look alike.
 */
const WRAPPERS = /<(system[_-]instruction|ide_[a-z_]+)>[\s\S]*?<\/\1>/g;

/** What the ask keeps of a prompt: a task description of 20–70 words whole, the start of a longer one. */
const ASK_CHARS = 320;

/**
 * The prompt as asked, on one line: its first sentences up to ASK_CHARS. A first coding prompt is
 * a task description, and its later sentences name what matters (the file, the symptom, the
 * constraint) as often as its first.
 */
export function askOf(text: string, max = ASK_CHARS): string {
  const line = oneLine(text.replace(WRAPPERS, " ")).trim();
  if (line.length <= max) return line;
  const cut = line.slice(0, max);
  // End on a sentence when one ends in the second half of the room, else on a word.
  const stop = Math.max(cut.lastIndexOf(". "), cut.lastIndexOf("? "), cut.lastIndexOf("! "));
  if (stop > max / 2) return cut.slice(0, stop + 1);
  const space = cut.lastIndexOf(" ", max - 2);
  if (space > max / 2) return `${cut.slice(0, space).trimEnd()}…`;
  return clip(line, max);
}

/**
 * Sentences that state why something happened or what was chosen, or a measured figure: what a
 * note must not lose (the outcome sentence is the reply's most informative one, which is often
 * what was done, not why).
 */
const CAUSE = /\b(?:because|caused by|root cause|due to|turns out|turned out|the reason|that's why|which is why|the (?:real |actual )?(?:issue|problem|bug|cause|culprit|fix) (?:is|was)|fails? (?:when|because)|was (?:failing|broken) because)\b/i;
const DECISION = /\b(?:decided|decision|recommend(?:ed|ation)?|instead of|rather than|chose|chosen|opted (?:for|to)|switched to|went with|we(?:'ll| will) (?:use|keep|go with)|trade-?off|prefer(?:red)?)\b/i;
const FIGURE = /\b\d+(?:[.,]\d+)?\s*(?:ms|s|sec|seconds|minutes|%|x|×|kb|mb|gb|kib|mib|gib|tokens|lines|files|tests|errors|failures|passed|failed)\b/i;

/**
 * A sentence stating a cause, a decision or a figure: the most informative of the final message's
 * (its prose before its lists, as for the outcome), else of the latest message that has one; ""
 * when no sentence does.
 */
export function findingSentence(texts: string[], max = 240): string {
  for (let i = texts.length - 1; i >= 0; i--) {
    const stated = sentencesOf(texts[i]!)
      .filter((s) => CAUSE.test(s.text) || DECISION.test(s.text) || FIGURE.test(s.text))
      .map((s) => ({ ...s, score: sentenceScore(s.text) }))
      .filter((s) => s.score >= INFORMATIVE);
    const pool = stated.some((s) => !s.structure) ? stated.filter((s) => !s.structure) : stated;
    // The earlier sentence on a tie.
    const best = pool.reduce<(typeof pool)[number] | undefined>((b, s) => (!b || s.score > b.score ? s : b), undefined);
    if (best) return clip(best.text, max);
  }
  return "";
}

/** Paths as the note shows them: in the project as from its root, under the home as `~/…`, the rest as they are. */
function notePaths(paths: string[], base: PathBase | undefined): string[] {
  if (base) return paths.map((p) => relativePaths(p, base));
  // No base known (a caller that gave none): relative to their common directory, as before.
  if (paths.length === 1) return [paths[0]!.split(/[/\\]/).pop() || paths[0]!];
  const dirs = paths.map((p) => p.split("/").slice(0, -1));
  let common = 0;
  while (dirs.every((d) => common < d.length && d[common] === dirs[0]![common])) common++;
  return paths.map((p) => p.split("/").slice(common).join("/"));
}

/** Request, tools run, files touched, outcome and the finding behind it: from the turn itself, no model involved. */
export function extractBullets(turn: LastTurn, base?: PathBase): string[] {
  const bullets: string[] = [];
  const asked = askOf(relativePaths(sanitize(turn.userText ?? ""), base));
  bullets.push(`- User asked: ${asked || "(no text)"}`);
  const counts = new Map<string, number>();
  for (const t of turn.tools ?? []) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  if (counts.size > 0) {
    bullets.push(`- Tools run: ${[...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(", ")}`);
  }
  const paths = [...new Set((turn.tools ?? []).map(pathOf).filter((p): p is string => !!p))];
  if (paths.length > 0) {
    const shown = notePaths(paths, base).slice(0, 8);
    const more = paths.length > 8 ? ` and ${paths.length - 8} more` : "";
    bullets.push(`- Files touched: ${shown.join(", ")}${more}`);
  }
  const texts = (turn.assistantTexts ?? []).filter((t) => t.trim()).map((t) => relativePaths(sanitize(t), base));
  if (texts.length > 0) {
    const outcome = outcomeSentence(texts);
    bullets.push(`- Outcome: ${outcome}`);
    const finding = findingSentence(texts);
    if (finding && !outcome.includes(finding.slice(0, 60)) && !finding.includes(outcome.slice(0, 60))) bullets.push(`- Finding: ${finding}`);
  }
  return finishBullets(bullets);
}

// ---------------------------------------------------------------------------------------------

/**
 * Summarises one turn. Never throws: a failing provider falls back to the extract, with the
 * reason in `fallbackReason`.
 */
export async function summarizeTurn(turn: LastTurn, opts: SummarizeOptions): Promise<Summary> {
  const text = relativePaths(sanitize(turn.text ?? ""), opts.paths);
  let fallbackReason: string | undefined;
  try {
    if (opts.provider === "claude") {
      return { bullets: finishBullets((await summarizeWithClaude(buildPrompt(text), opts)).map((b) => relativePaths(b, opts.paths))), provider: "claude" };
    }
    if (opts.provider === "ollama") {
      return { bullets: finishBullets((await summarizeWithOllama(text, opts)).map((b) => relativePaths(b, opts.paths))), provider: "ollama" };
    }
  } catch (e) {
    fallbackReason = e instanceof SummarizerFailure ? e.message : `${opts.provider}: ${clip(firstLine(String((e as Error)?.message ?? e)), 200)}`;
  }
  let bullets: string[];
  try {
    bullets = extractBullets(turn, opts.paths);
  } catch {
    // A malformed turn object still yields a note rather than nothing.
    bullets = ["- User asked: (unreadable turn)"];
  }
  return fallbackReason ? { bullets, provider: "extract", fallbackReason } : { bullets, provider: "extract" };
}

// ---------------------------------------------------------------------------------------------
// Free-form answers (recall)

export type ModelAnswer = { ok: true; text: string; provider: "claude" | "ollama" } | { ok: false; reason: string };

/**
 * One text-in, text-out call to the configured model (the same claude / Ollama plumbing as the
 * notes): `instructions` then `input`. Never throws: when no model answers, `reason` says why.
 * The input is sanitised before it leaves and the answer when it comes back.
 */
export async function askModel(instructions: string, input: string, opts: SummarizeOptions): Promise<ModelAnswer> {
  const text = sanitize(input);
  const answer = (raw: string) => sanitize(raw.replace(/<think>[\s\S]*?<\/think>/gi, "")).trim();
  try {
    if (opts.provider === "claude") {
      const out = answer(await runClaude(`${instructions}\n\n${clipMiddle(text, CLAUDE_MAX_INPUT)}\n`, opts));
      return out ? { ok: true, text: out, provider: "claude" } : { ok: false, reason: "claude returned nothing" };
    }
    if (opts.provider === "ollama") {
      const out = answer(await runOllama(instructions, clipMiddle(text, OLLAMA_MAX_INPUT), opts));
      return out ? { ok: true, text: out, provider: "ollama" } : { ok: false, reason: "ollama returned nothing" };
    }
    return { ok: false, reason: `summarizer.provider is "${opts.provider}": no model to ask` };
  } catch (e) {
    if (e instanceof SummarizerFailure) return { ok: false, reason: e.message };
    return { ok: false, reason: `${opts.provider}: ${clip(firstLine(String((e as Error)?.message ?? e)), 200)}` };
  }
}
