import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DatasetError, dayOf, loadDataset, memoryFiles } from "../../scripts/eval/dataset.ts";
import { hitAt, sessionHitAt, sessionOfTurn, ndcg, reciprocalRank, score } from "../../scripts/eval/metrics.ts";
import { median, passedAt, SWEPT_FLOORS, totalsOf, type Asked } from "../../scripts/eval/controls.ts";
import { atFloor, realTotals, type Asked as RealAsked, type Judged } from "../../scripts/eval/real.ts";
import { ensureGlove, GloveAbsent, loadGlove, poolEmbedding, type WordTable } from "../../scripts/eval/glove.ts";
import { startOllamaDouble } from "../helpers/ollama-double.ts";

const REPO = resolve(import.meta.dir, "../..");

/** A two-session conversation in the LoCoMo shape, written for this test. */
const SAMPLE = [
  {
    sample_id: "t-1",
    conversation: {
      speaker_a: "Ana",
      speaker_b: "Bo",
      session_1_date_time: "1:56 pm on 8 May, 2023",
      session_1: [
        { speaker: "Ana", dia_id: "D1:1", text: "I adopted a grey kitten last week." },
        { speaker: "Bo", dia_id: "D1:2", text: "Lovely! What is her name?", blip_caption: "a grey kitten on a sofa" },
      ],
      session_2_date_time: "9:00 am on 9 May, 2023",
      session_2: [{ speaker: "Ana", dia_id: "D2:1", text: "We repainted the kitchen walls yellow." }],
    },
    qa: [
      { question: "What did Ana adopt?", answer: "a kitten", evidence: ["D1:1"], category: 4 },
      { question: "What colour are the kitchen walls?", answer: "yellow", evidence: ["D2:1; D1:1"], category: 1 },
      { question: "Is Bo a cat?", answer: "no", evidence: [], category: 5 },
      { question: "Unanswerable", evidence: [], category: 3 },
    ],
  },
];

function write(value: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "ms-evalset-")), "set.json");
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

describe("metrics", () => {
  const j = { ranked: ["a", "b", "b", "c"], relevant: new Set(["c", "x"]) };
  test("hit at k, reciprocal rank, nDCG: a repeated turn keeps its place and gains nothing", () => {
    expect(hitAt(j, 3)).toBe(0);
    expect(hitAt(j, 4)).toBe(1);
    expect(reciprocalRank(j)).toBeCloseTo(1 / 4);
    // c is 4th in the list as read, as for R@k and MRR; the ideal list has two relevant turns.
    expect(ndcg(j)).toBeCloseTo(1 / Math.log2(5) / (1 + 1 / Math.log2(3)));
    // A relevant turn split over two chunks counts once.
    const split = { ranked: ["c", "c", "a"], relevant: new Set(["c"]) };
    expect(ndcg(split)).toBeCloseTo(1);
    expect(score([j], [1, 5]).metrics).toMatchObject({ "R@1": 0, "R@5": 1 });
    // Rolled up to sessions: a turn of the evidence's session is a hit there, not at turn level.
    const near = { ranked: ["D2:7", "D1:1"], relevant: new Set(["D2:3"]) };
    expect([sessionHitAt(near, 1), hitAt(near, 1), sessionOfTurn("D12:4"), sessionOfTurn("x")]).toEqual([1, 0, "D12", "x"]);
    expect(score([near], [1]).metrics["S@1"]).toBe(1);
  });
});

