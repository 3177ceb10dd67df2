import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DatasetError, dayOf, loadDataset, memoryFiles } from "../../scripts/eval/dataset.ts";
import { hitAt, ndcg, reciprocalRank, score } from "../../scripts/eval/metrics.ts";

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
