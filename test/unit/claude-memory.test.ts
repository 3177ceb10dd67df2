/**
 * Where Claude Code keeps a project's curated memory (src/agents/claude/memory.ts): the memory
 * folder resolved as Claude Code resolves it, and the CLAUDE.md files of the project, with links
 * out, dependencies and dot folders left alone.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { findCuratedFiles, resolveMemoryFolder, type CuratedFile } from "../../src/agents/claude/memory.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function world() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "ms-cmem-")));
  dirs.push(base);
  const root = join(base, "proj");
  const home = join(base, "home");
  mkdirSync(join(root, ".git"), { recursive: true });
  mkdirSync(home, { recursive: true });
  const env = { HOME: home, CLAUDE_CONFIG_DIR: undefined, CLAUDE_CODE_DISABLE_AUTO_MEMORY: undefined } as NodeJS.ProcessEnv;
  const noManaged = join(base, "no-managed-settings.json");
  const write = (p: string, text: string) => {
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, text);
  };
  return { base, root, home, env, noManaged, write };
}

describe("the memory folder", () => {
  test("default: <config>/projects/<slug of the root>/memory, CLAUDE_CONFIG_DIR honoured", () => {
    const w = world();
    expect(resolveMemoryFolder(w.root, { env: w.env, managedSettings: w.noManaged })).toMatchObject({ dir: join(w.home, ".claude", "projects", projectSlug(w.root), "memory"), from: "default", enabled: true });
    const cfg = join(w.base, "cfg");
    expect(resolveMemoryFolder(w.root, { env: { ...w.env, CLAUDE_CONFIG_DIR: cfg }, managedSettings: w.noManaged }).dir).toBe(join(cfg, "projects", projectSlug(w.root), "memory"));
  });

  test("autoMemoryDirectory: user settings with ~/ expanded; managed settings first; a relative path refused", () => {
    const w = world();
    w.write(join(w.home, ".claude", "settings.json"), JSON.stringify({ autoMemoryDirectory: "~/sync/mem" }));
    expect(resolveMemoryFolder(w.root, { env: w.env, managedSettings: w.noManaged })).toMatchObject({ dir: join(w.home, "sync", "mem"), from: "user settings" });
    const managed = join(w.base, "managed.json");
    w.write(managed, JSON.stringify({ autoMemoryDirectory: "/srv/claude-mem" }));
    expect(resolveMemoryFolder(w.root, { env: w.env, managedSettings: managed })).toMatchObject({ dir: "/srv/claude-mem", from: "managed settings" });
    w.write(join(w.home, ".claude", "settings.json"), JSON.stringify({ autoMemoryDirectory: "relative/mem" }));
    const r = resolveMemoryFolder(w.root, { env: w.env, managedSettings: w.noManaged });
    expect(r.from).toBe("default");
    expect(r.ignored[0]?.why).toContain("not an absolute path");
  });

  test("the project's shared settings are never a source; its local settings only inside the project", () => {
    const w = world();
    const other = join(w.home, ".claude", "projects", "-another-project", "memory");
    w.write(join(w.root, ".claude", "settings.json"), JSON.stringify({ autoMemoryDirectory: other }));
    let r = resolveMemoryFolder(w.root, { env: w.env, managedSettings: w.noManaged });
    expect(r.from).toBe("default");
    expect(r.ignored.map((i) => i.why).join()).toContain("project settings are not read");
    // A local settings file a cloned repository could ship: pointing out of the project, refused.
    w.write(join(w.root, ".claude", "settings.local.json"), JSON.stringify({ autoMemoryDirectory: other }));
    r = resolveMemoryFolder(w.root, { env: w.env, managedSettings: w.noManaged });
    expect(r.from).toBe("default");
    expect(r.ignored.map((i) => i.why).join()).toContain("outside the project");
    // Inside the project: followed.
    w.write(join(w.root, ".claude", "settings.local.json"), JSON.stringify({ autoMemoryDirectory: join(w.root, ".claude", "memory") }));
    r = resolveMemoryFolder(w.root, { env: w.env, managedSettings: w.noManaged });
    expect(r).toMatchObject({ dir: join(w.root, ".claude", "memory"), from: "local settings" });
  });

  test("auto memory off: CLAUDE_CODE_DISABLE_AUTO_MEMORY over autoMemoryEnabled", () => {
    const w = world();
    w.write(join(w.home, ".claude", "settings.json"), JSON.stringify({ autoMemoryEnabled: false }));
    expect(resolveMemoryFolder(w.root, { env: w.env, managedSettings: w.noManaged }).enabled).toBe(false);
    expect(resolveMemoryFolder(w.root, { env: { ...w.env, CLAUDE_CODE_DISABLE_AUTO_MEMORY: "0" }, managedSettings: w.noManaged }).enabled).toBe(true);
  });
});

describe("the curated files", () => {
  test("memory folder, root, nested and local CLAUDE.md files; links out, dependencies and dot folders left out", () => {
    const w = world();
    const mem = join(w.home, ".claude", "projects", projectSlug(w.root), "memory");
    w.write(join(mem, "MEMORY.md"), "# Memory\n- [Decisions](decisions.md)\n");
    w.write(join(mem, "decisions.md"), "# Decisions\n");
    w.write(join(mem, "notes.txt"), "not markdown\n");
    w.write(join(w.root, "CLAUDE.md"), "# Root\n");
    w.write(join(w.root, "CLAUDE.local.md"), "# Local\n");
    w.write(join(w.root, ".claude", "CLAUDE.md"), "# Dot claude\n");
    w.write(join(w.root, "pkg", "a", "CLAUDE.md"), "# Nested\n");
    w.write(join(w.root, "node_modules", "dep", "CLAUDE.md"), "# A dependency's\n");
    w.write(join(w.root, ".hidden", "CLAUDE.md"), "# Hidden\n");
    w.write(join(w.base, "outside", "CLAUDE.md"), "# Outside\n");
    mkdirSync(join(w.root, "pkg", "b"), { recursive: true });
    symlinkSync(join(w.base, "outside", "CLAUDE.md"), join(w.root, "pkg", "b", "CLAUDE.md"));
    mkdirSync(join(w.root, "pkg", "c"), { recursive: true });
    symlinkSync(join(w.root, "pkg", "a", "CLAUDE.md"), join(w.root, "pkg", "c", "CLAUDE.md"));
    const found = findCuratedFiles(w.root, { env: w.env, managedSettings: w.noManaged });
    const expected: CuratedFile[] = [
        { path: join(mem, "MEMORY.md"), kind: "memory" },
        { path: join(mem, "decisions.md"), kind: "memory" },
        { path: join(w.root, ".claude", "CLAUDE.md"), kind: "CLAUDE.md" },
        { path: join(w.root, "CLAUDE.local.md"), kind: "CLAUDE.local.md" },
        { path: join(w.root, "CLAUDE.md"), kind: "CLAUDE.md" },
        { path: join(w.root, "pkg", "a", "CLAUDE.md"), kind: "CLAUDE.md" },
    ];
    expect(found.files).toEqual(expected.sort((a, b) => (a.path < b.path ? -1 : 1)));
    expect(found.skipped).toEqual([{ path: join(w.root, "pkg", "b", "CLAUDE.md"), reason: "a symbolic link leading out of the project" }]);
    expect(found.memoryDirs).toEqual([mem]);
    expect(found.watchDirs).toContain(join(w.root, "pkg", "a"));
  });

  test("the walk is bounded", () => {
    const w = world();
    for (let i = 0; i < 30; i++) w.write(join(w.root, `d${String(i).padStart(2, "0")}`, "CLAUDE.md"), "# x\n");
    const found = findCuratedFiles(w.root, { env: w.env, managedSettings: w.noManaged, maxFolders: 10 });
    expect(found.truncated).toBe(true);
    expect(found.folders).toBe(10);
    expect(found.files.length).toBeLessThan(30);
  });
});
