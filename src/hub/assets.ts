/**
 * The page's files, compiled into the binary: imported as text (so `bun build --compile` embeds
 * them), each TypeScript module turned into JavaScript on first request by Bun's transpiler (part
 * of the runtime, so it works in the compiled binary too) and served as a file of its own, the
 * browser following the imports between them; not bundled. Nothing is fetched from anywhere else.
 */
// TypeScript types these imports as the modules themselves; the text loader gives their source.
// @ts-expect-error: the source text is the default export
import appTs from "./client/app.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import apiTs from "./client/api.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import domTs from "./client/dom.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import markdownTs from "./client/markdown.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import navTs from "./client/nav.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import routerTs from "./client/router.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import heatmapTs from "./client/heatmap.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import chartsTs from "./client/charts.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import viewsOverviewTs from "./client/views/overview.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import viewsCostsTs from "./client/views/costs.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import viewsNoteTs from "./client/views/note.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import viewsProjectTs from "./client/views/project.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import viewsDayTs from "./client/views/day.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import viewsSearchTs from "./client/views/search.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import viewsSessionsTs from "./client/views/sessions.ts" with { type: "text" };
import indexHtmlBundle from "./client/index.html" with { type: "text" };
import iconSvg from "./client/icon.svg" with { type: "text" };
import styleCss from "./client/style.css" with { type: "text" };
import { timeAgo } from "../core/ago.ts";
import { DEFAULT_AGENT } from "../core/anchor.ts";
import { AGENTS } from "../agents/registry.ts";

export interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

// Bun types an .html import as an HTMLBundle whatever the loader; with `type: "text"` it is the text.
const indexHtml = indexHtmlBundle as unknown as string;

/** The page's modules, each served as its own file (`/assets/<name>.js`) and loaded by the browser through the imports between them. */
const MODULES: Record<string, string> = {
  "app": appTs as string,
  "api": apiTs as string,
  "dom": domTs as string,
  "markdown": markdownTs as string,
  "nav": navTs as string,
  "router": routerTs as string,
  "heatmap": heatmapTs as string,
  "charts": chartsTs as string,
  "views/overview": viewsOverviewTs as string,
  "views/costs": viewsCostsTs as string,
  "views/note": viewsNoteTs as string,
  "views/project": viewsProjectTs as string,
  "views/day": viewsDayTs as string,
  "views/search": viewsSearchTs as string,
  "views/sessions": viewsSessionsTs as string,
};

/** What the page names agents by, from the registry: the page's own modules hold no agent's name. */
const agentsJs = `export const AGENT_LABELS = ${JSON.stringify(Object.fromEntries(Object.values(AGENTS).map((a) => [a.name, a.label])))};\nexport const DEFAULT_AGENT = ${JSON.stringify(DEFAULT_AGENT)};\n`;

const SOURCES: Record<string, { text: string; type: string; ts?: boolean }> = {
  "/": { text: indexHtml, type: "text/html; charset=utf-8" },
  "/assets/style.css": { text: styleCss, type: "text/css; charset=utf-8" },
  ...Object.fromEntries(Object.entries(MODULES).map(([name, text]) => [`/assets/${name}.js`, { text, type: "text/javascript; charset=utf-8", ts: true }])),
  "/assets/agents.js": { text: agentsJs, type: "text/javascript; charset=utf-8" },
  // The CLI's own function, its source as this process holds it (it refers to nothing outside
  // itself): client/ago.ts, which re-exports it, is what the type checker and the tests load.
  "/assets/ago.js": { text: `export const timeAgo = ${timeAgo.toString()};\n`, type: "text/javascript; charset=utf-8" },
  "/assets/icon.svg": { text: iconSvg, type: "image/svg+xml" },
};

const built = new Map<string, Asset>();

export function asset(path: string): Asset | undefined {
  const hit = built.get(path);
  if (hit) return hit;
  const src = SOURCES[path];
  if (!src) return undefined;
  const text = src.ts ? new Bun.Transpiler({ loader: "ts", minifyWhitespace: true }).transformSync(src.text) : src.text;
  const body = new TextEncoder().encode(text);
  const a = { body, type: src.type, etag: `"${Bun.hash(body).toString(36)}"` };
  built.set(path, a);
  return a;
}
