/**
 * Fault injection: a crafted or non-standard `opencode.db` (issue 31). OpenCode's database is
 * read by `import`, `recall`, `doctor`, `stats`, the hub and the watch process; one whose `part` is
 * a VIEW of an endless recursive query, or whose tables lack OpenCode's indexes, made each of them
 * hang (the hub's /api/ping too), and one 200 MB row cost 1.46 GB. Each is now refused with one
 * line, or read within bounds; and the hub and the watch read OpenCode on a thread of their own.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { transcriptSources } from "../../src/agents/registry.ts";
import { readOpencodeSession } from "../../src/agents/opencode/db.ts";
import { openOpencodeDb } from "../../src/agents/opencode/session-key.ts";
import { opencodeFixtureDb, opencodeIndexes } from "../helpers/opencode-db.ts";
import { BIN, faultKit, ms, tracked, type Project } from "./helpers.ts";
import { rereadSource } from "../helpers/sources.ts";

const kit = faultKit("opencode-db");
const HANG_MS = 45_000;

/** The folder OpenCode keeps its database in, under the project's HOME. */
function dataDir(p: Project): string {
  const d = join(p.home, ".local", "share", "opencode");
  mkdirSync(d, { recursive: true });
  return d;
}

const envOf = (p: Project) => ({ ...p.env, XDG_DATA_HOME: join(p.home, ".local", "share"), XDG_CONFIG_HOME: join(p.home, ".config"), MEMSEARCH_NO_WATCH: "1", MEMSEARCH_EMBEDDING_PROVIDER: "none" });

/** OpenCode's tables, one session of the project; `part` as the caller makes it. */
function crafted(p: Project, part: (db: Database) => void, indexes = true): string {
  const path = join(dataDir(p), "opencode.db");
  const db = new Database(path);
  db.run("CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER)");
  db.run("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");
  part(db);
  if (indexes) db.run("CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id)");
  db.run("INSERT INTO session VALUES ('ses_1', 'p', NULL, 's', ?, 't', '1', 1, 1)", [p.root]);
  db.run("INSERT INTO message VALUES ('msg_u1', 'ses_1', 1, 1, ?)", [JSON.stringify({ role: "user" })]);
  db.close();
  return path;
}

/** `part` a view that never ends: counting it for the listing would run for ever. */
const endlessView = (db: Database) =>
  db.run("CREATE VIEW part AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 'prt_' || x AS id, 'msg_u1' AS message_id, 'ses_1' AS session_id, 0 AS time_created, x AS time_updated, '{}' AS data FROM c");
/** A plain `part` table without OpenCode's indexes: each session's lookups would scan every part. */
const unindexed = (db: Database) => db.run("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");

describe("a crafted opencode.db", () => {
  for (const [what, make, reason] of [
    ["part is a view of an endless query", (p: Project) => crafted(p, endlessView), "its part is a view, not a table"],
    ["tables without OpenCode's indexes", (p: Project) => crafted(p, unindexed, false), "it has no index on message(session_id), part(message_id), part(session_id)"],
  ] as const) {
    test(
      `${what}: import and recall finish and name it in one line; doctor and stats finish`,
      tracked(kit, async () => {
        const p = kit.project({ memory: "none" });
        const db = make(p);
        const env = envOf(p);
        for (const args of [["import"], ["recall", "anything"], ["doctor"], ["stats"]]) {
          const r = await ms(args, { cwd: p.root, env, hangMs: HANG_MS });
          kit.count("runs");
          expect([args[0], r.hung]).toEqual([args[0], false]);
          if (args[0] === "import" || args[0] === "recall") {
            const lines = r.stderr.split("\n").filter((l) => l.includes(db));
            expect([args[0], lines.length]).toEqual([args[0], 1]);
            expect(lines[0]).toContain(`is not OpenCode's database as memsearch reads it (${reason})`);
          }
        }
      }),
      4 * HANG_MS,
    );
  }

  test(
    "a 20 MB row is never read into memory: its part is left out of the turn, the rest read",
    tracked(kit, () => {
      const p = kit.project({ memory: "none" });
      const path = opencodeFixtureDb(dataDir(p), p.root);
      const db = new Database(path);
      // A part of the finished turn's answer, made in SQL: the test never holds it either.
      db.run("INSERT INTO part VALUES ('prt_a2b', 'msg_a2', 'ses_1', 0, 0, json_object('type', 'text', 'text', printf('%.*c', 20000000, 'Z')))");
      db.close();
      const o = openOpencodeDb(path);
      try {
        const [first] = readOpencodeSession(o, "ses_1");
        expect(first!.assistantTexts).toEqual(["All three tests pass."]);
        expect(first!.tools.map((t) => t.name)).toEqual(["bash", "read"]);
      } finally {
        o.close();
      }
      kit.count("big-rows");
    }),
  );
});

