/**
 * The data folder check (core/project.ts: checkDataFolder) and the helpers every write and read
 * of memsearch's own files goes through (core/fsutil.ts), on links and FIFOs a cloned repository
 * could plant. The whole entry points are driven in test/fault/hostile-repo.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UnsafeDataError } from "../../src/core/errors.ts";
import { atomicWrite, freshFile, openOwnFile, readOwnText, readTextQuiet } from "../../src/core/fsutil.ts";
import { checkDataFolder, dataFiles, type ProjectPaths } from "../../src/core/project.ts";
import { appendAll } from "../../src/memory/journal.ts";
import { scanPaths } from "../../src/index/scanner.ts";

const base = mkdtempSync(join(tmpdir(), "ms-data-folder-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/** A project with a data folder, and a file outside it standing for ~/.bashrc. */
function setup(): { paths: ProjectPaths; outside: string; target: string } {
  const root = join(base, `p${++n}`);
  const paths = { root, ...dataFiles(join(root, ".memsearch")) };
  mkdirSync(paths.memoryDir, { recursive: true });
  writeFileSync(join(paths.memoryDir, "2026-11-20.md"), "# 2026-11-20\n");
  const outside = join(base, `out${n}`);
  mkdirSync(outside);
  const target = join(outside, "bashrc");
  writeFileSync(target, "export PATH=$HOME/bin:$PATH\n");
  return { paths, outside, target };
}

const fifo = (path: string) => expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);

describe("checkDataFolder", () => {
  test("a clean data folder, and a missing one, pass", () => {
    const { paths } = setup();
    expect(() => checkDataFolder(paths, { chosen: false })).not.toThrow();
    rmSync(paths.dataDir, { recursive: true });
    expect(() => checkDataFolder(paths, { chosen: false })).not.toThrow();
  });

  test("a link anywhere below the folder is refused, naming it on one line", () => {
    for (const rel of ["watch.log", "memory/2026-11-21.md", "memory", "index", "pending/prompts", "memory/deep/er/x.md"]) {
      const { paths, target, outside } = setup();
      const path = join(paths.dataDir, rel);
      mkdirSync(join(path, ".."), { recursive: true });
      rmSync(path, { recursive: true, force: true });
      symlinkSync(rel.endsWith(".md") || rel.endsWith(".log") ? target : outside, path);
      let err: unknown;
      try {
        checkDataFolder(paths, { chosen: false });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UnsafeDataError);
      expect((err as Error).message).toContain(`".memsearch/${rel}" is a symbolic link`);
      expect((err as Error).message).not.toContain("\n");
    }
  });

  test("the folder itself a link is refused, even when MEMSEARCH_DIR names it; a FIFO in it is refused", () => {
    const { paths, outside } = setup();
    rmSync(paths.dataDir, { recursive: true });
    symlinkSync(outside, paths.dataDir);
    expect(() => checkDataFolder(paths, { chosen: false })).toThrow(/is a symbolic link.*set MEMSEARCH_DIR/);
    expect(() => checkDataFolder(paths, { chosen: true })).toThrow(UnsafeDataError);
    const q = setup();
    fifo(join(q.paths.memoryDir, "2026-11-22.md"));
    expect(() => checkDataFolder(q.paths, { chosen: false })).toThrow(/is a special file/);
  });

  test("a name with control characters is quoted, so none reaches the status line", () => {
    const { paths, target } = setup();
    symlinkSync(target, join(paths.memoryDir, "a\u001b[2Jb\nc.md"));
    expect(() => checkDataFolder(paths, { chosen: false })).toThrow(/"\.memsearch\/memory\/a\\u001b\[2Jb\\nc\.md"/);
  });

  test("a project reached through a link of the user's (a linked home, /tmp on macOS) passes", () => {
    const { paths } = setup();
    const via = join(base, `via${n}`);
    symlinkSync(paths.root, via);
    expect(() => checkDataFolder({ root: via, ...dataFiles(join(via, ".memsearch")) }, { chosen: false })).not.toThrow();
  });

  test("a folder outside the project passes only when the user chose it (MEMSEARCH_DIR)", () => {
    const { paths } = setup();
    const elsewhere = { ...paths, ...dataFiles(join(base, `chosen${n}`)) };
    mkdirSync(elsewhere.memoryDir, { recursive: true });
    expect(() => checkDataFolder(elsewhere, { chosen: true })).not.toThrow();
    expect(() => checkDataFolder(elsewhere, { chosen: false })).toThrow(/is not inside the project/);
  });
});

describe("the helpers memsearch's own files go through", () => {
  test("openOwnFile and readOwnText never follow a link; readTextQuiet gives undefined", () => {
    const { paths, target } = setup();
    const path = join(paths.dataDir, "watch.pid");
    symlinkSync(target, path);
    for (const mode of ["read", "append"] as const) expect(() => openOwnFile(path, mode)).toThrow(expect.objectContaining({ code: "ELOOP" }));
    expect(() => readOwnText(path)).toThrow(expect.objectContaining({ code: "ELOOP" }));
    expect(readTextQuiet(path)).toBeUndefined();
    expect(readFileSync(target, "utf8")).toBe("export PATH=$HOME/bin:$PATH\n");
  });

  test("a FIFO is neither waited on nor read: openOwnFile says ENOTREG (or ENXIO for a write with no reader)", () => {
    const { paths } = setup();
    const path = join(paths.dataDir, "hook-problems.json");
    fifo(path);
    expect(() => openOwnFile(path, "read")).toThrow(expect.objectContaining({ code: "ENOTREG" }));
    expect(() => openOwnFile(path, "append")).toThrow(expect.objectContaining({ code: expect.stringMatching(/^(ENOTREG|ENXIO)$/) }));
    expect(readTextQuiet(path)).toBeUndefined();
  });

  test("freshFile and atomicWrite replace a link instead of writing through it", () => {
    const { paths, target } = setup();
    const log = join(paths.dataDir, "watch.log");
    symlinkSync(target, log);
    const fd = freshFile(log);
    writeSync(fd, "watch started\n");
    closeSync(fd);
    expect(lstatSync(log).isSymbolicLink()).toBe(false);
    expect(readFileSync(log, "utf8")).toBe("watch started\n");
    const pid = join(paths.dataDir, "watch.pid");
    symlinkSync(target, pid);
    atomicWrite(pid, "{}");
    expect(lstatSync(pid).isSymbolicLink()).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("export PATH=$HOME/bin:$PATH\n");
  });

  test("a note is never appended through a link, and the link is left as it was", () => {
    const { paths, target } = setup();
    const day = join(paths.memoryDir, "2026-11-23.md");
    symlinkSync(target, day);
    expect(() => appendAll(day, "### 10:00\n- a note\n")).toThrow(/cannot write/);
    expect(readFileSync(target, "utf8")).toBe("export PATH=$HOME/bin:$PATH\n");
    expect(readlinkSync(day)).toBe(target);
  });
});

describe("scanner", () => {
  test("symlinked files in the memory folder are left out; elsewhere they are still followed", () => {
    const { paths, outside } = setup();
    writeFileSync(join(outside, "secret.md"), "# secret\n");
    symlinkSync(join(outside, "secret.md"), join(paths.memoryDir, "2026-11-24.md"));
    const names = (r: ReturnType<typeof scanPaths>) => r.files.map((f) => f.path.split("/").pop()).sort();
    expect(names(scanPaths([paths.memoryDir], { noLinksIn: [paths.memoryDir] }))).toEqual(["2026-11-20.md"]);
    expect(names(scanPaths([paths.memoryDir]))).toEqual(["2026-11-20.md", "secret.md"]);
  });
});
