/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** One day, over the projects in view (a heatmap cell or a bar of the week chart). */
import type { DayPage } from "../../types.ts";
import { longDay, plural } from "../charts.js";
import { viewData } from "../api.js";
import { focusHeading, h, loading, setMain } from "../dom.js";
import { noteRow } from "./note.js";

export async function showDay(date: string): Promise<void> {
  setMain(loading("Loading the day…"));
  const d = await viewData<DayPage>("/api/day", { date });
  document.title = `${longDay(date)} · Memory Hub`;
  const named = d.scope === "all";
  let k = 0;
  const step = (to: string | null, label: string, rel: string) =>
    to ? h("a", { href: `#/day/${to}`, rel, "data-day-link": rel }, label) : h("span", { class: "muted", "aria-hidden": "true" }, label);
  setMain(
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "← Overview")),
    h("h1", {}, longDay(date)),
    h("p", { class: "muted" }, `${plural(d.total, "note")}${named ? ` in ${plural(d.groups.length, "project")}` : ""}`),
    h("nav", { class: "day-steps", "aria-label": "Other days with notes" }, step(d.previous, "← Earlier day", "prev"), step(d.next, "Later day →", "next")),
    d.total
      ? h(
          "div",
          { class: "timeline" },
          d.groups.map((g) =>
            h(
              "section",
              { class: "day", "data-project": g.project },
              named ? h("h2", {}, h("a", { href: `#/project/${encodeURIComponent(g.project)}` }, g.projectName), h("span", { class: "count" }, plural(g.total, "note"))) : null,
              h("ol", {}, g.notes.map((n) => noteRow(n, k++))),
              g.notes.length < g.total ? h("p", { class: "muted" }, `${g.total - g.notes.length} more not shown: search or the project's timeline reaches them.`) : null,
            ),
          ),
        )
      : h("p", { class: "empty" }, "No notes on this day."),
  );
  focusHeading();
}
