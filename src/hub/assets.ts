/**
 * The page's files, compiled into the binary: imported as text (so `bun build --compile` embeds
 * them), the TypeScript turned into JavaScript on first request by Bun's transpiler (part of the
 * runtime, so it works in the compiled binary too). Nothing is fetched from anywhere else.
 */
// TypeScript types these imports as the modules themselves; the text loader gives their source.
// @ts-expect-error: the source text is the default export
import appTs from "./client/app.ts" with { type: "text" };
// @ts-expect-error: the source text is the default export
import chartsTs from "./client/charts.ts" with { type: "text" };
import indexHtmlBundle from "./client/index.html" with { type: "text" };
import iconSvg from "./client/icon.svg" with { type: "text" };
import styleCss from "./client/style.css" with { type: "text" };

export interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

// Bun types an .html import as an HTMLBundle whatever the loader; with `type: "text"` it is the text.
const indexHtml = indexHtmlBundle as unknown as string;

const SOURCES: Record<string, { text: string; type: string; ts?: boolean }> = {
  "/": { text: indexHtml, type: "text/html; charset=utf-8" },
  "/assets/style.css": { text: styleCss, type: "text/css; charset=utf-8" },
  "/assets/app.js": { text: appTs as string, type: "text/javascript; charset=utf-8", ts: true },
  "/assets/charts.js": { text: chartsTs as string, type: "text/javascript; charset=utf-8", ts: true },
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