describe("dataset", () => {
  test("keeps answerable questions with evidence, splits joined evidence, writes one file per session", () => {
    const [c] = loadDataset(write(SAMPLE));
    expect(c!.questions.map((q) => q.evidence)).toEqual([["D1:1"], ["D2:1", "D1:1"]]);
    const files = memoryFiles(c!);
    expect(files.map((f) => f.name)).toEqual(["2023-05-08.md", "2023-05-09.md"]);
    expect(files[0]!.text).toContain("### D1:2\n- Bo: Lovely! What is her name? [shares a photo: a grey kitten on a sofa]\n");
    expect(dayOf("12:09 am on 13 September, 2023")).toBe("2023-09-13");
    // What cannot be judged is counted: the category-3 question without evidence.
    expect(c!.dropped).toEqual({ unknownEvidence: 0, questionsWithoutEvidence: 1 });
  });

  test("a missing, unreadable or misshapen file is a DatasetError with one line", () => {
    for (const path of ["/nonexistent/set.json", write("{not json"), write([{ conversation: {} }]), write([])]) {
      let err: unknown;
      try {
        loadDataset(path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DatasetError);
      expect((err as Error).message).not.toContain("\n");
    }
  });
});

describe("bun run eval", () => {
  const run = (args: string[]) => Bun.spawnSync([process.execPath, join(REPO, "scripts", "eval.ts"), ...args], { cwd: REPO, stdout: "pipe", stderr: "pipe" });

  test("prints the table for memsearch and both FTS5 baselines, and the JSON", () => {
    const out = join(mkdtempSync(join(tmpdir(), "ms-evalout-")), "r.json");
    const r = run([write(SAMPLE), "--json", out, "--k", "1,3"]);
    expect(r.exitCode).toBe(0);
    const table = r.stdout.toString();
    expect(table).toContain("| searcher | R@1 | R@3 | MRR | nDCG@10 |");
    for (const row of ["SQLite FTS5, OR of the question's words", "SQLite FTS5 with the Porter stemmer", "memsearch, keyword only (no Ollama)"]) expect(table).toContain(`| ${row} |`);
    const json = JSON.parse(readFileSync(out, "utf8"));
    expect(json.questions).toBe(2);
    expect(json.rows.find((x: { name: string }) => x.name === "memsearch").overall.metrics["R@1"]).toBe(1);
  }, 60_000);

  test("evidence naming no turn is counted, and said, not silently lost", () => {
    const qa = [...SAMPLE[0]!.qa, { question: "Where does Bo live?", evidence: ["D9:9", "D1:2"], category: 2 }, { question: "Who is Zed?", evidence: ["D7:1"], category: 2 }];
    const path = write([{ ...SAMPLE[0], qa }]);
    const [c] = loadDataset(path);
    expect(c!.questions.map((q) => q.question)).toEqual(["What did Ana adopt?", "What colour are the kitchen walls?", "Where does Bo live?"]);
    expect(c!.dropped).toEqual({ unknownEvidence: 2, questionsWithoutEvidence: 2 });
    const out = join(mkdtempSync(join(tmpdir(), "ms-evalout-")), "r.json");
    const r = run([path, "--json", out]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr.toString()).toContain("left out: 2 answerable questions with no evidence turn; 2 evidence ids naming no turn");
    // The file holds each question's ranking, and the figures follow from it.
    const rows = JSON.parse(readFileSync(out, "utf8")).rows as { name: string; overall: { metrics: Record<string, number> }; perQuestion: { evidence: string[]; ranked: string[] }[] }[];
    for (const row of rows) {
      expect(row.perQuestion).toHaveLength(3);
      const judged = row.perQuestion.map((q) => ({ ranked: q.ranked, relevant: new Set(q.evidence) }));
      expect(score(judged, [1, 5]).metrics).toEqual(row.overall.metrics);
    }
  }, 60_000);

  test("a missing or malformed dataset: one line on stderr, exit 1", () => {
    for (const path of ["/nonexistent/set.json", write("[1, 2")]) {
      const r = run([path]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr.toString().trim().split("\n")).toEqual([expect.stringMatching(/^eval: dataset /)]);
    }
    expect(run([]).exitCode).toBe(2);
  });
});

/** A second conversation about other people and other things: the first one's negative control. */
const OTHER = {
  sample_id: "t-2",
  conversation: {
    speaker_a: "Raj",
    speaker_b: "Mei",
    session_1_date_time: "10:00 am on 2 June, 2023",
    session_1: [
      { speaker: "Raj", dia_id: "D1:1", text: "I run the Lisbon marathon every year, four hours this time." },
      { speaker: "Mei", dia_id: "D1:2", text: "Impressive. I finally fixed the sailing boat's rudder." },
    ],
  },
  qa: [{ question: "Which marathon did Raj run?", answer: "Lisbon", evidence: ["D1:1"], category: 4 }],
};

describe("negative controls", () => {
  const run = (args: string[]) => Bun.spawnSync([process.execPath, join(REPO, "scripts", "eval.ts"), ...args], { cwd: REPO, stdout: "pipe", stderr: "pipe" });

  test("every question is asked of its own memory and of the other's; the prompt hook's decision is counted", () => {
    const out = join(mkdtempSync(join(tmpdir(), "ms-evalout-")), "r.json");
    const r = run([write([SAMPLE[0], OTHER]), "--json", out]);
    expect(r.exitCode).toBe(0);
    const stdout = r.stdout.toString();
    expect(stdout).toContain("| searcher | injections on negatives | injections on positives | evidence among positives' injections | evidence reaches the prompt (of positives) | a perfect gate's most: the gate's candidates hold evidence | median characters per injection |");
    const json = JSON.parse(readFileSync(out, "utf8"));
    const row = json.controls.find((c: { name: string }) => c.name === "memsearch");
    // 3 questions, each asked of 2 memories: 3 positives, 3 negatives.
    // "What colour are the kitchen walls?" gets nothing: no note says "colour", and a word no note
    // holds weighs the most (the gate's known cost: a paraphrase is the vector side's to find).
    // "What did Ana adopt?" gets nothing either: in a memory of three notes its two words hold the
    // information of 1.48 terms one note alone holds, under the bar of 1.5 (gate.ts keywordSide);
    // a memory that small is given whole by SessionStart.
    // Each question's evidence is among the notes the gate judged (a memory of three notes, all of
    // them found): a perfect gate would have brought all three; this one brought one.
    expect(row.totals).toMatchObject({ negatives: 3, positives: 3, negativesInjected: 0, positivesInjected: 1, evidenceInjected: 1, evidenceReachable: 3 });
    expect(row.totals.medianChars).toBeGreaterThan(0);
    expect(stdout).toContain("| memsearch, keyword only (no Ollama) | 0 / 3 (0.0%) | 1 / 3 (33.3%) | 1 / 1 (100.0%) | 1 / 3 (33.3%) | 3 / 3 (100.0%) |");
    // The sweep at the default floor gives the hook's own figures: 1 of 3 brought, no negative.
    const sweep = stdout.split("\n").filter((l) => l.startsWith("| memsearch, keyword only (no Ollama) |")).at(-1)!;
    expect(sweep.split(" | ")[1 + SWEPT_FLOORS.indexOf(0.5)]).toBe("33.3% / 0.0%");
    // The figures follow from the per-prompt record, which names the memory each was asked of.
    expect(totalsOf(row.perQuestion)).toEqual(row.totals);
    const marathon = row.perQuestion.filter((a: Asked) => a.question === "Which marathon did Raj run?");
    expect(marathon.map((a: Asked) => [a.memory, a.positive, a.injected])).toEqual([
      ["t-1", false, []],
      ["t-2", true, ["D1:1"]],
    ]);
  }, 60_000);

  test("totals: an injection holding an evidence turn counts once; the median is of injections only; a perfect gate's most counts the candidates", () => {
    const a = (positive: boolean, injected: string[], chars: number, candidates = injected): Asked => ({ conversation: "c", memory: "m", question: "q", positive, evidence: ["e"], injected, chars, judged: candidates.map((turn) => ({ turn, relevance: 0.6 })) });
    expect(totalsOf([a(true, ["x", "e"], 300), a(true, ["x"], 500, ["x", "e"]), a(true, [], 0, ["e", "e"]), a(true, [], 0, ["z"]), a(false, ["y"], 900, ["e"]), a(false, [], 0)])).toEqual({
      negatives: 2,
      negativesInjected: 1,
      positives: 4,
      positivesInjected: 2,
      evidenceInjected: 1,
      evidenceReachable: 3,
      medianChars: 500,
    });
    expect(median([])).toBe(0);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe("real sessions' totals", () => {
  const a = (relevant: string[], injected: string[], judged: (string | Judged)[], more: Partial<RealAsked> = {}): RealAsked => ({
    project: "p",
    session: "s",
    prompt: "q",
    words: 1,
    relevant,
    strict: [],
    injected,
    chars: injected.length ? 400 : 0,
    sessionStart: [],
    sessionStartChars: 0,
    repeated: [],
    judged: judged.map((j) => (typeof j === "string" ? { session: j, relevance: 0.6 } : j)),
    rankings: {},
    ...more,
  });

  test("useful, noise, silent and held back split the positives; a perfect gate's most counts a relevant session among the gate's candidates", () => {
    const t = realTotals({
      searcher: "m",
      label: "m",
      asked: [
        a(["r"], ["r", "x"], ["r", "x"]), // useful
        a(["r"], ["x"], ["x", "r"]), // noise, though a perfect gate could have been useful
        a(["r"], [], ["x"]), // silent, and nothing a gate could do
        a(["r"], [], ["r"], { repeated: ["r"], sessionStart: ["r"] }), // held back: SessionStart gave it
        a([], ["x"], ["x"]), // a negative that got an injection
      ],
      foreign: [
        { project: "p", memory: "o", session: "s", injected: 1, chars: 300, judged: [{ relevance: 0.6 }] },
        { project: "p", memory: "o", session: "t", injected: 0, chars: 0, judged: [] },
      ],
    });
    expect(t).toMatchObject({ positives: 4, useful: 1, noise: 1, silent: 1, heldBack: 1, reachable: 3, negatives: 1, negativesInjected: 1, foreign: 2, foreignInjected: 1, sessionStartCovered: 1, covered: 2 });
  });

  test("the gate at another floor passes the first three notes at or over it, in the search's order", () => {
    const j = (session: string, relevance: number): Judged => ({ session, relevance });
    const run = {
      searcher: "m",
      label: "m",
      asked: [
        a(["r"], [], [j("x", 0.45), j("r", 0.3)]), // noise at 0.4, useful at 0.3
        a(["r"], [], [j("r", 0.7)]), // useful from 0.7 down
        a(["r"], [], [j("x", 0.5), j("x", 0.5), j("x", 0.5), j("r", 0.9)]), // three others first: noise at 0.5 and below, useful only above 0.5
        a([], [], [j("x", 0.9)]), // a negative: not a positive's figure
      ],
      foreign: [
        { project: "p", memory: "o", session: "s", injected: 0, chars: 0, judged: [{ relevance: 0.35 }] },
        { project: "p", memory: "o", session: "t", injected: 0, chars: 0, judged: [{ relevance: 0.1 }] },
      ],
    };
    expect(atFloor(run, 0.7)).toEqual({ useful: 2, noise: 0, foreign: 0, positives: 3, foreignAsked: 2 });
    expect(atFloor(run, 0.5)).toEqual({ useful: 1, noise: 1, foreign: 0, positives: 3, foreignAsked: 2 });
    expect(atFloor(run, 0.4)).toEqual({ useful: 1, noise: 2, foreign: 0, positives: 3, foreignAsked: 2 });
    expect(atFloor(run, 0.3)).toEqual({ useful: 2, noise: 1, foreign: 1, positives: 3, foreignAsked: 2 });
    expect(passedAt([{ relevance: 0.2 }, { relevance: 0.8 }], 0.5, 3)).toEqual([{ relevance: 0.8 }]);
  });
});

describe("the GloVe double", () => {
  /** Four words by frequency (rank 0 most frequent), in 3 dimensions. */
  const table: WordTable = {
    dim: 3,
    rank: new Map(["the", "cat", "kitten", "stock"].map((w, i) => [w, i])),
    vectors: Float32Array.from([1, 0, 0, 0, 1, 0, 0, 0.8, 0.6, 0, 0, 1]),
  };
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

  test("pools word vectors into a unit vector, a frequent word weighing less, unknown words skipped", () => {
    const v = poolEmbedding(table, "The CAT, the cat!");
    expect(Math.hypot(...v)).toBeCloseTo(1, 6);
    // "the" (rank 0) weighs less than "cat" (rank 1): the vector leans to cat's axis.
    expect(v[1]!).toBeGreaterThan(v[0]!);
    expect(poolEmbedding(table, "cat zorblax")).toEqual(poolEmbedding(table, "cat"));
    expect(cos(poolEmbedding(table, "kitten"), poolEmbedding(table, "cat"))).toBeGreaterThan(cos(poolEmbedding(table, "stock"), poolEmbedding(table, "cat")));
    // A text with no known word still gets a unit vector, as a model answers anything.
    expect(Math.hypot(...poolEmbedding(table, "zorblax"))).toBeCloseTo(1, 6);
  });

  test("served through the Ollama double's server: /api/embed answers with the pooled vectors", async () => {
    const double = await startOllamaDouble({ dim: 3, models: ["glove-6b-100d"], embed: (t) => poolEmbedding(table, t) });
    try {
      const res = await fetch(`${double.host}/api/embed`, { method: "POST", body: JSON.stringify({ model: "glove-6b-100d", input: ["search_query: kitten", "stock"] }) });
      const body = (await res.json()) as { embeddings: number[][] };
      expect(body.embeddings).toEqual([poolEmbedding(table, "kitten"), poolEmbedding(table, "stock")]);
    } finally {
      await double.stop();
    }
  });

  test("a cache written by the fetch is read back; an absent one says how to get it", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-glove-"));
    expect(() => loadGlove(dir)).toThrow(GloveAbsent);
    expect(() => loadGlove(dir)).toThrow(/run with --fetch/);
    // Not allowed to fetch: the same message, and nothing is asked of the registry.
    expect(() => ensureGlove(false, () => {}, dir)).toThrow(/run with --fetch/);
    writeFileSync(join(dir, "words.json"), JSON.stringify(["the", "cat", "kitten", "stock"]));
    writeFileSync(join(dir, "vectors.f32"), new Uint8Array(table.vectors.buffer));
    const read = loadGlove(dir);
    expect(read.dim).toBe(3);
    expect(poolEmbedding(read, "the kitten")).toEqual(poolEmbedding(table, "the kitten"));
  });
});
