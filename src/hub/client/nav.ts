/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** Moving between views: by the address's hash, which the router (router.ts) follows. */
import { hideTip } from "./dom.js";

export function openDay(date: string): void {
  hideTip();
  location.hash = `#/day/${date}`;
}

export function openOnKey(e: Event, date: string): void {
  const key = (e as KeyboardEvent).key;
  if (key !== "Enter" && key !== " ") return;
  e.preventDefault();
  openDay(date);
}

/** The event the router reads the current view again on (after a change the views show, a forget). */
export const RELOAD = "memsearch:reload";

/** Read the current view again. */
export function reload(): void {
  window.dispatchEvent(new Event(RELOAD));
}
