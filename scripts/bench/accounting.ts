/**
 * What the turn accounting across agents costs (issue 24): a doctor run's `turns` check over a
 * project with Claude Code sessions, Codex CLI rollouts (and as many of another project, which
 * the listing must look at and leave out), Gemini CLI chats and OpenCode sessions, from the real
 * clients' fixture files with their ids made unique.
 *
 *   bun scripts/bench/accounting.ts [--sessions 200]   (or `bun run bench -- --accounting`)
 *
 * Measured in process, each step on its own: the other agents' listing (projectTranscripts: which
 * transcripts are the project's, with their stamps; not cached), the accounting with no cache
 * (every transcript read), and again with the cache it wrote (none read). Transcripts read are
 * counted by wrapping each agent's reader.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { projectTranscripts } from "../../src/agents/registry.ts";
import { accountTurns } from "../../src/memory/accounting.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";

const FIX = resolve(import.meta.dir, "..", "..", "test", "fixtures");
export const DEFAULT_ACCOUNTING_SESSIONS = 200;

export interface AccountingResult {
  /** Sessions per agent of the project (Codex: as many again of another project). */
  perAgent: number;
  turns: number;
  listingMs: number;
  cold: { ms: number; read: number };
  warm: { ms: number; read: number };
}

const hex = (i: number, n: number) => i.toString(16).padStart(n, "0");
const uuid = (kind: number, i: number) => `${hex(kind, 8)}-0000-4000-8000-${hex(i, 12)}`;

function writeOld(path: string, text: string): void {
  writeFileSync(path, text);
  const old = new Date("2026-11-26T12:00:00Z");
  utimesSync(path, old, old);
}

/** Lays the sessions out under `home` for the project at `root`. */
function layOut(home: string, root: string, n: number, other: string): void {
  const claude = join(home, ".claude", "projects", projectSlug(root));
  mkdirSync(claude, { recursive: true });
  const codexDay = join(home, ".codex", "sessions", "2026", "11", "26");
  mkdirSync(codexDay, { recursive: true });
  const chats = join(home, ".gemini", "tmp", "proj", "chats");
  mkdirSync(chats, { recursive: true });
  writeFileSync(join(home, ".gemini", "tmp", "proj", ".project_root"), `${root}\n`);
  const rollout = readFileSync(join(FIX, "codex", "paginated-tool-0.169.jsonl"), "utf8");
  const chat = readFileSync(join(FIX, "gemini", "tool-0.61.jsonl"), "utf8");
  for (let i = 0; i < n; i++) {
    const sid = uuid(1, i);
    const lines: string[] = [];
    for (let t = 0; t < 5; t++) {
      const at = new Date(Date.parse("2026-11-20T09:00:00Z") + (i * 5 + t) * 60_000).toISOString();
      lines.push(JSON.stringify({ type: "user", sessionId: sid, cwd: root, uuid: `${sid}-u${t}`, timestamp: at, message: { role: "user", content: `Change number ${t} of session ${i}: rename the helper` } }));
      lines.push(JSON.stringify({ type: "assistant", sessionId: sid, cwd: root, uuid: `${sid}-a${t}`, timestamp: at, message: { id: `m${i}-${t}`, role: "assistant", model: "claude-opus-4-6", content: [{ type: "tool_use", id: `tu${i}-${t}`, name: "Edit", input: { file_path: join(root, "a.ts") } }] } }));
      lines.push(JSON.stringify({ type: "user", sessionId: sid, cwd: root, uuid: `${sid}-r${t}`, timestamp: at, message: { role: "user", content: [{ type: "tool_result", tool_use_id: `tu${i}-${t}`, content: "ok" }] } }));
    }
    writeOld(join(claude, `${sid}.jsonl`), lines.join("\n") + "\n");
    const ids = (text: string, session: string, turn: string) => text.replaceAll("01a21793-7cfb-7c40-b480-f452d0677c0a", session).replaceAll("01a21793-7d22-7471-8324-c63c25c2f138", turn);
    writeOld(join(codexDay, `rollout-2026-11-26T11-17-51-${hex(i, 8)}.jsonl`), ids(rollout, uuid(2, i), uuid(3, i)).replaceAll('"/tmp/h12-cx/proj"', JSON.stringify(root)));
    writeOld(join(codexDay, `rollout-2026-11-26T11-17-52-${hex(i, 8)}.jsonl`), ids(rollout, uuid(4, i), uuid(5, i)).replaceAll('"/tmp/h12-cx/proj"', JSON.stringify(other)));
    writeOld(join(chats, `session-2026-11-26T11-45-${hex(i, 8)}.jsonl`), chat.replaceAll("86a69924-c921-40d9-889a-fe9a5ce87438", uuid(6, i)).replaceAll("45b28467-fde1-4ea8-80f0-dd2ee0d4c7f7", uuid(7, i)));
  }
  const data = join(home, ".local", "share", "opencode");
  mkdirSync(data, { recursive: true });
  const db = new Database(join(data, "opencode.db"));
  db.run("CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL)");
  db.run("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");
  db.run("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");
  // OpenCode's listing counts each session's parts and latest update: without these it is quadratic.
  if (!process.env.NO_OPENCODE_INDEXES) {
    db.run("CREATE INDEX message_session_idx ON message (session_id)");
    db.run("CREATE INDEX part_session_idx ON part (session_id)");
  }
  const t0 = Date.parse("2026-11-25T09:00:00Z");
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const s = `ses_${hex(i, 6)}`;
      db.run("INSERT INTO session VALUES (?, 'prj', NULL, ?, ?, 'title', '1.18.33', ?, ?)", [s, s, root, t0, t0]);
      for (let t = 0; t < 2; t++) {
        const u = `msg_${hex(i, 6)}_u${t}`;
        const a = `msg_${hex(i, 6)}_a${t}`;
        const at = t0 + i * 1000 + t * 100;
        db.run("INSERT INTO message VALUES (?, ?, ?, ?, ?)", [u, s, at, at, JSON.stringify({ role: "user", time: { created: at } })]);
        db.run("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", [`prt_${u}`, u, s, at, at, JSON.stringify({ type: "text", text: `Fix the lint warning number ${t}` })]);
        db.run("INSERT INTO message VALUES (?, ?, ?, ?, ?)", [a, s, at + 1, at + 1, JSON.stringify({ role: "assistant", parentID: u, finish: "stop", time: { created: at + 1, completed: at + 2 } })]);
        db.run("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", [`prt_${a}`, a, s, at + 1, at + 1, JSON.stringify({ type: "text", text: "Fixed." })]);
      }
    }
  })();
  db.close();
}

