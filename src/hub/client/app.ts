/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/**
 * The Memory Hub page: its entry. Plain DOM, no framework (dom.ts), charts as SVG (heatmap.ts),
 * every request to this server's /api/ with its token (api.ts); the views (views/) are drawn by
 * the router (router.ts) as the address's hash says. Here: the search box, the keys, the theme.
 */
import { $, dialog, hideTip, searchForm, searchInput, searchMode } from "./dom.js";
import { heatToRecent } from "./heatmap.js";
import { route } from "./router.js";

const THEME_KEY = "memsearch-hub-theme";

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

window.addEventListener("resize", () => {
  hideTip();
  heatToRecent();
});
void route();
