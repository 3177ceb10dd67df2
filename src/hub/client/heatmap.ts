/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/**
 * The overview's charts, drawn as SVG from charts.ts's layouts: the heatmap of a span of days
 * (its days without a note marked once the turns are counted) and the last 7 days.
 */
import type { Overview, TurnsView } from "../types.ts";
import { type HeatSpan, RECENT_SPAN, bars, heatSpans, heatmapBetween, lastDays, longDay, notesOutside, openingSpan, plural } from "./charts.js";
import { api, currentNavigation } from "./api.js";
import { h, hideTip, main, s, showTip, withDates } from "./dom.js";
import { openDay, openOnKey } from "./nav.js";

function describeDay(c: { date: string; count: number }): string {
  return `${plural(c.count, "note")} on ${longDay(c.date)}`;
}

const PITCH = 14;

const CELL = 11;

/**
 * The heatmap of one span, with a button for each span there is (the last 6 months, each year):
 * it opens on the span that holds notes and says how many notes lie outside the view.
 */
export function heatmap(o: Overview, span = openingSpan(o.days, o.today)): HTMLElement {
  const spans = heatSpans(o.days, o.today);
  const section = heatmapOf(o, span);
  const nav = h(
    "div",
    { class: "heat-spans", role: "group", "aria-label": "Which span of time the heatmap shows" },
    spans.map((sp) =>
      h(
        "button",
        {
          type: "button",
          class: "span",
          "data-span": sp.key,
          "aria-pressed": String(sp.key === span.key),
          onclick: () => {
            const next = heatmap(o, sp);
            section.replaceWith(next);
            (next.querySelector(`[data-span="${sp.key}"]`) as HTMLElement | null)?.focus();
            heatToRecent();
            if (turnsShown) showTurns(turnsShown);
          },
        },
        sp.label,
      ),
    ),
  );
  section.insertBefore(nav, section.querySelector(".heat-scroll"));
  return section;
}

function heatmapOf(o: Overview, span: HeatSpan): HTMLElement {
  const lay = heatmapBetween(o.days, span.from, span.to);
  const outside = notesOutside(o.days, span.from, span.to);
  const spanWords = span.key === RECENT_SPAN ? "the last 6 months" : span.label;
  const left = 30;
  const top = 18;
  const width = left + lay.weeks * PITCH;
  const height = top + 7 * PITCH;
  const svg = s(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, class: "heatmap", role: "group", "aria-label": `Notes per day over ${spanWords}: ${plural(lay.total, "note")} on ${plural(lay.activeDays, "day")}. Arrow keys move between days, Enter opens one.` },
    lay.months.map((m) => s("text", { x: left + m.col * PITCH, y: 11, class: "axis" }, m.label)),
    [1, 3, 5].map((row) => s("text", { x: 0, y: top + row * PITCH + 9, class: "axis" }, ["", "Mon", "", "Wed", "", "Fri", ""][row])),
  );
  const rects = lay.cells.map((c, i) => dayCell(c, left + c.col * PITCH, top + c.row * PITCH, i === lay.cells.length - 1));
  for (const r of rects) svg.appendChild(r);
  svg.addEventListener("keydown", (ev) => moveInGrid(ev as KeyboardEvent, rects));
  const legend = h("p", { class: "legend", "aria-hidden": "true" }, "Less ", [0, 1, 2, 3, 4].map((l) => h("span", { class: `swatch l${l}` })), " More");
  return h(
    "section",
    { class: "panel", "aria-labelledby": "heat-title" },
    h("h2", { id: "heat-title" }, `Activity, ${span.key === RECENT_SPAN ? "last 6 months" : span.label}`),
    h("div", { class: "heat-scroll" }, svg),
    h(
      "div",
      { class: "heat-foot" },
      h(
        "p",
        { class: "muted", "data-heat-total": lay.total, "data-heat-outside": outside },
        `${plural(lay.total, "note")} on ${plural(lay.activeDays, "day")} ${span.key === RECENT_SPAN ? `since ${longDay(lay.from)}` : `in ${span.label}`}`,
        outside ? `; ${plural(outside, "note")} outside this view` : "",
      ),
      legend,
    ),
  );
}

/** One day of the heatmap: its tooltip, and a day with notes opens on a click. */
function dayCell(c: { date: string; count: number; level: number }, x: number, y: number, tabStop: boolean): SVGElement {
  const r = s("rect", {
    x,
    y,
    width: CELL,
    height: CELL,
    rx: 2,
    class: `cell l${c.level}`,
    tabindex: tabStop ? 0 : -1,
    role: c.count > 0 ? "button" : "img",
    "aria-label": describeDay(c),
    "data-date": c.date,
    "data-count": c.count,
  });
  const show = () => showTip(r, describeDay(c));
  r.addEventListener("pointerenter", show);
  r.addEventListener("focus", show);
  r.addEventListener("pointerleave", hideTip);
  r.addEventListener("blur", hideTip);
  if (c.count > 0) r.addEventListener("click", () => openDay(c.date));
  return r;
}

