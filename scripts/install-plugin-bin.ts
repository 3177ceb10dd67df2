/**
 * Put a compiled memsearch binary into the plugin's bin/ folder, where the hooks look for it first.
 *
 *   bun scripts/install-plugin-bin.ts [BINARY] [PLUGIN_BIN_DIR]
 *
 * BINARY defaults to dist/memsearch (dist/memsearch.exe on Windows builds), PLUGIN_BIN_DIR to
 * plugin/bin. The copy goes to a temporary name in the target folder, is made executable and is then
 * renamed over the old binary, so a hook starting at that moment never sees a half-written file.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";

const ROOT = join(import.meta.dir, "..");

export class InstallError extends Error {}

/** Returns the path of the installed binary; throws InstallError with a one-line message. */
export function installPluginBin(source?: string, binDir = join(ROOT, "plugin", "bin")): string {
  let src = resolve(source ?? join(ROOT, "dist", "memsearch"));
  if (!existsSync(src) && !src.endsWith(".exe") && existsSync(`${src}.exe`)) src = `${src}.exe`;
  if (!existsSync(src) || !statSync(src).isFile()) {
    throw new InstallError(`no memsearch binary at ${src}: run 'bun run build' first`);
  }
  const name = basename(src).endsWith(".exe") ? "memsearch.exe" : "memsearch";
  mkdirSync(binDir, { recursive: true });
  const dest = join(binDir, name);
  const tmp = join(binDir, `.${name}.${process.pid}.tmp`);
  try {
    copyFileSync(src, tmp);
    chmodSync(tmp, 0o755);
    renameSync(tmp, dest);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new InstallError(`cannot install ${src} into ${binDir}: ${(err as Error).message}`);
  }
  return dest;
}

if (import.meta.main) {
  try {
    const dest = installPluginBin(process.argv[2], process.argv[3] ? resolve(process.argv[3]) : undefined);
    console.log(`installed ${dest}`);
  } catch (err) {
    console.error(`install-plugin-bin: ${err instanceof InstallError ? err.message : String(err)}`);
    process.exit(1);
  }
}
