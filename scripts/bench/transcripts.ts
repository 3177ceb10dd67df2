/**
 * The conversation index benchmark (issue 10): the real transcripts of test/fixtures/transcripts
 * copied until the index holds N messages (default 300k; every copy with its own session ids and
 * uuids, its cwd rewritten to a temp project), in a temp `~/.claude/projects/`. Measures:
 *
 *  - the first `memsearch recall --raw` with no index yet (the build, messages/s);
 *  - `memsearch recall --raw QUERY` from a new process, p50/p95 over several queries, against the
 *    same FTS5 query (the SQL `searchTranscripts` runs, same rows, same LIMIT) in the `sqlite3`
 *    command-line shell, a new process per query too;
 *  - the incremental update after one new turn is appended (in-process `updateTranscriptIndex`,
 *    what the watch process runs every 30 s and every recall runs first), and the full scan it
 *    runs every 10 minutes. The copies' mtimes are set days to weeks back (a real history of ended
 *    sessions), except the transcript the turns go to (the session in progress);
 *  - the prompt hook answering from the conversation index (a project with no notes: every
 *    prompt takes the transcript path).
 *
 *   bun scripts/bench/transcripts.ts [--messages 300000] [--bin PATH]   (or `bun run bench -- --transcripts`)
 */
import { Database } from "bun:sqlite";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statfsSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { FIXTURES, realTranscripts } from "../../test/helpers/fixtures.ts";
import { BM25_WEIGHTS } from "../../src/conversations/db.ts";
import { matchExpression } from "../../src/conversations/fts.ts";
import { updateTranscriptIndex } from "../../src/conversations/ingest.ts";
import { conversationSource, FULL_SCAN_MS } from "../../src/agents/claude/conversation.ts";
import { loadPool, makeQueries } from "./corpus.ts";
import { runOnce, series, summarize, type Measurement, type Sample } from "./proc.ts";
import type { TranscriptIndexResult } from "./transcripts-result.ts";

export type { TranscriptIndexResult };

export const DEFAULT_MESSAGES = 300_000;
const QUERIES = 20;
const PROMPTS = 20;
const UPDATES = 5;
/** recall's default --limit (8) times its pool factor (5): the rows its FTS5 query asks for. */
const RECALL_POOL = 40;


const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const IS_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** One copy of a transcript: its uuids and session ids made unique to the copy, its cwd the bench project. */
function copyOf(text: string, copy: number, cwd: string): string {
  const tag = copy.toString(16).padStart(8, "0");
  return text
    .replace(UUID, (u) => tag + u.slice(8))
    .replace(/"sessionId":"([^"]*)"/g, (_m, s: string) => `"sessionId":"${IS_UUID.test(s) ? tag + s.slice(8) : `${s}-c${tag}`}"`)
    .replace(/"cwd":"[^"]*"/g, `"cwd":${JSON.stringify(cwd)}`);
}

