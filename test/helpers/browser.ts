/**
 * Headless Chromium for the hub's page tests: Debian's `chromium` package, driven by playwright-core
 * (which never downloads a browser of its own). `npm test` (scripts/test.ts) installs the package
 * when it is missing; where it cannot, the tests that need it fail saying so, they are not skipped.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.MEMSEARCH_CHROMIUM ?? "/usr/bin/chromium";

export const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export async function launchChromium(): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: the Memory Hub's page tests need it. ` +
        "`npm test` installs Debian's `chromium` package when it can (apt-get, as root or with sudo -n); " +
        "install it with `sudo apt-get install chromium`, or point MEMSEARCH_CHROMIUM at a Chromium binary.",
    );
  }
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "ms-chromium-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
    locale: "en-US",
  });
}

/** WCAG contrast of each selector's text colour against its own or its nearest ancestor's background (0: no such element). */
export function contrasts(page: Page, selectors: string[]): Promise<Record<string, number>> {
  return page.evaluate((list) => {
    const rgb = (c: string) => c.match(/\d+(\.\d+)?/g)!.slice(0, 3).map(Number);
    const lum = (c: string) => {
      const [r, g, b] = rgb(c).map((v) => {
        const x = v / 255;
        return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const bgOf = (el: Element | null): string => {
      for (let e = el; e; e = e.parentElement) {
        const bg = getComputedStyle(e).backgroundColor;
        if (bg !== "rgba(0, 0, 0, 0)" && bg !== "transparent") return bg;
      }
      return getComputedStyle(document.body).backgroundColor;
    };
    const out: Record<string, number> = {};
    for (const sel of list) {
      const el = document.querySelector(sel);
      if (!el) {
        out[sel] = 0;
        continue;
      }
      const [a, b] = [lum(getComputedStyle(el).color), lum(bgOf(el))];
      out[sel] = Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 10) / 10;
    }
    return out;
  }, selectors);
}
