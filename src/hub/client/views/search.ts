/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** Search: the notes, or notes and past conversations (recall). */
import type { SearchHit, SearchPage } from "../../types.ts";
import { DEFAULT_AGENT } from "../agents.js";
import { plural } from "../charts.js";
import { viewData } from "../api.js";
import { basename, focusHeading, h, loading, searchInput, searchMode, setMain, timeEl } from "../dom.js";
import { inline, snippetLines } from "../markdown.js";
import { openNote, openTurn } from "./note.js";
import { showOverview } from "./overview.js";

function hitItem(hit: SearchHit, i: number, all: boolean, query: string): HTMLElement {
  const src = hit.note ? `${basename(hit.note.source)}:${hit.note.line}` : hit.transcript ? basename(hit.transcript.path) : "";
  const snippet = hit.note?.snippet || (hit.transcript?.matched ? "" : hit.transcript?.snippet) || "";
  // The message that matched in the conversation, said as such, beside the note's snippet when both matched.
  const said = hit.transcript?.matched && hit.transcript.snippet ? hit.transcript : null;
  const open = () => {
    if (hit.note && hit.project) void openNote({ project: hit.project, chunk: hit.note.chunk }, said ? { snippet: said.snippet, query } : undefined);
    else if (hit.transcript) void openTurn({ path: hit.transcript.path, turn: hit.transcript.turn }, null, { snippet: said?.snippet ?? "", query });
  };
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "hit", "data-rank": i + 1, onclick: open },
      h(
        "span",
        { class: "hit-meta" },
        h("span", { class: "score", title: "relevance" }, hit.score.toFixed(4)),
        h("span", { class: "date" }, hit.date ? timeEl(hit.date) : "date unknown"),
        h("span", { class: "src", title: hit.note?.source ?? hit.transcript?.path ?? "" }, src),
        all && hit.projectName ? h("span", { class: "badge" }, hit.projectName) : null,
        hit.agent !== DEFAULT_AGENT ? h("span", { class: "badge agent" }, hit.agent) : null,
        h("span", { class: "from" }, hit.from.join(" + ")),
      ),
      hit.note?.heading && !/^\d{1,2}:\d{2}$/.test(hit.note.heading) ? h("span", { class: "hit-title" }, hit.note.heading) : null,
      snippet ? h("span", { class: "snippet" }, snippetLines(snippet)) : null,
      said ? h("span", { class: "said", "data-matched-message": said.role }, h("span", { class: "who" }, said.role === "assistant" ? "Claude said: " : "You said: "), inline(said.snippet.replace(/\s+/g, " ").trim())) : null,
    ),
  );
}

export async function showSearch(q: string, mode: "notes" | "recall"): Promise<void> {
  searchInput.value = q;
  searchMode.value = mode;
  if (!q.trim()) return showOverview();
  setMain(loading(`Searching for “${q}”…`));
  const page = await viewData<SearchPage>("/api/search", { q, mode, limit: 20 });
  document.title = `${q} · Memory Hub`;
  const how = page.mode === "recall" ? "notes and past conversations (recall --raw)" : "notes";
  const ranking = page.ranking === "hybrid" ? "hybrid: keywords + vectors" : page.ranking === "bm25" ? "keywords only (BM25)" : null;
  setMain(
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "← Overview")),
    h("h1", {}, `${plural(page.hits.length, "result")} for “${page.query}”`),
    h("p", { class: "muted" }, `Searched ${how}${ranking ? `, ranked ${ranking}` : ""}.`),
    page.warnings.map((w) => h("p", { class: "warn-line", role: "note" }, w)),
    page.hits.length ? h("ol", { class: "hits" }, page.hits.map((hit, i) => hitItem(hit, i, page.scope === "all", page.query))) : h("p", { class: "empty" }, "Nothing found. Try other words, or search notes and conversations together."),
  );
  focusHeading();
}
