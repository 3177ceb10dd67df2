/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/**
 * The Memory Hub page. Plain DOM, no framework: every text from the API goes in as a text node
 * (never as HTML), charts are SVG built here, and the only requests go to this server's /api/
 * with the token `memsearch hub` printed.
 */
import type { CostRowView, CostsPage, CuratedCard, CuratedView, DayPage, ForgetDone, NoteItem, NoteView, Overview, ProjectCard, PromptReceived, SearchHit, SearchPage, SessionReceived, SessionsPage, TimelinePage, TurnsView, TurnView } from "../types.ts";
import { addDays, ago, bars, clockOf, formatBytes, groupByDay, heatmapBetween, heatSpans, lastDays, longDay, notesOutside, openingSpan, plural, RECENT_SPAN, shownBullets, when, type HeatSpan } from "./charts.js";

// ---------------------------------------------------------------------------------------------
// The token: taken from the address once, then kept for this tab only and out of the address bar.

const TOKEN_KEY = "memsearch-hub-token";
const THEME_KEY = "memsearch-hub-theme";
const PAGE = 40;

const startParams = new URLSearchParams(location.search);
const tokenInUrl = startParams.get("token");
if (tokenInUrl) {
  sessionStorage.setItem(TOKEN_KEY, tokenInUrl);
  startParams.delete("token");
  const rest = startParams.toString();
  history.replaceState(null, "", `${location.pathname}${rest ? `?${rest}` : ""}${location.hash}`);
}
const token = sessionStorage.getItem(TOKEN_KEY) ?? "";

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function api<T>(path: string, params: Record<string, string | number> = {}): Promise<T> {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  let r: Response;
  try {
    r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  } catch {
    throw new ApiError(0, "The hub does not answer: it may have been stopped. Run `memsearch hub` again.");
  }
  const body = (await r.json().catch(() => ({}))) as { error?: string };
  if (!r.ok) throw new ApiError(r.status, body.error ?? r.statusText);
  return body as T;
}

/**
 * The one request that changes memory (a forget): a POST with the token in its header, as JSON, so
 * that the server can tell it came from this page (same origin) and not from a form elsewhere.
 */
