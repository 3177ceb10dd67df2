/**
 * The Claude Code plugin folder: manifests parse and agree with package.json, hooks.json wires the four
 * events to `memsearch hook <event>` in exec form (no shell), and the committed stand-in for the binary
 * runs a memsearch on PATH in its place, or answers every hook harmlessly when there is none.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installPluginBin } from "../../scripts/install-plugin-bin.ts";
import { pluginFiles } from "../../src/agents/claude/plugin-files.ts";

const ROOT = join(import.meta.dir, "..", "..");
const PLUGIN = join(ROOT, "plugin");
const readJson = (p: string) => JSON.parse(readFileSync(p, "utf8"));
const pkg = readJson(join(ROOT, "package.json"));

const EVENTS = {
  SessionStart: { sub: "session-start", maxTimeout: 10 },
  UserPromptSubmit: { sub: "user-prompt-submit", maxTimeout: 5 },
  Stop: { sub: "stop", maxTimeout: 10 },
  SessionEnd: { sub: "session-end", maxTimeout: 2 },
} as const;
type EventName = keyof typeof EVENTS;

const hooksJson = readJson(join(PLUGIN, "hooks", "hooks.json"));
function handlerOf(event: EventName) {
  const groups = hooksJson.hooks[event];
  expect(Array.isArray(groups)).toBe(true);
  expect(groups.length).toBe(1);
  expect(groups[0].hooks.length).toBe(1);
  return groups[0].hooks[0] as { type: string; command: string; args?: string[]; timeout?: number; async?: boolean };
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

  test("bin/ is documented, a Windows build and install leftovers are git-ignored", () => {
    expect(readFileSync(join(PLUGIN, "bin", "README.md"), "utf8")).toContain("install-plugin-bin.ts");
    const ignore = readFileSync(join(PLUGIN, ".gitignore"), "utf8").split("\n").map((l) => l.trim());
    expect(ignore).toContain("/bin/memsearch.exe");
    expect(ignore).toContain("/bin/.memsearch*.tmp");
  });
});

describe("hooks.json", () => {
  test("has a description and exactly the four events", () => {
    expect(typeof hooksJson.description).toBe("string");
    expect(Object.keys(hooksJson.hooks).sort()).toEqual(Object.keys(EVENTS).sort());
  });

  for (const [event, { sub, maxTimeout }] of Object.entries(EVENTS) as [EventName, (typeof EVENTS)[EventName]][]) {
    test(`${event}: exec-form command hook running 'hook ${sub}', timeout <= ${maxTimeout}s, not async`, () => {
      const h = handlerOf(event);
      expect(h.type).toBe("command");
      expect(h.command).toBe("${CLAUDE_PLUGIN_ROOT}/bin/memsearch");
      expect(h.args).toEqual(["hook", sub]);
      expect(typeof h.timeout).toBe("number");
      expect(h.timeout!).toBeGreaterThan(0);
      expect(h.timeout!).toBeLessThanOrEqual(maxTimeout);
      // Stop only queues the turn (milliseconds): async hooks die at the end of `claude -p`.
      expect(h.async).toBeUndefined();
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
    for (const step of ["memsearch search", "--limit 8", "memsearch expand", "memsearch transcript", "No relevant memories found."]) {
      expect(body).toContain(step);
    }
  });

  const commands = ["search", "status", "remember", "recent", "ask", "hub", "projects", "debug", "help"];
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
      if (c === "search" || c === "remember" || c === "ask" || c === "debug") {
        expect(typeof meta["argument-hint"]).toBe("string");
        expect(body).toContain("$ARGUMENTS");
      }
      if (c === "remember" || c === "recent" || c === "ask" || c === "hub" || c === "projects" || c === "debug") {
        const min = body.match(/memsearch (\d+\.\d+\.\d+) or newer/)?.[1];
        expect(min).toBeDefined();
        expect(semverLe(min!, pkg.version)).toBe(true);
        expect(body).toContain(`memsearch ${c === "ask" ? "recall" : c}`);
      }
      // The hub is a server: run from a slash command it must not hold the Bash tool until its timeout.
      if (c === "hub") expect(body).toContain("memsearch hub --detach");
      if (c === "help") for (const other of commands) expect(body).toContain(`/memsearch:${other}`);
    });
  }
});

describe("the stand-in bin/memsearch", () => {
  const tmp = mkdtempSync(join(tmpdir(), "memsearch plugin-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const standIn = join(PLUGIN, "bin", "memsearch");
  const sysPath = "/usr/bin:/bin";
  const onPath = join(tmp, "path bin");
  mkdirSync(onPath);
  writeFileSync(join(onPath, "memsearch"), `#!/bin/sh\nprintf '{"real":"%s"}\\n' "$*"\n`);
  chmodSync(join(onPath, "memsearch"), 0o755);

  // Exec form, as Claude Code runs it: the file itself, its arguments, JSON on stdin.
  const exec = (args: string[], PATH: string) => {
    const r = Bun.spawnSync([standIn, ...args], { cwd: tmp, env: { PATH }, stdin: Buffer.from('{"session_id":"s1"}'), stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
  };

  test("is committed, executable, and a shell script (never a compiled binary)", () => {
    expect(statSync(standIn).mode & 0o111).not.toBe(0);
    expect(readFileSync(standIn, "utf8")).toStartWith("#!/bin/sh\n");
    expect(statSync(standIn).size).toBeLessThan(4096);
  });

  for (const [event, { sub }] of Object.entries(EVENTS) as [EventName, (typeof EVENTS)[EventName]][]) {
    test(`${event}: runs a memsearch on PATH in its place`, () => {
      const r = exec(["hook", sub], `${sysPath}:${onPath}`);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toEqual({ real: `hook ${sub}` });
    });

    test(`${event}: no memsearch anywhere: valid JSON, exit 0`, () => {
      // The plugin's own bin/ on PATH (as for the Bash tool) must not make it call itself.
      const r = exec(["hook", sub], `${join(PLUGIN, "bin")}:${sysPath}`);
      expect(r.code).toBe(0);
      const out = JSON.parse(r.out);
      if (event === "SessionStart") expect(out.systemMessage).toContain("memsearch binary is not installed");
      else expect(out).toEqual({});
    });
  }

  test("runs the binary `install claude` linked at ~/.memsearch/bin/memsearch before anything on PATH ($MEMSEARCH_HOME when set)", () => {
    const home = join(tmp, "home");
    const linked = join(tmp, "linked bin");
    mkdirSync(linked, { recursive: true });
    writeFileSync(join(linked, "memsearch"), `#!/bin/sh\nprintf '{"linked":"%s"}\\n' "$*"\n`);
    chmodSync(join(linked, "memsearch"), 0o755);
    mkdirSync(join(home, ".memsearch", "bin"), { recursive: true });
    symlinkSync(join(linked, "memsearch"), join(home, ".memsearch", "bin", "memsearch"));
    const run = (env: Record<string, string>) => {
      const r = Bun.spawnSync([standIn, "hook", "stop"], { cwd: tmp, env: { PATH: `${sysPath}:${onPath}`, ...env }, stdin: Buffer.from("{}"), stdout: "pipe" });
      return JSON.parse(r.stdout.toString());
    };
    expect(run({ HOME: home })).toEqual({ linked: "hook stop" });
    mkdirSync(join(tmp, "other", "bin"), { recursive: true });
    symlinkSync(join(linked, "memsearch"), join(tmp, "other", "bin", "memsearch"));
    expect(run({ HOME: join(tmp, "nowhere"), MEMSEARCH_HOME: join(tmp, "other") })).toEqual({ linked: "hook stop" });
    // A link whose binary is gone (npm uninstall without memsearch uninstall): PATH, as before.
    rmSync(join(linked, "memsearch"));
    expect(run({ HOME: home })).toEqual({ real: "hook stop" });
  });

  test("any other command fails with one clear line", () => {
    const r = exec(["search", "x"], sysPath);
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toContain("only runs it");
  });
});

describe("the plugin the binary carries (src/agents/claude/plugin-files.ts)", () => {
  test("is plugin/ file for file, byte for byte, and the script is executable", () => {
    const walk = (rel = ""): string[] => readdirSync(join(PLUGIN, rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(rel ? `${rel}/${e.name}` : e.name) : [rel ? `${rel}/${e.name}` : e.name]));
    // A Windows build or a staged copy of the binary in a checkout is never part of the plugin.
    const onDisk = walk().filter((f) => !/^bin\/(memsearch\.exe|\.memsearch)/.test(f)).sort();
    const carried = pluginFiles();
    expect(carried.map((f) => f.path).sort()).toEqual(onDisk);
    for (const f of carried) {
      const bytes = typeof f.content === "string" ? Buffer.from(f.content) : Buffer.from(f.content);
      expect(bytes.equals(readFileSync(join(PLUGIN, f.path)))).toBe(true);
      expect(f.mode).toBe(f.path === "bin/memsearch" ? 0o755 : 0o644);
    }
  });
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
