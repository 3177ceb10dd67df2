import { describe, expect, test } from "bun:test";
import { addDays, ago, bars, formatBytes, groupByDay, heatmapBetween, heatmapLayout, heatSpans, lastDays, levelOf, longDay, notesOutside, openingSpan, plural, weekday } from "../../src/hub/client/charts.ts";

describe("heatmap", () => {
  // 2026-11-23 is a Monday.
  const today = "2026-11-23";

  test("26 week columns, Sunday on top, ending today; nothing after today", () => {
    const lay = heatmapLayout({}, today);
    expect(lay.weeks).toBe(26);
    expect(lay.from).toBe("2026-05-31"); // the Sunday 25 weeks before this week's Sunday
    expect(weekday(lay.from)).toBe(0);
    expect(lay.cells[0]).toMatchObject({ date: "2026-05-31", col: 0, row: 0 });
    const last = lay.cells[lay.cells.length - 1]!;
    expect(last).toMatchObject({ date: today, col: 25, row: 1 });
    expect(lay.cells).toHaveLength(25 * 7 + 2);
    // Every day once, in order.
    lay.cells.forEach((c, i) => expect(c.date).toBe(addDays(lay.from, i)));
  });

  test("levels scale with the busiest day; counts outside the window are left out", () => {
    const days = { "2026-11-23": 8, "2026-11-22": 1, "2026-11-20": 4, "2026-06-01": 6, "2026-01-01": 99 };
    const lay = heatmapLayout(days, today);
    const level = (d: string) => lay.cells.find((c) => c.date === d)!.level;
    expect(lay.max).toBe(8);
    expect([level("2026-11-23"), level("2026-11-22"), level("2026-11-20"), level("2026-06-01"), level("2026-11-21")]).toEqual([4, 1, 2, 3, 0]);
    expect(lay.total).toBe(19);
    expect(lay.activeDays).toBe(4);
  });

  test("months are named over the first week that starts in them", () => {
    const lay = heatmapLayout({}, today);
    expect(lay.months.map((m) => m.label)).toEqual(["Jun", "Jul", "Aug", "Sep", "Oct", "Nov"]);
    // June 7 is the first Sunday in June: column 1.
    expect(lay.months[0]).toEqual({ col: 1, label: "Jun" });
  });

  test("levelOf", () => {
    expect([levelOf(0, 10), levelOf(1, 10), levelOf(3, 10), levelOf(5, 10), levelOf(8, 10), levelOf(10, 10), levelOf(3, 0)]).toEqual([0, 1, 2, 2, 4, 4, 0]);
  });

  test("day arithmetic does not drift over a daylight-saving change", () => {
    expect(addDays("2026-03-28", 2)).toBe("2026-03-30");
    expect(addDays("2026-10-24", 7)).toBe("2026-10-31");
    expect(addDays("2026-01-01", -1)).toBe("2025-12-31");
  });
});

describe("7-day chart", () => {
  test("the last seven days oldest first, today last, with zero days", () => {
    const s = lastDays({ "2026-11-23": 2, "2026-11-17": 5, "2026-11-16": 9 }, "2026-11-23");
    expect(s.map((d) => `${d.label}:${d.count}`)).toEqual(["Tue:5", "Wed:0", "Thu:0", "Fri:0", "Sat:0", "Sun:0", "Today:2"]);
  });

  test("bars fill the plot by their share of the highest, empty days have none", () => {
    const b = bars(lastDays({ "2026-11-23": 4, "2026-11-22": 2 }, "2026-11-23"), 350, 150, 18, 16);
    expect(b).toHaveLength(7);
    expect(b[6]!.h).toBeCloseTo(150 - 18 - 16);
    expect(b[5]!.h).toBeCloseTo((150 - 18 - 16) / 2);
    expect(b[0]!.h).toBe(0);
    for (const x of b) expect(x.y + x.h).toBeCloseTo(150 - 18);
  });
});

