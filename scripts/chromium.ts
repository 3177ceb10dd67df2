/**
 * Debian's `chromium` package, which test/e2e/hub.test.ts drives through playwright-core. Installed
 * here when missing (as root, or through a password-less sudo); when that is impossible the hub's
 * page tests fail with a message saying what to install: they are never skipped.
 */
import { existsSync } from "node:fs";

export function ensureChromium(): void {
  const path = process.env.MEMSEARCH_CHROMIUM ?? "/usr/bin/chromium";
  if (existsSync(path)) return;
  if (process.platform !== "linux" || !existsSync("/usr/bin/apt-get")) {
    console.error(`scripts/chromium.ts: no Chromium at ${path} and no apt-get to install it; the hub's page tests will fail (set MEMSEARCH_CHROMIUM to a Chromium binary)`);
    return;
  }
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  console.error("scripts/chromium.ts: installing Debian's chromium package for the hub's page tests");
  for (const cmd of [
    [...sudo, "apt-get", "update"],
    [...sudo, "apt-get", "install", "-y", "--no-install-recommends", "chromium"],
  ]) {
    let code: number | string;
    try {
      code = Bun.spawnSync(cmd, { env, stdout: "inherit", stderr: "inherit" }).exitCode ?? "signal";
    } catch (e) {
      code = (e as NodeJS.ErrnoException).code ?? String(e); // sudo itself missing
    }
    if (code !== 0) {
      console.error(`scripts/chromium.ts: '${cmd.join(" ")}' failed (${code}); the hub's page tests will fail until chromium is installed`);
      return;
    }
  }
}

if (import.meta.main) ensureChromium();
