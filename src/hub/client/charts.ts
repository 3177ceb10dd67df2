/**
 * The page's arithmetic, without the DOM (so it is unit-tested): the heatmap's grid, the 7-day
 * series, timeline grouping, and the little formatters. Days are `YYYY-MM-DD` strings computed in
 * UTC, so a daylight-saving change never makes a day 23 or 25 hours long.
 */
import { timeAgo } from "./ago.js";

export interface HeatCell {
  date: string;
  count: number;
  level: 0 | 1 | 2 | 3 | 4;
  /** Week column (0 = oldest) and weekday row (0 = Sunday). */
  col: number;
  row: number;
}

export interface HeatmapLayout {
  cells: HeatCell[];
  weeks: number;
  /** Month names over the first column holding that month's first day. */
  months: { col: number; label: string }[];
  max: number;
  total: number;
  activeDays: number;
  from: string;
  to: string;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

function parseDay(day: string): Date {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(Date.UTC(y!, m! - 1, d!));
}

function dayOf(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function addDays(day: string, n: number): string {
  const d = parseDay(day);
  d.setUTCDate(d.getUTCDate() + n);
  return dayOf(d);
}

export function weekday(day: string): number {
  return parseDay(day).getUTCDay();
}

/** 0 for nothing, else 1–4 by the share of the busiest day (a single note still shows). */
export function levelOf(count: number, max: number): 0 | 1 | 2 | 3 | 4 {
  if (count <= 0 || max <= 0) return 0;
  return Math.min(4, Math.max(1, Math.ceil((count / max) * 4))) as 1 | 2 | 3 | 4;
}

/**
 * GitHub's layout: one column per week, Sunday on top, the last column holding `today`, `weeks`
 * columns in all (26 ≈ 6 months). Days after today are not drawn.
 */
export function heatmapLayout(days: Record<string, number>, today: string, weeks = 26): HeatmapLayout {
  return heatmapBetween(days, addDays(today, -weekday(today) - (weeks - 1) * 7), today);
}

/**
 * The same layout for any span of days, `from` to `to` inclusive: columns start on the Sunday on or
 * before `from`; the days of that first week before `from` are not drawn.
 */
export function heatmapBetween(days: Record<string, number>, from: string, to: string): HeatmapLayout {
  const start = addDays(from, -weekday(from));
  const weeks = Math.floor(daysBetween(start, to) / 7) + 1;
  const cells: HeatCell[] = [];
  let max = 0;
  for (let d = from; d <= to; d = addDays(d, 1)) max = Math.max(max, days[d] ?? 0);
  let total = 0;
  let active = 0;
  let i = 0;
  for (let d = start; d <= to; d = addDays(d, 1), i++) {
    if (d < from) continue;
    const count = days[d] ?? 0;
    total += count;
    if (count > 0) active++;
    cells.push({ date: d, count, level: levelOf(count, max), col: Math.floor(i / 7), row: i % 7 });
  }
  // A month is named over the first column whose Sunday falls in it.
  const months: { col: number; label: string }[] = [];
  for (let col = 0, prev = -1; col < weeks; col++) {
    const m = Number(addDays(start, col * 7).slice(5, 7));
    if (m !== prev) months.push({ col, label: MONTHS[m - 1]! });
    prev = m;
  }
  // The first label, for the few days of a month cut at the left edge, would collide with the next.
  if (months.length > 1 && months[1]!.col - months[0]!.col < 3) months.shift();
  return { cells, weeks, months, max, total, activeDays: active, from: cells[0]?.date ?? from, to };
}

function daysBetween(a: string, b: string): number {
  return Math.round((parseDay(b).getTime() - parseDay(a).getTime()) / 86_400_000);
}

/** A span the heatmap can show. */
export interface HeatSpan {
  key: string;
  label: string;
  from: string;
  to: string;
}

export const RECENT_SPAN = "recent";

/**
 * What the heatmap can show, as GitHub's contribution graph does: the last 6 months, then every
 * calendar year from the newest one with notes (or this one) back to the oldest, newest first.
 */
export function heatSpans(days: Record<string, number>, today: string): HeatSpan[] {
  const recent = heatmapLayout({}, today, 26);
  const spans: HeatSpan[] = [{ key: RECENT_SPAN, label: "Last 6 months", from: recent.from, to: today }];
  const noted = Object.keys(days).filter((d) => (days[d] ?? 0) > 0);
  const thisYear = Number(today.slice(0, 4));
  const years = noted.map((d) => Number(d.slice(0, 4))).filter((y) => Number.isInteger(y));
  const oldest = Math.min(thisYear, ...years);
  const newest = Math.max(thisYear, ...years);
  for (let y = newest; y >= oldest; y--) {
    const end = `${y}-12-31`;
    spans.push({ key: String(y), label: String(y), from: `${y}-01-01`, to: end < today ? end : today < `${y}-01-01` ? end : today });
  }
  return spans;
}

/** The span to open on: the last 6 months when they hold a note, else the year of the newest note. */
export function openingSpan(days: Record<string, number>, today: string): HeatSpan {
  const spans = heatSpans(days, today);
  const recent = spans[0]!;
  const noted = Object.keys(days)
    .filter((d) => (days[d] ?? 0) > 0)
    .sort();
  const newest = noted.at(-1);
  if (!newest || (newest >= recent.from && newest <= recent.to)) return recent;
  return spans.find((s) => s.key === newest.slice(0, 4)) ?? recent;
}

/** Notes on days outside `from`..`to`. */
export function notesOutside(days: Record<string, number>, from: string, to: string): number {
  let n = 0;
  for (const [d, c] of Object.entries(days)) if (d < from || d > to) n += c;
  return n;
}

export interface DayCount {
  date: string;
  count: number;
  label: string;
}

/** The last `n` days up to today, oldest first. */
export function lastDays(days: Record<string, number>, today: string, n = 7): DayCount[] {
  const out: DayCount[] = [];
  for (let k = n - 1; k >= 0; k--) {
    const date = addDays(today, -k);
    out.push({ date, count: days[date] ?? 0, label: k === 0 ? "Today" : WEEKDAYS[weekday(date)]! });
  }
  return out;
}

/** `Sat, Nov 21, 2026`. */
export function longDay(day: string): string {
  const d = parseDay(day);
  return `${WEEKDAYS[d.getUTCDay()]}, ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * The page's one way of writing a date: longDay's, with the time after a comma when there is one
 * (`Sat, Nov 21, 2026, 09:47`). Takes a day (`2026-11-21`), a note's stamp (`2026-11-21 09:47`),
 * a month (`2026-11` → `Nov 2026`) or an ISO time, shown in the browser's local time; anything
 * else as it is.
 */
export function when(value: string): string {
  let m = /^(\d{4}-\d{2}-\d{2})(?:[ ](\d{1,2}:\d{2}))?$/.exec(value);
  if (m) return m[2] ? `${longDay(m[1]!)}, ${m[2].padStart(5, "0")}` : longDay(m[1]!);
  m = /^(\d{4})-(\d{2})$/.exec(value);
  if (m) return `${MONTHS[Number(m[2]) - 1]} ${m[1]}`;
  const t = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(t.getTime())) return value;
  return `${longDay(`${t.getFullYear()}-${pad2(t.getMonth() + 1)}-${pad2(t.getDate())}`)}, ${clockOf(t)}`;
}

/** `HH:MM`, local: a time of a day the page names elsewhere. */
export function clockOf(t: Date | string): string {
  const d = typeof t === "string" ? new Date(t) : t;
  return Number.isNaN(d.getTime()) ? "" : `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/**
 * The bullets a note's row shows (at most `max`, in their order): the first (the request) and every
 * `Outcome:` bullet always, the others as room allows; `hidden` is how many are left for "+N more".
 */
export function shownBullets(bullets: readonly string[], max = 3): { shown: string[]; hidden: number } {
  const keep = new Set<number>(bullets.length ? [0] : []);
  bullets.forEach((b, i) => {
    if (/^\W*outcome\b/i.test(b)) keep.add(i);
  });
  for (let i = 0; i < bullets.length && keep.size < max; i++) keep.add(i);
  const shown = bullets.filter((_, i) => keep.has(i));
  return { shown, hidden: bullets.length - shown.length };
}

/** Items grouped by their `day`, in the order given (newest first in, newest first out). */
export function groupByDay<T extends { day: string }>(items: T[]): { day: string; items: T[] }[] {
  const out: { day: string; items: T[] }[] = [];
  for (const it of items) {
    const last = out[out.length - 1];
    if (last && last.day === it.day) last.items.push(it);
    else out.push({ day: it.day, items: [it] });
  }
  return out;
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? word : many}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 10 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/** `just now`, `5m ago`, `3h ago`, `2d ago`, `4mo ago`, `2y ago` (the CLI's own words: core/ago.ts); a date for the future. */
export function ago(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  return timeAgo(t, now) ?? iso.slice(0, 10);
}

/** A bar chart's bars in a `width` × `height` box, with room under them for labels. */
export function bars(series: DayCount[], width: number, height: number, labelRoom = 18, valueRoom = 16): { x: number; y: number; w: number; h: number; d: DayCount }[] {
  const max = Math.max(1, ...series.map((s) => s.count));
  const slot = width / Math.max(1, series.length);
  const w = Math.max(4, slot * 0.6);
  const plot = height - labelRoom - valueRoom;
  return series.map((d, i) => {
    const h = d.count > 0 ? Math.max(2, (d.count / max) * plot) : 0;
    return { x: i * slot + (slot - w) / 2, y: valueRoom + plot - h, w, h, d };
  });
}
