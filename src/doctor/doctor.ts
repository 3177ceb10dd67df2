import { existsSync, readdirSync, statSync } from "node:fs";
import pkg from "../../package.json" with { type: "json" };
import { loadContext, type Context } from "../core/context.ts";
import { embedderFor } from "../index/embedder.ts";
import { ollamaClient, ollamaError, ollamaTimeoutMs, resolveOllamaHost } from "../core/ollama-client.ts";
import { oneLine, UnsafeDataError } from "../core/errors.ts";
import { peekIndex } from "../index/format.ts";
import { pingWatch } from "../watch/gateway.ts";
import { listPending, readPending } from "../memory/pending.ts";
import { curatedFiles } from "../agents/curated.ts";
import { peekIndexFiles } from "../index/disk.ts";
import { basename, relative } from "node:path";
import { accountTurns, turnsLine } from "../memory/accounting.ts";
import { userFiles } from "../core/project.ts";
import { AGENTS, projectTranscripts } from "../agents/registry.ts";

const STALE_QUEUE_MS = 60_000;

export interface Check {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
}

/** Everything that must hold for memory to work in this project, one check each. */
export async function runChecks(cwd = process.cwd(), env = process.env): Promise<Check[]> {
  const checks: Check[] = [];
  checks.push({ name: "binary", status: "ok", detail: `memsearch ${pkg.version} at ${process.execPath}` });
  let ctx;
  try {
    ctx = loadContext({}, cwd, env);
    checks.push({ name: "config", status: "ok", detail: `project ${ctx.project.root}, memory in ${ctx.project.memoryDir}` });
  } catch (e) {
    if (e instanceof UnsafeDataError) checks.push({ name: "data folder", status: "fail", detail: oneLine(e), fix: "remove what is named above (a cloned repository may have planted it), then run doctor again" });
    else checks.push({ name: "config", status: "fail", detail: oneLine(e), fix: "correct the file and line named above" });
    return checks;
  }
  const { config, project } = ctx;
  checks.push(...(await agentChecks(env)));
  const ollama = await ollamaCheck(config);
  checks.push(ollama.check);
  checks.push(await summarizerCheck(config, env));
  checks.push(indexCheck(project, config, ollama));
  checks.push(curatedCheck(project.root, project.indexDir, config["indexing.curated"], env));
  checks.push(queueCheck(project.dataDir));
  checks.push(await turnsCheck(project.root, project.memoryDir, project.dataDir, userFiles(env).turnsCache, env));
  checks.push(await watchCheck(project.dataDir));
  return checks;
}

/** What the embedding check found, for the index check after it. */
interface OllamaFound {
  check: Check;
  embeds: boolean;
  /** The vectors' length Ollama gives now. */
  dim?: number;
  /** What to do first for vectors to be made at all, when Ollama cannot make them now. */
  first?: string;
}

async function ollamaCheck(config: Context["config"]): Promise<OllamaFound> {
  const embedder = embedderFor(config, "query");
  // A choice, not a fault: said as what it is, with the way back.
  if (!embedder) return { embeds: false, check: { name: "ollama", status: "ok", detail: "not used: embeddings are off (embedding.provider = none), search uses keywords only; memsearch config set embedding.provider ollama turns them on" } };
  const probe = await embedder.probe(ollamaTimeoutMs(config, "doctor"));
  if (probe.ok) return { embeds: true, dim: probe.dim, check: { name: "ollama", status: "ok", detail: `${embedder.host}: ${config["embedding.model"]} pulled, ${probe.dim} dimensions` } };
  const fix = probe.reason.kind === "model-missing" ? `ollama pull ${config["embedding.model"]}` : probe.reason.kind === "down" ? "ollama serve" : undefined;
  return { embeds: true, first: fix ?? "get Ollama answering (see the ollama line)", check: { name: "ollama", status: "warn", detail: `${probe.reason.message}; search falls back to keywords`, fix } };
}

