/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/** A note's markdown as elements, the little of it notes use (never as HTML). */
import { type Child, h } from "./dom.js";

/** Inline code and bold in a line of a note, as text nodes and elements (never HTML). */
export function inline(text: string): Child[] {
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
export function markdown(text: string): HTMLElement {
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

/** A snippet's lines as phrasing content (a button may hold no block elements). */
export function snippetLines(text: string): Child[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => h("span", { class: "bullet" }, inline(l.replace(/^[-*+]\s+/, "• "))));
}
