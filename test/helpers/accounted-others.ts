/**
 * Other agents' sessions of a project beside Claude Code's (accounted-session.ts), in every state
 * the turn accounting knows, from the real clients' files: two Codex CLI 0.169.0 rollouts (one
 * noted, one missing), a Gemini CLI 0.61.0 chat (noted) and an OpenCode session of a database
 * shaped like 1.18.33's (its first turn noted, its second forgotten). Each noted turn gets its note
 * the way a real one does: queued as its agent's Stop hook queues it and written by the drainer,
 * which finds the turn through the agent's adapter, so the anchor holds the ids the drainer takes.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentOrDefault } from "../../src/agents/registry.ts";
import { sessionKey } from "../../src/agents/opencode/session-key.ts";
import { opencodeDbPath } from "../../src/agents/opencode/sessions.ts";
import { drainPending } from "../../src/memory/capture.ts";
import { changeList } from "../../src/memory/forgotten.ts";
import { enqueueTurn } from "../../src/memory/pending.ts";
import { extractBullets } from "../../src/memory/summarizer.ts";
import { opencodeFixtureDb } from "./opencode-db.ts";

const FIX = join(import.meta.dir, "..", "fixtures");

/** The ids the fixtures hold. */
export const CODEX_NOTED = { session: "01a2178f-3555-7e81-b21c-8e2abc92c752", turn: "01a2178f-35dc-78c0-987f-b6c79cdadb6a" };
export const CODEX_MISSING = { session: "01a21793-7cfb-7c40-b480-f452d0677c0a", turn: "01a21793-7d22-7471-8324-c63c25c2f138", at: "2026-11-26T11:17:51.692Z" };
export const GEMINI_NOTED = { session: "86a69924-c921-40d9-889a-fe9a5ce87438", turn: "45b28467-fde1-4ea8-80f0-dd2ee0d4c7f7" };
export const OPENCODE_NOTED = { session: "ses_1", turn: "msg_u1" };
export const OPENCODE_FORGOTTEN = { session: "ses_1", turn: "msg_u2" };
/** Where the OpenCode fixture's times (ms from 0) are moved to. */
export const OPENCODE_EPOCH = Date.parse("2026-11-25T09:00:00.000Z");

export interface OtherSessions {
  /** The environment the adapters read the agents' homes from. */
  env: NodeJS.ProcessEnv;
  rollouts: { noted: string; missing: string };
  chat: string;
  /** `<database>#ses_1`. */
  opencode: string;
}

/** The homes of each agent under `home`, as the adapters find them. */
export function agentEnv(home: string): NodeJS.ProcessEnv {
  return { HOME: home, CODEX_HOME: join(home, ".codex"), GEMINI_CLI_HOME: home, XDG_DATA_HOME: join(home, ".local", "share"), XDG_CONFIG_HOME: join(home, ".config") };
}

/** A Codex rollout of the fixtures as if its session had run in `root`, written long ago. */
export function codexRollout(home: string, root: string, fixture: string, name: string): string {
  const day = join(home, ".codex", "sessions", "2026", "11", "26");
  mkdirSync(day, { recursive: true });
  const path = join(day, name);
  // The folders the fixtures' sessions ran in (the real client's, and the hand-written older layout's).
  writeFileSync(path, readFileSync(join(FIX, "codex", fixture), "utf8").replaceAll('"/tmp/h12-cx/proj"', JSON.stringify(root)).replaceAll('"/home/u/proj"', JSON.stringify(root)));
  const old = new Date("2026-11-26T12:00:00Z");
  utimesSync(path, old, old);
  return path;
}

/** Writes the agents' files under `home` (each session ran in `root`) and the notes in `root/.memsearch`. */
export async function otherAgentSessions(root: string, home: string): Promise<OtherSessions> {
  const env = agentEnv(home);
  const rollouts = {
    noted: codexRollout(home, root, "paginated-0.169.jsonl", "rollout-2026-11-26T11-13-11-01a2178f.jsonl"),
    missing: codexRollout(home, root, "paginated-tool-0.169.jsonl", "rollout-2026-11-26T11-17-51-01a21793.jsonl"),
  };
  const slot = join(home, ".gemini", "tmp", "proj");
  mkdirSync(join(slot, "chats"), { recursive: true });
  writeFileSync(join(slot, ".project_root"), `${root}\n`);
  const chat = join(slot, "chats", "session-2026-11-26T11-45-86a69924.jsonl");
  copyFileSync(join(FIX, "gemini", "tool-0.61.jsonl"), chat);
  const old = new Date("2026-11-26T12:00:00Z");
  utimesSync(chat, old, old);
  const data = join(home, ".local", "share", "opencode");
  mkdirSync(data, { recursive: true });
  const dbPath = opencodeFixtureDb(data, root);
  const db = new Database(dbPath);
  for (const table of ["session", "message", "part"]) db.run(`UPDATE ${table} SET time_created = time_created + ?, time_updated = time_updated + ?`, [OPENCODE_EPOCH, OPENCODE_EPOCH]);
  db.close();

  // What each agent's Stop hook queues (opencode: the plugin's idle), then the drainer.
  const dataDir = join(root, ".memsearch");
  enqueueTurn(dataDir, { agent: "codex", sessionId: CODEX_NOTED.session, promptId: CODEX_NOTED.turn, transcriptPath: rollouts.noted, stoppedAt: "2026-11-26T11:13:20.000Z", prompt: "Remind me which scheduler runs the nightly job" });
  enqueueTurn(dataDir, { agent: "gemini", sessionId: GEMINI_NOTED.session, transcriptPath: chat, stoppedAt: "2026-11-26T11:45:10.000Z", prompt: "RUNTOOL please list things" });
  enqueueTurn(dataDir, { agent: "opencode", sessionId: OPENCODE_NOTED.session, promptId: OPENCODE_NOTED.turn, transcriptPath: opencodeDbPath(env), stoppedAt: new Date(OPENCODE_EPOCH + 1004).toISOString(), lastAssistantMessage: "All three tests pass." });
  const report = await drainPending({ memoryDir: join(dataDir, "memory"), dataDir, readerFor: (name) => agentOrDefault(name), summarize: async (t) => ({ bullets: extractBullets(t), provider: "extract" }), transcriptWaitMs: 0 });
  if (report.written !== 3 || report.fromHooks !== 0) throw new Error(`the drainer wrote ${report.written} notes, ${report.fromHooks} from the hooks: ${JSON.stringify(report)}`);
  await changeList(dataDir, (entries) => ({ entries: [...entries, { turn: OPENCODE_FORGOTTEN.turn, at: new Date().toISOString() }], result: undefined }));
  return { env, rollouts, chat, opencode: sessionKey(opencodeDbPath(env), "ses_1") };
}
