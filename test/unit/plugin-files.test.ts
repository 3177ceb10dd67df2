/**
 * The Claude Code plugin folder: manifests parse and agree with package.json, hooks.json wires the four
 * events to `memsearch hook <event>`, and each hook command really works when run by a shell, with the
 * plugin's own binary, with one on PATH, and with none at all.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installPluginBin } from "../../scripts/install-plugin-bin.ts";

const ROOT = join(import.meta.dir, "..", "..");
const PLUGIN = join(ROOT, "plugin");
const readJson = (p: string) => JSON.parse(readFileSync(p, "utf8"));
const pkg = readJson(join(ROOT, "package.json"));

const EVENTS = {
  SessionStart: { sub: "session-start", maxTimeout: 10 },
  UserPromptSubmit: { sub: "user-prompt-submit", maxTimeout: 5 },
  Stop: { sub: "stop", maxTimeout: 120 },
  SessionEnd: { sub: "session-end", maxTimeout: 2 },
} as const;
type EventName = keyof typeof EVENTS;

const hooksJson = readJson(join(PLUGIN, "hooks", "hooks.json"));
function handlerOf(event: EventName) {
  const groups = hooksJson.hooks[event];
  expect(Array.isArray(groups)).toBe(true);
  expect(groups.length).toBe(1);
  expect(groups[0].hooks.length).toBe(1);
  return groups[0].hooks[0] as { type: string; command: string; timeout?: number; async?: boolean };
}

/** Splits `---\nyaml\n---\nbody` and parses the YAML. */
function frontmatter(path: string): { meta: Record<string, unknown>; body: string } {
  const text = readFileSync(path, "utf8");
  const m = text.match(/^---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$/);
  if (!m) throw new Error(`${path}: no frontmatter`);
  return { meta: Bun.YAML.parse(m[1]!) as Record<string, unknown>, body: m[2]! };
}

const semver = (v: string) => v.split(/[.-]/).slice(0, 3).map(Number);
const semverLe = (a: string, b: string) => {
  const [x, y] = [semver(a), semver(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]!;
  return true;
};

describe("manifests", () => {
  test("plugin.json: name, version = package.json, metadata", () => {
    const manifest = readJson(join(PLUGIN, ".claude-plugin", "plugin.json"));
    expect(manifest.name).toBe("memsearch");
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.license).toBe("MIT");
    expect(typeof manifest.description).toBe("string");
    expect(manifest.description.length).toBeGreaterThan(10);
    expect(typeof manifest.author?.name).toBe("string");
    expect(Array.isArray(manifest.keywords)).toBe(true);
  });

  test("marketplace.json at the repo root points at ./plugin with the same name and version", () => {
    const mp = readJson(join(ROOT, ".claude-plugin", "marketplace.json"));
    expect(mp.name).toBe("memsearch");
    expect(typeof mp.owner?.name).toBe("string");
    expect(mp.plugins.length).toBe(1);
    const entry = mp.plugins[0];
    expect(entry.name).toBe("memsearch");
    expect(entry.source).toBe("./plugin");
    expect(entry.version).toBe(pkg.version);
    expect(typeof entry.description).toBe("string");
    expect(readJson(join(ROOT, entry.source, ".claude-plugin", "plugin.json")).name).toBe(entry.name);
  });

  test("bin/ exists, is documented, and a built binary is git-ignored", () => {
    expect(existsSync(join(PLUGIN, "bin", ".gitkeep"))).toBe(true);
    expect(readFileSync(join(PLUGIN, "bin", "README.md"), "utf8")).toContain("install-plugin-bin.ts");
    const ignore = readFileSync(join(PLUGIN, ".gitignore"), "utf8").split("\n").map((l) => l.trim());
    expect(ignore).toContain("/bin/memsearch");
    expect(ignore).toContain("/bin/memsearch.exe");
  });
});

