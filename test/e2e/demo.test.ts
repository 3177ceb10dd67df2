/**
 * `npm run demo` (scripts/demo.ts) shows the product: a turn captured by the hooks, search, recall
 * with its drill-down, the hub command; it says what it saw of Ollama (the double answering, or a
 * closed port), shows no raw anchor comment, and removes its temporary folder.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BIN, REPO } from "../helpers/cli.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";

let ollama: OllamaDouble;
beforeAll(async () => {
  ollama = await startOllamaDouble({ dim: 64 });
});
afterAll(() => ollama?.stop());

async function demo(ollamaHost: string) {
  const p = Bun.spawn([process.execPath, join(REPO, "scripts", "demo.ts")], { cwd: REPO, env: { ...process.env, MEMSEARCH_BIN: BIN, OLLAMA_HOST: ollamaHost }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err, tmp: /\bin (\S+memsearch-demo-\S+): removed at the end/.exec(out)?.[1] };
}

function shows(out: string) {
  for (const step of ["$ memsearch hook user-prompt-submit", "$ memsearch hook stop", "$ memsearch search ", "$ memsearch recall --raw", "$ memsearch expand ", "$ memsearch transcript ", "memsearch hub"]) expect(out).toContain(step);
  // The captured turn's note, found by search and by recall, opened down to the original turn.
  // The note as the extract summariser writes it: the reply's first informative sentence, and the fix as a finding.
  expect(out).toContain("- Outcome: It wrote them to /tmp, a 512 MB tmpfs on the build hosts.");
  expect(out).toContain("- Finding: I moved them to /var/cache/export in jobs/export.ts");
  expect(out.match(/Finding: I moved them to \/var\/cache\/export/g)!.length).toBeGreaterThanOrEqual(3);
  expect(out).toContain("**Assistant**: It wrote them to /tmp, a 512 MB tmpfs");
  expect(out).not.toContain("<!--");
}

test("without Ollama: the whole tour, said to run on keywords alone, and its folder removed", async () => {
  const r = await demo("http://127.0.0.1:9");
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  shows(r.out);
  expect(r.out).toContain("Search mode: BM25 only");
  expect(r.out).toContain("Search ran on keywords (BM25) alone: Ollama is not reachable at http://127.0.0.1:9");
  expect(r.out).not.toContain("Ollama answered");
  expect(r.tmp).toBeDefined();
  expect(existsSync(r.tmp!)).toBe(false);
}, 120_000);

test("with Ollama answering: it says so, and search ran with vectors", async () => {
  const r = await demo(ollama.host);
  expect(r.code).toBe(0);
  shows(r.out);
  expect(r.out).toContain("Search mode: hybrid");
  expect(r.out).toContain(`Ollama answered (${ollama.host}`);
  expect(r.out).not.toContain("alone");
  expect(ollama.requests.some((q) => q.path === "/api/embed")).toBe(true);
  expect(existsSync(r.tmp!)).toBe(false);
}, 120_000);
