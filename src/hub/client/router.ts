/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** Which view the address's hash names, drawn in place of the one before. */
import { navigated, Superseded } from "./api.js";
import { errorBox, hideTip, setMain } from "./dom.js";
import { RELOAD } from "./nav.js";
import { showDay } from "./views/day.js";
import { showOverview } from "./views/overview.js";
import { showProject } from "./views/project.js";
import { showSearch } from "./views/search.js";
import { showSessions } from "./views/sessions.js";

export async function route(): Promise<void> {
  navigated();
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

window.addEventListener("hashchange", () => void route());
window.addEventListener(RELOAD, () => void route());
