/**
 * A database shaped like OpenCode's 1.18.33 `opencode.db` (the tables, columns and indexes memsearch
 * reads, as its migrations create them: read from a database the real binary made), holding one
 * session of two turns, another session's row, and a damaged row.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";

/** Writes `opencode.db` in `dir` and returns its path; the sessions ran in `directory`. */
export function opencodeFixtureDb(dir: string, directory = "/tmp/oc-project"): string {
  const path = join(dir, "opencode.db");
  const db = new Database(path);
  db.run("CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL)");
  db.run("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");
  db.run("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");
  opencodeIndexes(db);
  const session = (id: string, parent: string | null, t: number) => db.run("INSERT INTO session VALUES (?, 'prj', ?, ?, ?, 'title', '1.18.33', ?, ?)", [id, parent, id, directory, t, t]);
  session("ses_1", null, 1000);
  session("ses_2", null, 1500);
  session("ses_child", "ses_1", 1600);
  const msg = (id: string, session: string, t: number, data: object) => db.run("INSERT INTO message VALUES (?, ?, ?, ?, ?)", [id, session, t, t, JSON.stringify(data)]);
  const part = (id: string, m: string, session: string, data: object) => db.run("INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)", [id, m, session, JSON.stringify(data)]);
  msg("msg_u1", "ses_1", 1000, { role: "user", time: { created: 1000 } });
  part("prt_u1a", "msg_u1", "ses_1", { type: "text", text: "Run the tests with key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" });
  part("prt_u1b", "msg_u1", "ses_1", { type: "text", text: "<system-reminder>scaffold</system-reminder>", synthetic: true });
  msg("msg_a1", "ses_1", 1001, { role: "assistant", parentID: "msg_u1", finish: "tool-calls", time: { created: 1001, completed: 1002 } });
  part("prt_a1a", "msg_a1", "ses_1", { type: "step-start" });
  part("prt_a1b", "msg_a1", "ses_1", { type: "tool", tool: "bash", callID: "call_1", state: { status: "completed", input: { command: "bun test", description: "tests" }, output: "3 pass" } });
  part("prt_a1c", "msg_a1", "ses_1", { type: "tool", tool: "read", callID: "call_2", state: { status: "error", input: { filePath: "/x" }, error: "no such file" } });
  msg("msg_a2", "ses_1", 1003, { role: "assistant", parentID: "msg_u1", finish: "stop", time: { created: 1003, completed: 1004 } });
  part("prt_a2a", "msg_a2", "ses_1", { type: "text", text: "All three tests pass." });
  // The next prompt, still being answered.
  msg("msg_u2", "ses_1", 2000, { role: "user", time: { created: 2000 } });
  part("prt_u2a", "msg_u2", "ses_1", { type: "text", text: "Now the lint" });
  msg("msg_a3", "ses_1", 2001, { role: "assistant", parentID: "msg_u2", finish: "tool-calls", time: { created: 2001 } });
  part("prt_a3a", "msg_a3", "ses_1", { type: "tool", tool: "bash", callID: "call_3", state: { status: "running", input: { command: "bun lint" } } });
  // Another session's and damaged rows.
  msg("msg_x", "ses_2", 1500, { role: "assistant", parentID: "msg_u1", finish: "stop", time: { completed: 1 } });
  part("prt_x", "msg_x", "ses_2", { type: "text", text: "not this session's" });
  msg("msg_bad", "ses_1", 1002, "not json" as unknown as object);
  db.close();
  return path;
}

/** OpenCode 1.18.33's indexes on the tables memsearch reads (its `sqlite_schema`, as its migrations leave it). */
export function opencodeIndexes(db: Database): void {
  db.run("CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id)");
  db.run("CREATE INDEX part_message_id_id_idx ON part (message_id, id)");
  db.run("CREATE INDEX part_session_idx ON part (session_id)");
  db.run("CREATE INDEX session_parent_idx ON session (parent_id)");
}
