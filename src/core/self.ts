/**
 * How the running memsearch was installed, read from where its executable lies, so `uninstall`
 * removes it the way it came: through npm for npm's packages (the main package `memsearch` and
 * its platform package `memsearch-<os>-<arch>`, scripts/release.ts), as a file otherwise
 * (install.sh, a download, a build); never a source checkout run through Bun.
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export const NPM_PACKAGE = "memsearch";

export type Installation =
  /**
   * `npm install -g memsearch` (the platform package under the main one), or both tarballs
   * installed side by side (`npm install -g memsearch-<platform>-<v>.tgz memsearch-<v>.tgz`): npm
   * removes `packages` (`npm uninstall -g --prefix <prefix> …`).
   */
  | { kind: "npm-global"; binary: string; prefix: string; packages: string[] }
  /** A dependency of a project's package.json: that project's to remove. */
  | { kind: "npm-local"; binary: string; project: string }
  /** `bun src/cli.ts`: nothing installed. */
  | { kind: "source"; command: string[] }
  /** One file: install.sh's, a download, a build. */
  | { kind: "file"; binary: string };

const PLATFORM_BIN = /^(.*)[\\/]node_modules[\\/](memsearch-(?:linux|darwin|windows)-(?:x64|arm64))[\\/]bin[\\/]memsearch(?:\.exe)?$/;

export function installation(execPath = process.execPath, argv = process.argv): Installation {
  if (/(^|[\\/])bun(\.exe)?$/.test(execPath) && argv[1]) return { kind: "source", command: [execPath, argv[1]] };
  let real = execPath;
  try {
    real = realpathSync(execPath);
  } catch {}
  const m = PLATFORM_BIN.exec(real);
  if (!m) return { kind: "file", binary: real };
  // Nested under the main package (`<x>/node_modules/memsearch/node_modules/memsearch-linux-x64`,
  // as a global install lays it out) or hoisted beside it (`<x>/node_modules/memsearch-linux-x64`).
  const base = m[1]!;
  const owner = basename(base) === NPM_PACKAGE && basename(dirname(base)) === "node_modules" ? dirname(dirname(base)) : base;
  // A global prefix: `<prefix>/lib/node_modules` with `<prefix>/bin/memsearch` (POSIX), or `<prefix>/node_modules` with `<prefix>/memsearch.cmd` (Windows).
  const packages = [NPM_PACKAGE, m[2]!];
  if (basename(owner) === "lib" && existsSync(join(dirname(owner), "bin", NPM_PACKAGE))) return { kind: "npm-global", binary: real, prefix: dirname(owner), packages };
  if (existsSync(join(owner, `${NPM_PACKAGE}.cmd`))) return { kind: "npm-global", binary: real, prefix: owner, packages };
  return { kind: "npm-local", binary: real, project: owner };
}
