/**
 * What the real-agent suites (real-codex, real-gemini, real-opencode) and their harnesses share: a
 * temp HOME, the environment of a run, running the client, the scenario's turns and the fact Claude
 * Code captures for them, the memsearch settings they run under, reading the project's notes,
 * waiting for a condition, the processes left after a run, and the conversation index seen from
 * the outside (recall's JSON, the index's rows, the layer-3 checks of an agent whose transcripts are files).
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

/**
 * Layer 3 of an agent whose transcripts are files (Codex rollouts, Gemini CLI chats), checked from
 * the outside once the suite's sessions ran, the Claude Code fact was asked about in the agent and
 * SECRET_PROMPT was typed into it: the first scenario turn found by recall with its agent, file and
 * turn id, and opened by `transcript --turn`; its note and transcript one result; the tool's output
 * found; `--agent claude` leaving it out; what memsearch gave the agent (in the agent's own files)
 * and the secret in no row; each session's first prompt as typed; another project reaching it only
 * with `--all-projects`.
 */
export async function checkFileLayerThree(o: {
  agent: string;
  root: string;
  env: Record<string, string>;
  /** Every transcript file the agent wrote, and those of the scenario's turns (in order). */
  files: string[];
  scenario: string[];
  firstTurnId: string;
  /** Strings only memsearch's context or the agent's scaffolding holds. */
  injected: string[];
}): Promise<void> {
  const { expect } = await import("bun:test");
  const { tempProject } = await import("./cli.ts");
  const ms = { ...o.env, MEMSEARCH_NO_WATCH: "1" };
  const at = { cwd: o.root, env: ms };
  const hits = await recallTurns("Quillfeather broker billing events", { ...at, agent: o.agent });
  const hit = hits.find((r) => r.transcript?.path === o.scenario[0]);
  expect(hit).toBeDefined();
  expect(hits.every((r) => r.agent === o.agent)).toBe(true);
  expect(hit!.transcript!.turn_uuid).toBe(o.firstTurnId);
  expect(hit!.open).toBe(`memsearch transcript ${o.scenario[0]} --turn ${o.firstTurnId}`);
  const open = await run(["transcript", o.scenario[0]!, "--turn", o.firstTurnId, "-c", "0"], at);
  expect(open.code).toBe(0);
  expect(open.stdout).toContain(SCENARIO[0]!.prompt);
  // Searched with the notes, the turn's note and its transcript are one result.
  const both = await recallTurns("Quillfeather broker billing events", { ...at, source: "all", agent: o.agent });
  expect(both.find((r) => r.turn === o.firstTurnId)?.from).toEqual(expect.arrayContaining(["note", "transcript"]));
  // The tool's call and output are indexed too, and the turn is found by them.
  const tooled = await recallTurns("checklist-item-marmalade", at);
  expect(tooled.some((r) => r.agent === o.agent && r.transcript?.path === o.scenario[1])).toBe(true);
  expect((await recallTurns("Quillfeather broker billing events", { ...at, agent: "claude" })).some((r) => r.agent === o.agent)).toBe(false);

  // What memsearch gave the agent (the session start's recent memory, the prompt's recall) is in its files, not in the index.
  const raw = o.files.map((f) => readFileSync(f, "utf8")).join("\n");
  expect(raw).toContain("Ottervane");
  expect(raw).toContain("Recent memory (memsearch)");
  expect(await recallTurns("Ottervane", { ...at, agent: o.agent })).toEqual([]);
  expect(await recallTurns("Recent memory memsearch", { ...at, agent: o.agent })).toEqual([]);
  // Claude Code's turn holds it, and the same query finds it there.
  expect((await recallTurns("Ottervane", at)).map((r) => r.agent)).toContain("claude");
  const rows = indexedRows(o.env.MEMSEARCH_HOME!, o.agent);
  expect(new Set(rows.map((r) => r.path))).toEqual(new Set(o.files));
  expect(rows.filter((r) => r.role === "user").map((r) => r.text)).toEqual(expect.arrayContaining(SCENARIO.map((t) => t.prompt)));
  expect(raw).toContain(SECRET);
  expect(rows.filter((r) => r.role === "user" && r.text.includes("Vellichor")).map((r) => r.text)).toEqual([SECRET_PROMPT.replace(SECRET, "[REDACTED:anthropic-key]")]);
  const secretHit = (await recallTurns("Vellichor deploy key", { ...at, agent: o.agent }))[0];
  expect(secretHit?.transcript?.snippet).toContain("Vellichor");
  expect(JSON.stringify(secretHit)).not.toContain(SECRET);
  // The session table too: each session's first prompt, as typed.
  expect(rows.filter((r) => r.role === "session:first_prompt").map((r) => r.text)).toContainEqual(`First prompt\n${SCENARIO[0]!.prompt}`);
  for (const r of rows) {
    const all = [r.text, r.inputs, r.results].join("\n");
    expect(all).not.toContain(SECRET);
    for (const injected of ["Ottervane", "memsearch", "Memories from earlier sessions", ...o.injected]) expect(all).not.toContain(injected);
  }

  // Across projects: from another project, only with --all-projects.
  const other = tempProject({ notes: "none" });
  try {
    expect((await recallTurns("Quillfeather broker billing events", { cwd: other.root, env: ms })).some((r) => r.agent === o.agent)).toBe(false);
    const all = await recallTurns("Quillfeather broker billing events", { cwd: other.root, env: ms, allProjects: true });
    expect(all.some((r) => r.agent === o.agent && r.transcript?.path === o.scenario[0])).toBe(true);
  } finally {
    rmSync(other.root, { recursive: true, force: true });
    rmSync(other.home, { recursive: true, force: true });
  }
}
