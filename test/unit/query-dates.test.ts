import { describe, expect, test } from "bun:test";
import { dateBoost, noteDay, queryDates } from "../../src/index/query-dates.ts";
import { searchChunks } from "../../src/index/search.ts";
import { storeOf, testConfig as config } from "../helpers/store-of.ts";

// 2026-11-29 12:00 UTC; the writer's offset 0 (UTC), so no zone rule is read.
const NOW = Date.UTC(2026, 10, 29, 12, 0);
const dates = (q: string, offset = 0) => {
  const d = queryDates(q, NOW, offset);
  return { days: [...d.days].sort(), months: [...d.months].sort() };
};

describe("the dates a query names", () => {
  test("a day in the ways people write one, with and without its year", () => {
    expect(dates("What did Maria share on 16 June, 2023?").days).toEqual(["2023-06-16"]);
    expect(dates("the painting shown on October 13, 2023").days).toEqual(["2023-10-13"]);
    expect(dates("on the 3rd of June 2023").days).toEqual(["2023-06-03"]);
    expect(dates("Sept 4th 2025 deploy").days).toEqual(["2025-09-04"]);
    expect(dates("notes of 2026-11-20 about the parser").days).toEqual(["2026-11-20"]);
    // Without a year: the latest such day not after today.
    expect(dates("what broke on Nov 20").days).toEqual(["2026-11-20"]);
    expect(dates("what broke on 5 December").days).toEqual(["2025-12-05"]);
  });

  test("a month without a day; yesterday from the writer's offset", () => {
    expect(dates("the setback in October 2023")).toEqual({ days: [], months: ["2023-10"] });
    expect(dates("in May, 2023 and on 16 June 2023")).toEqual({ days: ["2023-06-16"], months: ["2023-05"] });
    expect(dates("what did we fix yesterday").days).toEqual(["2026-11-28"]);
    // No such day: the month it names stays.
    expect(dates("31 June 2023")).toEqual({ days: [], months: ["2023-06"] });
    // At 12:00 UTC it is already the 30th in UTC+13 (offset −780 as getTimezoneOffset gives it).
    expect(dates("what did we fix yesterday", -780).days).toEqual(["2026-11-29"]);
  });

  test("no date (today is the work at hand; a day inside a name is a name): no day, no month, the rank left alone", () => {
    for (const q of ["fix the flaky retry test", "run it 2 times", "the 2023 roadmap", "port 8080 on may 2023x", "12:30 May", "bump v1.16 June release", "today I want the parser fixed", "resume session 2026-01-20-ab12", "read docs/plans/2026-01-22-auth.md", "at 2026-01-22T10:00"]) {
      const d = queryDates(q, NOW, 0);
      expect(d.days.size + d.months.size).toBe(0);
    }
    expect(dateBoost("/m/memory/2026-11-20.md", queryDates("flaky test", NOW, 0))).toBe(1);
  });

  test("a note of the named day counts twice, of the named month half again; a file that is not a day's, as it is", () => {
    const d = queryDates("the outage on 20 November 2026, and anything in October 2026", NOW, 0);
    expect(dateBoost("/p/.memsearch/memory/2026-11-20.md", d)).toBe(2);
    expect(dateBoost("/p/.memsearch/memory/2026-10-02.md", d)).toBe(1.5);
    expect(dateBoost("/p/.memsearch/memory/2026-11-21.md", d)).toBe(1);
    expect(dateBoost("/p/CLAUDE.md", d)).toBe(1);
    expect(noteDay("/p/.memsearch/memory/2026-11-20.md")).toBe("2026-11-20");
    expect(noteDay("/p/notes/2026-11-20-draft.md")).toBeUndefined();
  });
});

describe("search: the named day's note first among equally relevant ones", () => {
  const note = (text: string) => `### 09:00\n- ${text}\n`;
  const store = () =>
    storeOf({
      "/m/memory/2026-10-01.md": note("Deployed the heron queue."),
      "/m/memory/2026-10-14.md": note("Deployed the heron queue."),
      "/m/memory/2026-10-20.md": note("Deployed the heron queue."),
    });

  test("the day, then the order recency gives the rest; the scores themselves unchanged", async () => {
    const res = await searchChunks({ query: "heron queue deployed on 1 October 2026", topK: 3, store: store(), config: config(), embedder: null, now: NOW });
    expect(res.results.map((r) => r.chunk.source)).toEqual(["/m/memory/2026-10-01.md", "/m/memory/2026-10-20.md", "/m/memory/2026-10-14.md"]);
    expect(new Set(res.results.map((r) => r.score)).size).toBe(1);
    const plain = await searchChunks({ query: "heron queue deployed", topK: 3, store: store(), config: config(), embedder: null, now: NOW });
    expect(plain.results.map((r) => r.chunk.source)[0]).toBe("/m/memory/2026-10-20.md");
  });
});
