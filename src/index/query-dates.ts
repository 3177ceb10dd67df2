/**
 * The days and months a query names ("what did we decide on 16 June", "the crash in October 2023",
 * "yesterday's migration"), so the notes of those days rank first among the relevant ones. Notes
 * live in daily files, and a date in a question is the asker saying where to look: no word of the
 * note holds it (the day is the file's name), so the keywords alone never see it.
 *
 * English month names (whole or the usual abbreviations), ISO days standing alone, and
 * "yesterday". A day without a year is the latest such day not after now. "Today" is left out: in
 * a prompt it is the work at hand ("today I want to…"), and on real sessions it pointed at the
 * wrong notes; an ISO day inside a longer name (a session id `2026-01-20-ab12`, a plan's file) is a
 * name, not a day (docs/EVALUATION.md). Nothing here reads the zone's rules:
 * local days come from the offset the index's writer recorded, when the caller has it.
 */
import { calendarDay, noteDay } from "../core/since.ts";

// A note's day is read from its file's name as its time is (core/since.ts noteTime), in one place.
export { noteDay };

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const MONTH_WORD = "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?";
const DAY_WORD = "(\\d{1,2})(?:st|nd|rd|th)?";
const YEAR_WORD = "(\\d{4})";

/** 16 June 2023, the 16th of June, 2023; a day number is not the end of a time, a version or a path ("12:30 May", "v1.16 June"). */
const DAY_MONTH = new RegExp(`(?<![\\d:./-])\\b${DAY_WORD}(?:\\s+of)?\\s+${MONTH_WORD}(?:,?\\s+${YEAR_WORD})?\\b`, "gi");
/** June 16, 2023; June 16th. */
const MONTH_DAY = new RegExp(`\\b${MONTH_WORD}\\s+${DAY_WORD}\\b(?!:)(?:,?\\s+${YEAR_WORD})?`, "gi");
/** Standing alone: inside a longer name (a session id, a plan's file, a timestamp) it names a thing, not a day to look at. */
const ISO_DAY = /(?<![\w./-])(\d{4})-(\d{2})-(\d{2})(?![\w/-]|\.\w)/g;
/** June 2023, June, 2023. */
const MONTH_YEAR = new RegExp(`\\b${MONTH_WORD},?\\s+${YEAR_WORD}\\b`, "gi");
const RELATIVE = /\byesterday\b/i;

export interface QueryDates {
  /** `YYYY-MM-DD` */
  days: Set<string>;
  /** `YYYY-MM`, for a month named without a day. */
  months: Set<string>;
}

const pad = (n: number) => String(n).padStart(2, "0");

function monthOf(word: string): number {
  return MONTHS.indexOf(word.toLowerCase().slice(0, 3));
}

/** Today's local date as [year, month (0-based), day], from the writer's recorded offset when known. */
function localToday(now: number, utcOffsetMin?: number): [number, number, number] {
  if (utcOffsetMin === undefined) {
    const d = new Date(now);
    return [d.getFullYear(), d.getMonth(), d.getDate()];
  }
  const d = new Date(now - utcOffsetMin * 60_000);
  return [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
}

export function queryDates(query: string, now = Date.now(), utcOffsetMin?: number): QueryDates {
  const days = new Set<string>();
  const months = new Set<string>();
  // Cheap bail-out: most queries hold no digit and no date word.
  if (!/\d|yesterday/i.test(query)) return { days, months };
  const [ty, tm, td] = localToday(now, utcOffsetMin);
  const add = (m: number, d: number, year?: string) => {
    if (m < 0) return;
    // Without a year: this year's, or last year's when this year's is still to come.
    const y = year ? Number(year) : m > tm || (m === tm && d > td) ? ty - 1 : ty;
    const key = calendarDay(y, m, d);
    if (key) days.add(key);
  };
  for (const x of query.matchAll(DAY_MONTH)) add(monthOf(x[2]!), Number(x[1]), x[3]);
  for (const x of query.matchAll(MONTH_DAY)) {
    // "May 2023" is a month, not the 20th of May: a day has at most two digits.
    add(monthOf(x[1]!), Number(x[2]), x[3]);
  }
  for (const x of query.matchAll(ISO_DAY)) {
    const key = calendarDay(Number(x[1]), Number(x[2]) - 1, Number(x[3]));
    if (key) days.add(key);
  }
  if (RELATIVE.test(query)) {
    const at = new Date(Date.UTC(ty, tm, td - 1));
    days.add(`${at.getUTCFullYear()}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())}`);
  }
  for (const x of query.matchAll(MONTH_YEAR)) {
    const m = monthOf(x[1]!);
    const key = `${x[2]}-${pad(m + 1)}`;
    // Named with a day as well ("16 June, 2023"): the day says it.
    if (m >= 0 && ![...days].some((d) => d.startsWith(key))) months.add(key);
  }
  return { days, months };
}

/**
 * How much a note's rank is raised for being of a day or month the query names: a note of the
 * named day counts twice, one of the named month half again; any other, or a query naming no date,
 * as it is. Like recency, the order only: the score the gate reads is left as it is.
 */
export function dateBoost(source: string, dates: QueryDates): number {
  if (dates.days.size === 0 && dates.months.size === 0) return 1;
  const day = noteDay(source);
  if (!day) return 1;
  if (dates.days.has(day)) return 1 + DAY_WEIGHT;
  if (dates.months.has(day.slice(0, 7))) return 1 + MONTH_WEIGHT;
  return 1;
}

const DAY_WEIGHT = 1;
const MONTH_WEIGHT = 0.5;
