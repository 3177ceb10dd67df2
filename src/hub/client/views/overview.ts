/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** The overview: the cards, the charts, the curated files, the projects, the cost. */
import type { CostsPage, CuratedCard, CuratedView, Overview, ProjectCard } from "../../types.ts";
import { ago, formatBytes, plural } from "../charts.js";
import { api, currentNavigation, viewData } from "../api.js";
import { AGENT_LABELS, DEFAULT_AGENT } from "../agents.js";
import { $, type Child, errorBox, h, loading, openDialog, setMain } from "../dom.js";
import { heatToRecent, heatmap, markMissingTurns, weekChart } from "../heatmap.js";
import { markdown } from "../markdown.js";
import { costPanel } from "./costs.js";

function card(stat: string, label: string, value: Child, sub: Child): HTMLElement {
  return h("section", { class: "card", "data-stat": stat, "aria-label": label }, h("p", { class: "card-label" }, label), h("p", { class: "card-value" }, value), h("p", { class: "card-sub" }, sub));
}

function statusDot(ok: boolean | null): HTMLElement {
  return h("span", { class: `dot ${ok === true ? "ok" : ok === false ? "bad" : "off"}`, "aria-hidden": "true" });
}

function cards(o: Overview): HTMLElement {
  const t = o.totals;
  const emb = o.embedding;
  const embValue = emb.length ? emb.map((e) => e.model).join(", ") : "—";
  const embSub = emb.length
    ? emb.map((e) => h("span", { class: "emb", title: e.detail }, statusDot(e.ok), e.ok === null ? "off: keywords only" : e.ok ? "Ollama answers" : "Ollama unavailable"))
    : "no project";
  const projectsSub =
    o.scope === "project" && t.knownProjects > 1 ? `${t.knownProjects} known: memsearch hub --all-projects` : t.knownProjects ? `${plural(t.knownProjects, "project")} in the registry` : "none recorded by a session yet";
  return h(
    "div",
    { class: "cards" },
    card("notes", "Notes", t.notes.toLocaleString("en-US"), notesBy(t.byAgent)),
    card("chunks", "Chunks", t.chunks.toLocaleString("en-US"), `${plural(t.files, "file")} · ${t.vectors.toLocaleString("en-US")} with vectors`),
    card("projects", "Projects", t.projects.toLocaleString("en-US"), projectsSub),
    card("active-days", "Active days", t.activeDays.toLocaleString("en-US"), "days with notes"),
    card("avg-per-day", "Avg per day", String(t.avgPerDay), "notes per active day"),
    card("index-size", "Index size", formatBytes(t.indexBytes), "on disk, rebuilt from the notes"),
    card("embedding", "Embedding model", embValue, embSub),
  );
}

/** Who wrote the notes: `one per Claude Code turn` (the default agent's), or `12 from Claude Code · 2 of yours`. */
function notesBy(byAgent: Record<string, number>): string {
  const who = Object.entries(byAgent).filter(([, n]) => n > 0);
  if (who.length === 1 && who[0]![0] === DEFAULT_AGENT) return `one per ${AGENT_LABELS[DEFAULT_AGENT]} turn`;
  if (!who.length) return "one per agent turn";
  return who
    .sort((a, b) => b[1] - a[1])
    .map(([agent, n]) => (agent === "you" ? `${n.toLocaleString("en-US")} of yours` : `${n.toLocaleString("en-US")} from ${AGENT_LABELS[agent] ?? agent}`))
    .join(" · ");
}

function projectCard(p: ProjectCard): HTMLElement {
  const when = p.lastActive ? ago(p.lastActive) : "never";
  return h(
    "li",
    {},
    h(
      "a",
      { class: "project", href: `#/project/${p.id}`, "data-project": p.id },
      h("span", { class: "project-name" }, p.name, p.current ? h("span", { class: "badge" }, "this project") : null, p.exists ? null : h("span", { class: "badge warn" }, "folder gone")),
      h("span", { class: "project-path", title: p.path }, p.path),
      h("span", { class: "project-stats" }, h("span", { "data-notes": p.notes }, plural(p.notes, "note")), " · ", `last active ${when}`),
      p.problem ? h("span", { class: "project-problem" }, p.problem) : null,
    ),
  );
}

const CURATED_KIND = { memory: "Claude Code memory", "CLAUDE.md": "CLAUDE.md", "CLAUDE.local.md": "CLAUDE.local.md" } as const;

