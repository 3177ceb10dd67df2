import { describe, expect, test } from "bun:test";
import { recencyBoost, searchChunks, type QueryEmbedder } from "../../src/index/search.ts";
import { storeOf, testConfig as config, writeInto } from "../helpers/store-of.ts";
import { queryTerms, rankingTerms, stem, tokenize } from "../../src/index/tokenizer.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { noteTime } from "../../src/core/since.ts";
import { readManifest, writeManifest } from "../../src/index/format.ts";
import { Store } from "../../src/index/store.ts";

/** The section headings of the results, best first. */
async function headings(store: Store, query: string, embedder: QueryEmbedder | null = null, topK = 5): Promise<string[]> {
  const res = await searchChunks({ query, topK, store, config: config(), embedder });
  return res.results.map((r) => r.chunk.heading);
}

/** Filler notes, so idf means something and no word below is in every chunk. */
const FILLER = Array.from({ length: 30 }, (_, i) => `### filler ${i}\n- Reviewed the backlog item ${i} with the team and moved on.\n`).join("\n");

describe("tokenizer", () => {
  test("English words are indexed by their Porter stem", () => {
    expect(tokenize("Painted walls, painting")).toEqual(["paint", "wall"]);
    expect(stem("painting")).toBe(stem("painted"));
    // Orama's stemmer drops the t of -tion ("adop"); ours puts it back so both forms meet.
    expect(stem("adoption")).toBe("adopt");
    expect(stem("adopted")).toBe("adopt");
    expect(stem("connections")).toBe(stem("connected"));
  });

  test("identifiers, numbers and other scripts are their own stem", () => {
    expect(stem("utf8")).toBe("utf8");
    expect(stem("parse_config")).toBe("parse_config");
    expect(stem("кошки")).toBe("кошки");
    expect(tokenize("parse_config")).toEqual(["parse_config", "pars", "config"]);
  });

  test("query terms are keyed by stem and keep the forms the query wrote", () => {
    expect(queryTerms("painting painted the walls")).toEqual([
      { stem: "paint", forms: ["painting", "painted"], stop: false },
      { stem: "the", forms: ["the"], stop: true },
      { stem: "wall", forms: ["walls"], stop: false },
    ]);
    expect(rankingTerms("what is the wall").map((t) => t.stem)).toEqual(["wall"]);
    expect(rankingTerms("what is it").map((t) => t.stem)).toEqual(["what", "is", "it"]);
  });

  test("CJK runs become bigrams, anchors are not indexed", () => {
    expect(tokenize("翻译成中文")).toEqual(expect.arrayContaining(["翻译", "译成", "成中", "中文"]));
    expect(tokenize("<!-- session:abc turn:def -->\nhello")).toEqual(["hello"]);
  });
});

describe("keyword ranking", () => {
  test("stemming: another form of the word finds the note", async () => {
    const store = storeOf({ "/m/a.md": `### walls\n- We painted the kitchen walls blue.\n\n### adoption\n- Researching adoption agencies this week.\n\n${FILLER}` });
    expect((await headings(store, "painting the wall"))[0]).toBe("walls");
    expect((await headings(store, "when was the agency adopted"))[0]).toBe("adoption");
  });

  test("an exact identifier ranks above its inflections", async () => {
    const store = storeOf({
      "/m/a.md": `### plural\n- Renamed parseConfigs in the loader.\n\n### exact\n- Fixed parseConfig crash on an empty file in the loader module.\n\n${FILLER}`,
    });
    // Both hold the stem; the one spelled as the query wrote it comes first, though it is longer.
    expect(await headings(store, "parseConfig")).toEqual(["exact", "plural"]);
    expect(await headings(store, "parseConfigs")).toEqual(["plural", "exact"]);
  });

  test("a query made only of stop words still finds the notes that hold them", async () => {
    const store = storeOf({ "/m/a.md": `### phrase\n- To be or not to be, that is what he said.\n\n### other\n- Deployed the service.\n\n${FILLER}` });
    expect((await headings(store, "to be or not to be"))[0]).toBe("phrase");
    // With other words, the stop words do not rank anything: "what is" alone matches nothing here.
    expect(await headings(store, "what is kubernetes")).toEqual([]);
  });

  test("a note holding more of the query's distinct terms ranks first", async () => {
    // "redis" is in two notes, "timeout" in a third of them: on BM25 alone the note repeating the
    // rarer word wins; the share of distinct terms puts the note holding both first.
    const filler = Array.from({ length: 30 }, (_, i) => `### filler ${i}\n- Item ${i} ${i % 3 ? "ran" : "hit a timeout"} in the nightly job.\n`).join("\n");
    const store = storeOf({
      "/m/a.md": `### repeats\n- Redis and redis again.\n\n### covers\n- Redis was slow during the nightly import, and then the job hit its timeout.\n\n${filler}`,
    });
    expect((await headings(store, "redis timeout")).slice(0, 2)).toEqual(["covers", "repeats"]);
  });

  test("terms close together rank above the same terms far apart", async () => {
    const store = storeOf({
      "/m/a.md":
        `### apart\n- The connection to staging dropped twice overnight while the nightly jobs ran; later the worker pool restarted.\n\n` +
        `### together\n- The connection pool to staging dropped twice overnight while the nightly jobs ran; later the worker restarted.\n\n${FILLER}`,
    });
    expect(await headings(store, "connection pool")).toEqual(["together", "apart"]);
  });

  test("a heading holding the term outranks a passing mention", async () => {
    const store = storeOf({
      "/m/a.md": `### Kubernetes upgrade\n- Moved the cluster to the new version and drained the nodes one at a time.\n\n### passing\n- Lunch talk, nothing about kubernetes really, mostly about the office plants.\n\n${FILLER}`,
    });
    expect((await headings(store, "kubernetes"))[0]).toBe("Kubernetes upgrade");
  });

  test("a prefix of a word still finds it, below the word itself", async () => {
    const store = storeOf({ "/m/a.md": `### long\n- Updated the configuration loader.\n\n### short\n- Updated the config loader.\n\n${FILLER}` });
    expect(await headings(store, "config")).toEqual(["short", "long"]);
  });

  test("CJK memories are found by keyword, alone and mixed with English", async () => {
    const store = storeOf({ "/m/a.md": `### zh\n- 用户要求把结账页面的错误信息翻译成中文。\n\n### en\n- Translated the checkout errors.\n\n${FILLER}` });
    expect((await headings(store, "翻译"))[0]).toBe("zh");
    expect((await headings(store, "结账 翻译"))[0]).toBe("zh");
    expect((await headings(store, "checkout errors"))[0]).toBe("en");
  });

  test("the top result's score is the share of the query's terms it holds", async () => {
    const store = storeOf({ "/m/a.md": `### half\n- The redis pool was fine.\n\n${FILLER}` });
    const res = await searchChunks({ query: "redis pool memcached sharding", topK: 5, store, config: config(), embedder: null });
    expect(res.results[0]!.score).toBeCloseTo(0.5, 5);
  });
});

