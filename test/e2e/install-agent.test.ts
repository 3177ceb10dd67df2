/**
 * `memsearch install <agent>` through the compiled binary: --dry-run shows the change and writes
 * nothing, install wires Codex and doctor says so, --uninstall takes it all back, an unknown agent
 * is a clear error. Always a temp HOME and CODEX_HOME.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
