/**
 * Put a compiled memsearch binary into a plugin's bin/ folder, where the hooks run it.
 *
 *   bun scripts/install-plugin-bin.ts [BINARY] [PLUGIN_BIN_DIR]
 *
 * BINARY defaults to dist/memsearch (dist/memsearch.exe on Windows builds). Without PLUGIN_BIN_DIR
 * the plugin folder is staged as dist/plugin (a copy of plugin/ with the binary in its bin/), for
 * `claude --plugin-dir dist/plugin`: plugin/bin/memsearch in the checkout is a committed stand-in
 * and must not be overwritten by a binary that someone then commits. The copy goes to a temporary
 * name in the target folder, is made executable and is then renamed over the old file, so a hook
 * starting at that moment never sees a half-written file.
 */
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
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

/** A copy of plugin/ at `dest` with the binary in its bin/; returns the plugin folder. */
export function stagePlugin(source?: string, dest = join(ROOT, "dist", "plugin")): string {
  rmSync(dest, { recursive: true, force: true });
  cpSync(join(ROOT, "plugin"), dest, { recursive: true });
  installPluginBin(source, join(dest, "bin"));
  return dest;
}

if (import.meta.main) {
  try {
    const dest = process.argv[3] ? installPluginBin(process.argv[2], resolve(process.argv[3])) : stagePlugin(process.argv[2]);
    console.log(`installed ${dest}`);
  } catch (err) {
    console.error(`install-plugin-bin: ${err instanceof InstallError ? err.message : String(err)}`);
    process.exit(1);
  }
}