describe("a question's answer", () => {
  // The answer shares no word with the query; the question holds them all.
  const chat = `### 10:01\n- Caroline: How did the kids handle the accident?\n\n### 10:02\n- Melanie: They were scared but we reassured them. Tough little ones.\n\n### 10:03\n- Caroline: Glad to hear it.\n\n${FILLER}`;

  test("the section after a leading question ranks right behind it, its own score kept", async () => {
    const store = storeOf({ "/m/a.md": chat });
    const res = await searchChunks({ query: "how did the kids handle the accident", topK: 5, store, config: config(), embedder: null });
    expect(res.results.slice(0, 2).map((r) => r.chunk.heading)).toEqual(["10:01", "10:02"]);
    // The gate reads its own evidence: none of the query's words.
    expect(res.results[1]!.evidence).toBe(0);
    expect(res.results[1]!.score).toBe(0);
  });

  test("a statement brings nothing after it, nor does a question at the end of its file", async () => {
    const statement = chat.replace("How did the kids handle the accident?", "The kids handled the accident.");
    const res = await searchChunks({ query: "kids handle accident", topK: 5, store: storeOf({ "/m/a.md": statement }), config: config(), embedder: null });
    expect(res.results.map((r) => r.chunk.heading)).toEqual(["10:01"]);
    const last = await searchChunks({ query: "kids handle accident", topK: 5, store: storeOf({ "/m/a.md": `${FILLER}\n### 10:01\n- How did the kids handle the accident?\n`, "/m/b.md": "### 11:00\n- Unrelated: the heron queue.\n" }), config: config(), embedder: null });
    expect(last.results.map((r) => r.chunk.heading)).toEqual(["10:01"]);
  });
});

describe("hybrid fusion", () => {
  const dim = 4;
  // Every filler note is closer to the query (cosine 0.5) than the keyword note (0.4), and there are
  // more of them than the vector side hands on: the keyword note is not among its candidates.
  const vectorOf = (text: string) => Float32Array.from(text.includes("backlog") ? [0.5, Math.sqrt(0.75), 0, 0] : [0.4, Math.sqrt(0.84), 0, 0]);
  const query: QueryEmbedder = { embedQuery: async () => Float32Array.from([1, 0, 0, 0]) };
  const many = Array.from({ length: 80 }, (_, i) => `### filler ${i}\n- Reviewed the backlog item ${i} with the team and moved on.\n`).join("\n");

  test("a keyword match outside the vector candidates is scored on its real cosine", async () => {
    const store = storeOf({ "/m/a.md": `### match\n- Raised the redis pool size.\n\n${many}` }, vectorOf, dim);
    const res = await searchChunks({ query: "redis pool", topK: 5, store, config: config(), embedder: query });
    expect(res.mode).toBe("hybrid");
    const hit = res.results.find((r) => r.chunk.heading === "match")!;
    expect(hit.cosine).toBeCloseTo(0.4, 5);
    expect(res.results[0]!.chunk.heading).toBe("match");
  });

  test("a vector candidate the keyword search did not return is scored on its keywords", async () => {
    // "backlog" is in every filler note: too common to be asked of Orama, still counted in the ranking.
    const store = storeOf({ "/m/a.md": `### other\n- Nothing to see.\n\n${many}` }, vectorOf, dim);
    const res = await searchChunks({ query: "backlog kubernetes", topK: 5, store, config: config(), embedder: query });
    expect(res.results.length).toBe(5);
    expect(res.results.every((r) => r.bm25 > 0 && r.cosine !== undefined)).toBe(true);
  });

  test("the keyword side, run while the query is embedded, is read again when a re-index lands meanwhile", async () => {
    const store = storeOf({ "/m/a.md": `### old\n- Raised the redis pool size.\n\n${many}` }, vectorOf, dim);
    // The watch process re-indexes while a search waits on Ollama: the note is rewritten.
    const slow: QueryEmbedder = {
      embedQuery: async () => {
        await Bun.sleep(5);
        writeInto(store, "/m/a.md", `### new\n- Lowered the redis pool size again.\n\n${many}`, vectorOf, 2);
        return Float32Array.from([1, 0, 0, 0]);
      },
    };
    const res = await searchChunks({ query: "redis pool", topK: 5, store, config: config(), embedder: slow });
    expect(res.results[0]!.chunk.heading).toBe("new");
    expect(res.results.map((r) => r.chunk.heading)).not.toContain("old");
    expect(res.results[0]!.cosine).toBeCloseTo(0.4, 5);
  });
});