describe("hooks.json", () => {
  test("has a description and exactly the four events", () => {
    expect(typeof hooksJson.description).toBe("string");
    expect(Object.keys(hooksJson.hooks).sort()).toEqual(Object.keys(EVENTS).sort());
  });

  for (const [event, { sub, maxTimeout }] of Object.entries(EVENTS) as [EventName, (typeof EVENTS)[EventName]][]) {
    test(`${event}: command hook running 'hook ${sub}', timeout <= ${maxTimeout}s`, () => {
      const h = handlerOf(event);
      expect(h.type).toBe("command");
      expect(h.command).toContain('"${CLAUDE_PLUGIN_ROOT}/bin/memsearch"');
      expect(h.command).toContain(`exec "$b" hook ${sub};`);
      expect(h.command).toContain(`exec memsearch hook ${sub};`);
      expect(typeof h.timeout).toBe("number");
      expect(h.timeout!).toBeGreaterThan(0);
      expect(h.timeout!).toBeLessThanOrEqual(maxTimeout);
      expect(h.async === true).toBe(event === "Stop");
    });
  }
});

describe("skill and commands", () => {
  test("memory-recall SKILL.md frontmatter", () => {
    const { meta, body } = frontmatter(join(PLUGIN, "skills", "memory-recall", "SKILL.md"));
    expect(meta.name).toBe("memory-recall");
    expect(typeof meta.description).toBe("string");
    expect((meta.description as string).length).toBeLessThanOrEqual(1000);
    expect(meta.context).toBe("fork");
    expect(meta.background).toBe(false);
    const tools = ([] as string[]).concat(meta["allowed-tools"] as string | string[]);
    expect(tools.length).toBeGreaterThan(0);
    for (const t of tools) expect(t).toMatch(/^Bash\((\$\{CLAUDE_PLUGIN_ROOT\}\/bin\/)?memsearch \*\)$/);
    for (const step of ["memsearch search", "--top-k 8", "memsearch expand", "memsearch transcript", "No relevant memories found."]) {
      expect(body).toContain(step);
    }
  });

  const commands = ["search", "status", "remember", "recent"];
  test("the command files exist", () => {
    const present = readdirSync(join(PLUGIN, "commands")).filter((f) => f.endsWith(".md")).map((f) => f.slice(0, -3));
    for (const c of commands) expect(present).toContain(c);
  });

  for (const c of commands) {
    test(`/memsearch:${c} has a description and memsearch-only tools`, () => {
      const { meta, body } = frontmatter(join(PLUGIN, "commands", `${c}.md`));
      expect(typeof meta.description).toBe("string");
      expect((meta.description as string).length).toBeGreaterThan(5);
      expect(String(meta["allowed-tools"])).toContain("Bash(memsearch *)");
      expect(body).toContain("memsearch ");
      if (c === "search" || c === "remember") {
        expect(typeof meta["argument-hint"]).toBe("string");
        expect(body).toContain("$ARGUMENTS");
      }
      if (c === "remember" || c === "recent") {
        const min = body.match(/memsearch (\d+\.\d+\.\d+) or newer/)?.[1];
        expect(min).toBeDefined();
        expect(semverLe(min!, pkg.version)).toBe(true);
        expect(body).toContain(`memsearch ${c}`);
      }
    });
  }
});

