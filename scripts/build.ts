/**
 * Compile the single `dist/memsearch` executable. Bytecode + ESM make start-up ~2× faster, and
 * splitting keeps the code a run never imports out of its start-up (the whole bundle would be
 * loaded at every start otherwise, hooks and `--version` included);
 * a user's .env / bunfig.toml in the working directory must never change our behaviour.
 * Bun's build API rather than its command line: the kernels' WebAssembly text is assembled by a
 * plugin as it is bundled (scripts/wat.ts), which the command line cannot load.
 */
import { join } from "node:path";
import { watPlugin } from "./wat.ts";

/** Entry points beside the CLI's own: threads the binary starts (`new Worker(new URL(…, import.meta.url))`). */
export const WORKERS = [join("src", "agents", "opencode", "worker.ts")];

export interface BuildOptions {
  /**
   * Bytecode (the default): built by the host's JavaScriptCore, so not for another platform
   * (scripts/release.ts builds cross targets without it).
   */
  bytecode?: boolean;
}

/** Build the executable; throws with Bun's messages when the build fails. */
export async function build(outfile = join(import.meta.dir, "..", "dist", "memsearch"), target?: string, opts: BuildOptions = {}): Promise<string> {
  const root = join(import.meta.dir, "..");
  const result = await Bun.build({
    entrypoints: [join(root, "src", "cli.ts"), ...WORKERS.map((w) => join(root, w))],
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false, ...(target ? { target: target as Bun.Build.CompileTarget } : {}) },
    minify: true,
    bytecode: opts.bytecode !== false,
    format: "esm",
    splitting: true,
    plugins: [watPlugin],
    throw: false,
  });
  // Bun's own lines first (a caller shows the first that names the failure), without their class name.
  if (!result.success) throw new Error(result.logs.map((l) => String(l).replace(/^\w*Message: /, "")).join("\n") || "bun build failed");
  return outfile;
}

if (import.meta.main) {
  const out = await build(process.argv[2]);
  console.log(`built ${out}`);
}