function indexCheck(project: Context["project"], config: Context["config"], ollama: OllamaFound): Check {
  // An index fix that needs vectors waits for Ollama: `memsearch index` alone would add none.
  const afterOllama = (fix: string) => (ollama.first ? `${ollama.first}, then ${fix}` : fix);
  const head = peekIndex(project.indexDir);
  if (!head) {
    const hasMemory = existsSync(project.memoryDir) && readdirSync(project.memoryDir).some((f) => f.endsWith(".md"));
    return { name: "index", status: hasMemory ? "warn" : "ok", detail: hasMemory ? "memory files exist but no index yet" : "no memory yet in this project", fix: hasMemory ? "memsearch index" : undefined };
  }
  if (head.model !== config["embedding.model"]) return { name: "index", status: "warn", detail: `built with '${head.model}', config says '${config["embedding.model"]}'`, fix: afterOllama("memsearch index (rebuilds for the new model)") };
  if (ollama.dim && head.dim && head.dim !== ollama.dim) return { name: "index", status: "warn", detail: `holds ${head.dim}-d vectors, Ollama now gives ${ollama.dim}-d`, fix: "memsearch index --force" };
  const missing = head.chunks - head.vectors;
  return {
    name: "index",
    status: missing > 0 && ollama.embeds ? "warn" : "ok",
    detail: `${head.chunks} chunks in ${head.files} files, ${head.vectors} with vectors, ${(head.bytes / 1048576).toFixed(1)} MiB, updated ${head.updatedAt}`,
    fix: missing > 0 && ollama.embeds ? afterOllama("memsearch index (fills in the missing vectors)") : undefined,
  };
}

async function watchCheck(dataDir: string): Promise<Check> {
  const watch = await pingWatch(dataDir);
  if (!watch.running) return { name: "watch", status: "ok", detail: "not running (started by the SessionStart hook; searches load the index meanwhile)" };
  return watch.answered
    ? { name: "watch", status: watch.lastError ? "warn" : "ok", detail: `pid ${watch.pid} serving ${watch.chunks} chunks${watch.lastError ? `; last error: ${watch.lastError}` : ""}` }
    : { name: "watch", status: "warn", detail: `pid ${watch.pid} does not answer on its socket`, fix: `kill ${watch.pid} (the next session starts a fresh one)` };
}

/**
 * Who writes the turn notes, and whether it can: `claude -p` needs claude on the PATH (the hooks
 * run with Claude Code's, which this shell usually shares), an Ollama chat model needs Ollama and
 * the model. A summariser that cannot run costs every turn its summary: the note is the plain extract.
 */
async function summarizerCheck(config: Context["config"], env: NodeJS.ProcessEnv): Promise<Check> {
  const provider = config["summarizer.provider"];
  const name = "summarizer";
  if (provider === "off") return { name, status: "ok", detail: "off (summarizer.provider = off): no notes are written for turns" };
  if (provider === "extract") return { name, status: "ok", detail: "the plain extract (summarizer.provider = extract): no model, no cost" };
  if (provider === "claude") {
    const path = Bun.which("claude", { PATH: env.PATH ?? "" });
    if (path) return { name, status: "ok", detail: `claude -p (model ${config["summarizer.model"]}) at ${path}` };
    return {
      name,
      status: "warn",
      detail: "claude is not on PATH: each turn's note is the plain extract instead of a summary (summarizer.provider = claude)",
      fix: "install Claude Code (npm install -g @anthropic-ai/claude-code), or memsearch config set summarizer.provider extract",
    };
  }
  const model = config["summarizer.ollama_model"];
  let host: string;
  try {
    host = resolveOllamaHost(config["embedding.host"], env);
  } catch (e) {
    return { name, status: "warn", detail: `Ollama chat model ${model}: ${oneLine(e)}`, fix: "correct embedding.host" };
  }
  const timeoutMs = ollamaTimeoutMs(config, "doctor");
  try {
    await ollamaClient(host, timeoutMs).show({ model });
    return { name, status: "ok", detail: `Ollama chat model ${model} at ${host}` };
  } catch (err) {
    const e = ollamaError(err, { host, model, timeoutMs }, "chat");
    const fix = e.kind === "model-missing" ? `ollama pull ${model}` : e.kind === "down" ? "ollama serve" : undefined;
    return { name, status: "warn", detail: `Ollama chat model ${model}: ${e.message}; each turn's note is the plain extract until it answers`, ...(fix ? { fix } : {}) };
  }
}

/** Files named in the check's line at most; the rest are counted. */
const CURATED_NAMED = 8;

/**
 * Claude Code's curated memory: where its memory folder resolved (and what chose it), which
 * CLAUDE.md files the project holds, how many the index has, and settings that were not followed.
 */
