/**
 * `memsearch install opencode` through the compiled binary: --dry-run shows the plugin and writes
 * nothing, install wires OpenCode and doctor says so, a second install changes nothing,
 * --uninstall removes exactly the plugin, a file not ours is a clear one-line refusal. Always a
 * temp HOME and XDG_CONFIG_HOME.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN } from "../helpers/cli.ts";
import { doctorCheck, projectsRemovedAfterAll } from "../helpers/install-suite.ts";

const newProject = projectsRemovedAfterAll();

function setup() {
  const p = newProject();
  const dir = join(p.home, "xdg", "opencode");
  mkdirSync(join(dir, "plugins"), { recursive: true });
  const config = '{ "model": "anthropic/claude", "plugin": ["opencode-foo"] }\n';
  writeFileSync(join(dir, "opencode.json"), config);
  const env = { XDG_CONFIG_HOME: join(p.home, "xdg"), XDG_DATA_HOME: join(p.home, "data") };
  return { dir, config, ms: (args: string[]) => p.ms(args, env) };
}

const agentCheck = (ms: (a: string[]) => Promise<{ stdout: string }>) => doctorCheck(ms, "opencode");

describe("memsearch install opencode", () => {
  test("dry run, install, doctor, a second install, uninstall", async () => {
    const { dir, config, ms } = setup();
    const plugin = join(dir, "plugins", "memsearch.js");
    expect((await agentCheck(ms)).status).toBe("warn");
    expect((await agentCheck(ms)).fix).toBe("memsearch install opencode");

    const dry = await ms(["install", "opencode", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`--- ${plugin} (would create)`);
    expect(dry.stdout).toContain(`+ const EXE = ${JSON.stringify([BIN])};`);
    expect(dry.stdout).toContain("(dry run: nothing written)");
    expect(existsSync(plugin)).toBe(false);

    const inst = await ms(["install", "opencode"]);
    expect(inst.code).toBe(0);
    expect(inst.stdout).toContain(`created ${plugin}`);
    const check = await agentCheck(ms);
    expect(check.status).toBe("ok");
    expect(check.detail).toContain(`plugin in ${plugin}`);
    expect((await ms(["install", "opencode"])).stdout).toContain("already wired");

    const un = await ms(["install", "opencode", "--uninstall"]);
    expect(un.code).toBe(0);
    expect(un.stdout).toContain(`removed ${plugin}`);
    expect(readdirSync(join(dir, "plugins"))).toEqual([]);
    expect(readFileSync(join(dir, "opencode.json"), "utf8")).toBe(config);
    expect((await agentCheck(ms)).status).toBe("warn");
  });

  test("a memsearch.js that is not ours: one clear line, exit 1, left as it is", async () => {
    const { dir, ms } = setup();
    const plugin = join(dir, "plugins", "memsearch.js");
    writeFileSync(plugin, "export const Mine = async () => ({})\n");
    const r = await ms(["install", "opencode"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    expect(r.stderr).toContain("is not memsearch's plugin");
    expect(readFileSync(plugin, "utf8")).toBe("export const Mine = async () => ({})\n");
  });
});
