/**
 * The conversation index heals itself (issue 20, defect 5): damage met in the middle of a query
 * is healed like damage met at the open, other SQLite errors are not taken for damage, and the
 * watch process's keeper says a heal once. (test/fault/damaged-caches.test.ts drives the binary.)
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isDamage, openTranscriptIndex, transcriptDbPath, TranscriptIndexDamaged, withTranscriptIndex } from "../../src/conversations/db.ts";
import { keepTranscriptsIndexed } from "../../src/conversations/keeper.ts";
import { transcriptSources } from "../../src/agents/registry.ts";

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { name: "SQLiteError", code });
const dbIn = () => join(mkdtempSync(join(tmpdir(), "ms-heal-")), "transcripts.sqlite");

describe("withTranscriptIndex", () => {
  test("damage met in the middle of a query: healed, and the work runs again on the new index", async () => {
    const path = dbIn();
    (await openTranscriptIndex(path)).db.close();
    let calls = 0;
    const r = await withTranscriptIndex(path, {}, (db) => {
      calls++;
      db.run("INSERT INTO meta (key, value) VALUES ('mark', ?)", [calls]);
      if (calls === 1) throw sqliteError("SQLITE_CORRUPT", "database disk image is malformed");
      return (db.query("SELECT count(*) AS n FROM meta").get() as { n: number }).n;
    });
    expect(calls).toBe(2);
    // The first run's row went with the damaged file.
    expect(r.value).toBe(1);
    expect(r.healed).toEqual({ path, reason: "database disk image is malformed" });
  });

  test("a busy or full database is not damage: the error goes to the caller and the file stays", async () => {
    const path = dbIn();
    (await openTranscriptIndex(path)).db.close();
    const before = readFileSync(path);
    for (const code of ["SQLITE_BUSY", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_CANTOPEN"]) {
      expect(isDamage(sqliteError(code, "x"))).toBe(false);
      const err = await withTranscriptIndex(path, {}, () => {
        throw sqliteError(code, "not damage");
      }).catch((e) => e);
      expect(err.message).toBe("not damage");
    }
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(isDamage(sqliteError("SQLITE_NOTADB", "x"))).toBe(true);
    expect(isDamage(sqliteError("SQLITE_CORRUPT_VTAB", "x"))).toBe(true);
    expect(isDamage(new TranscriptIndexDamaged("x"))).toBe(true);
  });

  test("an index another process holds locked is not taken for damage: the error goes to the caller, the rows stay", async () => {
    const path = dbIn();
    const setup = (await openTranscriptIndex(path)).db;
    setup.run("INSERT INTO meta (key, value) VALUES ('mine', 1)");
    setup.close();
    const holder = new Database(path);
    holder.run("PRAGMA locking_mode = EXCLUSIVE");
    holder.run("BEGIN EXCLUSIVE");
    try {
      const err = await openTranscriptIndex(path, { busyTimeoutMs: 50 }).catch((e) => e);
      expect(err?.code).toBe("SQLITE_BUSY");
    } finally {
      holder.run("ROLLBACK");
      holder.close();
    }
    const db = new Database(path, { readonly: true });
    expect(db.query("SELECT value FROM meta WHERE key = 'mine'").get()).toEqual({ value: 1 });
    db.close();
  });

  test("an index that is not SQLite opens as a new, empty one", async () => {
    const path = dbIn();
    writeFileSync(path, "not a database at all, only text ".repeat(200));
    const { db, healed } = await openTranscriptIndex(path);
    expect(healed?.reason).toBe("not an SQLite database");
    expect((db.query("SELECT count(*) AS n FROM messages").get() as { n: number }).n).toBe(0);
    db.close();
    const again = await openTranscriptIndex(path);
    expect(again.healed).toBeUndefined();
    again.db.close();
  });
});

describe("the watch process's keeper", () => {
  test("heals a damaged index and says so once", async () => {
    const path = transcriptDbPath();
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, Buffer.alloc(5000, 0x5a));
    const notices: string[] = [];
    const errors: string[] = [];
    const stop = keepTranscriptsIndexed(200, transcriptSources(), (m) => errors.push(m), (l) => notices.push(l));
    try {
      for (let i = 0; i < 100 && notices.length === 0; i++) await Bun.sleep(100);
      // A few more updates: none of them says anything again.
      await Bun.sleep(800);
    } finally {
      stop();
    }
    expect(errors).toEqual([]);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/^memsearch: the conversation index .*transcripts\.sqlite was damaged \(not an SQLite database\); removed it and rebuilt it from the transcripts$/);
    const db = new Database(path, { readonly: true });
    expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBeGreaterThan(0);
    db.close();
  }, 20_000);
});
