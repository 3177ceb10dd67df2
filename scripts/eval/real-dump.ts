/** TEMPORARY analysis dump of the prompt hook's candidates (removed once the gate is chosen). */
import { appendFileSync } from "node:fs";
import type { Context } from "../../src/core/context.ts";
import { anchorsIn } from "../../src/core/anchor.ts";
import { searchChunks } from "../../src/index/search.ts";
import type { Store } from "../../src/index/store.ts";
import { eachWord, rankingTerms, stem } from "../../src/index/tokenizer.ts";
import { idf } from "../../src/index/rank.ts";
import { embedderFor } from "../../src/index/embedder.ts";
import type { Database } from "bun:sqlite";
import { searchTranscripts } from "../../src/conversations/search.ts";
import { queryTokens } from "../../src/conversations/fts.ts";

const out = process.env.MS_EVAL_DUMP;

export async function dumpAsk(o: { ctx: Context; store: Store; db: Database; project: string; memory: string; session: string; prompt: string; now: number; relevant: string[]; strict: string[]; sessionEnds: Map<string, number>; searcher: string }): Promise<void> {
  if (!out) return;
  const { ctx, store } = o;
  const terms = rankingTerms(o.prompt);
  const stats = store.textStats();
  const N = stats.docs;
  const T = terms.map((t) => ({ stem: t.stem, stop: t.stop, df: stats.df(t.stem), idf: idf(stats.df(t.stem), N) }));
  const res = await searchChunks({ query: o.prompt, topK: 20, store, config: ctx.config, embedder: embedderFor(ctx.config, "query"), background: true });
  const byStem = new Map(terms.map((t, i) => [t.stem, i]));
  const notes = res.results.map((r, rank) => {
    const held = new Set<number>();
    const prefix = new Set<number>();
    let len = 0;
    eachWord(r.chunk.content, (w) => {
      len++;
      const i = byStem.get(stem(w));
      if (i !== undefined) held.add(i);
      else {
        const j = terms.findIndex((t) => t.stem.length >= 3 && !t.stop && w.length > t.stem.length && w.startsWith(t.stem));
        if (j >= 0) prefix.add(j);
      }
    });
    const a = anchorsIn(r.chunk.content)[0];
    const end = a ? o.sessionEnds.get(a.session) : undefined;
    return { rank, text: process.env.MS_EVAL_DUMP_TEXT ? r.chunk.content.slice(0, 600) : undefined, session: a?.session, score: r.score, bm25: r.bm25, evidence: r.evidence, cosine: r.cosine, kind: r.kind, held: [...held], prefix: [...prefix].filter((j) => !held.has(j)), len, ageH: end ? (o.now - end) / 3.6e6 : undefined };
  });
  const hits = searchTranscripts(o.db, { query: o.prompt, project: ctx.project.root, limit: 30 });
  const toks = queryTokens(o.prompt);
  const turns = hits.map((h, rank) => ({ rank, session: h.session, turn: h.turnUuid, role: h.role, score: h.score, terms: h.terms ?? [], ageH: (o.now - h.ts) / 3.6e6, len: h.snippet.length }));
  appendFileSync(out, JSON.stringify({ searcher: o.searcher, project: o.project, memory: o.memory, session: o.session, words: (o.prompt.match(/[\p{L}\p{N}_]+/gu) ?? []).length, relevant: o.relevant, strict: o.strict, N, terms: T, toks, bg: res.background, mode: res.mode, notes, turns, sessions: [...o.sessionEnds.entries()].map(([s, e]) => [s, (o.now - e) / 3.6e6]) }) + "\n");
}
