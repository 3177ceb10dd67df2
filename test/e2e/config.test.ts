import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempProject } from "../helpers/cli.ts";

describe("memsearch config", () => {
  test("set, get and list --resolved with sources", async () => {
    const p = tempProject();
    const ms = p.ms;
    const s = await ms(["config", "set", "search.top_k", "8"]);
    expect(s.code).toBe(0);
    expect(s.stdout.trim()).toBe(`Set search.top_k = 8 in ${join(p.home, ".memsearch", "config.toml")}`);
    await ms(["config", "set", "indexing.exclude", "drafts/**,old", "--project"]);
    expect(readFileSync(join(p.root, ".memsearch.toml"), "utf8")).toContain('exclude = ["drafts/**", "old"]');
    expect((await ms(["config", "get", "search.top_k"])).stdout.trim()).toBe("8");
    const list = await ms(["config", "list", "--resolved"], { MEMSEARCH_EMBEDDING_MODEL: "bge-m3" });
    expect(list.stdout).toContain("# Resolved (all sources merged)");
    expect(list.stdout).toContain('model = "bge-m3"  # env: MEMSEARCH_EMBEDDING_MODEL');
    expect(list.stdout).toMatch(/top_k = 8 {2}# global: .*config\.toml/);
    expect(list.stdout).toMatch(/exclude = \["drafts\/\*\*", "old"\] {2}# project/);
    const j = JSON.parse((await ms(["config", "list", "--resolved", "-j"])).stdout);
    expect(j["search.top_k"]).toMatchObject({ value: 8, source: "global" });
  });

  test("bad keys and values: one line, exit non-zero, file unchanged", async () => {
    const p = tempProject();
    const ms = p.ms;
    expect((await ms(["config", "set", "search.top_k", "8"])).code).toBe(0);
    const before = readFileSync(join(p.home, ".memsearch", "config.toml"), "utf8");
    const bad = await ms(["config", "set", "search.top_kk", "3"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(/^Error: unknown config key "search.top_kk"/);
    const val = await ms(["config", "set", "search.top_k", "lots"]);
    expect(val.code).toBe(1);
    expect(readFileSync(join(p.home, ".memsearch", "config.toml"), "utf8")).toBe(before);
    expect((await ms(["config", "get", "nope.key"])).code).toBe(2);
  });

  test("a malformed project TOML stops every command with file and line", async () => {
    const p = tempProject();
    const ms = p.ms;
    writeFileSync(join(p.root, ".memsearch.toml"), '[search]\ntop_k = 3\n[chunking\nmax_chunk_size = 1\n');
    const r = await ms(["search", "anything"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`Error: ${join(p.root, ".memsearch.toml")}:3: malformed TOML: ${r.stderr.trim().split("malformed TOML: ")[1]}`);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    writeFileSync(join(p.root, ".memsearch.toml"), "[search]\ntop_k = 3\nfancy = true\n");
    const u = await ms(["index"]);
    expect(u.code).toBe(1);
    expect(u.stderr).toContain(`.memsearch.toml:3: unknown key "search.fancy"`);
  });
});
