import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/core/errors.ts";
import { loadConfig, parseValue, readConfigFile } from "../../src/core/config.ts";
import { gitTopLevel, resolveProject } from "../../src/core/project.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "ms-cfg-"));
}

describe("config layering", () => {
  test("defaults → global → project → env → flags, each value with its source", () => {
    const home = tmp();
    const proj = tmp();
    mkdirSync(join(home, ".memsearch"));
    writeFileSync(join(home, ".memsearch", "config.toml"), '[embedding]\nmodel = "bge-m3"\nbatch_size = 16\n[search]\ntop_k = 7\n');
    writeFileSync(join(proj, ".memsearch.toml"), "[embedding]\nbatch_size = 8\n[chunking]\nmax_chunk_size = 900\n");
    const env = { MEMSEARCH_HOME: join(home, ".memsearch"), MEMSEARCH_SEARCH_TOP_K: "9", MEMSEARCH_INDEXING_EXCLUDE: "drafts/**,tmp" };
    const r = loadConfig({ projectRoot: proj, env, flags: { "chunking.max_chunk_size": 700 } });
    expect(r.values["embedding.model"]).toBe("bge-m3");
    expect(r.sources["embedding.model"].source).toBe("global");
    expect(r.values["embedding.batch_size"]).toBe(8);
    expect(r.sources["embedding.batch_size"].source).toBe("project");
    expect(r.values["search.top_k"]).toBe(9);
    expect(r.sources["search.top_k"]).toEqual({ source: "env", detail: "MEMSEARCH_SEARCH_TOP_K" });
    expect(r.values["indexing.exclude"]).toEqual(["drafts/**", "tmp"]);
    expect(r.values["chunking.max_chunk_size"]).toBe(700);
    expect(r.sources["chunking.max_chunk_size"].source).toBe("flag");
    expect(r.sources["watch.debounce_ms"].source).toBe("default");
  });

  test("malformed TOML names the file and the line", () => {
    const d = tmp();
    const f = join(d, "c.toml");
    writeFileSync(f, '[embedding]\nmodel = "x"\nbatch_size = = 3\n');
    expect(() => readConfigFile(f, "global")).toThrow(ConfigError);
    expect(() => readConfigFile(f, "global")).toThrow(`${f}:3: malformed TOML`);
  });

  test("an unknown key names the file and its line", () => {
    const d = tmp();
    const f = join(d, "c.toml");
    writeFileSync(f, '[embedding]\nmodel = "x"\n\n[search]\ntop_kk = 3\n');
    expect(() => readConfigFile(f, "global")).toThrow(`${f}:5: unknown key "search.top_kk"`);
  });

  test("wrong types and ranges are refused with the key named", () => {
    const d = tmp();
    const f = join(d, "c.toml");
    writeFileSync(f, '[search]\ntop_k = "five"\n');
    expect(() => readConfigFile(f, "global")).toThrow(/:2: search.top_k must be a number/);
    expect(() => parseValue("hooks.recall", "loud", "x")).toThrow(/one of inject, synthesize, hint, off/);
    expect(() => loadConfig({ projectRoot: d, env: { MEMSEARCH_CHUNKING_MAX_CHUNK_SIZE: "0" } })).toThrow(/MEMSEARCH_CHUNKING_MAX_CHUNK_SIZE.*at least 1/);
  });

  test("the project file may not set machine-wide keys", () => {
    const d = tmp();
    writeFileSync(join(d, ".memsearch.toml"), '[embedding]\nhost = "http://evil:11434"\n');
    expect(() => loadConfig({ projectRoot: d, env: {} })).toThrow(/can only be set in the global config/);
  });
});

describe("project identity", () => {
  test("git top level, shared by linked worktrees", () => {
    const main = tmp();
    mkdirSync(join(main, ".git", "worktrees", "feat"), { recursive: true });
    writeFileSync(join(main, ".git", "worktrees", "feat", "commondir"), "../..\n");
    const wt = tmp();
    writeFileSync(join(wt, ".git"), `gitdir: ${join(main, ".git", "worktrees", "feat")}\n`);
    mkdirSync(join(wt, "src"));
    expect(gitTopLevel(join(wt, "src"))).toBe(main);
    expect(resolveProject(join(wt, "src"), {}).memoryDir).toBe(join(main, ".memsearch", "memory"));
  });

  test("CLAUDE_PROJECT_DIR outside git, MEMSEARCH_DIR overrides the data folder", () => {
    const d = tmp();
    expect(resolveProject(d, { CLAUDE_PROJECT_DIR: "/somewhere/proj" }).root).toBe("/somewhere/proj");
    expect(resolveProject(d, { MEMSEARCH_DIR: "/data/ms" }).indexDir).toBe("/data/ms/index");
  });
});