describe("hook commands run by a shell", () => {
  const tmp = mkdtempSync(join(tmpdir(), "memsearch plugin-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  // A PATH holding only `sh`: no memsearch anywhere.
  const bareBin = join(tmp, "bare-bin");
  mkdirSync(bareBin);
  symlinkSync("/bin/sh", join(bareBin, "sh"));

  // Shell builtins only (PATH may hold nothing but sh): saves stdin next to itself, echoes its args.
  const FAKE = `#!/bin/sh\nIFS= read -r line || true\nprintf '%s' "$line" > "\${0%/*}/stdin.txt"\nprintf '{"args":"%s"}\\n' "$*"\n`;
  function fakeBinary(dir: string, name = "memsearch", mode = 0o755) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), FAKE);
    chmodSync(join(dir, name), mode);
  }

  // The plugin root deliberately contains a space.
  const withBin = join(tmp, "plugin root");
  fakeBinary(join(withBin, "bin"));
  const emptyRoot = join(tmp, "empty root");
  mkdirSync(join(emptyRoot, "bin"), { recursive: true });
  const notExecRoot = join(tmp, "not exec root");
  fakeBinary(join(notExecRoot, "bin"), "memsearch", 0o644);
  const pathBin = join(tmp, "path bin");
  fakeBinary(pathBin);
  symlinkSync("/bin/sh", join(pathBin, "sh"));

  function run(command: string, env: Record<string, string>, stdin: string) {
    const cwd = mkdtempSync(join(tmp, "cwd-"));
    const r = Bun.spawnSync(["/bin/sh", "-c", command], { cwd, env, stdin: Buffer.from(stdin), stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
  }
  const input = (event: EventName) => JSON.stringify({ session_id: "s1", cwd: tmp, hook_event_name: event });

  for (const [event, { sub }] of Object.entries(EVENTS) as [EventName, (typeof EVENTS)[EventName]][]) {
    test(`${event}: runs the plugin's bin/memsearch with 'hook ${sub}' and passes stdin`, () => {
      rmSync(join(withBin, "bin", "stdin.txt"), { force: true });
      const r = run(handlerOf(event).command, { PATH: bareBin, CLAUDE_PLUGIN_ROOT: withBin }, input(event));
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toEqual({ args: `hook ${sub}` });
      expect(readFileSync(join(withBin, "bin", "stdin.txt"), "utf8")).toBe(input(event));
    });

    test(`${event}: works when \${CLAUDE_PLUGIN_ROOT} is substituted into the text instead`, () => {
      const command = handlerOf(event).command.replaceAll("${CLAUDE_PLUGIN_ROOT}", withBin);
      const r = run(command, { PATH: bareBin }, input(event));
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toEqual({ args: `hook ${sub}` });
    });

    test(`${event}: falls back to memsearch on PATH`, () => {
      for (const root of [emptyRoot, notExecRoot]) {
        const r = run(handlerOf(event).command, { PATH: pathBin, CLAUDE_PLUGIN_ROOT: root }, input(event));
        expect(r.code).toBe(0);
        expect(JSON.parse(r.out)).toEqual({ args: `hook ${sub}` });
      }
    });

    test(`${event}: no binary anywhere still prints valid JSON and exits 0`, () => {
      for (const root of [emptyRoot, notExecRoot]) {
        const r = run(handlerOf(event).command, { PATH: bareBin, CLAUDE_PLUGIN_ROOT: root }, input(event));
        expect(r.code).toBe(0);
        const out = JSON.parse(r.out);
        if (event === "SessionStart") expect(out.systemMessage).toContain("[memsearch] binary not found");
        else expect(out).toEqual({});
      }
    });
  }
});

describe("scripts/install-plugin-bin.ts", () => {
  const tmp = mkdtempSync(join(tmpdir(), "memsearch-install-bin-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  test("copies the binary atomically and makes it executable", () => {
    const src = join(tmp, "memsearch-built");
    writeFileSync(src, "#!/bin/sh\necho v1\n");
    const binDir = join(tmp, "plugin", "bin");
    const dest = installPluginBin(src, binDir);
    expect(dest).toBe(join(binDir, "memsearch"));
    expect(readFileSync(dest, "utf8")).toBe("#!/bin/sh\necho v1\n");
    expect(statSync(dest).mode & 0o777).toBe(0o755);
    writeFileSync(src, "#!/bin/sh\necho v2\n");
    installPluginBin(src, binDir);
    expect(readFileSync(dest, "utf8")).toContain("v2");
    expect(readdirSync(binDir)).toEqual(["memsearch"]);
  });

  test("a missing binary fails with one clear line", () => {
    const missing = join(tmp, "nope", "memsearch");
    const r = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "install-plugin-bin.ts"), missing, join(tmp, "bin2")], { stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(1);
    const err = r.stderr.toString().trim();
    expect(err.split("\n").length).toBe(1);
    expect(err).toContain("run 'bun run build' first");
    expect(existsSync(join(tmp, "bin2"))).toBe(false);
  });
});
