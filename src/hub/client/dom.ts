/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/**
 * The page's DOM, built without a framework: every text from the API goes in as a text node (never
 * as HTML); the elements of index.html the views fill; the tooltip and the dialog.
 */
import { when } from "./charts.js";
import { ApiError } from "./api.js";

export type Child = Node | string | number | null | undefined | false | Child[];

export type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

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

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export const main = $<HTMLElement>("main");

export const dialog = $<HTMLDialogElement>("note");

const dialogBody = $<HTMLElement>("note-body");

const tip = $<HTMLElement>("tip");

export const searchForm = $<HTMLFormElement>("search");

export const searchInput = $<HTMLInputElement>("q");

export const searchMode = $<HTMLSelectElement>("mode");

export function setMain(...children: Child[]): void {
  main.replaceChildren();
  append(main, children);
  main.removeAttribute("aria-busy");
}

export function loading(text: string): HTMLElement {
  main.setAttribute("aria-busy", "true");
  return h("p", { class: "loading", role: "status" }, text);
}

export function errorBox(e: unknown): HTMLElement {
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
export function focusHeading(): void {
  const h1 = main.querySelector("h1");
  if (h1) {
    h1.setAttribute("tabindex", "-1");
    h1.focus({ preventScroll: true });
  }
}

/** A date as the page writes every date (charts.ts `when`), in a <time> element that keeps the value. */
export function timeEl(value: string, text = when(value)): HTMLElement {
  return h("time", { datetime: value.replace(" ", "T") }, text);
}

/** A line the server worded (the turn accounting's), its dates written as the page writes them. */
export function withDates(text: string): Child[] {
  const out: Child[] = [];
  let last = 0;
  for (const m of text.matchAll(/\b\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?\b/g)) {
    out.push(text.slice(last, m.index), timeEl(m[0]));
    last = m.index! + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

export function showTip(target: Element, text: string): void {
  tip.textContent = text;
  tip.hidden = false;
  const r = target.getBoundingClientRect();
  const w = tip.offsetWidth;
  const x = Math.min(Math.max(8, r.left + r.width / 2 - w / 2), document.documentElement.clientWidth - w - 8);
  tip.style.left = `${x + scrollX}px`;
  tip.style.top = `${r.top + scrollY - tip.offsetHeight - 8}px`;
}

export function hideTip(): void {
  tip.hidden = true;
}

export function openDialog(title: string, ...content: Child[]): void {
  dialogBody.replaceChildren();
  $("note-title").textContent = title;
  append(dialogBody, content);
  if (!dialog.open) dialog.showModal();
  $("note-close").focus();
}

export function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}
