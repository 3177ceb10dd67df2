/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** What each prompt received (the injection log), per session. */
import type { PromptReceived, SessionReceived, SessionsPage } from "../../types.ts";
import { clockOf, plural, when } from "../charts.js";
import { viewData } from "../api.js";
import { focusHeading, h, loading, setMain, timeEl } from "../dom.js";
import { openNote } from "./note.js";

export async function showSessions(id: string): Promise<void> {
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
