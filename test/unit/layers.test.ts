/**
 * The floors of src/ (ARCHITECTURE.md): each folder imports only from the folders listed for it,
 * and no module reaches itself through its imports, type-only imports included.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = join(import.meta.dir, "..", "..", "src");

/** What each part may import besides itself; the same table as ARCHITECTURE.md's. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  transcript: ["core"],
  index: ["core"],
  conversations: ["core", "transcript"],
  memory: ["core", "transcript"],
  agents: ["core", "transcript", "conversations"],
  watch: ["core", "index"],
  recall: ["core", "index", "conversations", "memory", "watch"],
  doctor: ["core", "transcript", "index", "memory", "watch", "agents"],
  hooks: ["core", "transcript", "index", "conversations", "memory", "watch", "recall", "agents"],
  hub: ["core", "transcript", "index", "conversations", "memory", "watch", "recall", "agents"],
  commands: ["core", "transcript", "index", "conversations", "memory", "watch", "recall", "doctor", "hooks", "hub", "agents"],
  ".": ["core", "commands", "hooks"],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.ts$/.test(name) && !name.endsWith(".d.ts") ? [p] : [];
  });
}

/** Every relative specifier a file imports: static, dynamic and `typeof import(…)` alike. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found = new Set<string>();
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = resolve(dirname(file), m[1]!);
    if (target.startsWith(SRC + "/") && target.endsWith(".ts")) found.add(target);
  }
  return [...found];
}

const part = (file: string) => {
  const rel = relative(SRC, file);
  return rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : ".";
};

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe("the floors of src/", () => {
  test("every folder is named in the table", () => {
    const parts = new Set(files.map(part));
    expect([...parts].filter((p) => !(p in MAY_IMPORT))).toEqual([]);
  });

  test("no import runs from a lower floor to a higher one", () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const from = part(file);
      for (const t of targets) {
        const to = part(t);
        if (to !== from && !MAY_IMPORT[from]!.includes(to)) wrong.push(`${relative(SRC, file)} → ${relative(SRC, t)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("no module reaches itself through its imports", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const t of graph.get(f) ?? []) {
        if (state.get(t) === "open") cycles.push(stack.slice(stack.indexOf(t)).concat(t).map((x) => relative(SRC, x)).join(" → "));
        else if (!state.has(t)) visit(t);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  test("the hooks reach recall through its entry for a prompt only (the hook is a face of the recall service)", () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      if (part(file) !== "hooks") continue;
      for (const t of targets) if (part(t) === "recall" && relative(SRC, t) !== "recall/for-prompt.ts") wrong.push(`${relative(SRC, file)} → ${relative(SRC, t)}`);
    }
    expect(wrong).toEqual([]);
  });

  test("the checker sees imports of every form", () => {
    // The table is only as good as the import reading: each form it must catch, once.
    expect(importsOf(join(SRC, "cli.ts")).map((f) => relative(SRC, f))).toContain("hooks/events.ts");
    expect(importsOf(join(SRC, "commands", "search.ts")).map((f) => relative(SRC, f))).toContain("commands/search-run.ts");
  });
});