/** One tab stop for the whole grid; arrows move a day (up/down) or a week (left/right), Enter opens a day with notes. */
function moveInGrid(e: KeyboardEvent, rects: SVGElement[]): void {
  const i = rects.indexOf(document.activeElement as unknown as SVGElement);
  if (i < 0) return;
  if (e.key === "Enter" || e.key === " ") {
    e.preventDefault();
    if (Number(rects[i]!.getAttribute("data-count")) > 0) openDay(rects[i]!.getAttribute("data-date")!);
    return;
  }
  const step: Record<string, number> = { ArrowUp: -1, ArrowDown: 1, ArrowLeft: -7, ArrowRight: 7, Home: -i, End: rects.length - 1 - i };
  const d = step[e.key];
  if (d === undefined) return;
  e.preventDefault();
  const j = Math.min(rects.length - 1, Math.max(0, i + d));
  rects[i]!.setAttribute("tabindex", "-1");
  rects[j]!.setAttribute("tabindex", "0");
  (rects[j] as unknown as HTMLElement).focus();
}

export function weekChart(o: Overview): HTMLElement {
  const series = lastDays(o.days, o.today, 7);
  const W = 336;
  const H = 150;
  const bs = bars(series, W, H);
  const total = series.reduce((n, d) => n + d.count, 0);
  const svg = s(
    "svg",
    { viewBox: `0 0 ${W} ${H}`, class: "week", role: "group", "aria-label": `Notes in the last 7 days: ${series.map((d) => `${d.label} ${d.count}`).join(", ")}` },
    s("line", { x1: 0, x2: W, y1: H - 18, y2: H - 18, class: "base" }),
    bs.map((b) =>
      s(
        "g",
        {
          class: b.d.count ? "bar has-notes" : "bar",
          "data-date": b.d.date,
          "data-count": b.d.count,
          // A bar with notes is a button (Tab, then Enter or Space), as a heatmap day is.
          ...(b.d.count ? { role: "button", tabindex: 0, "aria-label": describeDay(b.d), onclick: () => openDay(b.d.date), onkeydown: (e: Event) => openOnKey(e, b.d.date) } : { "aria-hidden": "true" }),
        },
        s("title", {}, describeDay(b.d)),
        s("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 3 }),
        s("text", { x: b.x + b.w / 2, y: Math.max(12, b.y - 4), class: "val" }, b.d.count ? String(b.d.count) : ""),
        s("text", { x: b.x + b.w / 2, y: H - 4, class: "axis mid" }, b.d.label),
      ),
    ),
  );
  return h("section", { class: "panel", "aria-labelledby": "week-title" }, h("h2", { id: "week-title" }, "Last 7 days"), svg, h("p", { class: "muted" }, `${plural(total, "note")} this week`));
}

/**
 * Every turn accounted for: a day of the heatmap holding a turn without a note gets a mark, and
 * the panel says, per project, how many turns have notes (what `memsearch doctor` says). Asked
 * after the overview is drawn: counting reads every transcript of the project.
 */
export async function markMissingTurns(asked: number): Promise<void> {
  let t: TurnsView;
  try {
    t = await api<TurnsView>("/api/turns");
  } catch {
    return;
  }
  if (asked !== currentNavigation()) return;
  turnsShown = t;
  showTurns(t);
}

/** The turn counts of the overview, kept so that a heatmap redrawn for another span is marked again. */
let turnsShown: TurnsView | undefined;

function showTurns(t: TurnsView): void {
  for (const r of main.querySelectorAll<SVGElement>("svg.heatmap rect[data-date]")) {
    const n = t.missingDays[r.getAttribute("data-date")!];
    if (!n || r.classList.contains("missing")) continue;
    r.classList.add("missing");
    r.setAttribute("aria-label", `${r.getAttribute("aria-label")}; ${plural(n, "turn")} without a note`);
  }
  if (main.querySelector(".turns-line")) return;
  const lines = t.projects.filter((p) => p.line).map((p) => h("p", { class: p.missing ? "turns-line warn-text" : "turns-line muted", "data-missing": p.missing }, t.projects.length > 1 ? [`${p.projectName}: `, withDates(p.line)] : withDates(p.line)));
  main.querySelector(".heat-foot")?.after(...lines);
}

/** Where the heatmap is wider than a narrow window, show its recent end. */
export function heatToRecent(): void {
  const scroller = main.querySelector(".heat-scroll");
  if (scroller) scroller.scrollLeft = scroller.scrollWidth;
}
