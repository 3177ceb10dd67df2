/**
 * The Debian packages the test suite drives: `chromium` (test/e2e/hub*.test.ts, through
 * playwright-core), and the shells `zsh` and `fish` (test/e2e/cli-conventions.test.ts runs the
 * completion scripts `memsearch completion` writes for them; bash is always there). Installed here
 * when missing (as root, or through a password-less sudo); when that is impossible the tests that
 * need them fail with a message saying what to install: they are never skipped.
 */
import { existsSync } from "node:fs";
import { errCode } from "../src/core/errors.ts";

interface Needed {
  pkg: string;
  path: string;
  for: string;
}

function needed(): Needed[] {
  return [
    { pkg: "chromium", path: process.env.MEMSEARCH_CHROMIUM ?? "/usr/bin/chromium", for: "the hub's page tests" },
    { pkg: "zsh", path: Bun.which("zsh") ?? "/usr/bin/zsh", for: "the zsh completion test" },
    { pkg: "fish", path: Bun.which("fish") ?? "/usr/bin/fish", for: "the fish completion test" },
  ];
}

export function ensureTestPackages(): void {
  const missing = needed().filter((n) => !existsSync(n.path));
  if (!missing.length) return;
  const what = missing.map((m) => `${m.pkg} (${m.for})`).join(", ");
  if (process.platform !== "linux" || !existsSync("/usr/bin/apt-get")) {
    console.error(`scripts/chromium.ts: missing ${what} and no apt-get to install them; those tests will fail (set MEMSEARCH_CHROMIUM to a Chromium binary; install zsh and fish)`);
    return;
  }
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  console.error(`scripts/chromium.ts: installing Debian's ${missing.map((m) => m.pkg).join(", ")} for ${missing.map((m) => m.for).join(", ")}`);
  for (const cmd of [
    [...sudo, "apt-get", "update"],
    [...sudo, "apt-get", "install", "-y", "--no-install-recommends", ...missing.map((m) => m.pkg)],
  ]) {
    let code: number | string;
    try {
      code = Bun.spawnSync(cmd, { env, stdout: "inherit", stderr: "inherit" }).exitCode ?? "signal";
    } catch (e) {
      code = errCode(e) ?? String(e); // sudo itself missing
    }
    if (code !== 0) {
      console.error(`scripts/chromium.ts: '${cmd.join(" ")}' failed (${code}); ${what}: those tests will fail until installed`);
      return;
    }
  }
}

/** The name scripts/test.ts calls it by: Chromium was the first package the suite needed. */
export const ensureChromium = ensureTestPackages;

if (import.meta.main) ensureTestPackages();