export async function benchAccounting(o: { sessions?: number; log?: (l: string) => void } = {}): Promise<AccountingResult> {
  const n = o.sessions ?? DEFAULT_ACCOUNTING_SESSIONS;
  const work = mkdtempSync(join(tmpdir(), "ms-bench-accounting-"));
  try {
    const root = join(work, "proj");
    const other = join(work, "other");
    for (const r of [root, other]) mkdirSync(join(r, ".git"), { recursive: true });
    const home = join(work, "home");
    layOut(home, root, n, other);
    const env = { HOME: home, CODEX_HOME: join(home, ".codex"), GEMINI_CLI_HOME: home, XDG_DATA_HOME: join(home, ".local", "share"), XDG_CONFIG_HOME: join(home, ".config") };
    const base = { root, memoryDir: join(root, ".memsearch", "memory"), dataDir: join(root, ".memsearch"), cacheFile: join(home, ".memsearch", "turns-cache.json") };
    let read = 0;
    const list = () => {
      const started = performance.now();
      // Claude Code's transcripts (the same `home`) are listed too; the other agents' reads are counted.
      const sources = projectTranscripts(root, env).map((s) => (s.agent === "claude" ? s : { ...s, listTurns: (p: string) => (read++, s.listTurns(p)) }));
      return { sources, ms: performance.now() - started };
    };
    const run = async () => {
      read = 0;
      const { sources, ms: listed } = list();
      const a = await accountTurns({ ...base, sources });
      return { a, listed, read };
    };
    const cold = await run();
    const warm = await run();
    const result: AccountingResult = { perAgent: n, turns: cold.a.turns, listingMs: warm.listed, cold: { ms: cold.a.ms, read: cold.read }, warm: { ms: warm.a.ms, read: warm.read } };
    o.log?.(`  ${n} sessions per agent, ${result.turns} turns: listing ${result.listingMs.toFixed(0)} ms; cold ${result.cold.ms.toFixed(0)} ms (${result.cold.read} of other agents' transcripts read); warm ${result.warm.ms.toFixed(0)} ms (${result.warm.read} read)`);
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function accountingMarkdown(r: AccountingResult): string {
  return [
    "## Turn accounting across agents",
    "",
    `A project with ${r.perAgent} sessions each of Claude Code (5 turns), Codex CLI (and ${r.perAgent} rollouts of another project), Gemini CLI and OpenCode (2 turns): ${r.turns} turns (\`scripts/bench/accounting.ts\`).`,
    "",
    "| step | ms | other agents' transcripts read |",
    "|---|---:|---:|",
    `| listing (which transcripts are the project's; every run) | ${r.listingMs.toFixed(0)} | 0 |`,
    `| accounting, no cache | ${r.cold.ms.toFixed(0)} | ${r.cold.read} |`,
    `| accounting, warm cache | ${r.warm.ms.toFixed(0)} | ${r.warm.read} |`,
    "",
  ].join("\n");
}

if (import.meta.main) {
  const i = process.argv.indexOf("--sessions");
  const sessions = i >= 0 ? Number(process.argv[i + 1]) : DEFAULT_ACCOUNTING_SESSIONS;
  if (!Number.isInteger(sessions) || sessions < 1) throw new Error(`--sessions takes a whole number, got ${process.argv[i + 1]}`);
  const r = await benchAccounting({ sessions, log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(accountingMarkdown(r));
}
