/**
 * `memsearch install <agent>` through the compiled binary: --dry-run shows the change and writes
 * nothing, install wires Codex and doctor says so, --uninstall takes it all back, an unknown agent
 * is a clear error, an agent not set up here is refused with nothing created, and Claude Code's
 * plugin is written from the binary's own copy with a link to the binary. Always a temp HOME.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, REPO } from "../helpers/cli.ts";
import { doctorCheck, projectsRemovedAfterAll } from "../helpers/install-suite.ts";

const newProject = projectsRemovedAfterAll();

function setup() {
  const p = newProject();
  const codexHome = join(p.home, ".codex");
  mkdirSync(codexHome);
  const config = 'model = "o4"\n\n[features]\nweb_search = true\n';
  writeFileSync(join(codexHome, "config.toml"), config);
  const env = { CODEX_HOME: codexHome };
  return { p, codexHome, config, ms: (args: string[]) => p.ms(args, env) };
}

const agentCheck = (ms: (a: string[]) => Promise<{ stdout: string }>) => doctorCheck(ms, "codex");

describe("memsearch install <agent>", () => {
  test("codex: dry run, install, doctor, a second install, uninstall", async () => {
    const { codexHome, config, ms } = setup();
    expect((await agentCheck(ms)).status).toBe("warn");
    expect((await agentCheck(ms)).fix).toBe("memsearch install codex");

    const dry = await ms(["install", "codex", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`--- ${join(codexHome, "hooks.json")} (would create)`);
    expect(dry.stdout).toContain(`+ hooks = true # memsearch`);
    expect(dry.stdout).toContain(`"command": "${BIN} hook user-prompt-submit --agent codex"`);
    expect(dry.stdout).toContain("(dry run: nothing written)");
    expect(existsSync(join(codexHome, "hooks.json"))).toBe(false);
    expect(readFileSync(join(codexHome, "config.toml"), "utf8")).toBe(config);

    const inst = await ms(["install", "codex"]);
    expect(inst.code).toBe(0);
    expect(inst.stdout).toContain("each trusted");
    const check = await agentCheck(ms);
    expect(check.status).toBe("ok");
    expect(check.detail).toContain("4 hooks in");
    expect((await ms(["install", "codex"])).stdout).toContain("already wired");

    const un = await ms(["install", "codex", "--uninstall"]);
    expect(un.code).toBe(0);
    expect(readFileSync(join(codexHome, "config.toml"), "utf8")).toBe(config);
    expect(existsSync(join(codexHome, "hooks.json"))).toBe(false);
    expect((await agentCheck(ms)).status).toBe("warn");
  });

  test("a config memsearch must not edit: one clear line, exit 1, nothing written", async () => {
    const { codexHome, ms } = setup();
    writeFileSync(join(codexHome, "config.toml"), "[features]\nhooks = false\n");
    const r = await ms(["install", "codex"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    expect(r.stderr).toContain("features.hooks = false");
    expect(existsSync(join(codexHome, "hooks.json"))).toBe(false);
  });

  test("an unknown agent is refused by name", async () => {
    const { ms } = setup();
    const bad = await ms(["install", "cursor"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("cursor");
  });

  test("an agent that is not set up here: said in one line, exit 1, nothing created", async () => {
    const p = newProject();
    const noPath = mkdtempSync(join(tmpdir(), "ms-nopath-"));
    const before = readdirSync(p.home);
    for (const agent of ["claude", "gemini", "copilot", "opencode", "codex"]) {
      const r = await p.ms(["install", agent], { PATH: noPath, CODEX_HOME: undefined, GEMINI_CLI_HOME: undefined, COPILOT_HOME: undefined, XDG_CONFIG_HOME: undefined, XDG_DATA_HOME: undefined });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("is not set up on this machine: nothing was written");
    }
    expect(readdirSync(p.home)).toEqual(before);
    // Installed but never run (no home folder yet): its command on PATH is enough.
    writeFileSync(join(noPath, "gemini"), "#!/bin/sh\n", { mode: 0o755 });
    const r = await p.ms(["install", "gemini"], { PATH: noPath, GEMINI_CLI_HOME: undefined });
    expect(r.code).toBe(0);
    expect(existsSync(join(p.home, ".gemini", "settings.json"))).toBe(true);
    rmSync(noPath, { recursive: true, force: true });
  });

  test("claude without `claude` on PATH: the plugin and the link are written, the two commands named; --uninstall takes exactly them back", async () => {
    const p = newProject();
    mkdirSync(join(p.home, ".claude"));
    const noPath = mkdtempSync(join(tmpdir(), "ms-nopath-"));
    const env = { PATH: noPath };
    const ms = (args: string[]) => p.ms(args, env);
    const dir = join(p.home, ".memsearch");

    const dry = await ms(["install", "claude", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would write the Claude Code plugin to ${join(dir, "plugin")}`);
    expect(dry.stdout).toContain(`would create ${join(dir, "bin", "memsearch")} (a link to ${realpathSync(BIN)})`);
    expect(dry.stdout).toContain("(dry run: nothing written)");
    expect(dry.stdout).not.toMatch(/^(created|wrote|ran)/m);
    expect(existsSync(dir)).toBe(false);

    const r = await ms(["install", "claude"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`  claude plugin marketplace add ${dir}\n  claude plugin install memsearch@memsearch`);
    expect(readlinkSync(join(dir, "bin", "memsearch"))).toBe(realpathSync(BIN));
    expect(JSON.parse(readFileSync(join(dir, ".claude-plugin", "marketplace.json"), "utf8")).plugins[0].source).toBe("./plugin");
    // The plugin is the repository's, file for file, and carries no binary: its bin/memsearch is the script.
    const files = (d: string, rel = ""): string[] => readdirSync(join(d, rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(d, join(rel, e.name)) : [join(rel, e.name)]));
    expect(files(join(dir, "plugin")).sort()).toEqual(files(join(REPO, "plugin")).sort());
    for (const f of files(join(REPO, "plugin"))) expect(readFileSync(join(dir, "plugin", f)).equals(readFileSync(join(REPO, "plugin", f)))).toBe(true);
    expect(statSync(join(dir, "plugin", "bin", "memsearch")).mode & 0o111).not.toBe(0);

    // The plugin's hook runs the linked binary (no memsearch on PATH).
    const hook = Bun.spawnSync([join(dir, "plugin", "bin", "memsearch"), "--version"], { env: { HOME: p.home, PATH: noPath }, stdout: "pipe", stderr: "pipe" });
    expect(hook.exitCode).toBe(0);
    expect((hook.stdout.toString() + hook.stderr.toString()).trim()).toMatch(/^memsearch, version /);

    // A stale file of an older plugin (a copy of the binary, say) goes on the next install.
    writeFileSync(join(dir, "plugin", "bin", "memsearch.exe"), "an old copy");
    const again = await ms(["install", "claude"]);
    expect(again.stdout).toContain(`removed ${join(dir, "plugin", "bin", "memsearch.exe")}`);
    expect((await ms(["install", "claude"])).stdout).toContain("is current");

    writeFileSync(join(dir, "config.toml"), "# the user's settings\n");
    const un = await ms(["install", "claude", "--uninstall"]);
    expect(un.code).toBe(0);
    expect(readdirSync(dir)).toEqual(["config.toml"]);
    expect(readdirSync(join(p.home, ".claude"))).toEqual([]);
    rmSync(noPath, { recursive: true, force: true });
  });

  test("claude refuses to write over a plugin folder or marketplace that is not memsearch's", async () => {
    const p = newProject();
    mkdirSync(join(p.home, ".claude"));
    const other = join(p.home, ".memsearch", "plugin", ".claude-plugin");
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, "plugin.json"), JSON.stringify({ name: "someone-else" }));
    const r = await p.ms(["install", "claude"], { PATH: "/nonexistent" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("holds another plugin, not memsearch's");
    expect(readdirSync(join(p.home, ".memsearch"))).toEqual(["plugin"]);
  });
});

describe("a private or read-only config of the agent's (issue 31)", () => {
  const mode = (path: string) => statSync(path).mode & 0o777;
  const canChown = process.getuid?.() === 0;

  test("codex: a 0600 config.toml stays 0600 (and its owner) through install and uninstall", async () => {
    const { codexHome, config, ms } = setup();
    const path = join(codexHome, "config.toml");
    chmodSync(path, 0o600);
    if (canChown) chownSync(path, 4242, 4343);
    expect((await ms(["install", "codex"])).code).toBe(0);
    expect(readFileSync(path, "utf8")).toContain("# memsearch");
    expect(mode(path)).toBe(0o600);
    if (canChown) expect([statSync(path).uid, statSync(path).gid]).toEqual([4242, 4343]);
    expect((await ms(["install", "codex", "--uninstall"])).code).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(config);
    expect(mode(path)).toBe(0o600);
    if (canChown) expect([statSync(path).uid, statSync(path).gid]).toEqual([4242, 4343]);
  });

  test("gemini and copilot: a 0600 settings.json stays 0600", async () => {
    const p = newProject();
    for (const [agent, path, env] of [
      ["gemini", join(p.home, ".gemini", "settings.json"), { GEMINI_CLI_HOME: p.home }],
      ["copilot", join(p.home, ".copilot", "settings.json"), { COPILOT_HOME: join(p.home, ".copilot") }],
    ] as const) {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, '{\n  "token": "secret"\n}\n');
      chmodSync(path, 0o600);
      expect([agent, (await p.ms(["install", agent], env)).code]).toEqual([agent, 0]);
      expect([agent, mode(path)]).toEqual([agent, 0o600]);
      expect((await p.ms(["install", agent, "--uninstall"], env)).code).toBe(0);
      expect([agent, mode(path), readFileSync(path, "utf8")]).toEqual([agent, 0o600, '{\n  "token": "secret"\n}\n']);
    }
  });

  test("a read-only config.toml is refused with one line, for install and for uninstall; nothing written", async () => {
    const { codexHome, config, ms } = setup();
    const path = join(codexHome, "config.toml");
    chmodSync(path, 0o444);
    const r = await ms(["install", "codex"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([`Error: ${path} is read-only (mode 0444): memsearch leaves it as it is; make it writable (chmod u+w), then run this again`]);
    expect(readFileSync(path, "utf8")).toBe(config);
    expect(mode(path)).toBe(0o444);
    expect(existsSync(join(codexHome, "hooks.json"))).toBe(false);
    chmodSync(path, 0o644);
    expect((await ms(["install", "codex"])).code).toBe(0);
    chmodSync(path, 0o444);
    const installed = readFileSync(path, "utf8");
    const hooks = readFileSync(join(codexHome, "hooks.json"), "utf8");
    const un = await ms(["install", "codex", "--uninstall"]);
    expect(un.code).not.toBe(0);
    expect(un.stderr.trim().split("\n")).toHaveLength(1);
    expect(un.stderr).toContain("is read-only (mode 0444)");
    expect(readFileSync(path, "utf8")).toBe(installed);
    expect(readFileSync(join(codexHome, "hooks.json"), "utf8")).toBe(hooks);
  });
});
