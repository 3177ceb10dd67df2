/**
 * What an agent is, and where its files are, is its adapter's (src/agents/<name>/): every other
 * part gets an agent's name as a plain string (a note's anchor, a queue entry) and its readers
 * from the registry, so a sixth agent is added in src/agents/ alone (ARCHITECTURE.md).
 *
 * Outside src/agents/, a module names an agent when it
 *  - imports (statically, dynamically or for types only) a module of an agent's folder,
 *    `src/agents/<name>/…`; the neutral modules at the top of src/agents/ (names.ts, registry.ts,
 *    types.ts, curated.ts…) may be imported, by the floors layers.test.ts allows;
 *  - holds, in its code (comments and types left out), a string that is an agent's name
 *    (`"claude"`, `"codex"`…), one of an agent's own folders (`".claude"`, `".codex"`…) or
 *    databases (`"opencode.db"`), or an agent's environment variable (`CLAUDE_CONFIG_DIR`,
 *    `CODEX_HOME`…), as a string or read from the environment;
 *  - imports core/claude-home.ts, the one module below src/agents/ that knows an agent's folders.
 * Prose (help texts, messages, comments) may say "Claude Code": it names the product to a person.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { AGENT_NAMES } from "../../src/agents/names.ts";

const SRC = join(import.meta.dir, "..", "..", "src");

/**
 * Where a name is allowed outside src/agents/, and why: file → the strings it may hold, each with
 * how many times (a new one fails here, and is either moved into an adapter or added with its reason).
 */
const ALLOWED: Record<string, { strings: Record<string, number>; why: string }> = {
  "core/anchor.ts": { strings: { claude: 1 }, why: "DEFAULT_AGENT: the agent of a note whose anchor names none, as notes were written before agents were named (the stored format)" },
  "core/claude-home.ts": {
    strings: { ".claude": 4, "env.CLAUDE_CONFIG_DIR": 2, "env.CLAUDE_CODE_DISABLE_AUTO_MEMORY": 3 },
    why: "Claude Code's folders, for the index's places on every load (core/places.ts) and a note's provenance on every search (memory/seen.ts), both below src/agents/",
  },
  "core/project.ts": { strings: { "env.CLAUDE_PROJECT_DIR": 2 }, why: "the project of a hook run outside git, as Claude Code tells its hooks: core resolves the project of every command and hook" },
  // `claude -p` as the summariser and the answering model: a model provider the user chooses, not the coding agent.
  "core/config.ts": { strings: { claude: 2 }, why: "summarizer.provider's values and default" },
  "memory/summarizer.ts": { strings: { claude: 8 }, why: "the claude -p summariser" },
  "memory/ledger.ts": { strings: { claude: 1 }, why: "a model call's provider" },
  "commands/import.ts": { strings: { claude: 4 }, why: "--summarizer's values" },
  "recall/for-prompt.ts": { strings: { claude: 2 }, why: "the model that writes the prompt hook's synthesis" },
  "doctor/doctor.ts": { strings: { claude: 2 }, why: "the summariser check: claude -p on PATH" },
};

/** Modules below src/agents/ that may import core/claude-home.ts (with its reason above). */
const CLAUDE_HOME_IMPORTERS = ["core/places.ts", "memory/seen.ts"];

const FOLDERS = [".claude", ".codex", ".gemini", ".copilot", "opencode.db"];
const ENV_VAR = /^(?:CLAUDE|CODEX|GEMINI|COPILOT|OPENCODE)_[A-Z_]+$/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.ts$/.test(name) && !name.endsWith(".d.ts") ? [p] : [];
  });
}

/** Every relative specifier a file imports, types included (read from the source, as layers.test.ts reads it). */
function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)) out.push(relative(SRC, resolve(dirname(file), m[1]!)));
  return out;
}

/**
 * The agent names, folders and environment variables a module's code holds, each with its count:
 * read from TypeScript's syntax tree, so a comment, a type and an import's path never count.
 */
export function namesIn(text: string): Record<string, number> {
  const found: Record<string, number> = {};
  const add = (k: string) => (found[k] = (found[k] ?? 0) + 1);
  const visit = (node: ts.Node): void => {
    if (ts.isTypeNode(node) || ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const s = node.text;
      if ((AGENT_NAMES as readonly string[]).includes(s) || FOLDERS.includes(s) || ENV_VAR.test(s)) add(s);
    } else if (ts.isPropertyAccessExpression(node) && ENV_VAR.test(node.name.text) && /(^|\.)env$/.test(node.expression.getText())) add(`env.${node.name.text}`);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, true));
  return found;
}

const outside = sources(SRC).filter((f) => !relative(SRC, f).startsWith("agents/"));

describe("no part outside src/agents/ names an agent", () => {
  test("no module imports an agent's folder", () => {
    const wrong: string[] = [];
    for (const f of outside) {
      for (const t of importsOf(f, readFileSync(f, "utf8"))) if (/^agents\/[^/]+\//.test(t)) wrong.push(`${relative(SRC, f)} → ${t}`);
    }
    expect(wrong).toEqual([]);
  });

  test("only the places that need Claude Code's folders before any adapter is loaded import core/claude-home.ts", () => {
    const importers = outside.filter((f) => importsOf(f, readFileSync(f, "utf8")).includes("core/claude-home.ts")).map((f) => relative(SRC, f));
    expect(importers.sort()).toEqual(CLAUDE_HOME_IMPORTERS);
  });

  test("no module's code holds an agent's name, folder or environment variable, but where the table above says why", () => {
    const wrong: Record<string, Record<string, number>> = {};
    for (const f of outside) {
      const rel = relative(SRC, f);
      const found = namesIn(readFileSync(f, "utf8"));
      const allowed = ALLOWED[rel]?.strings ?? {};
      const over = Object.fromEntries(Object.entries(found).filter(([k, n]) => n !== (allowed[k] ?? 0)));
      for (const k of Object.keys(allowed)) if (!(k in found)) over[k] = 0;
      if (Object.keys(over).length) wrong[rel] = over;
    }
    expect(wrong).toEqual({});
  });

  test("the reading finds each form it must, and none in a comment or a type", () => {
    const code = `// "claude" in a comment
      type Who = "codex";
      interface I { a: "codex" }
      import { x } from "./claude.ts";
      export const a = "gemini", b = 'opencode', c = \`copilot\`, d = ".claude", e = process.env.CODEX_HOME, f = env["GEMINI_CLI_HOME"], g = "a claude", h = x as Who, i = \`\${a} claude\`;`;
    expect(namesIn(code)).toEqual({ gemini: 1, opencode: 1, copilot: 1, ".claude": 1, "env.CODEX_HOME": 1, GEMINI_CLI_HOME: 1 });
    expect(importsOf(join(SRC, "hooks", "x.ts"), `import type { A } from "../agents/claude/types.ts"; const m = await import("../agents/codex/index.ts");`)).toEqual(["agents/claude/types.ts", "agents/codex/index.ts"]);
  });
});