/** Claude Code's curated memory of this project: each file opens in the dialog, redacted. */
function curatedSection(c: CuratedCard): HTMLElement {
  const m = c.memoryFolder;
  const where = `${m.dir} (${m.from === "default" ? "Claude Code's default" : `from ${m.from}`}${m.exists ? "" : ", not made yet"}${m.enabled ? "" : ", auto memory off"})`;
  return h(
    "section",
    { class: "panel curated", "aria-labelledby": "curated-title", "data-curated": c.files.length },
    h("h2", { id: "curated-title" }, "Curated"),
    h("p", { class: "muted" }, `${plural(c.files.length, "file")} searched with your notes; memory folder: ${where}`),
    h(
      "ul",
      { class: "curated-files" },
      c.files.map((f) =>
        h(
          "li",
          {},
          h(
            "button",
            { type: "button", class: "link", "data-curated-file": f.index, onclick: () => void openCurated(c.project, f.index) },
            h("span", { class: "badge" }, CURATED_KIND[f.kind]),
            " ",
            f.path,
            f.fromRepository ? h("span", { class: "badge warn" }, "from the repository") : null,
          ),
        ),
      ),
    ),
    c.ignored.map((i) => h("p", { class: "project-problem" }, i)),
  );
}

async function openCurated(project: string, index: number): Promise<void> {
  openDialog("Curated", h("p", { class: "loading", role: "status" }, "Loading…"));
  let v: CuratedView;
  try {
    v = await api<CuratedView>("/api/curated", { project, index });
  } catch (e) {
    openDialog("Curated", errorBox(e));
    return;
  }
  openDialog(CURATED_KIND[v.kind], h("p", { class: "muted src-line" }, v.path), markdown(v.content));
}

export async function showOverview(): Promise<void> {
  setMain(loading("Loading your memory…"));
  const [o, costs] = await Promise.all([viewData<Overview>("/api/overview"), viewData<CostsPage>("/api/costs")]);
  $("scope").textContent = o.scope === "all" ? `all projects · v${o.version}` : `${o.projects[0]?.name ?? ""} · v${o.version}`;
  document.title = "Memory Hub · memsearch";
  // No note anywhere in view: what to do next, instead of a wall of zeros.
  const empty = o.totals.notes === 0 && o.totals.chunks === 0;
  setMain(
    h("h1", { class: "sr" }, "Memory overview"),
    empty ? gettingStarted(o) : [cards(o), h("div", { class: "charts" }, heatmap(o), weekChart(o))],
    o.curated ? curatedSection(o.curated) : null,
    h(
      "section",
      { "aria-labelledby": "projects-title" },
      h("h2", { id: "projects-title" }, o.scope === "all" ? "Projects" : "Project"),
      o.projects.length ? h("ul", { class: "projects" }, o.projects.map(projectCard)) : h("p", { class: "muted" }, "No project yet."),
    ),
    costPanel(costs),
  );
  heatToRecent();
  void markMissingTurns(currentNavigation());
}

/** The first steps, for a project (or every project in view) without a single note yet. */
function gettingStarted(o: Overview): HTMLElement {
  const step = (cmd: string, what: string) => h("li", { "data-next": cmd }, h("code", {}, cmd), h("span", {}, ` ${what}`));
  const where = o.scope === "all" ? "any project in view" : (o.projects[0]?.name ?? "this project");
  return h(
    "section",
    { class: "panel getting-started", "aria-labelledby": "start-title" },
    h("h2", { id: "start-title" }, `No notes yet in ${where}`),
    h("p", {}, "memsearch writes a few notes after each turn of a coding agent, and brings them back when they help. To start:"),
    h(
      "ol",
      { class: "next-steps" },
      step("memsearch import", "writes notes for the past Claude Code, Codex CLI and Gemini CLI sessions of this project (free: a plain extract, no model)."),
      step("memsearch install claude", "sets up the Claude Code plugin, so every new turn gets its note (or codex, gemini, opencode, copilot)."),
      step("memsearch remember the staging database moved to port 5433", "writes a note of your own."),
    ),
    h("p", { class: "muted" }, "Then reload this page: the notes, their activity and search appear here. ", h("code", {}, "memsearch doctor"), " says what is missing when nothing comes."),
  );
}
