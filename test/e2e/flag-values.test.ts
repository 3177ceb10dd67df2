/**
 * Values a user can get wrong, found by a probe of the compiled binary (MEMSEARCH_BIN or
 * dist/memsearch): number flags out of range or not numbers, an import of nothing, an index that
 * cannot use its vectors any more, a damaged forgotten list. Each is one line and a non-zero exit,
 * said before anything is read or written; nothing already there is changed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexedProject, run, tempProject, type Project, type RunResult } from "../helpers/cli.ts";
import { startOllamaDouble, type OllamaDouble, type OllamaDoubleOptions } from "../helpers/ollama-double.ts";

const NONE = { MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function project(opts: Parameters<typeof tempProject>[0] = {}): Project {
  const p = tempProject(opts);
  cleanup.push(p.root, p.home);
  return p;
}

async function indexed(env: Record<string, string> = NONE): Promise<Project> {
  const p = await indexedProject({ env });
  cleanup.push(p.root, p.home);
  return p;
}

/** The one line a mistake gets: `Error: <message>` on stderr, nothing on stdout. */
function oneError(r: RunResult, code: number, message: string | RegExp): void {
  expect(r.hung).toBe(false);
  expect(r.stdout).toBe("");
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
  if (typeof message === "string") expect(r.stderr).toStartWith(`Error: ${message}`);
  else expect(r.stderr).toMatch(message);
  expect(r.code).toBe(code);
}

const indexBytes = (p: Project) => readFileSync(join(p.root, ".memsearch", "index", "index.bin"));

describe("number flags are held to their range, naming the flag", () => {
  test("index --max-chunk-size 0, -10 or abc: exit 2 and the index is left as it was", async () => {
    const p = await indexed();
    const before = indexBytes(p);
    for (const value of ["0", "-10", "abc", "1.5"]) {
      oneError(await p.ms(["index", "--force", "--max-chunk-size", value]), 2, "--max-chunk-size must be a whole number ≥ 1");
    }
    expect(indexBytes(p)).toEqual(before);
    expect(JSON.parse((await p.ms(["stats", "-j"])).stdout).total_chunks).toBe(6);
  });

  test("--batch-size abc, 0, -1 or 4096 on index and search: exit 2, nothing indexed", async () => {
    const p = project();
    for (const value of ["abc", "0", "-1", "4096"]) {
      oneError(await p.ms(["index", "--batch-size", value], NONE), 2, "--batch-size must be a whole number from 1 to 2048");
      oneError(await p.ms(["search", "redis", `--batch-size=${value}`], NONE), 2, "--batch-size must be a whole number from 1 to 2048");
    }
    expect(existsSync(join(p.root, ".memsearch", "index"))).toBe(false);
  });

  test("watch --batch-size abc or 0, --debounce-ms abc or -1: exit 2 at once, never serving", async () => {
    const p = project();
    const cases: [string[], string][] = [
      [["--batch-size", "abc"], "--batch-size must be a whole number from 1 to 2048"],
      [["--batch-size", "0"], "--batch-size must be a whole number from 1 to 2048"],
      [["--debounce-ms", "abc"], "--debounce-ms must be a whole number ≥ 0"],
      [["--debounce-ms=-1"], "--debounce-ms must be a whole number ≥ 0"],
    ];
    for (const [flags, message] of cases) {
      const r = await run(["watch", ...flags], { cwd: p.root, env: { ...p.env, ...NONE }, timeoutMs: 10_000 });
      oneError(r, 2, message);
    }
    expect(existsSync(join(p.root, ".memsearch", "watch.pid"))).toBe(false);
    expect(existsSync(join(p.root, ".memsearch", "index"))).toBe(false);
  }, 60_000);
});

