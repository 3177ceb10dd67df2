import { describe, expect, test } from "bun:test";
import { generateCorpus, loadPool, makePrompts, makeQueries } from "../../scripts/bench/corpus.ts";
import { chunkMarkdown } from "../../src/index/chunker.ts";

const pool = loadPool();
const files = generateCorpus({ chunks: 1000, pool });
const chunks = files.flatMap((f) => chunkMarkdown(f.text, f.name));
/** What a chunk says, without the anchor comment (whose uuids alone would make any two chunks differ). */
const body = (content: string) => content.replace(/<!--[\s\S]*?-->/g, "").replace(/^###.*$/m, "").trim();

describe("benchmark corpus", () => {
  test("the sentence pool comes from the fixture transcripts", () => {
    expect(pool.user.length).toBeGreaterThan(200);
    expect(pool.assistant.length).toBeGreaterThan(500);
    expect(pool.actions.length).toBeGreaterThan(100);
  });

  test("yields exactly the requested number of chunks, one per turn, in daily files of ~30 turns", () => {
    expect(chunks.length).toBe(1000);
    expect(files.length).toBe(34);
    expect(files.reduce((n, f) => n + f.chunks, 0)).toBe(1000);
    for (const c of chunks) expect(c.heading).toMatch(/^\d\d:\d\d$/);
  });

  test("the sections the generator reports are exactly the chunker's chunks (the FTS5 baseline uses them)", () => {
    expect(files.flatMap((f) => f.sections)).toEqual(chunks.map((c) => c.content));
  });

  test("no two chunks are alike, even without their anchors", () => {
    expect(new Set(chunks.map((c) => c.content)).size).toBe(chunks.length);
    expect(new Set(chunks.map((c) => body(c.content))).size).toBe(chunks.length);
  });

  test("has a large real vocabulary with code spans and paths", () => {
    const words = new Set<string>();
    for (const c of chunks) for (const w of body(c.content).toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) words.add(w);
    expect(words.size).toBeGreaterThan(2000);
    const text = chunks.map((c) => c.content).join("\n");
    expect(text).toMatch(/`[^`]*\/[^`]*`/); // a path in a code span
    expect(text).toContain("- User asked: ");
  });

  test("is deterministic for a seed and different across seeds", () => {
    const again = generateCorpus({ chunks: 1000, pool });
    expect(again.map((f) => f.text)).toEqual(files.map((f) => f.text));
    const other = generateCorpus({ chunks: 1000, pool, seed: 1 });
    expect(other[0]!.text).not.toBe(files[0]!.text);
  });

  test("queries are multi-word phrases and prompts are real requests", () => {
    const qs = makeQueries(pool, 20);
    expect(new Set(qs).size).toBe(20);
    for (const q of qs) expect(q.split(" ").length).toBeGreaterThanOrEqual(3);
    const ps = makePrompts(pool, 20);
    expect(ps.length).toBe(20);
    for (const p of ps) expect(p.length).toBeGreaterThanOrEqual(30);
  });
});
