/**
 * The search engine is a part of its own (src/index/engine/, ARCHITECTURE.md): it imports nothing
 * of the index around it (only core/ and itself), Orama is reached through it (and through the
 * tokenizer, a component the index gives it), and its WebAssembly kernels are text assembled at
 * build time, not bytes written in TypeScript.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const SRC = join(import.meta.dir, "..", "..", "src");
const ENGINE = join(SRC, "index", "engine");

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => join(dir, f));
}

const imports = (file: string) => [...readFileSync(file, "utf8").matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)].map((m) => m[1]!);

describe("the engine's boundary", () => {
  test("the engine imports only core/, itself and packages", () => {
    const wrong: string[] = [];
    for (const file of tsFiles(ENGINE)) {
      for (const spec of imports(file)) {
        if (!spec.startsWith(".")) continue;
        const target = resolve(ENGINE, relative(ENGINE, join(file, "..", spec)));
        if (!target.startsWith(ENGINE + "/") && !target.startsWith(join(SRC, "core") + "/")) wrong.push(`${relative(SRC, file)} → ${spec}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("Orama is imported by the engine and the tokenizer only", () => {
    const outside = tsFiles(SRC).filter((f) => !f.startsWith(ENGINE + "/") && f !== join(SRC, "index", "tokenizer.ts") && imports(f).some((s) => s.startsWith("@orama/")));
    expect(outside.map((f) => relative(SRC, f))).toEqual([]);
  });

  test("the kernels are WebAssembly text, assembled when bundled: no module bytes in TypeScript", () => {
    const kernels = readFileSync(join(ENGINE, "kernels.ts"), "utf8");
    expect(imports(join(ENGINE, "kernels.ts")).filter((s) => s.endsWith(".wat")).sort()).toEqual(["./dots.wat", "./idots.wat"]);
    // The module header (\0asm) written out would be the sign of hand-assembled bytes.
    expect(kernels).not.toMatch(/0x00,\s*0x61,\s*0x73,\s*0x6d/);
  });
});