async function post<T>(path: string, body: unknown): Promise<T> {
  let r: Response;
  try {
    r = await fetch(new URL(path, location.origin), { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "The hub does not answer: it may have been stopped. Run `memsearch hub` again.");
  }
  const out = (await r.json().catch(() => ({}))) as { error?: string };
  if (!r.ok) throw new ApiError(r.status, out.error ?? r.statusText);
  return out as T;
}

/** Counts navigations: a view whose data comes back after the user went elsewhere is dropped. */
let navigation = 0;
class Superseded extends Error {}

/** A view's data; throws Superseded when another view was asked for while it loaded. */
async function viewData<T>(path: string, params: Record<string, string | number> = {}): Promise<T> {
  const asked = navigation;
  let data: T;
  try {
    data = await api<T>(path, params);
  } catch (e) {
    throw asked === navigation ? e : new Superseded();
  }
  if (asked !== navigation) throw new Superseded();
  return data;
}

// ---------------------------------------------------------------------------------------------
// DOM helpers

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";
function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const main = $<HTMLElement>("main");
const dialog = $<HTMLDialogElement>("note");
const dialogBody = $<HTMLElement>("note-body");
const tip = $<HTMLElement>("tip");
const searchForm = $<HTMLFormElement>("search");
const searchInput = $<HTMLInputElement>("q");
const searchMode = $<HTMLSelectElement>("mode");

function setMain(...children: Child[]): void {
  main.replaceChildren();
  append(main, children);
  main.removeAttribute("aria-busy");
}

function loading(text: string): HTMLElement {
  main.setAttribute("aria-busy", "true");
  return h("p", { class: "loading", role: "status" }, text);
}

function errorBox(e: unknown): HTMLElement {
  const status = e instanceof ApiError ? e.status : 0;
  const text =
    status === 401
      ? "This page needs the address `memsearch hub` printed: it carries the hub's token. Run `memsearch hub` again and open the address it prints."
      : e instanceof Error
        ? e.message
        : String(e);
  return h("div", { class: "error", role: "alert" }, h("strong", {}, status === 401 ? "Not authorised. " : "Something went wrong. "), text);
}

/** After a view change, keyboard and screen-reader users start at its heading. */
function focusHeading(): void {
  const h1 = main.querySelector("h1");
  if (h1) {
    h1.setAttribute("tabindex", "-1");
    h1.focus({ preventScroll: true });
  }
}

/** A date as the page writes every date (charts.ts `when`), in a <time> element that keeps the value. */
function timeEl(value: string, text = when(value)): HTMLElement {
  return h("time", { datetime: value.replace(" ", "T") }, text);
}

/** A line the server worded (the turn accounting's), its dates written as the page writes them. */
function withDates(text: string): Child[] {
  const out: Child[] = [];
  let last = 0;
  for (const m of text.matchAll(/\b\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?\b/g)) {
    out.push(text.slice(last, m.index), timeEl(m[0]));
    last = m.index! + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

/** Inline code and bold in a line of a note, as text nodes and elements (never HTML). */
function inline(text: string): Child[] {
  const out: Child[] = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(m[1] !== undefined ? h("code", {}, m[1]) : h("strong", {}, m[2]!));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A note's markdown, the little of it notes use: headings, bullets, paragraphs, code fences. */
function markdown(text: string): HTMLElement {
  const box = h("div", { class: "md" });
  let list: HTMLUListElement | undefined;
  let para: string[] = [];
  let fence: string[] | undefined;
  const flush = () => {
    if (para.length) box.appendChild(h("p", {}, inline(para.join(" "))));
    para = [];
  };
  for (const line of text.split("\n")) {
    if (fence) {
      if (/^\s*(```|~~~)/.test(line)) {
        box.appendChild(h("pre", {}, h("code", {}, fence.join("\n"))));
        fence = undefined;
      } else fence.push(line);
      continue;
    }
    if (/^\s*(```|~~~)/.test(line)) {
      flush();
      list = undefined;
      fence = [];
      continue;
    }
    if (/^\s*<!--[\s\S]*-->\s*$/.test(line)) continue;
    const head = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    if (head) {
      flush();
      list = undefined;
      box.appendChild(h("p", { class: `mdh mdh${head[1]!.length}` }, inline(head[2]!)));
    } else if (bullet) {
      flush();
      if (!list) box.appendChild((list = h("ul")));
      list.appendChild(h("li", {}, inline(bullet[1]!)));
    } else if (!line.trim()) {
      flush();
      list = undefined;
    } else para.push(line.trim());
  }
  if (fence) box.appendChild(h("pre", {}, h("code", {}, fence.join("\n"))));
  flush();
  return box;
}

// ---------------------------------------------------------------------------------------------
// Overview

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

const AGENT_LABELS: Record<string, string> = { claude: "Claude Code", codex: "Codex CLI", gemini: "Gemini CLI", opencode: "OpenCode", copilot: "Copilot CLI" };

/** Who wrote the notes: `one per Claude Code turn`, or `12 from Claude Code · 2 of yours`. */
function notesBy(byAgent: Record<string, number>): string {
  const who = Object.entries(byAgent).filter(([, n]) => n > 0);
  if (who.length === 1 && who[0]![0] === "claude") return "one per Claude Code turn";
  if (!who.length) return "one per agent turn";
  return who
    .sort((a, b) => b[1] - a[1])
    .map(([agent, n]) => (agent === "you" ? `${n.toLocaleString("en-US")} of yours` : `${n.toLocaleString("en-US")} from ${AGENT_LABELS[agent] ?? agent}`))
    .join(" · ");
}

function describeDay(c: { date: string; count: number }): string {
  return `${plural(c.count, "note")} on ${longDay(c.date)}`;
}

function showTip(target: Element, text: string): void {
  tip.textContent = text;
  tip.hidden = false;
  const r = target.getBoundingClientRect();
  const w = tip.offsetWidth;
  const x = Math.min(Math.max(8, r.left + r.width / 2 - w / 2), document.documentElement.clientWidth - w - 8);
  tip.style.left = `${x + scrollX}px`;
  tip.style.top = `${r.top + scrollY - tip.offsetHeight - 8}px`;
}

function hideTip(): void {
  tip.hidden = true;
}

const PITCH = 14;
const CELL = 11;

/**
 * The heatmap of one span, with a button for each span there is (the last 6 months, each year):
 * it opens on the span that holds notes and says how many notes lie outside the view.
 */
function heatmap(o: Overview, span = openingSpan(o.days, o.today)): HTMLElement {
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
  const rects: SVGElement[] = [];
  const svg = s(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, class: "heatmap", role: "group", "aria-label": `Notes per day over ${spanWords}: ${plural(lay.total, "note")} on ${plural(lay.activeDays, "day")}. Arrow keys move between days, Enter opens one.` },
    lay.months.map((m) => s("text", { x: left + m.col * PITCH, y: 11, class: "axis" }, m.label)),
    [1, 3, 5].map((row) => s("text", { x: 0, y: top + row * PITCH + 9, class: "axis" }, ["", "Mon", "", "Wed", "", "Fri", ""][row])),
  );
  lay.cells.forEach((c, i) => {
    const r = s("rect", {
      x: left + c.col * PITCH,
      y: top + c.row * PITCH,
      width: CELL,
      height: CELL,
      rx: 2,
      class: `cell l${c.level}`,
      tabindex: i === lay.cells.length - 1 ? 0 : -1,
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
    rects.push(r);
    svg.appendChild(r);
  });
  // One tab stop for the whole grid; arrows move a day (up/down) or a week (left/right).
  svg.addEventListener("keydown", (ev) => {
    const e = ev as KeyboardEvent;
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
  });
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

function weekChart(o: Overview): HTMLElement {
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

async function showOverview(): Promise<void> {
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
  void markMissingTurns(navigation);
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

/**
 * Every turn accounted for: a day of the heatmap holding a turn without a note gets a mark, and
 * the panel says, per project, how many turns have notes (what `memsearch doctor` says). Asked
 * after the overview is drawn: counting reads every transcript of the project.
 */
async function markMissingTurns(asked: number): Promise<void> {
  let t: TurnsView;
  try {
    t = await api<TurnsView>("/api/turns");
  } catch {
    return;
  }
  if (asked !== navigation) return;
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
function heatToRecent(): void {
  const scroller = main.querySelector(".heat-scroll");
  if (scroller) scroller.scrollLeft = scroller.scrollWidth;
}

// ---------------------------------------------------------------------------------------------
// A project's timeline

async function showProject(id: string): Promise<void> {
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

/** A note's first bullets, its outcome always among them (never behind "+N more"). */
function noteText(n: NoteItem): HTMLElement {
  const { shown, hidden } = shownBullets(n.bullets);
  return h(
    "span",
    { class: "note-text" },
    shown.length ? shown.map((b) => h("span", { class: "bullet" }, inline(b))) : h("span", { class: "bullet muted" }, n.heading),
    hidden ? h("span", { class: "muted" }, `+${hidden} more`) : null,
  );
}

/** One note in a list: its time and first bullets; opens the whole section. */
function noteRow(n: NoteItem, idx: number): HTMLElement {
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "note", "data-index": idx, "data-file": n.file, "data-line": n.line, onclick: () => openNote({ project: n.project, file: n.file, line: n.line }) },
      h("time", {}, n.time || "—"),
      // Which agent the turn was with, when it was not the default one (Claude Code).
      n.agent !== "claude" ? h("span", { class: "badge agent" }, n.agent) : null,
      noteText(n),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// One day, over the projects in view (a heatmap cell or a bar of the week chart)

function openDay(date: string): void {
  hideTip();
  location.hash = `#/day/${date}`;
}

function openOnKey(e: Event, date: string): void {
  const key = (e as KeyboardEvent).key;
  if (key !== "Enter" && key !== " ") return;
  e.preventDefault();
  openDay(date);
}

async function showDay(date: string): Promise<void> {
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

/** The browser's local day, `YYYY-MM-DD`, as note days are. */
function localToday(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

// ---------------------------------------------------------------------------------------------
// Search

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
        hit.agent !== "claude" ? h("span", { class: "badge agent" }, hit.agent) : null,
        h("span", { class: "from" }, hit.from.join(" + ")),
      ),
      hit.note?.heading && !/^\d{1,2}:\d{2}$/.test(hit.note.heading) ? h("span", { class: "hit-title" }, hit.note.heading) : null,
      snippet ? h("span", { class: "snippet" }, snippetLines(snippet)) : null,
      said ? h("span", { class: "said", "data-matched-message": said.role }, h("span", { class: "who" }, said.role === "assistant" ? "Claude said: " : "You said: "), inline(said.snippet.replace(/\s+/g, " ").trim())) : null,
    ),
  );
}

async function showSearch(q: string, mode: "notes" | "recall"): Promise<void> {
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

/** A snippet's lines as phrasing content (a button may hold no block elements). */
function snippetLines(text: string): Child[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => h("span", { class: "bullet" }, inline(l.replace(/^[-*+]\s+/, "• "))));
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

// ---------------------------------------------------------------------------------------------
// A note, and its original turn

type NoteRef = { project: string; chunk: string } | { project: string; file: string; line: number };

function openDialog(title: string, ...content: Child[]): void {
  dialogBody.replaceChildren();
  $("note-title").textContent = title;
  append(dialogBody, content);
  if (!dialog.open) dialog.showModal();
  $("note-close").focus();
}

/** What a search matched in a conversation: the matching message is marked when its turn opens. */
type Match = { snippet: string; query: string };

async function openNote(ref: NoteRef, match?: Match): Promise<void> {
  openDialog("Note", h("p", { class: "loading", role: "status" }, "Loading…"));
  let n: NoteView;
  try {
    n = await api<NoteView>("/api/note", ref as Record<string, string | number>);
  } catch (e) {
    openDialog("Note", errorBox(e));
    return;
  }
  const turnBox = h("div", { class: "turn-box" });
  const a = n.anchor;
  const button = n.transcriptAvailable
    ? h("button", { type: "button", class: "primary", id: "show-turn", onclick: () => void openTurn(ref, turnBox, match) }, "Show the original turn")
    : a && a.transcript !== "-"
      ? h("p", { class: "muted" }, "The conversation's transcript is no longer on disk.")
      : null;
  const day = /(\d{4}-\d{2}-\d{2})\.md$/.exec(n.source)?.[1];
  const time = /^\d{1,2}:\d{2}\b/.exec(n.heading)?.[0];
  // The section's own heading becomes the dialog's title rather than being shown twice.
  const body = n.content.replace(/^#{1,6}\s+.*(\n|$)/, "");
  openDialog(
    day ? `Note · ${when(time ? `${day} ${time}` : day)}` : n.heading || "Note",
    h("p", { class: "muted src-line" }, `${n.source}, lines ${n.startLine}–${n.endLine}`),
    day && !time && n.heading ? h("p", { class: "mdh" }, n.heading) : null,
    markdown(body),
    a ? h("p", { class: "muted anchor" }, a.session === "manual" ? `Your note (memsearch remember) · ${a.turn}` : `Session ${a.session} · turn ${a.turn}`) : null,
    button,
    turnBox,
    n.forget ? forgetBox(n.project, n.forget, !a ? "none" : a.session === "manual" ? "restore" : "import") : null,
  );
}

/**
 * Forget, from a note: a first button asks, a second one (in a box that says what will happen)
 * does it. The only change the page can make to memory. The note is named by the id of the text
 * shown: when the file changed since (another tab, the CLI, a git pull, an edit), the server
 * answers 409, nothing is forgotten, and the page says so and reads the views again.
 */
function forgetBox(project: string, note: NonNullable<NoteView["forget"]>, undo: "import" | "restore" | "none"): HTMLElement {
  const box = h("div", { class: "forget" });
  const ask = h("button", { type: "button", class: "secondary", id: "forget-ask" }, "Forget this note…");
  const askAgain = () => {
    const yes = h("button", { type: "button", class: "danger", id: "forget-yes" }, "Forget it for good");
    const no = h("button", { type: "button", class: "secondary", id: "forget-no" }, "Keep it");
    const confirm = h(
      "div",
      { class: "confirm", role: "alertdialog", "aria-labelledby": "forget-q" },
      h(
        "p",
        { id: "forget-q" },
        undo === "import"
          ? "Remove this note from the memory files, and never write this turn again (the hooks, memsearch import and a rebuild leave it out)? memsearch forget --undo can let import write it again."
          : undo === "restore"
            ? "Remove this note of yours from the memory files? Its text is kept in forgotten.json, so memsearch forget --undo can put it back."
            : "Remove this note from the memory file? It has no turn anchor, so only the section goes, and memsearch forget --undo cannot bring it back.",
      ),
      h("p", { class: "actions" }, yes, no),
    );
    no.addEventListener("click", () => {
      box.replaceChildren(ask);
      ask.focus();
    });
    yes.addEventListener("click", async () => {
      yes.disabled = true;
      no.disabled = true;
      try {
        const done = await post<ForgetDone>("/api/forget", { project, file: note.file, id: note.id, line: note.line, confirmed: true });
        box.replaceChildren(
          h(
            "p",
            { class: "ok-line", role: "status", id: "forget-done" },
            !done.removed
              ? "Nothing left to remove: it was forgotten already."
              : `Forgotten: ${plural(done.removed, "note")} removed${done.undo === "import" ? `; turn ${done.turn} will not be written again` : done.undo === "restore" ? `; memsearch forget --undo ${done.turn} puts it back` : ""}.`,
          ),
        );
        // What the views show changed: they read again when the dialog closes.
        dialog.addEventListener("close", () => void route(), { once: true });
      } catch (e) {
        if (e instanceof ApiError && e.status === 409) {
          box.replaceChildren(h("p", { class: "warn-line", role: "alert", id: "forget-conflict" }, "This note changed since it was opened (another tab, memsearch forget, a git pull or an edit): nothing was forgotten. The views were read again; open the note anew to see it as it is now."));
          void route();
          return;
        }
        box.replaceChildren(errorBox(e), ask);
      }
    });
    box.replaceChildren(confirm);
    yes.focus();
  };
  ask.addEventListener("click", askAgain);
  box.appendChild(ask);
  return box;
}

// ---------------------------------------------------------------------------------------------
// What each prompt received (the injection log), per session

async function showSessions(id: string): Promise<void> {
  setMain(loading("Reading the injection log…"));
  const page = await viewData<SessionsPage>("/api/sessions", { project: id });
  document.title = `What each prompt received · ${page.projectName} · Memory Hub`;
  setMain(
    h("p", { class: "crumbs" }, h("a", { href: `#/project/${encodeURIComponent(id)}` }, `← ${page.projectName}`)),
    h("h1", {}, "What each prompt received"),
    h("p", { class: "muted" }, `${plural(page.total, "session")} in the prompt hook's log${page.total > page.sessions.length ? `, the newest ${page.sessions.length} shown` : ""}. The same records as memsearch debug --injections.`),
    page.sessions.length ? h("div", { class: "timeline" }, page.sessions.map((s) => sessionBlock(s, id))) : h("p", { class: "empty" }, "No prompt recorded yet: the log fills as prompts are typed in Claude Code."),
  );
  focusHeading();
}

function sessionBlock(s: SessionReceived, project: string): HTMLElement {
  const injected = s.prompts.filter((p) => p.decision === "injected").length;
  const sameDay = when(s.first).slice(0, 16) === when(s.last).slice(0, 16);
  return h(
    "section",
    { class: "day", "data-session": s.session },
    h("h2", {}, `Session ${s.session.slice(0, 8)}`, h("span", { class: "count" }, `${plural(s.prompts.length, "prompt")} · ${injected} with memory · ${plural(s.injectedChars, "character")} injected`)),
    h("p", { class: "muted" }, timeEl(s.first), " – ", sameDay ? timeEl(s.last, clockOf(s.last)) : timeEl(s.last), ` · ${s.session}`),
    h("ol", { class: "prompts" }, s.prompts.map((p) => promptItem(p, project))),
  );
}

function promptItem(p: PromptReceived, project: string): HTMLElement {
  return h(
    "li",
    { class: "prompt", "data-decision": p.decision, "data-prompt": p.promptId ?? "" },
    h(
      "p",
      { class: "prompt-head" },
      timeEl(p.at, clockOf(p.at)),
      h("span", { class: "prompt-words" }, p.firstWords ? `“${p.firstWords}”` : "(prompt text not in the transcript)"),
      h("span", { class: "badge" }, p.source ?? "typed"),
      h("span", { class: "muted" }, `${plural(p.chars, "character")}`),
    ),
    h("p", { class: `verdict ${p.decision}`, "data-verdict": p.verdict }, p.verdict, p.bestScore !== null && p.decision === "nothing" ? h("span", { class: "muted" }, ` (best score ${p.bestScore.toFixed(2)} of ${plural(p.considered, "candidate")})`) : null),
    p.injected.length
      ? h(
          "ul",
          { class: "injected-list" },
          p.injected.map((m) =>
            h(
              "li",
              { "data-injected": m.id },
              `${m.kind === "note" ? "note" : "past turn"} · score ${m.score.toFixed(2)}`,
              m.date ? [" · ", timeEl(m.date)] : null,
              " · ",
              // A note opens here, as `memsearch expand` would show it.
              m.kind === "note"
                ? h("button", { type: "button", class: "link code", "data-expand": m.id, title: "Open the note", onclick: () => void openNote({ project, chunk: m.id }) }, `memsearch expand ${m.id}`)
                : h("code", {}, m.id),
              m.fromRepository ? h("span", { class: "badge warn" }, "from the repository") : null,
              m.instructionLike ? h("span", { class: "badge warn" }, "instruction-like") : null,
            ),
          ),
        )
      : null,
  );
}

// ---------------------------------------------------------------------------------------------
// What the memory cost (the model-call ledger)

function costTable(caption: string, rows: CostRowView[], first: string): HTMLElement {
  // claude -p says what each call cost; its column is there once any call of the table said so.
  const reported = rows.some((r) => r.reportedCalls > 0);
  return h(
    "div",
    { class: "costs-scroll" },
    h(
      "table",
      { class: "costs" },
      h("caption", { class: "sr" }, caption),
      h("thead", {}, h("tr", {}, [first, "Calls", "Tokens in", "Tokens out", "Estimate", ...(reported ? ["Reported"] : [])].map((t) => h("th", { scope: "col", ...(t === "Reported" ? { title: "What claude -p itself reported the calls cost" } : {}) }, t)))),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h(
            "tr",
            { "data-period": r.period },
            h("th", { scope: "row" }, timeEl(r.period)),
            h("td", {}, r.calls.toLocaleString("en-US"), r.failed ? ` (${r.failed} failed)` : ""),
            h("td", {}, r.inTokens.toLocaleString("en-US")),
            h("td", {}, r.outTokens.toLocaleString("en-US")),
            h("td", {}, r.shown),
            reported ? h("td", { "data-reported": r.reportedUsd }, r.reportedShown ? `${r.reportedShown}${r.reportedCalls < r.calls ? ` (${r.reportedCalls}/${r.calls})` : ""}` : "—") : null,
          ),
        ),
      ),
    ),
  );
}

function costPanel(c: CostsPage): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "cost-title", id: "costs" },
    h("h2", { id: "cost-title" }, "What the memory cost"),
    c.total.calls
      ? [
          h(
            "p",
            { class: "muted", "data-cost-total": c.total.calls },
            `${plural(c.total.calls, "model call")}, ${c.total.shown}: claude list prices as of `,
            timeEl(c.pricesAsOf),
            "; Ollama and the extract cost nothing.",
            c.total.reportedShown ? ` claude -p itself reported ${c.total.reportedShown}${c.total.reportedCalls < c.total.calls ? ` for ${c.total.reportedCalls} of the ${plural(c.total.calls, "call")}` : ""} (the Reported column).` : "",
          ),
          h("h3", {}, "Per month"),
          costTable("Model calls per month", c.months, "Month"),
          h("h3", {}, "Per day"),
          costTable("Model calls per day", c.days.slice(0, 7), "Day"),
        ]
      : h("p", { class: "muted" }, "No model call recorded: notes written by the extract, and keyword search, cost nothing."),
  );
}

function turnView(t: TurnView, step: (turn: string) => void): HTMLElement {
  const go = (to: string | null, label: string, rel: string) =>
    to ? h("button", { type: "button", class: "link", "data-turn-step": rel, onclick: () => step(to) }, label) : h("span", { class: "muted", "aria-hidden": "true" }, label);
  return h(
    "section",
    { class: "turn", "aria-label": "The original turn" },
    h("h3", {}, `Turn ${t.position + 1} of ${t.turnCount}`),
    t.turnCount > 1 ? h("nav", { class: "turn-steps", "aria-label": "Other turns of this session" }, go(t.previous, "← Previous turn", "prev"), go(t.next, "Next turn →", "next")) : null,
    h("p", { class: "muted" }, t.timestamp ? timeEl(t.timestamp) : "time unknown", ` · session ${t.session}`),
    h("div", { class: "msg user" }, h("p", { class: "who" }, "User"), h("p", { class: "text" }, t.user)),
    t.items.map((it) => {
      if (it.kind === "assistant") return h("div", { class: "msg assistant" }, h("p", { class: "who" }, "Claude"), h("p", { class: "text" }, it.text));
      if (it.kind === "user") return h("div", { class: "msg user" }, h("p", { class: "who" }, "User, meanwhile"), h("p", { class: "text" }, it.text));
      if (it.kind === "compaction") return h("p", { class: "muted" }, "— context compacted —");
      return h(
        "details",
        { class: `tool${it.tool.isError ? " err" : ""}` },
        h("summary", {}, h("span", { class: "tool-name" }, it.tool.name), " ", it.tool.input),
        it.tool.output === null ? h("p", { class: "muted" }, "(no result in the transcript)") : h("pre", {}, it.tool.output),
      );
    }),
    h("p", { class: "muted small" }, t.path),
  );
}

async function openTurn(ref: NoteRef | { path: string; turn: string }, into: HTMLElement | null, match?: Match): Promise<void> {
  const target = into ?? h("div", { class: "turn-box" });
  if (!into) openDialog("Conversation", target);
  target.replaceChildren(h("p", { class: "loading", role: "status" }, "Reading the transcript…"));
  try {
    const t = await api<TurnView>("/api/transcript", ref as Record<string, string | number>);
    // The turns beside it are opened by the transcript's path, which the server now knows.
    target.replaceChildren(turnView(t, (turn) => void openTurn({ path: t.path, turn }, target)));
    const marked = match ? markMatch(target, match) : null;
    const head = target.querySelector("h3") as HTMLElement | null;
    head?.setAttribute("tabindex", "-1");
    head?.focus();
    marked?.scrollIntoView({ block: "center" });
  } catch (e) {
    target.replaceChildren(errorBox(e));
  }
}

/** Text for comparing: lower case, one space, no ellipses (a snippet is cut out of its message with them). */
function flat(text: string): string {
  return text.toLowerCase().replace(/…/g, " ").replace(/\s+/g, " ").trim();
}

/**
 * The message (or tool call) of a turn that a search matched, marked and shown (a tool call's
 * details opened): the one holding the longest piece of the hit's snippet, else the first holding
 * a word of the query. Returns it, or null when none does.
 */
function markMatch(box: HTMLElement, m: Match): HTMLElement | null {
  const items = [...box.querySelectorAll<HTMLElement>(".msg, details.tool")];
  const text = (el: HTMLElement) => flat(el.textContent ?? "");
  const pieces = m.snippet.split("…").map(flat).filter((p) => p.length >= 8).sort((a, b) => b.length - a.length);
  const words = flat(m.query).split(" ").filter((w) => w.length >= 3);
  const found = pieces.map((p) => items.find((el) => text(el).includes(p))).find(Boolean) ?? words.map((w) => items.find((el) => text(el).includes(w))).find(Boolean);
  if (!found) return null;
  found.classList.add("match");
  found.setAttribute("data-match", "");
  if (found instanceof HTMLDetailsElement) found.open = true;
  return found;
}

// ---------------------------------------------------------------------------------------------
// Routing, search box, keyboard, theme

async function route(): Promise<void> {
  navigation++;
  hideTip();
  const hash = location.hash.replace(/^#/, "") || "/";
  try {
    if (hash.startsWith("/project/")) await showProject(decodeURIComponent(hash.slice("/project/".length)));
    else if (hash.startsWith("/day/")) await showDay(decodeURIComponent(hash.slice("/day/".length)));
    else if (hash.startsWith("/sessions/")) await showSessions(decodeURIComponent(hash.slice("/sessions/".length)));
    else if (hash.startsWith("/search")) {
      const q = new URLSearchParams(hash.slice(hash.indexOf("?") + 1));
      await showSearch(q.get("q") ?? "", q.get("mode") === "recall" ? "recall" : "notes");
    } else await showOverview();
  } catch (e) {
    if (!(e instanceof Superseded)) setMain(errorBox(e));
  }
}

searchForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const q = searchInput.value.trim();
  if (!q) return;
  const target = `#/search?${new URLSearchParams({ q, mode: searchMode.value })}`;
  if (location.hash === target) void route();
  else location.hash = target;
});

document.addEventListener("keydown", (e) => {
  const t = e.target as HTMLElement;
  const typing = t.closest("input, textarea, select, [contenteditable]") !== null;
  if (e.key === "/" && !typing && !dialog.open) {
    e.preventDefault();
    searchInput.focus();
    searchInput.select();
  } else if (e.key === "Escape" && t === searchInput) searchInput.blur();
});

$("note-close").addEventListener("click", () => dialog.close());
dialog.addEventListener("click", (e) => {
  // A click on the backdrop (the dialog element itself, outside its box) closes it.
  if (e.target === dialog) dialog.close();
});

/** Dark when chosen so, or when nothing was chosen and the system is dark. */
function isDark(theme: string | undefined | null): boolean {
  return theme === "dark" || (theme !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
}

function applyTheme(theme: string | null): void {
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  $("theme").setAttribute("aria-pressed", String(isDark(theme)));
}
applyTheme(localStorage.getItem(THEME_KEY));
$("theme").addEventListener("click", () => {
  const next = isDark(document.documentElement.dataset.theme) ? "light" : "dark";
  localStorage.setItem(THEME_KEY, next);
  applyTheme(next);
});

window.addEventListener("hashchange", () => void route());
window.addEventListener("resize", () => {
  hideTip();
  heatToRecent();
});
void route();
