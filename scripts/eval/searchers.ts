/**
 * The searchers compared: memsearch itself (the product's own index build, index open and search,
 * in this process) and two SQLite FTS5 baselines over the same chunks. Each returns, per query,
 * the turn ids of its results, best first.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chunkMarkdown } from "../../src/index/chunker.ts";
import { loadContext } from "../../src/core/context.ts";
import { embedderFor } from "../../src/index/embedder.ts";
import { openOrRebuild } from "../../src/index/heal.ts";
import { indexPaths } from "../../src/index/indexer.ts";
import { searchChunks, type SearchResponse } from "../../src/index/search.ts";
import type { Config } from "../../src/core/config.ts";
import { ftsMatch } from "../bench/fts.ts";
import type { MemoryFile } from "./dataset.ts";
import type { ConfigKey, ConfigValue } from "../../src/core/config.ts";

interface OpenSearcher {
  /** Turn ids of the top `depth` results, best first. */
  search(query: string, depth: number): Promise<string[]>;
  close(): void;
}

export interface Searcher {
  name: string;
  label: string;
  /** Index one conversation's memory files; `dir` is an empty temp folder of its own. */
  open(files: MemoryFile[], dir: string): Promise<OpenSearcher>;
}

/** memsearch opened on one memory: its whole search response too, for the prompt gate. */
export interface OpenMemsearch extends OpenSearcher {
  respond(query: string, topK: number): Promise<SearchResponse>;
  config: Config;
}

export interface MemsearchSearcher extends Searcher {
  open(files: MemoryFile[], dir: string): Promise<OpenMemsearch>;
}

/**
 * memsearch as `memsearch index` then `memsearch search` run it: the project's markdown in
 * `.memsearch/memory`, indexed by indexPaths, opened by openOrRebuild, searched by searchChunks.
 * Keyword only unless an Ollama host is given. The caller's own settings (MEMSEARCH_*, ~/.memsearch)
 * are kept out: the project has a HOME of its own.
 */
export function memsearchSearcher(opts: { ollamaHost?: string; model?: string; name: string; label: string }): MemsearchSearcher {
  return {
    name: opts.name,
    label: opts.label,
    async open(files, dir) {
      mkdirSync(join(dir, ".git"), { recursive: true });
      const memory = join(dir, ".memsearch", "memory");
      mkdirSync(memory, { recursive: true });
      const env = { HOME: join(dir, "home"), PATH: process.env.PATH ?? "" };
      const flags: Partial<Record<ConfigKey, ConfigValue>> = opts.ollamaHost
        ? { "embedding.provider": "ollama", "embedding.host": opts.ollamaHost, ...(opts.model ? { "embedding.model": opts.model } : {}) }
        : { "embedding.provider": "none" };
      const ctx = loadContext(flags, dir, env);
      const index = () => indexPaths({ paths: [ctx.project.memoryDir], indexDir: ctx.project.indexDir, config: ctx.config, embedder: embedderFor(ctx.config, "index"), merge: "never" });
      // MEMSEARCH_EVAL_SEGMENTS=1: the files arrive one at a time, in the order a run reads them, each
      // indexed as it lands (a base, then a segment per file): the JSON must not change (segments.ts).
      const oneByOne = process.env.MEMSEARCH_EVAL_SEGMENTS === "1";
      let report: Awaited<ReturnType<typeof index>> | undefined;
      for (const f of oneByOne ? [...files].sort((a, b) => (a.name < b.name ? -1 : 1)) : files) {
        writeFileSync(join(memory, f.name), f.text);
        if (oneByOne) report = await index();
      }
      if (!oneByOne) report = await index();
      if (opts.ollamaHost && report?.embedderWarning) throw new Error(`embedding failed: ${report.embedderWarning}`);
      const { store } = await openOrRebuild(ctx);
      const embedder = embedderFor(ctx.config, "query");
      const want = opts.ollamaHost ? "hybrid" : "bm25";
      const respond = async (query: string, topK: number) => {
        // With the background the prompt gate judges by (controls.ts), as the prompt hook asks for it.
        const res = await searchChunks({ query, topK, store, config: ctx.config, embedder, background: true });
        // A hybrid run that quietly fell back to keywords would be measuring the wrong thing.
        if (res.mode !== want && res.results.length) throw new Error(`search ran in ${res.mode} mode, expected ${want}${res.warning ? ` (${res.warning})` : ""}`);
        return res;
      };
      return {
        config: ctx.config,
        respond,
        async search(query, depth) {
          return (await respond(query, depth)).results.map((r) => r.chunk.heading);
        },
        close() {},
      };
    },
  };
}

/**
 * SQLite FTS5 over the same chunks (memsearch's chunker, so both rank the same units), queried
 * with an OR of the question's words, ordered by bm25(): what a plain keyword index gives.
 */
export function fts5Searcher(opts: { porter: boolean; name: string; label: string }): Searcher {
  return {
    name: opts.name,
    label: opts.label,
    async open(files) {
      const db = new Database(":memory:");
      const tokenizer = opts.porter ? "porter unicode61" : "unicode61";
      db.run(`CREATE VIRTUAL TABLE chunks USING fts5(turn UNINDEXED, content, tokenize = '${tokenizer}')`);
      const insert = db.prepare("INSERT INTO chunks (turn, content) VALUES (?, ?)");
      db.transaction(() => {
        for (const f of files) for (const c of chunkMarkdown(f.text, f.name)) insert.run(c.heading, c.content);
      })();
      const query = db.prepare("SELECT turn FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?");
      return {
        async search(q, depth) {
          const match = ftsMatch(q);
          if (!match) return [];
          return (query.all(match, depth) as { turn: string }[]).map((r) => r.turn);
        },
        close: () => db.close(),
      };
    },
  };
}

