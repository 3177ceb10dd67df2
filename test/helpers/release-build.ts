/**
 * Host releases (`bun scripts/release.ts --host`), built once per test process and shared by the
 * suites that install them (install.sh, the npm packages, the release itself), in a temp folder
 * removed when the process exits. `hostRelease(version)` with another version builds a copy of the
 * source tree whose package.json (and plugin.json) say that version: a newer release to upgrade to.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };

export const ROOT = resolve(import.meta.dir, "..", "..");
export const HOST = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
export const VERSION = pkg.version;

export interface Built {
  dir: string;
  version: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

const base = mkdtempSync(join(tmpdir(), "memsearch-releases-"));
process.on("exit", () => rmSync(base, { recursive: true, force: true }));
const built = new Map<string, Promise<Built>>();

/** The tree to build `version` from: the repository itself, or a copy that says `version`. */
function sourceFor(version: string): string {
  if (version === VERSION) return ROOT;
  const tree = join(base, `src-${version}`);
  mkdirSync(tree, { recursive: true });
  for (const f of ["src", "plugin", "scripts", ".claude-plugin"]) cpSync(join(ROOT, f), join(tree, f), { recursive: true, filter: (p) => !p.includes(`${join(ROOT, "plugin", "bin")}/.memsearch`) });
  for (const f of ["tsconfig.json", "bunfig.toml", "README.md"]) if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(tree, f));
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"));
  const bump = (path: string) => writeFileSync(path, readFileSync(path, "utf8").replace(`"version": "${VERSION}"`, `"version": "${version}"`));
  cpSync(join(ROOT, "package.json"), join(tree, "package.json"));
  bump(join(tree, "package.json"));
  bump(join(tree, "plugin", ".claude-plugin", "plugin.json"));
  return tree;
}

export function hostRelease(version = VERSION): Promise<Built> {
  let p = built.get(version);
  if (!p) {
    p = (async () => {
      const out = join(base, `release-${version}`);
      const tree = sourceFor(version);
      const proc = Bun.spawn([process.execPath, join(tree, "scripts", "release.ts"), "--host", "--out", out], { cwd: tree, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { dir: out, version, code, stdout, stderr };
    })();
    built.set(version, p);
  }
  return p;
}

/** A built release, or a thrown error with the script's own words. */
export async function requireRelease(version = VERSION): Promise<Built> {
  const b = await hostRelease(version);
  if (b.code !== 0) throw new Error(`release --host ${version} failed: ${b.stderr}`);
  return b;
}