describe("recency as evidence in the order", () => {
  const DAY = 86_400_000;
  const now = new Date(2026, 10, 21, 12, 0).getTime();
  const note = (text: string) => `### 09:00\n- ${text}\n`;
  // The same words in three daily files: equal scores, only their age differs.
  const store = () =>
    storeOf({
      "/m/memory/2026-10-01.md": note("Tuned the heron queue retry budget."),
      "/m/memory/2026-11-21.md": note("Tuned the heron queue retry budget."),
      "/m/memory/2026-11-18.md": note("Tuned the heron queue retry budget."),
    });

  test("of equally relevant notes the newest comes first; the score itself is left as it is", async () => {
    const res = await searchChunks({ query: "heron queue retry budget", topK: 3, store: store(), config: config(), embedder: null, now });
    expect(res.results.map((r) => r.chunk.source)).toEqual(["/m/memory/2026-11-21.md", "/m/memory/2026-11-18.md", "/m/memory/2026-10-01.md"]);
    expect(new Set(res.results.map((r) => r.score)).size).toBe(1);
  });

  test("the boost: half again for a note of this minute, a quarter three days on, next to nothing a month on; curated memory as fresh as now", () => {
    const at = (days: number) => ({ source: `/m/memory/${new Date(now - days * DAY).toISOString().slice(0, 10)}.md`, heading: "12:00" });
    expect(recencyBoost({ source: "/m/memory/2026-11-21.md", heading: "12:00" }, now)).toBeCloseTo(1.5, 6);
    expect(recencyBoost({ source: "/m/memory/2026-11-18.md", heading: "12:00" }, now)).toBeCloseTo(1.25, 6);
    expect(recencyBoost(at(40), now)).toBeLessThan(1.01);
    expect(recencyBoost({ source: "/m/CLAUDE.md", heading: "Project" }, now, "curated")).toBe(1.5);
    expect(recencyBoost({ source: "/m/notes/ideas.md", heading: "Ideas" }, now)).toBe(1);
  });

  test("a note's local time dated with the offset a writer recorded is the same instant the zone gives, without asking the zone", () => {
    const asked = new Date(2026, 10, 21, 9, 30);
    expect(noteTime("/m/memory/2026-11-21.md", "09:30", false, asked.getTimezoneOffset())).toBe(asked.getTime());
    // Paris in winter (UTC+1): 09:30 there is 08:30 UTC; Los Angeles (UTC-8): 17:30 UTC.
    expect(noteTime("/m/memory/2026-11-21.md", "09:30", false, -60)).toBe(Date.UTC(2026, 10, 21, 8, 30));
    expect(noteTime("/m/memory/2026-11-21.md", "09:30", false, 480)).toBe(Date.UTC(2026, 10, 21, 17, 30));
    expect(noteTime("/m/memory/2026-11-21.md", "Ideas", true, 0)).toBe(Date.UTC(2026, 10, 22) - 1);
  });

  test("a saved index carries its writer's offset to the readers; a search of it dates its notes with it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-offset-"));
    try {
      const s = Store.empty(dir, "m", null);
      writeInto(s, "/m/memory/2026-11-21.md", note("Tuned the heron queue retry budget."), () => undefined);
      s.save();
      const read = Store.open(dir, "m").store;
      expect(read.utcOffsetMin).toBe(new Date().getTimezoneOffset());
      expect(readManifest(dir)).toMatchObject({ utcOffsetMin: new Date().getTimezoneOffset() });
      // A manifest sealed with an offset no zone has (a repository's, crafted) is damaged, not believed.
      const m = readManifest(dir);
      if (!m || "damaged" in m) throw new Error("no manifest");
      writeManifest(dir, { ...m, utcOffsetMin: 99_999 });
      expect(readManifest(dir)).toMatchObject({ damaged: expect.any(String) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
