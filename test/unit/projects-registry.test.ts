import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { InputError } from "../../src/core/errors.ts";
import { parseRegistry, readRegistry, recordProject, summarizeProject } from "../../src/memory/projects.ts";

const PROJECTS = resolve(import.meta.dir, "../../src/memory/projects.ts");

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ms-registry-"));
  file = join(dir, "home", ".memsearch", "projects.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const t0 = new Date("2026-11-20T09:00:00Z");
const later = (min: number) => new Date(t0.getTime() + min * 60_000);

describe("recordProject", () => {
  test("adds a project with its name, data folder and first and last seen", async () => {
    const root = join(dir, "shop");
    expect(await recordProject(root, join(root, ".memsearch"), { file, now: t0 })).toEqual({ written: true });
    const reg = readRegistry(file);
    expect(reg.projects).toEqual([{ path: root, name: "shop", dataDir: join(root, ".memsearch"), firstSeen: t0.toISOString(), lastSeen: t0.toISOString() }]);
    expect(JSON.parse(readFileSync(file, "utf8")).version).toBe(1);
  });

  test("a start within minutes of the last one writes nothing; a later one bumps lastSeen only", async () => {
    const root = join(dir, "shop");
    await recordProject(root, join(root, ".memsearch"), { file, now: t0 });
    expect((await recordProject(root, join(root, ".memsearch"), { file, now: later(3) })).written).toBe(false);
    expect((await recordProject(root, join(root, ".memsearch"), { file, now: later(30) })).written).toBe(true);
    const [p] = readRegistry(file).projects;
    expect(p!.firstSeen).toBe(t0.toISOString());
    expect(p!.lastSeen).toBe(later(30).toISOString());
  });

  test("a moved data folder (MEMSEARCH_DIR) is recorded at once", async () => {
    const root = join(dir, "shop");
    await recordProject(root, join(root, ".memsearch"), { file, now: t0 });
    await recordProject(root, join(dir, "elsewhere"), { file, now: later(1) });
    expect(readRegistry(file).projects[0]!.dataDir).toBe(join(dir, "elsewhere"));
  });

  test("entries it cannot read are kept, not dropped, when the file is rewritten", async () => {
    mkdirSync(join(file, ".."), { recursive: true });
    const odd = { path: "relative/path", firstSeen: "yesterday" };
    writeFileSync(file, JSON.stringify({ version: 1, projects: [odd, { path: "/x/old", firstSeen: t0.toISOString(), lastSeen: t0.toISOString() }] }));
    await recordProject(join(dir, "new"), join(dir, "new", ".memsearch"), { file, now: later(1) });
    const raw = JSON.parse(readFileSync(file, "utf8")).projects;
    expect(raw).toContainEqual(odd);
    const reg = readRegistry(file);
    expect(reg.projects.map((p) => p.path)).toEqual(["/x/old", join(dir, "new")]);
    // An entry written without a data folder gets the default one.
    expect(reg.projects[0]!.dataDir).toBe("/x/old/.memsearch");
    expect(reg.invalid).toEqual([odd]);
  });

  test("an unreadable registry is set aside, never overwritten", async () => {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, "{ not json");
    const r = await recordProject(join(dir, "p"), join(dir, "p", ".memsearch"), { file, now: t0 });
    expect(r.setAside).toBeDefined();
    expect(readFileSync(r.setAside!, "utf8")).toBe("{ not json");
    expect(readRegistry(file).projects).toHaveLength(1);
  });

  test("twelve processes recording at once lose nothing and leave valid JSON", async () => {
    const home = join(dir, "home");
    const procs = Array.from({ length: 12 }, (_, i) =>
      Bun.spawn(
        [process.execPath, "-e", `const { recordProject } = await import(${JSON.stringify(PROJECTS)}); await recordProject(${JSON.stringify(join(dir, `p${i}`))}, ${JSON.stringify(join(dir, `p${i}`, ".memsearch"))}, { file: ${JSON.stringify(file)}, timeoutMs: 20000 });`],
        { stdout: "ignore", stderr: "pipe", env: { ...process.env, HOME: home } },
      ),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual(Array(12).fill(0));
    const paths = readRegistry(file).projects.map((p) => p.path).sort();
    expect(paths).toEqual(Array.from({ length: 12 }, (_, i) => join(dir, `p${i}`)).sort());
    // No temp file or lock left behind.
    expect(readdirSync(join(file, "..")).sort()).toEqual(["projects.json"]);
  }, 60_000);
});

describe("parseRegistry", () => {
  test("the file is checked, not trusted", () => {
    expect(() => parseRegistry("[]")).toThrow(InputError);
    expect(() => parseRegistry('{"projects": {}}')).toThrow(/not a projects registry/);
    expect(() => parseRegistry("nope")).toThrow(/not valid JSON/);
    const ok = { path: "/a", firstSeen: t0.toISOString(), lastSeen: t0.toISOString() };
    const reg = parseRegistry(
      JSON.stringify({
        projects: [ok, ok, { ...ok, path: "/b", lastSeen: 5 }, { ...ok, path: "/c\u0000d" }, { ...ok, path: "/e", dataDir: "rel" }, "str", null, { ...ok, path: "/f", name: 42 }],
      }),
    );
    // The duplicate, a bad time, a NUL in a path, a relative data folder and non-objects are not projects.
    expect(reg.projects.map((p) => p.path)).toEqual(["/a", "/f"]);
    expect(reg.projects[1]!.name).toBe("f");
    expect(reg.invalid).toHaveLength(6);
  });

  test("no file is an empty registry", () => {
    expect(readRegistry(join(dir, "none.json"))).toEqual({ projects: [], invalid: [] });
  });
});

describe("summarizeProject", () => {
  test("counts the notes, names the newest, and marks a folder that is gone", () => {
    const root = join(dir, "shop");
    const memory = join(root, ".memsearch", "memory");
    mkdirSync(memory, { recursive: true });
    writeFileSync(join(memory, "2026-11-20.md"), "# 2026-11-20\n\n## Session 09:00\n\n### 09:00\n<!-- session:s turn:1 transcript:- -->\n- a\n\n### 09:30\n<!-- session:s turn:2 transcript:- -->\n- b\n");
    writeFileSync(join(memory, "2026-11-21.md"), "# 2026-11-21\n\n## Session 16:40\n\n### 16:40\n<!-- session:t turn:3 transcript:- -->\n- c\n");
    const entry = { path: root, name: "shop", dataDir: join(root, ".memsearch"), firstSeen: t0.toISOString(), lastSeen: t0.toISOString() };
    const s = summarizeProject(entry);
    expect(s).toMatchObject({ exists: true, notes: 3, lastNote: "2026-11-21 16:40", lastActive: new Date(2026, 10, 21, 16, 40).toISOString() });
    const gone = summarizeProject({ ...entry, path: join(dir, "gone"), dataDir: join(dir, "gone", ".memsearch") });
    expect(gone).toMatchObject({ exists: false, notes: 0, lastActive: t0.toISOString() });
    expect(gone.lastNote).toBeUndefined();
    expect(existsSync(join(dir, "gone"))).toBe(false);
  });
});
