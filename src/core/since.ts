import { UsageError } from "./errors.ts";

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

export const SINCE_USAGE = "--since takes a duration (30m, 12h, 3d, 1w) or a date (2026-11-01)";

/**
 * `--since` as a time in ms since epoch: a duration back from `now` (`12h`, `3d`, `1w`, `30m`) or
 * a calendar date (`2026-11-01`, local midnight). Anything else is a UsageError (exit 2).
 */
export function parseSince(value: string, now = Date.now()): number {
  const v = value.trim().toLowerCase();
  const d = /^(\d{1,6})([mhdw])$/.exec(v);
  if (d) return now - Number(d[1]) * UNITS[d[2]!]!;
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (date) {
    const [y, m, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const t = new Date(y, m - 1, day);
    if (t.getFullYear() === y && t.getMonth() === m - 1 && t.getDate() === day) return t.getTime();
  }
  throw new UsageError(`${SINCE_USAGE} (got "${value}")`);
}
