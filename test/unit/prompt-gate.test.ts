/**
 * The prompt gate (src/recall/gate.ts): what the prompt hook injects is judged on absolute evidence,
 * the vector side against the index's own background, the keyword side on the query's rare words.
 */
import { describe, expect, test } from "bun:test";
import { searchChunks, type QueryEmbedder } from "../../src/index/search.ts";
import type { Store } from "../../src/index/store.ts";
import { backgroundBest, gate, gateSearchDepth, INFORMATION_BAR, keywordSide, SHARE_BAR, vectorStanding } from "../../src/recall/gate.ts";
import { storeOf, testConfig } from "../helpers/store-of.ts";

const DIM = 8;
/** The query's direction: a note's vector below has exactly the cosine asked for with it. */
const QUERY: QueryEmbedder = { embedQuery: async () => Float32Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0)) };

/** A unit vector at cosine `c` to the query, its other part pointing one of several ways (`k`). */
function atCosine(c: number, k: number): Float32Array {
  const v = new Float32Array(DIM);
  v[0] = c;
  const rest = Math.sqrt(1 - c * c);
  const a = 1 + (k % (DIM - 1));
  const b = 1 + ((k + 3) % (DIM - 1));
  if (a === b) v[a] = rest;
  else {
    v[a] = rest * 0.8;
    v[b] = rest * 0.6;
  }
  return v;
}

/**
 * Sixty notes about other things, whose cosines to the query spread evenly around `base`, and one
 * note (heading `target`) at cosine `target`. No note holds a word of the query used below.
 */
function backgroundStore(base: number, spread: number, target: number): Store {
  const notes = Array.from({ length: 60 }, (_, i) => `### note ${i}\n- Reviewed backlog item ${i} with the team <!-- c:${(base + spread * ((i % 11) / 10 - 0.5)).toFixed(4)} -->\n`);
  notes.push(`### target\n- Something phrased in other words entirely <!-- c:${target} -->\n`);
  let k = 0;
  return storeOf({ "/m/a.md": notes.join("\n") }, (text) => atCosine(Number(/c:([\d.]+)/.exec(text)![1]), k++), DIM);
}

async function decide(store: Store, query: string, embedder: QueryEmbedder | null = QUERY) {
  const config = testConfig();
  const response = await searchChunks({ query, topK: gateSearchDepth(config), store, config, embedder, background: true });
  return { response, ...gate(response, config) };
}

describe("the prompt gate: vector side against the index's background", () => {
  test("a note that stands out from the query's background passes on its vector alone", async () => {
    const { response, injected, candidates } = await decide(backgroundStore(0.1, 0.1, 0.86), "zygomorphic quokka");
    expect(response.mode).toBe("hybrid");
    expect(response.background!.vectors).toBe(61);
    expect(injected.map((r) => r.chunk.heading)).toEqual(["target"]);
    const top = candidates[0]!;
    expect(top).toMatchObject({ rank: 1, keyword: 0, pass: true });
    expect(top.z!).toBeGreaterThan(2 * backgroundBest(61));
    expect(top.reason).toContain("vector z");
  });

  test("the same cosine in an index where every note scores about that high does not pass", async () => {
    // A model with a high baseline: every note within 0.05 of 0.85; the target's 0.86 is not news.
    const { response, injected, candidates } = await decide(backgroundStore(0.85, 0.1, 0.86), "zygomorphic quokka");
    expect(response.results[0]!.cosine!).toBeGreaterThan(0.85);
    expect(injected).toEqual([]);
    expect(candidates.length).toBeGreaterThan(0);
    expect(candidates.every((c) => !c.pass && c.standing === 0)).toBe(true);
  });

  test("standing: zero up to the background's expected best, one at twice it, none without a spread", () => {
    const bg = { mean: 0.5, sd: 0.1, sampled: 100, vectors: 100 };
    const bar = backgroundBest(100);
    expect(vectorStanding(0.5 + 0.1 * bar, bg).standing).toBeCloseTo(0, 9);
    expect(vectorStanding(0.5 + 0.15 * bar, bg).standing).toBeCloseTo(0.5, 9);
    expect(vectorStanding(0.5 + 0.3 * bar, bg).standing).toBe(1);
    expect(vectorStanding(0.99, { ...bg, sd: 0 })).toEqual({ standing: 0 });
    expect(vectorStanding(undefined, bg)).toEqual({ standing: 0 });
  });
});

