/**
 * The SQLite FTS5 baseline (the keyword-only approach): the same chunks in an FTS5 table, and a
 * fresh `bun` process per query that opens the database and runs a bm25-ordered MATCH, LIMIT 5.
 *   bun scripts/bench/fts.ts DB "query words"   → prints the top 5 as JSON
 */
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";

/** One table, heading + content, filled in one transaction. */
export function buildFtsDb(path: string, chunks: { heading: string; content: string }[]): void {
  rmSync(path, { force: true });
  const db = new Database(path, { create: true });
  db.run("CREATE VIRTUAL TABLE chunks USING fts5(heading, content)");
  const insert = db.prepare("INSERT INTO chunks (heading, content) VALUES (?, ?)");
  db.transaction(() => {
    for (const c of chunks) insert.run(c.heading, c.content);
  })();
  db.run("INSERT INTO chunks(chunks) VALUES ('optimize')");
  db.close();
}

/**
 * Any-term match, like our BM25 side (Orama's default threshold): each word quoted so FTS5
 * syntax characters in a query cannot break it.
 */
export function ftsMatch(query: string): string {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  return [...new Set(words)].map((w) => `"${w}"`).join(" OR ");
}

function main(dbPath: string, query: string): void {
  const db = new Database(dbPath, { readonly: true });
  const rows = db
    .query("SELECT heading, content, bm25(chunks) AS score FROM chunks WHERE chunks MATCH ? ORDER BY score LIMIT 5")
    .all(ftsMatch(query));
  process.stdout.write(JSON.stringify(rows) + "\n");
}

if (import.meta.main) main(process.argv[2]!, process.argv[3] ?? "");