/** The `sqlite3` shell: on PATH, or installed with apt-get when running as root; else why not. */
export async function sqliteShell(log: (l: string) => void): Promise<{ path: string } | { missing: string }> {
  const found = Bun.which("sqlite3");
  if (found) return { path: found };
  if (process.getuid?.() === 0 && Bun.which("apt-get")) {
    log("  installing the sqlite3 shell (apt-get install -y sqlite3)");
    const p = Bun.spawnSync(["apt-get", "install", "-y", "sqlite3"], { stdout: "ignore", stderr: "pipe", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    const again = Bun.which("sqlite3");
    if (again) return { path: again };
    return { missing: `apt-get install -y sqlite3 failed: ${p.stderr.toString().trim().split("\n").pop()}` };
  }
  return { missing: "the sqlite3 shell is not installed (apt-get install sqlite3): the baseline row needs it" };
}

/** The SQL `searchTranscripts` runs (src/conversations/search.ts), with its parameters inlined for the shell. */
function shellSql(query: string, project: string): string {
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return `SELECT m.id AS rowid, m.project, m.session, m.turn_uuid, m.prompt_id, m.uuid, m.ts, m.role, m.text, m.tools, m.paths, m.inputs, m.results, f.path,
      bm25(msg_fts, ${BM25_WEIGHTS.join(", ")}) AS rank
    FROM msg_fts JOIN messages m ON m.id = msg_fts.rowid JOIN files f ON f.id = m.file_id
    WHERE msg_fts MATCH ${q(matchExpression(query) ?? "")} AND m.project = ${q(project)} ORDER BY rank LIMIT ${RECALL_POOL};`;
}

export async function benchTranscriptIndex(opts: { bin: string; work: string; messages?: number; log?: (l: string) => void }): Promise<TranscriptIndexResult> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const want = opts.messages ?? DEFAULT_MESSAGES;
  const root = mkdtempSync(join(opts.work, "transcripts-"));
  const home = join(root, "home");
  const proj = join(root, "proj");
  mkdirSync(join(proj, ".git"), { recursive: true });
  mkdirSync(join(proj, ".memsearch", "memory"), { recursive: true });
  const projects = join(home, ".claude", "projects");
  const msHome = join(home, ".memsearch");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    MEMSEARCH_HOME: msHome,
    TZ: "UTC",
    MEMSEARCH_EMBEDDING_PROVIDER: "none",
    MEMSEARCH_NO_WATCH: "1",
    OLLAMA_HOST: "http://127.0.0.1:9",
  };
  const problems: string[] = [];
  const rows: Measurement[] = [];
  try {
    // How many messages one copy of the fixtures gives: index one copy in a scratch database.
    // Laid out as Claude Code does: `<slug>/<session>.jsonl` and `<slug>/<session>/subagents/*.jsonl` (the source folder dropped).
    const files = realTranscripts(FIXTURES).map((f) => ({ rel: relative(FIXTURES, f).split(sep).slice(1).join(sep), text: readFileSync(f, "utf8") }));
    const probeDir = join(root, "probe-projects");
    writeCopy(probeDir, files, 0, proj);
    const { openTranscriptDb } = await import("../../src/conversations/db.ts");
    const pdb = openTranscriptDb(join(root, "probe.sqlite"));
    const perCopy = (await updateTranscriptIndex(pdb, { sources: [conversationSource({ projectsDir: probeDir })] })).messages;
    pdb.close();
    rmSync(probeDir, { recursive: true, force: true });
    if (perCopy <= 0) throw new Error("one copy of the fixtures indexed no message: the bench's layout is wrong");
    const copies = Math.max(1, Math.ceil(want / perCopy));
    const need = copies * files.reduce((n, f) => n + Buffer.byteLength(f.text), 0);
    const fs = statfsSync(root);
    const free = fs.bavail * fs.bsize;
    // The copies, the index (a fraction of them) and room for everyone else on the machine.
    if (need * 1.5 + 2 ** 30 > free) throw new Error(`${copies} copies need about ${(need / 2 ** 30).toFixed(1)} GiB in ${root}; only ${(free / 2 ** 30).toFixed(1)} GiB free`);
    log(`  ${perCopy} messages per copy of the ${files.length} real transcripts: writing ${copies} copies`);
    let jsonlBytes = 0;
    for (let i = 0; i < copies; i++) jsonlBytes += writeCopy(projects, files, i, proj);
    // A real history: sessions that ended days to months ago (mtimes spread over the past), and the
    // one in progress, the transcript the update rows append to, written a minute ago.
    const target = join(projects, "-bench-0000", "short.jsonl");
    backdate(projects, Date.now() - 2 * 86_400_000, copies);
    utimesSync(target, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

    // (a) The first recall builds the index.
    const queries = makeQueries(loadPool(FIXTURES), QUERIES, 23);
    log(`  first recall (${(jsonlBytes / 2 ** 30).toFixed(1)} GiB of JSONL, no index yet)`);
    const first = await runOnce([opts.bin, "recall", "--raw", queries[0]!], { cwd: proj, env, rss: true, timeoutMs: 3_600_000 });
    const built = /indexed (\d+) messages from (\d+) transcripts in ([\d.]+)s/.exec(first.stderr);
    const messages = built ? Number(built[1]) : 0;
    const buildS = built ? Number(built[3]) : NaN;
    rows.push({
      ...summarize("first `recall --raw`, no index yet (builds it)", [first]),
      note: built ? `${messages.toLocaleString("en-US")} messages from ${Number(built[2]).toLocaleString("en-US")} transcripts; build ${buildS.toFixed(1)} s, ${Math.round(messages / buildS).toLocaleString("en-US")} messages/s (said on stderr)` : `no build line on stderr: ${first.stderr.trim().slice(0, 160)}`,
    });

    // (b) recall --raw from a new process against the same FTS5 query in the sqlite3 shell.
    const dbPath = join(msHome, "transcripts.sqlite");
    const hitCheck = (s: Sample) => (s.code !== 0 ? `exit ${s.code}: ${s.stderr.trim().split("\n")[0]}` : undefined);
    const recallRow = await series("`memsearch recall --raw QUERY`, new process", queries.length, (i, rss) => runOnce([opts.bin, "recall", "--raw", queries[i % queries.length]!], { cwd: proj, env, rss }), hitCheck);
    const hits = recallRow.samples.filter((s) => /^Recall: \d+ result/.test(s.stdout)).length;
    rows.push({ ...recallRow, note: `${hits}/${queries.length} queries found something; includes the index's update check (the hot transcripts and the project folders) and the notes' search` });
    const shell = await sqliteShell(log);
    if ("path" in shell) {
      const project = proj;
      const shellDb = await shellCopy(shell.path, dbPath, join(root, "shell.sqlite"), log);
      const shellRow = await series("baseline: the same FTS5 query, `sqlite3` shell, new process", queries.length, (i, rss) => runOnce([shell.path, "-readonly", shellDb, shellSql(queries[i % queries.length]!, project)], { cwd: proj, env, rss }));
      const rowsOut = shellRow.samples.filter((s) => s.stdout.trim().length > 0).length;
      rows.push({ ...shellRow, note: `${rowsOut}/${queries.length} queries returned rows; the SQL of searchTranscripts, LIMIT ${RECALL_POOL}` });
    } else problems.push(shell.missing);
    const onlyFts = await series("`recall --raw --source transcripts`, new process", queries.length, (i, rss) => runOnce([opts.bin, "recall", "--raw", "--source", "transcripts", queries[i % queries.length]!], { cwd: proj, env, rss }), hitCheck);
    rows.push({ ...onlyFts, note: "no notes search: the index's update check and the FTS5 query" });

    // (c) One new turn appended to the running session's transcript, then the update the watch process runs.
    // First an update with nothing new, as the watch's last one was: a full scan, if one is due by
    // now, is not part of the turn's update (the full-scan row below measures it).
    {
      const db = openTranscriptDb(dbPath);
      try {
        await updateTranscriptIndex(db, { sources: [conversationSource({ projectsDir: projects })] });
      } finally {
        db.close();
      }
    }
    const updates: Sample[] = [];
    for (let i = 0; i < UPDATES; i++) {
      appendFileSync(target, newTurn(i, proj));
      const db = openTranscriptDb(dbPath);
      try {
        const r = await updateTranscriptIndex(db, { sources: [conversationSource({ projectsDir: projects })] });
        updates.push({ ms: r.ms, code: r.messages === 2 ? 0 : 1, stdout: "", stderr: r.messages === 2 ? "" : `${r.messages} messages updated, expected 2` });
      } finally {
        db.close();
      }
    }
    rows.push({ ...summarize("incremental update after one new turn (in-process)", updates), note: "updateTranscriptIndex as the watch runs it: stat the hot transcripts and the project folders, read the new lines of one, 2 rows" });
    // The full scan every update runs when the last one is FULL_SCAN_MS old (and the first build, `--reindex`).
    const fulls: Sample[] = [];
    for (let i = 0; i < UPDATES; i++) {
      const db = openTranscriptDb(dbPath);
      try {
        const r = await updateTranscriptIndex(db, { sources: [conversationSource({ projectsDir: projects })], full: true });
        fulls.push({ ms: r.ms, code: r.full && r.files === copies * files.length && r.read === 0 ? 0 : 1, stdout: "", stderr: r.full ? "" : "not a full scan" });
      } finally {
        db.close();
      }
    }
    rows.push({ ...summarize("update with a full scan, nothing changed (in-process)", fulls), note: `every ${FULL_SCAN_MS / 60_000} min: stat all ${(copies * files.length).toLocaleString("en-US")} transcripts, list every folder` });

    // The prompt hook with conversation hits (no notes in this project: every prompt takes that path).
    const prompts = userPrompts(dbPath, PROMPTS);
    let injected = 0;
    const hookRow = await series("hook user-prompt-submit, inject, conversation hits", prompts.length, (i, rss) =>
      runOnce([opts.bin, "hook", "user-prompt-submit"], { cwd: proj, env, rss, stdin: JSON.stringify({ session_id: "bench", prompt_id: `p-${i}-${rss}`, prompt: prompts[i % prompts.length]!, cwd: proj }) }).then((s) => {
        if (!rss && s.stdout.includes("Earlier conversations")) injected++;
        return s;
      }),
    );
    rows.push({ ...hookRow, note: `${injected}/${prompts.length} prompts got conversation turns; prompts are real user messages of the corpus; read-only FTS5, no ingest, no model` });

    const dbBytes = ["", "-wal"].reduce((n, s) => n + (existsSync(dbPath + s) ? Bun.file(dbPath + s).size : 0), 0);
    return { messages, files: copies * files.length, jsonlBytes, dbBytes, copies, buildMs: buildS * 1000, buildMessagesPerSec: messages / buildS, rows, problems };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The database the shell queries. Debian 12's shell (SQLite 3.40) cannot open an FTS5 table
 * declared `contentless_delete=1` (3.43+); then the copy's full-text table is rebuilt as a plain
 * contentless one holding exactly what ingest.ts put in each column (same rows, same tokens, same
 * rowids), which any FTS5 reads and which ranks alike.
 */
async function shellCopy(shell: string, dbPath: string, copy: string, log: (l: string) => void): Promise<string> {
  const probe = Bun.spawnSync([shell, "-readonly", dbPath, "SELECT count(*) FROM msg_fts WHERE msg_fts MATCH 'a';"], { stdout: "pipe", stderr: "pipe" });
  if (probe.exitCode === 0) return dbPath;
  const version = Bun.spawnSync([shell, "--version"]).stdout.toString().split(" ")[0];
  log(`  the sqlite3 shell ${version} cannot read contentless_delete: rebuilding the full-text table in a copy for it`);
  const { DEFAULT_TOKENIZER } = await import("../../src/conversations/db.ts");
  const { ftsText } = await import("../../src/conversations/fts.ts");
  const src = new Database(dbPath, { readonly: true });
  src.run(`VACUUM INTO '${copy.replace(/'/g, "''")}'`);
  src.close();
  const db = new Database(copy);
  db.run("DROP TABLE msg_fts");
  db.run(`CREATE VIRTUAL TABLE msg_fts USING fts5(content, paths, tools, detail, content='', tokenize='${DEFAULT_TOKENIZER}')`);
  const insert = db.prepare("INSERT INTO msg_fts (rowid, content, paths, tools, detail) VALUES (?, ?, ?, ?, ?)");
  db.transaction(() => {
    for (const r of db.query("SELECT id, text, tools, paths, inputs, results FROM messages").iterate() as Iterable<{ id: number; text: string; tools: string; paths: string; inputs: string; results: string }>) {
      insert.run(r.id, ftsText(r.text), ftsText(r.paths), r.tools, ftsText(`${r.inputs}\n${r.results}`));
    }
  })();
  db.run("PRAGMA journal_mode = DELETE");
  db.close();
  return copy;
}

/** Every file and folder below `projects` given an mtime in the past: copy i at `base` minus i hours. */
function backdate(projects: string, base: number, copies: number): void {
  const walk = (p: string, t: Date): void => {
    if (statSync(p).isDirectory()) for (const name of readdirSync(p)) walk(join(p, name), t);
    utimesSync(p, t, t);
  };
  for (let i = 0; i < copies; i++) walk(join(projects, `-bench-${String(i).padStart(4, "0")}`), new Date(base - i * 3_600_000));
  utimesSync(projects, new Date(base), new Date(base));
}

function writeCopy(projects: string, files: { rel: string; text: string }[], copy: number, cwd: string): number {
  const slug = join(projects, `-bench-${String(copy).padStart(4, "0")}`);
  let bytes = 0;
  for (const f of files) {
    const path = join(slug, f.rel);
    mkdirSync(dirname(path), { recursive: true });
    const text = copyOf(f.text, copy, cwd);
    writeFileSync(path, text);
    bytes += Buffer.byteLength(text);
  }
  return bytes;
}

function newTurn(i: number, cwd: string): string {
  const session = "00000000-0000-4000-8000-0000000000aa";
  const ts = new Date(Date.UTC(2026, 10, 1, 12, i)).toISOString();
  const line = (o: Record<string, unknown>) => JSON.stringify({ sessionId: session, cwd, isSidechain: false, timestamp: ts, ...o }) + "\n";
  return (
    line({ type: "user", uuid: `bench-turn-${i}`, message: { role: "user", content: `why does the okapi${i} exporter drop frames under load?` } }) +
    line({ type: "assistant", uuid: `bench-reply-${i}`, message: { id: `bench-msg-${i}`, role: "assistant", content: [{ type: "text", text: `The okapi${i} exporter buffer was too small; raised it to 64.` }] } })
  );
}

/** Real user prompts from the index (long enough not to count as trivial). */
function userPrompts(dbPath: string, n: number): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db.query("SELECT DISTINCT text FROM messages WHERE role = 'user' AND length(text) BETWEEN 30 AND 400 ORDER BY id LIMIT ?").all(n * 4) as { text: string }[];
    const out = [...new Set(rows.map((r) => r.text.replace(/\s+/g, " ").trim()))].filter((t) => !t.startsWith("/"));
    return out.filter((_t, i) => i % Math.max(1, Math.floor(out.length / n)) === 0).slice(0, n);
  } finally {
    db.close();
  }
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const work = mkdtempSync(join(tmpdir(), "ms-bench-tx-"));
  try {
    let bin = value("bin");
    if (!bin) {
      const { build } = await import("../build.ts");
      bin = await build(join(work, "memsearch"));
    }
    const r = await benchTranscriptIndex({ bin, work, messages: value("messages") ? Number(value("messages")) : undefined });
    const { transcriptIndexMarkdown } = await import("./report.ts");
    console.log(transcriptIndexMarkdown(r));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
