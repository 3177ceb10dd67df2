import { UsageError } from "./errors.ts";

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

export const SINCE_USAGE = "--since takes a duration (30m, 12h, 3d, 1w) or a date (2026-11-01)";

/** A calendar day as `YYYY-MM-DD`: `2026-11-99` has the shape but is no day. */
export function isDay(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  return m !== null && calendarDay(Number(m[1]), Number(m[2]) - 1, Number(m[3])) !== undefined;
}

/** `YYYY-MM-DD` of a real calendar day (`m` from 0), or undefined: 31 June is none. */
export function calendarDay(y: number, m: number, d: number): string | undefined {
  const at = new Date(Date.UTC(y, m, d));
  return at.getUTCFullYear() === y && at.getUTCMonth() === m && at.getUTCDate() === d ? `${y}-${pad2(m + 1)}-${pad2(d)}` : undefined;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * `--since` as a time in ms since epoch: a duration back from `now` (`12h`, `3d`, `1w`, `30m`) or
 * a calendar date (`2026-11-01`, local midnight). Anything else is a UsageError (exit 2).
 */
export function parseSince(value: string, now = Date.now()): number {
  const v = value.trim().toLowerCase();
  if (/^-\d{1,6}[mhdw]$/.test(v)) throw new UsageError(`--since counts back from now: write ${v.slice(1)}, not ${value.trim()}`);
  const d = /^(\d{1,6})([mhdw])$/.exec(v);
  if (d) return now - Number(d[1]) * UNITS[d[2]!]!;
  if (isDay(v)) {
    const [y, m, day] = v.split("-").map(Number);
    return new Date(y!, m! - 1, day).getTime();
  }
  throw new UsageError(`${SINCE_USAGE} (got "${value}")`);
}

/**
 * When a note was written, from its daily file's name (`…/2026-11-21.md`) and its `HH:MM`
 * heading, local time; a note whose heading holds no time is dated at the start of its day, or
 * at its end with `endOfDay` (a time window then keeps a whole day). Undefined for a file that
 * is not a daily file (a curated file, a named path). `utcOffsetMin`: the zone's offset as a
 * writer recorded it, one for every note (a note from the other side of a daylight-saving change
 * is an hour off); else the zone's own rule for that day.
 */
export function noteTime(source: string, heading: string, endOfDay = false, utcOffsetMin?: number): number | undefined {
  const d = DAILY_FILE.exec(source);
  if (!d) return undefined;
  const [y, m, day] = [Number(d[1]), Number(d[2]) - 1, Number(d[3])];
  // With the zone's offset known, no Date in local time is made: the first one loads the zone data.
  const base = utcOffsetMin === undefined ? new Date(y, m, day).getTime() : Date.UTC(y, m, day) + utcOffsetMin * 60_000;
  const hm = /^(\d{1,2}):(\d{2})\b/.exec(heading.trim());
  if (hm) return base + (Number(hm[1]) * 60 + Number(hm[2])) * 60_000;
  return endOfDay ? base + 86_400_000 - 1 : base;
}

/** The day of a daily note file (`…/2026-11-21.md`) as `YYYY-MM-DD`, or undefined. */
export function noteDay(source: string): string | undefined {
  const d = DAILY_FILE.exec(source);
  return d ? `${d[1]}-${d[2]}-${d[3]}` : undefined;
}

/** A daily note file's name, its year, month and day. */
const DAILY_FILE = /(?:^|[\\/])(\d{4})-(\d{2})-(\d{2})\.md$/;

/** This machine's offset from UTC now, in minutes as Date#getTimezoneOffset gives it (what a writer records for its readers). */
export function utcOffsetNow(): number {
  return new Date().getTimezoneOffset();
}