describe("formatting", () => {
  test("groupByDay keeps the order and merges runs of one day", () => {
    const g = groupByDay([{ day: "b", n: 1 }, { day: "b", n: 2 }, { day: "a", n: 3 }]);
    expect(g.map((x) => [x.day, x.items.map((i) => i.n)])).toEqual([
      ["b", [1, 2]],
      ["a", [3]],
    ]);
  });

  test("bytes, plurals, dates, ago", () => {
    expect([formatBytes(900), formatBytes(35_872), formatBytes(5 * 1048576 + 300_000), formatBytes(3 * 1024 ** 3)]).toEqual(["900 B", "35 KiB", "5.3 MiB", "3.0 GiB"]);
    expect([plural(1, "note"), plural(1200, "note"), plural(2, "entry", "entries")]).toEqual(["1 note", "1,200 notes", "2 entries"]);
    expect(longDay("2026-11-21")).toBe("Sat, Nov 21, 2026");
    const now = Date.parse("2026-11-23T12:00:00Z");
    expect(["2026-11-23T11:59:30Z", "2026-11-23T11:00:00Z", "2026-11-21T12:00:00Z", "2026-05-01T00:00:00Z", "2027-01-01T00:00:00Z"].map((t) => ago(t, now))).toEqual(["just now", "1h ago", "2d ago", "6mo ago", "2027-01-01"]);
  });
});

describe("the heatmap across years", () => {
  const today = "2026-11-23";

  test("a year: columns from the Sunday before January 1, its days only, to December 31 (or today)", () => {
    const lay = heatmapBetween({ "2025-03-02": 3, "2024-12-31": 9 }, "2025-01-01", "2025-12-31");
    // 2025-01-01 is a Wednesday: the first column starts on Sunday 2024-12-29, whose first days are not drawn.
    expect(lay.cells[0]).toMatchObject({ date: "2025-01-01", col: 0, row: 3 });
    expect(lay.cells.at(-1)).toMatchObject({ date: "2025-12-31", col: 52, row: 3 });
    expect(lay.cells).toHaveLength(365);
    expect(lay.weeks).toBe(53);
    expect([lay.total, lay.activeDays, lay.max, lay.from, lay.to]).toEqual([3, 1, 3, "2025-01-01", "2025-12-31"]);
    expect(heatmapBetween({}, "2026-01-01", today).cells.at(-1)!.date).toBe(today);
  });

  test("the spans: the last 6 months, then every year from this one back to the oldest note", () => {
    const spans = heatSpans({ "2024-06-01": 1, "2025-03-02": 3 }, today);
    expect(spans.map((s) => [s.key, s.from, s.to])).toEqual([
      ["recent", "2026-05-31", today],
      ["2026", "2026-01-01", today],
      ["2025", "2025-01-01", "2025-12-31"],
      ["2024", "2024-01-01", "2024-12-31"],
    ]);
    expect(heatSpans({}, today).map((s) => s.key)).toEqual(["recent", "2026"]);
  });

  test("it opens on the last 6 months when they hold a note, else on the year of the newest note", () => {
    expect(openingSpan({ "2025-03-02": 3, "2026-11-20": 1 }, today).key).toBe("recent");
    // 1,119 notes imported from ten months ago: the year that holds them, not an empty grid.
    expect(openingSpan({ "2026-01-20": 1119 }, today).key).toBe("2026");
    expect(openingSpan({ "2024-06-01": 1, "2025-03-02": 3 }, today).key).toBe("2025");
    expect(openingSpan({}, today).key).toBe("recent");
  });

  test("notes outside a view are counted", () => {
    const days = { "2024-06-01": 1, "2025-03-02": 3, "2026-11-20": 2 };
    expect(notesOutside(days, "2025-01-01", "2025-12-31")).toBe(3);
    expect(notesOutside(days, "2024-01-01", today)).toBe(0);
  });
});
