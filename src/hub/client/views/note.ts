/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** A note (in a list, and whole in the dialog), its forget, and its original turn. */
import type { ForgetDone, NoteItem, NoteView, TurnView } from "../../types.ts";
import { plural, shownBullets, when } from "../charts.js";
import { ApiError, api, post } from "../api.js";
import { dialog, errorBox, h, openDialog, timeEl } from "../dom.js";
import { inline, markdown } from "../markdown.js";
import { reload } from "../nav.js";
import { DEFAULT_AGENT } from "../agents.js";

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
export function noteRow(n: NoteItem, idx: number): HTMLElement {
  return h(
    "li",
    {},
    h(
      "button",
      { type: "button", class: "note", "data-index": idx, "data-file": n.file, "data-line": n.line, onclick: () => openNote({ project: n.project, file: n.file, line: n.line }) },
      h("time", {}, n.time || "—"),
      // Which agent the turn was with, when it was not the default one (Claude Code).
      n.agent !== DEFAULT_AGENT ? h("span", { class: "badge agent" }, n.agent) : null,
      noteText(n),
    ),
  );
}

export type NoteRef = { project: string; chunk: string } | { project: string; file: string; line: number };

/** What a search matched in a conversation: the matching message is marked when its turn opens. */
export type Match = { snippet: string; query: string };

export async function openNote(ref: NoteRef, match?: Match): Promise<void> {
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
        dialog.addEventListener("close", reload, { once: true });
      } catch (e) {
        if (e instanceof ApiError && e.status === 409) {
          box.replaceChildren(h("p", { class: "warn-line", role: "alert", id: "forget-conflict" }, "This note changed since it was opened (another tab, memsearch forget, a git pull or an edit): nothing was forgotten. The views were read again; open the note anew to see it as it is now."));
          reload();
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

export async function openTurn(ref: NoteRef | { path: string; turn: string }, into: HTMLElement | null, match?: Match): Promise<void> {
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