describe("OpenCode read off the request path", () => {
  test(
    "the hub and the watch list OpenCode on a thread of their own: their loop runs while a large database is listed",
    tracked(kit, async () => {
      const p = kit.project({ memory: "none" });
      const path = join(dataDir(p), "opencode.db");
      const db = new Database(path);
      db.run("CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER)");
      db.run("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");
      db.run("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)");
      opencodeIndexes(db);
      // 20,000 sessions of 20 parts each: a listing of some length, whatever the machine.
      db.run("BEGIN");
      const s = db.query("INSERT INTO session VALUES (?, 'p', NULL, 's', ?, 't', '1', ?, ?)");
      const part = db.query("INSERT INTO part VALUES (?, ?, ?, 0, ?, '{}')");
      for (let i = 0; i < 20_000; i++) {
        s.run(`ses_${i}`, p.root, i, i);
        for (let j = 0; j < 20; j++) part.run(`prt_${i}_${j}`, `msg_${i}`, `ses_${i}`, j);
      }
      db.run("COMMIT");
      db.close();
      const env = envOf(p);
      const source = rereadSource(transcriptSources(env, { offThread: true }), "opencode");
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      let listed: { path: string }[];
      try {
        listed = await source.list();
      } finally {
        clearInterval(timer);
      }
      expect(listed).toHaveLength(20_000);
      // Read on this thread, the listing would hold the loop until it ended: no tick at all.
      expect(ticks).toBeGreaterThan(0);
      kit.set("loop-ticks-while-listing", ticks);
    }),
    120_000,
  );

  test(
    "the hub: /api/ping answers, and a recall search ends, with an endless view for OpenCode's parts",
    tracked(kit, async () => {
      const p = kit.project({ memory: "sample" });
      crafted(p, endlessView);
      const env = envOf(p);
      const clean: Record<string, string> = {};
      for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
      const proc = Bun.spawn([BIN, "hub", "--no-open"], { cwd: p.root, env: clean, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      kit.onCleanup(() => proc.kill(9));
      try {
        const reader = proc.stdout.getReader();
        let out = "";
        while (!/Memory Hub: (\S+)\n/.test(out)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`hub exited: ${out}`);
          out += new TextDecoder().decode(value);
        }
        reader.releaseLock();
        const u = new URL(/Memory Hub: (\S+)\n/.exec(out)![1]!);
        const auth = { authorization: `Bearer ${u.searchParams.get("token")}` };
        const get = (path: string) => fetch(new URL(path, u.origin), { headers: auth, signal: AbortSignal.timeout(HANG_MS) });
        const search = get("/api/search?q=redis&mode=recall");
        const ping = await get("/api/ping");
        expect(ping.status).toBe(200);
        const r = await search;
        expect(r.status).toBe(200);
        const page = (await r.json()) as { warnings: string[] };
        expect(page.warnings.some((w) => w.includes("is not OpenCode's database as memsearch reads it"))).toBe(true);
      } finally {
        proc.kill(9);
      }
    }),
    2 * HANG_MS,
  );
});
