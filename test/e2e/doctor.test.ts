import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";
import { REPO, tempProject } from "../helpers/cli.ts";

describe("doctor, remember and recent", () => {
  // Shared by every test, and stateless: the tests never read what it was asked.
  let ollama: OllamaDouble;
  /** A project of the test's own, talking to the double. */
  const project = () => {
    const p = tempProject({ env: { OLLAMA_HOST: ollama.host } });
    return { p, ms: p.ms };
  };
  beforeAll(async () => {
    ollama = await startOllamaDouble({ dim: 768 });
  });
  afterAll(() => ollama.stop());

  test("doctor names what is wrong and how to fix it", async () => {
    const { ms } = project();
    const r = await ms(["doctor", "--json-output"], { OLLAMA_HOST: "http://127.0.0.1:9", CODEX_HOME: undefined, XDG_CONFIG_HOME: undefined, XDG_DATA_HOME: undefined });
    const checks = JSON.parse(r.stdout) as { name: string; status: string; detail: string; fix?: string }[];
    const by = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(Object.keys(by)).toEqual(["binary", "config", "plugin", "codex", "opencode", "ollama", "index", "turn queue", "watch"]);
    expect(by.codex!.detail).toContain("not set up on this machine");
    expect(by.opencode!.detail).toContain("not set up on this machine");
    expect(by["turn queue"]!.status).toBe("ok");
    expect(by.ollama!.status).toBe("warn");
    expect(by.ollama!.fix).toBe("ollama serve");
    expect(by.index!.fix).toBe("memsearch index");
    expect(by.plugin!.detail).toContain("not installed");
  });

  test("the repository's stand-in bin/memsearch is not taken for a binary", async () => {
    const { p, ms } = project();
    mkdirSync(join(p.home, ".claude"), { recursive: true });
    writeFileSync(join(p.home, ".claude", "settings.json"), JSON.stringify({ enabledPlugins: { "memsearch@memsearch": true } }));
    const pluginDir = join(p.home, ".claude", "plugins", "cache", "memsearch", "memsearch", "0.1.0");
    cpSync(join(REPO, "plugin"), pluginDir, { recursive: true });
    const r = await ms(["doctor", "-j"], { PATH: "/usr/bin:/bin" });
    const plugin = JSON.parse(r.stdout).find((c: { name: string }) => c.name === "plugin");
    expect(plugin.status).toBe("fail");
    expect(plugin.detail).toContain("its hooks find no memsearch binary");
  });

  test("doctor is happy once indexed with Ollama and the plugin enabled", async () => {
    const { p, ms } = project();
    await ms(["index"]);
    mkdirSync(join(p.home, ".claude"), { recursive: true });
    writeFileSync(join(p.home, ".claude", "settings.json"), JSON.stringify({ enabledPlugins: { "memsearch@memsearch": true } }));
    const binDir = join(p.home, "bin");
    mkdirSync(binDir);
    writeFileSync(join(binDir, "memsearch"), "#!/bin/sh\n", { mode: 0o755 });
    const r = await ms(["doctor"], { PATH: `${binDir}:${process.env.PATH}` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✓ ollama: ");
    expect(r.stdout).toContain("nomic-embed-text pulled, 768 dimensions");
    expect(r.stdout).toMatch(/✓ index: 6 chunks in 2 files, 6 with vectors/);
    expect(r.stdout).toContain("✓ plugin: memsearch@memsearch enabled");
  });

  test("a turn waiting long for its note is named, with the command that writes it", async () => {
    const { p, ms } = project();
    const pending = join(p.root, ".memsearch", "pending");
    mkdirSync(pending, { recursive: true });
    const file = join(pending, "s--p.json");
    writeFileSync(file, JSON.stringify({ sessionId: "s", promptId: "p", stoppedAt: new Date().toISOString(), prompt: "q", lastAssistantMessage: "a" }));
    const fresh = JSON.parse((await ms(["doctor", "-j"])).stdout).find((c: { name: string }) => c.name === "turn queue");
    expect(fresh.status).toBe("ok");
    expect(fresh.detail).toContain("1 turn(s) waiting");
    const old = new Date(Date.now() - 3600_000);
    utimesSync(file, old, old);
    const stale = JSON.parse((await ms(["doctor", "-j"])).stdout).find((c: { name: string }) => c.name === "turn queue");
    expect(stale.status).toBe("warn");
    expect(stale.fix).toStartWith("memsearch hook drain");
  });

  test("a broken config makes doctor fail with the file and line", async () => {
    const { p, ms } = project();
    writeFileSync(join(p.root, ".memsearch.toml"), "[search\n");
    const r = await ms(["doctor"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ config: .*\.memsearch\.toml:1: malformed TOML/);
  });

  test("remember writes a redacted note that search finds; recent shows it", async () => {
    const { ms } = project();
    const r = await ms(["remember", "Staging DB password is postgres://app:hunter2secret@db.internal/app and we rotate it monthly"]);
    expect(r.code).toBe(0);
    const hits = JSON.parse((await ms(["search", "rotate staging database monthly", "-j", "-k", "1"])).stdout);
    expect(hits[0].content).toContain("rotate it monthly");
    expect(hits[0].content).not.toContain("hunter2secret");
    const recent = await ms(["recent"]);
    expect(recent.stdout).toContain("rotate it monthly");
  });
});