describe("recent", () => {
  test("--files and --lines abc, 0 or -1: exit 2 naming the flag, never 'No memory yet' of a folder with notes", async () => {
    const p = project();
    for (const value of ["abc", "0", "-1"]) oneError(await p.ms(["recent", "--files", value]), 2, "--files must be a whole number ≥ 1");
    for (const value of ["abc", "0", "-1"]) oneError(await p.ms(["recent", "--lines", value]), 2, "--lines must be a whole number ≥ 1");
    const ok = await p.ms(["recent", "--files", "1", "--lines", "3"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toStartWith("## 2026-11-21.md\n");
  });
});

describe("import of named paths holding no transcript", () => {
  test("an empty .jsonl and a folder without transcripts: exit 1 naming the path given, not Claude Code's folder", async () => {
    const p = project();
    const dir = mkdtempSync(join(tmpdir(), "ms-import-nothing-"));
    cleanup.push(dir);
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    const folder = join(dir, "no-transcripts");
    mkdirSync(folder);
    writeFileSync(join(folder, "notes.txt"), "not a transcript\n");
    for (const given of [empty, folder]) {
      const r = await p.ms(["import", given]);
      oneError(r, 1, `nothing to import: no transcript with turns in ${given}`);
      expect(r.stderr).not.toContain(".claude");
      const j = await p.ms(["import", given, "-j"]);
      expect(j.code).toBe(1);
    }
    expect(existsSync(join(p.memory))).toBe(true);
  });
});

/** Ollama doubles for the time of `fn`, stopped whatever happens; `fn` gets their hosts. */
async function withDoubles(specs: OllamaDoubleOptions[], fn: (...hosts: string[]) => Promise<void>): Promise<void> {
  const doubles: OllamaDouble[] = [];
  try {
    for (const spec of specs) doubles.push(await startOllamaDouble(spec));
    await fn(...doubles.map((d) => d.host));
  } finally {
    for (const d of doubles) await d.stop();
  }
}

const statsOf = async (p: Project) => JSON.parse((await p.ms(["stats", "-j"])).stdout);

describe("index after the embedding model changed its vector size", () => {
  test("nothing to re-index: index rebuilds with the new size and says why, as the README promises; the same model says nothing", () =>
    withDoubles([{ dim: 768 }, { dim: 384 }], async (big, small) => {
      const p = await indexed({ MEMSEARCH_EMBEDDING_HOST: big });
      expect((await statsOf(p)).dimension).toBe(768);

      const same = await p.ms(["index"]);
      expect(same.stderr).toBe("");
      expect(same.stdout).toBe("Indexed 0 chunks.\n");

      // Ollama down: a run with nothing to do stays as quiet as before.
      const down = await p.ms(["index"], { MEMSEARCH_EMBEDDING_HOST: "http://127.0.0.1:9" });
      expect(down.code).toBe(0);
      expect(down.stderr).toBe("");

      const switched = await p.ms(["index"], { MEMSEARCH_EMBEDDING_HOST: small });
      expect(switched.code).toBe(0);
      expect(switched.stdout).toBe("Indexed 6 chunks.\n");
      expect(switched.stderr.trim().split("\n")).toEqual(["memsearch: 'nomic-embed-text' now gives 384-d vectors and the index held 768-d ones; rebuilt it from the markdown (6 chunks)"]);
      expect((await statsOf(p)).dimension).toBe(384);

      // Rebuilt once: the next run has nothing to say.
      const after = await p.ms(["index"], { MEMSEARCH_EMBEDDING_HOST: small });
      expect([after.stdout, after.stderr]).toEqual(["Indexed 0 chunks.\n", ""]);
    }), 60_000);

  test("a new model whose first vector takes longer than a search may wait (it is loading) still rebuilds", () => {
    // The first request of a model loads it: 400 ms here, over the 200 ms a query may take.
    let first = true;
    const loading: OllamaDoubleOptions = {
      dim: 384,
      embedMany: async (texts) => {
        if (first) await Bun.sleep(400);
        first = false;
        return texts.map((t, i) => Array.from({ length: 384 }, (_, j) => Math.sin(t.length + i + j)));
      },
    };
    return withDoubles([{ dim: 768 }, loading], async (big, slow) => {
      const p = await indexed({ MEMSEARCH_EMBEDDING_HOST: big });
      const r = await p.ms(["index"], { MEMSEARCH_EMBEDDING_HOST: slow, MEMSEARCH_EMBEDDING_QUERY_TIMEOUT_MS: "200" });
      expect([r.code, r.stdout]).toEqual([0, "Indexed 6 chunks.\n"]);
      expect(r.stderr).toContain("now gives 384-d vectors and the index held 768-d ones; rebuilt it from the markdown");
      expect((await statsOf(p)).dimension).toBe(384);
    });
  }, 60_000);

  test("a new size no vector can confirm: index says so in one line and keeps the index", () => {
    const failing: OllamaDoubleOptions = {
      dim: 384,
      embedMany: async () => {
        throw new Error("the model failed to load");
      },
    };
    return withDoubles([{ dim: 768 }, failing], async (big, broken) => {
      const p = await indexed({ MEMSEARCH_EMBEDDING_HOST: big });
      const r = await p.ms(["index"], { MEMSEARCH_EMBEDDING_HOST: broken });
      expect([r.code, r.stdout]).toEqual([0, "Indexed 0 chunks.\n"]);
      expect(r.stderr.trim().split("\n")).toEqual(["Warning: 'nomic-embed-text' reports 384-d vectors and the index holds 768-d ones, but no vector could be had to confirm it: vector search may be off; 'memsearch index --force' rebuilds the index"]);
      expect((await statsOf(p)).dimension).toBe(768);
    });
  }, 60_000);

  test("a server whose metadata contradicts its vectors changes nothing; with paths named, index warns and keeps the rest", () =>
    // The liar says 768 in /api/show and embeds 384: the index's own size.
    withDoubles([{ dim: 768 }, { dim: 384 }, { dim: 768, mode: "wrong-dim" }], async (big, small, liar) => {
      const p = await indexed({ MEMSEARCH_EMBEDDING_HOST: small });
      const before = await statsOf(p);
      expect(before.dimension).toBe(384);
      for (let i = 0; i < 2; i++) {
        const r = await p.ms(["index"], { MEMSEARCH_EMBEDDING_HOST: liar });
        expect([r.code, r.stdout, r.stderr]).toEqual([0, "Indexed 0 chunks.\n", ""]);
        expect(await statsOf(p)).toMatchObject({ dimension: 384, total_chunks: before.total_chunks });
      }

      // Named paths: a rebuild would index only them, so it is left to a whole run.
      const named = await p.ms(["index", p.memory], { MEMSEARCH_EMBEDDING_HOST: big });
      expect(named.code).toBe(0);
      expect(named.stderr.trim().split("\n")).toEqual(["Warning: 'nomic-embed-text' now gives 768-d vectors and the index held 384-d ones: vector search is off until 'memsearch index' rebuilds the index"]);
      expect(await statsOf(p)).toMatchObject({ dimension: 384, total_chunks: before.total_chunks });
    }), 60_000);
});

describe("forget", () => {
  test("--list on a damaged forgotten.json: exit 1, the one line saying so, never 'No forgotten turns.'", async () => {
    const p = project();
    const list = join(p.root, ".memsearch", "forgotten.json");
    writeFileSync(list, "{ not json");
    oneError(await p.ms(["forget", "--list"]), 1, /^Error: .*forgotten\.json is damaged \(.*\): fix or remove it\n$/);
    oneError(await p.ms(["forget", "--list", "-j"]), 1, /forgotten\.json is damaged/);
    expect(readFileSync(list, "utf8")).toBe("{ not json");
  });

  test("--undo without a turn id is a usage error", async () => {
    const p = project();
    oneError(await p.ms(["forget", "--undo"]), 2, "--undo needs a turn id");
    oneError(await p.ms(["forget", "--undo", " "]), 2, "--undo needs a turn id");
    expect(existsSync(join(p.root, ".memsearch", "forgotten.json"))).toBe(false);
  });
});
