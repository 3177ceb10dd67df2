/**
 * Compile the single `dist/memsearch` executable. Bytecode + ESM make start-up ~2× faster, and
 * splitting keeps the code a run never imports out of its start-up (the whole bundle would be
 * loaded at every start otherwise, hooks and `--version` included);
 * a user's .env / bunfig.toml in the working directory must never change our behaviour.
 */
import { $ } from "bun";
import { join } from "node:path";

export const COMPILE_FLAGS = ["--compile", "--minify", "--bytecode", "--format=esm", "--splitting", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig"];

/** Entry points beside the CLI's own: threads the binary starts (`new Worker(new URL(…, import.meta.url))`). */
export const WORKERS = [join("src", "agents", "opencode", "worker.ts")];

export async function build(outfile = join(import.meta.dir, "..", "dist", "memsearch"), target?: string): Promise<string> {
  const entry = join(import.meta.dir, "..", "src", "cli.ts");
  const workers = WORKERS.map((w) => join(import.meta.dir, "..", w));
  const targetFlag = target ? [`--target=${target}`] : [];
  await $`${process.execPath} build ${COMPILE_FLAGS} ${targetFlag} ${entry} ${workers} --outfile ${outfile}`.quiet();
  return outfile;
}

if (import.meta.main) {
  const out = await build(process.argv[2]);
  console.log(`built ${out}`);
}
