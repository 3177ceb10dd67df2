/**
 * What the real-agent suites (real-codex, real-gemini, real-opencode) and their harnesses share: a
 * temp HOME, the environment of a run, running the client, the scenario's turns and the fact Claude
 * Code captures for them, the memsearch settings they run under, reading the project's notes,
 * waiting for a condition, the processes left after a run, and the conversation index seen from
 * the outside (recall's JSON, the index's rows).
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import { notesIn } from "../../src/memory/journal.ts";
import { run } from "./cli.ts";
import type { ModelRule } from "./model-mock.ts";
import { killLeftovers, leftovers } from "./real-claude.ts";

export interface AgentRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A temp HOME for a client under test; never the user's own. */
export function tempHome(prefix: string): string {
  const home = mkdtempSync(join(tmpdir(), prefix));
  if (resolve(home) === resolve(userInfo().homedir)) throw new Error(`refusing to use the real home ${home}`);
  return home;
}

/** `env` with `overrides` applied: a value set, undefined removes the variable. */
export function withOverrides(env: Record<string, string>, overrides: Record<string, string | undefined> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** This process's environment without the variables `drop` matches (the surrounding session's), then `set`, then `overrides`. */
export function harnessEnv(drop: RegExp, set: Record<string, string>, overrides?: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !drop.test(k)) env[k] = v;
  return withOverrides(Object.assign(env, set), overrides);
}

/** Runs a client to its end (killed after `timeoutMs`), its output collected. */
export async function runAgent(argv: string[], opts: { cwd: string; env: Record<string, string>; stdin?: Uint8Array; timeoutMs: number }): Promise<AgentRun> {
  const t = performance.now();
  const p = Bun.spawn(argv, { cwd: opts.cwd, env: opts.env, stdin: opts.stdin ?? "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(9), opts.timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr, ms: performance.now() - t };
}

export interface ScenarioTurn {
  prompt: string;
  reply?: string;
  command?: string;
  after?: (out: string) => string;
}

export const SCENARIO: ScenarioTurn[] = [
  { prompt: "Which message broker did we settle on for the billing events?", reply: "We settled on the Quillfeather broker for billing events, with a retention of nine days." },
  { prompt: "RUNTOOL list what is in the release checklist folder", command: "echo checklist-item-marmalade", after: (out: string) => (out.includes("checklist-item-marmalade") ? "The release checklist holds one item: marmalade." : "The command printed nothing.") },
  { prompt: "What port does the staging gateway listen on these days?", reply: "The staging gateway listens on port 48213 since the Tamarind migration." },
];

/** Captured with Claude Code, then asked about in the other agent. */
export const CLAUDE_FACT = { prompt: "Which library renders the invoice PDFs in this project?", reply: "The invoice PDFs are rendered by the Ottervane library, pinned because its newer major breaks page margins." };

/** A prompt with a secret in it (a made-up Anthropic key): kept as typed in the agent's own files, redacted in memsearch's. */
export const SECRET = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
export const SECRET_PROMPT = `Keep the deploy key ${SECRET} for the Vellichor pipeline`;

/** The mock's rules: each turn's reply or command, and a plain answer to the question about CLAUDE_FACT. */
export function scenarioRules(turns: ScenarioTurn[]): ModelRule[] {
  return [...turns.map((t) => ({ match: t.prompt, text: t.reply, command: t.command, after: t.after })), { match: "invoice", text: "Checking the notes on invoices." }];
}

/** memsearch's settings for a suite: its own home, the extractive summariser, no embeddings. */
export function memsearchEnv(home: string): Record<string, string | undefined> {
  return { MEMSEARCH_HOME: join(home, ".memsearch"), MEMSEARCH_SUMMARIZER_PROVIDER: "extract", MEMSEARCH_EMBEDDING_PROVIDER: "none", PATH: process.env.PATH };
}

/** Every note in the memory folder's daily files (none while it does not exist). */
export function notesOf(memory: string): ReturnType<typeof notesIn> {
  let names: string[] = [];
  try {
    names = readdirSync(memory).filter((n) => n.endsWith(".md"));
  } catch {}
  return names.flatMap((n) => notesIn(readFileSync(join(memory, n), "utf8"), n));
}

export async function until(cond: () => boolean, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await Bun.sleep(100);
  return cond();
}

/** Waits up to `ms` for the run's processes to end; the command lines of those still there. */
export async function leftAfter(runId: string, ms: number): Promise<{ gone: boolean; left: string[] }> {
  const gone = await until(() => leftovers(runId).length === 0, ms);
  const left = leftovers(runId).map((pid) => readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " "));
  return { gone, left };
}

/** A suite's teardown: the mock stopped, the run's processes ended, its folders removed. */
export function tearDown(mock: { stop(): void } | undefined, runId: string, dirs: (string | undefined)[]): void {
  mock?.stop();
  killLeftovers(runId);
  for (const d of dirs) if (d) rmSync(d, { recursive: true, force: true });
}

/** A result of `memsearch recall --json`, the fields the layer-3 checks read. */
export interface RecallJsonResult {
  agent: string;
  turn: string | null;
  from: string[];
  transcript: { path: string; turn_uuid: string; role: string; snippet: string } | null;
  open: string | null;
}

/** `memsearch recall --source transcripts --raw -j` (or another source) run from the outside (no watch process started for it); its results. */
export async function recallTurns(query: string, o: { cwd: string; env: Record<string, string | undefined>; agent?: string; allProjects?: boolean; source?: "notes" | "transcripts" | "all" }): Promise<RecallJsonResult[]> {
  const args = ["recall", "--source", o.source ?? "transcripts", "--raw", "-j", ...(o.agent ? ["--agent", o.agent] : []), ...(o.allProjects ? ["--all-projects"] : []), query];
  const r = await run(args, { cwd: o.cwd, env: { ...o.env, MEMSEARCH_NO_WATCH: "1" } });
  if (r.code !== 0) throw new Error(`memsearch ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout).results as RecallJsonResult[];
}

/** One agent's rows in the conversation index (`~/.memsearch/transcripts.sqlite`, opened read-only): its messages, then its session rows (role `session:<kind>`). */
export function indexedRows(memsearchHome: string, agent: string): { path: string; turn_uuid: string; role: string; text: string; inputs: string; results: string }[] {
  const db = new Database(join(memsearchHome, "transcripts.sqlite"), { readonly: true });
  try {
    return db
      .query<{ path: string; turn_uuid: string; role: string; text: string; inputs: string; results: string }, [string]>(
        `SELECT f.path, m.turn_uuid, m.role, m.text, m.inputs, m.results FROM messages m JOIN files f ON f.id = m.file_id WHERE f.agent = ?1
         UNION ALL SELECT f.path, s.turn_uuid, 'session:' || s.kind, s.title || char(10) || s.text, '', '' FROM session_content s JOIN files f ON f.id = s.file_id WHERE f.agent = ?1`,
      )
      .all(agent);
  } finally {
    db.close();
  }
}
