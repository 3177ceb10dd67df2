/**
 * `memsearch install <agent>` through the compiled binary: --dry-run shows the change and writes
 * nothing, install wires Codex and doctor says so, --uninstall takes it all back, an unknown agent
 * is a clear error. Always a temp HOME and CODEX_HOME.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN } from "../helpers/cli.ts";
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
    expect(dry.stdout).toContain(`--- ${join(codexHome, "hooks.json")} (created)`);
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

  test("an unknown agent is refused by name; claude is wired through its plugin manager", async () => {
    const { ms } = setup();
    const bad = await ms(["install", "cursor"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("cursor");
    const claude = await ms(["install", "claude"]);
    expect(claude.code).toBe(0);
    expect(claude.stdout).toContain("claude plugin install memsearch@memsearch");
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
