/**
 * Headless Chromium for the hub's page tests: Debian's `chromium` package, driven by playwright-core
 * (which never downloads a browser of its own). `npm test` (scripts/test.ts) installs the package
 * when it is missing; where it cannot, the tests that need it fail saying so, they are not skipped.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

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
