/**
 * How long ago a time was, as the CLI, the hooks and the hub's page write it. `timeAgo` refers to
 * nothing outside itself: the page loads its very source (served as /assets/ago.js,
 * hub/assets.ts), so there is one rule for both.
 */

/** How long ago, in the largest unit that fits: `just now`, `5m ago`, `2h ago`, `3d ago`, `4mo ago`, `2y ago`; undefined for a future time. */
export function timeAgo(then: Date | number, now: Date | number = Date.now()): string | undefined {
  const ms = Number(now) - Number(then);
  if (!Number.isFinite(ms) || ms < -60_000) return undefined;
  const min = Math.floor(Math.max(0, ms) / 60_000);
  if (min < 1) return "just now";
  if (min < 60) return `${min}m ago`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h}h ago`;
  // 47 hours is nearer two days than one.
  const d = Math.round(h / 24);
  if (d < 60) return `${d}d ago`;
  if (d < 730) return `${Math.floor(d / 30.44)}mo ago`;
  return `${Math.floor(d / 365.25)}y ago`;
}