function curatedCheck(root: string, indexDir: string, on: boolean, env: NodeJS.ProcessEnv): Check {
  if (!on) return { name: "curated memory", status: "ok", detail: "off (indexing.curated = false): Claude Code's memory and CLAUDE.md files are not searched" };
  const t0 = performance.now();
  const found = curatedFiles(root, { env });
  const ms = Math.round(performance.now() - t0);
  const m = found.memory;
  const where = `memory folder ${m.dir} (${m.from === "default" ? "Claude Code's default" : `autoMemoryDirectory in ${m.settingsFile}`}${existsSync(m.dir) ? "" : ", not made yet"}${m.enabled ? "" : "; auto memory is off"})`;
  const name = (p: string) => {
    const r = relative(root, p);
    return r && !r.startsWith("..") ? r : `${basename(p)} (memory folder)`;
  };
  const names = found.files.slice(0, CURATED_NAMED).map((f) => name(f.path));
  const more = found.files.length > CURATED_NAMED ? ` and ${found.files.length - CURATED_NAMED} more` : "";
  const records = peekIndexFiles(indexDir)?.fileRecords ?? {};
  const indexed = found.files.filter((f) => records[f.path]?.curated).length;
  const problems = [
    ...m.ignored.map((i) => `autoMemoryDirectory ${JSON.stringify(i.value)} in ${i.file} not followed: ${i.why}`),
    ...found.skipped.map((s) => `${s.path} not read: ${s.reason}`),
    ...(found.truncated ? [`the walk for CLAUDE.md files stopped after ${found.folders} folders`] : []),
  ];
  const files = found.files.length ? `${found.files.length} curated file(s): ${names.join(", ")}${more}; ${indexed} in the index` : "no curated files";
  const detail = `${files}; ${where}; ${found.folders} folders walked in ${ms} ms${problems.length ? `; ${problems.join("; ")}` : ""}`;
  const behind = found.files.length > indexed;
  return { name: "curated memory", status: problems.length || behind ? "warn" : "ok", detail, ...(behind ? { fix: "memsearch index (the watch process does it when running)" } : {}) };
}

/**
 * Turns waiting for their note: normal for a minute after a turn (the drainer writes a note in
 * seconds, a summariser in tens of them), a problem when they stay. A turn's age is the earlier of
 * its file's time and the Stop time it records (a file that came with a checkout is new on disk).
 */
function queueCheck(dataDir: string): Check {
  const queued = listPending(dataDir);
  if (!queued.length) return { name: "turn queue", status: "ok", detail: "empty: every finished turn has its note" };
  const now = Date.now();
  const ages = queued.map((f) => {
    const mtime = statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? now;
    const stopped = Date.parse(readPending(f)?.stoppedAt ?? "");
    return Math.min(mtime, Number.isFinite(stopped) && stopped <= now ? stopped : now);
  });
  const oldest = ages.length ? new Date(Math.min(...ages)) : undefined;
  const stale = oldest !== undefined && now - oldest.getTime() > STALE_QUEUE_MS;
  const detail = `${queued.length} turn(s) waiting for their note${oldest ? ` since ${oldest.toISOString()}` : ""}`;
  return stale ? { name: "turn queue", status: "warn", detail, fix: "memsearch hook drain (writes them now; MEMSEARCH_DEBUG=1 logs why they waited)" } : { name: "turn queue", status: "ok", detail };
}

/** Every turn of the project's sessions, every agent's, accounted for: a note, queued, running, or named as missing. */
async function turnsCheck(root: string, memoryDir: string, dataDir: string, cacheFile: string, env: NodeJS.ProcessEnv): Promise<Check> {
  let a;
  try {
    a = await accountTurns({ root, memoryDir, dataDir, cacheFile, sources: projectTranscripts(root, env) });
  } catch (e) {
    return { name: "turns", status: "warn", detail: `could not count the sessions' turns: ${oneLine(e)}` };
  }
  if (!a.sessions.length) return { name: "turns", status: "ok", detail: "no session of this project yet" };
  return a.missing ? { name: "turns", status: "warn", detail: turnsLine(a), fix: `memsearch import (writes exactly ${a.missing === 1 ? "that turn" : `those ${a.missing.toLocaleString("en-US")}`})` } : { name: "turns", status: "ok", detail: turnsLine(a) };
}

/**
 * Every agent memsearch can serve: its own check when its adapter has one (Claude Code's plugin),
 * else wired (its hooks in place and trusted) or not, with the command that wires it. An agent
 * that is not installed (no home of its own) is only named.
 */
async function agentChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const out: Check[] = [];
  for (const agent of Object.values(AGENTS)) {
    if (agent.doctorCheck) {
      out.push(await agent.doctorCheck(env));
      continue;
    }
    const w = agent.wired({ exe: [process.execPath], env });
    if (w.wired) out.push({ name: agent.name, status: "ok", detail: `${agent.label}: ${w.detail}` });
    else if (!agent.present(env)) out.push({ name: agent.name, status: "ok", detail: `${agent.label} not set up on this machine (nothing to wire)` });
    else out.push({ name: agent.name, status: "warn", detail: `${agent.label} is not wired: ${w.detail}`, fix: `memsearch install ${agent.name}` });
  }
  return out;
}

