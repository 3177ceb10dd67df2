/**
 * WebAssembly text (`.wat`) imported as its module's bytes. The vector kernels are written as text
 * (src/index/engine/*.wat) and assembled by wabt (a devDependency: WebAssembly's reference
 * toolkit, compiled to JS) when they are bundled (scripts/build.ts) or imported from source (the
 * preload bunfig.toml names, for `bun test`, `bun run eval` and the like). The binary carries the
 * assembled bytes only, never the assembler. An import gives the bytes as base64 text: decoding
 * them costs a process only when it first scans a block large enough for a kernel.
 */
import type { BunPlugin } from "bun";
import { readFileSync } from "node:fs";

type Wabt = Awaited<ReturnType<typeof import("wabt")>>;
let wabt: Wabt | undefined;

/** The module's bytes; throws naming the file and line on text that is not valid WebAssembly. */
export async function assembleWat(path: string): Promise<Uint8Array> {
  // Loaded on the first .wat import only: every bun run in the repository has this preload.
  wabt ??= await (await import("wabt")).default();
  const mod = wabt.parseWat(path, readFileSync(path, "utf8"), { simd: true });
  try {
    mod.validate();
    return new Uint8Array(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}

export const watPlugin: BunPlugin = {
  name: "wat",
  setup(build) {
    build.onLoad({ filter: /\.wat$/ }, async ({ path }) => ({
      contents: `export default ${JSON.stringify(Buffer.from(await assembleWat(path)).toString("base64"))};`,
      loader: "js",
    }));
  },
};
