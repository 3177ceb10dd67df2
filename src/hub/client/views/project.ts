/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** A project's timeline, a page of notes at a time. */
import type { TimelinePage } from "../../types.ts";
import { addDays, ago, groupByDay, longDay, plural } from "../charts.js";
import { api, viewData } from "../api.js";
import { errorBox, focusHeading, h, loading, setMain } from "../dom.js";
import { noteRow } from "./note.js";

const PAGE = 40;

export async function showProject(id: string): Promise<void> {
  setMain(loading("Loading the timeline…"));
  let page = await viewData<TimelinePage>("/api/timeline", { project: id, offset: 0, limit: PAGE });
  const notes = [...page.notes];
  const p = page.project;
  document.title = `${p.name} · Memory Hub`;
  const list = h("div", { class: "timeline" });
  const more = h("button", { type: "button", class: "more" });
  const render = (focusFrom?: number) => {
    list.replaceChildren();
    let k = 0;
    const today = localToday();
    const yesterday = addDays(today, -1);
    for (const g of groupByDay(notes)) {
      const badge = g.day === today ? "Today" : g.day === yesterday ? "Yesterday" : null;
      list.appendChild(
        h(
          "section",
          { class: "day", "data-day": g.day },
          h("h2", {}, longDay(g.day), badge ? h("span", { class: "badge" }, badge) : null, h("span", { class: "count" }, plural(g.items.length, "note"))),
          h(
            "ol",
            {},
            g.items.map((n) => noteRow(n, k++)),
          ),
        ),
      );
    }
    const left = page.total - notes.length;
    more.hidden = left <= 0;
    more.textContent = `Load more (${left} remaining)`;
    if (focusFrom !== undefined) (list.querySelector(`[data-index="${focusFrom}"]`) as HTMLElement | null)?.focus();
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      page = await api<TimelinePage>("/api/timeline", { project: id, offset: notes.length, limit: PAGE });
      const from = notes.length;
      notes.push(...page.notes);
      render(from);
    } catch (e) {
      list.appendChild(errorBox(e));
    } finally {
      more.disabled = false;
    }
  });
  render();
  setMain(
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "← Overview")),
    h("h1", {}, p.name, p.exists ? null : h("span", { class: "badge warn" }, "folder gone")),
    h("p", { class: "muted path" }, p.path),
    h("p", {}, h("a", { href: `#/sessions/${encodeURIComponent(p.id)}`, "data-sessions-link": p.id }, "What each prompt received →")),
    h("p", { class: "muted" }, `${plural(p.notes, "note")} · ${p.chunks.toLocaleString("en-US")} chunks indexed · last active ${p.lastActive ? ago(p.lastActive) : "never"}`),
    notes.length ? list : h("p", { class: "empty" }, "No notes yet: they appear after Claude Code turns in this project."),
    more,
  );
  focusHeading();
}

/** The browser's local day, `YYYY-MM-DD`, as note days are. */
function localToday(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}
