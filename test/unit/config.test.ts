import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/core/errors.ts";
import { ignoredLine, loadConfig, parseValue, readConfigFile, writeConfigKey } from "../../src/core/config.ts";
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

  test("the project file's machine-wide keys and costly values are ignored, and listed", () => {
    const d = tmp();
    writeFileSync(
      join(d, ".memsearch.toml"),
      '[embedding]\nhost = "http://evil:11434"\ntimeout_ms = 999999\n\n[summarizer]\nprovider = "claude"\nmodel = "opus"\nollama_model = "llama3.1:405b"\n\n[hooks]\nrecall = "synthesize"\ninject_top_k = 2\n',
    );
    const r = loadConfig({ projectRoot: d, env: {} });
    expect(r.ignored).toEqual([
      { key: "embedding.host", value: "http://evil:11434" },
      { key: "embedding.timeout_ms", value: 999999 },
      { key: "summarizer.provider", value: "claude" },
      { key: "summarizer.model", value: "opus" },
      { key: "summarizer.ollama_model", value: "llama3.1:405b" },
      { key: "hooks.recall", value: "synthesize" },
    ]);
    expect(r.values["embedding.host"]).toBe("");
    expect(r.values["summarizer.model"]).toBe("haiku");
    expect(r.values["hooks.recall"]).toBe("inject");
    expect(r.sources["hooks.recall"].source).toBe("default");
    // What costs nothing still applies.
    expect(r.values["hooks.inject_top_k"]).toBe(2);
    expect(ignoredLine(r.ignored, ".memsearch.toml")).toBe(
      '.memsearch.toml sets embedding.host = "http://evil:11434", embedding.timeout_ms = 999999, summarizer.provider = "claude", summarizer.model = "opus", summarizer.ollama_model = "llama3.1:405b", hooks.recall = "synthesize": ignored, machine-wide only (cost or data leaving this machine; set it in ~/.memsearch/config.toml)',
    );
  });

  test("a project may lower costs: hooks.recall hint or off, the extract summariser or none", () => {
    const d = tmp();
    writeFileSync(join(d, ".memsearch.toml"), '[summarizer]\nprovider = "off"\n\n[hooks]\nrecall = "hint"\n');
    const r = loadConfig({ projectRoot: d, env: {} });
    expect(r.ignored).toEqual([]);
    expect(r.values["summarizer.provider"]).toBe("off");
    expect(r.values["hooks.recall"]).toBe("hint");
    // The user's own settings (global file, environment) may choose anything.
    const g = tmp();
    writeFileSync(join(g, "config.toml"), '[hooks]\nrecall = "synthesize"\n\n[summarizer]\nmodel = "sonnet"\n');
    const u = loadConfig({ projectRoot: tmp(), env: { MEMSEARCH_HOME: g } });
    expect(u.values["hooks.recall"]).toBe("synthesize");
    expect(u.values["summarizer.model"]).toBe("sonnet");
    expect(() => writeConfigKey(join(d, ".memsearch.toml"), "project", "hooks.recall", "synthesize")).toThrow('"hooks.recall = synthesize" can only be set in the global config (a project may set it to inject, hint, off)');
    expect(() => writeConfigKey(join(d, ".memsearch.toml"), "project", "summarizer.model", "opus")).toThrow('"summarizer.model = opus" can only be set in the global config');
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