describe("the prompt gate: keyword side on absolute evidence", () => {
  const FILLER = Array.from({ length: 30 }, (_, i) => `### filler ${i}\n- Reviewed the backlog item ${i} with the team and moved on.\n`).join("\n");
  const store = storeOf({ "/m/a.md": `### agency\n- Caroline called the adoption agency about the forms.\n\n${FILLER}` });

  test("the best hit does not pass when it lacks the query's rare words", async () => {
    // Every filler note holds "backlog" and "team"; none holds "Priya". Ranked first, still no evidence.
    const { response, injected, candidates } = await decide(store, "what did Priya say about the backlog team", null);
    expect(response.mode).toBe("bm25");
    expect(response.results[0]!.chunk.heading).toStartWith("filler");
    expect(response.results[0]!.score).toBeGreaterThanOrEqual(0.5);
    expect(injected).toEqual([]);
    expect(candidates[0]!.keyword).toBeLessThan(0.1);
    expect(candidates[0]!.reason).toMatch(/^keywords 0\.\d\d: relevance 0\.\d\d < 0\.5$/);
  });

  test("keyword-only: a note holding the query's rare words passes, with its relevance", async () => {
    const { injected, candidates } = await decide(store, "when did Caroline call the adoption agency", null);
    expect(injected.map((r) => r.chunk.heading)).toEqual(["agency"]);
    expect(injected[0]!.relevance).toBeGreaterThan(0.9);
    expect(candidates[0]).toMatchObject({ pass: true, standing: 0 });
    expect(candidates[0]!.z).toBeUndefined();
  });

  test("a short generic prompt whose few words every project's notes hold does not pass: a large share of little information", async () => {
    // Merge conflicts come up now and then, as in any project: all the prompt's words, little information.
    const merges = Array.from({ length: 3 }, (_, i) => `### merge ${i}\n- Resolved the merge conflicts from main, round ${i}.\n`).join("\n");
    const notes = `${merges}\n${FILLER}`;
    const { injected, candidates } = await decide(storeOf({ "/m/c.md": notes }), "fix the merge conflicts", null);
    const top = candidates.find((c) => c.chunkHash === injected[0]?.chunk.chunkHash) ?? candidates[0]!;
    expect(injected).toEqual([]);
    expect(top.keyword).toBeLessThan(0.5);
    expect(top.keyword).toBeGreaterThan(0);
  });

  test("a long task description whose memory is there passes, though it holds many words no note holds", async () => {
    const prompt =
      "The flamingo parser cache in flamingo-cache.ts keeps growing again after the eviction fix: evictOldest still looks skipped when the flamingo cache holds 512 entries, and the parser slows down on large inputs. Look at how the eviction was fixed last time, make evictOldest run whenever the cache reaches 512 entries, and add a test for that limit.";
    const notes = `### fix\n- User asked: the flamingo parser cache never evicts; evictOldest is skipped once the cache holds 512 entries.\n- Files touched: src/parser/flamingo-cache.ts\n- Outcome: fixed the eviction in evictOldest.\n\n${FILLER}`;
    const { injected, candidates } = await decide(storeOf({ "/m/d.md": notes }), prompt, null);
    expect(injected.map((r) => r.chunk.heading)).toEqual(["fix"]);
    expect(candidates[0]!.keyword).toBeGreaterThanOrEqual(0.5);
  });

  test("keywordSide: half way at half the prompt's rare-term weight and two unique terms' information, full at twice each, the lesser of the two", () => {
    expect(keywordSide({ evidence: SHARE_BAR, information: INFORMATION_BAR })).toBeCloseTo(0.5, 9);
    expect(keywordSide({ evidence: 1, information: INFORMATION_BAR })).toBeCloseTo(0.5, 9);
    expect(keywordSide({ evidence: SHARE_BAR, information: 10 })).toBeCloseTo(0.5, 9);
    expect(keywordSide({ evidence: 1, information: 2 * INFORMATION_BAR })).toBe(1);
    expect(keywordSide({ evidence: 0.9, information: 1 })).toBeCloseTo(1 / (2 * INFORMATION_BAR), 9);
  });

  test("evidence is a share, at most 1, when the query's words no note holds whole match as prefixes", async () => {
    const store = storeOf({ "/m/c.md": "### setup\n- configuration kubernetes authentication postgresql typescript\n" });
    const { results } = await searchChunks({ query: "config kube auth postgres types", topK: 5, store, config: testConfig(), embedder: null });
    expect(results[0]!.evidence).toBeGreaterThan(0);
    expect(results[0]!.evidence).toBeLessThanOrEqual(1);
  });

  test("no more than hooks.inject_top_k pass; the rest say why", async () => {
    const config = testConfig();
    const notes = Array.from({ length: 6 }, (_, i) => `### same ${i}\n- The flaky zeppelin quokka test failed again, take ${i}.\n`).join("\n");
    const response = await searchChunks({ query: "flaky zeppelin quokka test", topK: gateSearchDepth(config), store: storeOf({ "/m/b.md": `${notes}\n${FILLER}` }), config, embedder: null });
    const { injected, candidates } = gate(response, config);
    expect(injected).toHaveLength(config["hooks.inject_top_k"]);
    expect(candidates.filter((c) => c.reason.includes("beyond the 3 injected"))).toHaveLength(gateSearchDepth(config) - 3);
  });
});

describe("the cosine background", () => {
  test("mean and standard deviation of the query's cosines, over a sample in a large index", async () => {
    const store = backgroundStore(0.3, 0.2, 0.3);
    const q = await QUERY.embedQuery("x");
    const all = store.cosineBackground(q)!;
    const cos = Array.from({ length: 60 }, (_, i) => 0.3 + 0.2 * ((i % 11) / 10 - 0.5)).concat([0.3]);
    const mean = cos.reduce((a, b) => a + b, 0) / cos.length;
    const sd = Math.sqrt(cos.reduce((a, b) => a + (b - mean) ** 2, 0) / (cos.length - 1));
    expect(all).toMatchObject({ sampled: 61, vectors: 61 });
    expect(all.mean).toBeCloseTo(mean, 5);
    expect(all.sd).toBeCloseTo(sd, 5);
    const sampled = store.cosineBackground(q, 20)!;
    expect(sampled.vectors).toBe(61);
    expect(sampled.sampled).toBeLessThanOrEqual(21);
    expect(sampled.mean).toBeCloseTo(mean, 1);
  });

  test("a search computes it only when asked: the prompt hook asks, a plain search does not pay for it", async () => {
    const store = backgroundStore(0.3, 0.2, 0.3);
    const config = testConfig();
    const plain = await searchChunks({ query: "zygomorphic quokka", topK: 5, store, config, embedder: QUERY });
    const asked = await searchChunks({ query: "zygomorphic quokka", topK: 5, store, config, embedder: QUERY, background: true });
    expect(plain.mode).toBe("hybrid");
    expect(plain.background).toBeUndefined();
    expect(asked.background).toMatchObject({ sampled: 61, vectors: 61 });
    expect(asked.results).toEqual(plain.results);
  });
});
