import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, startWatch, tempProject, type Project } from "../helpers/cli.ts";

async function until<T>(what: () => Promise<T | undefined>, ms = 8_000): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v || Date.now() > end) return v;
    await Bun.sleep(100);
  }
}

describe("memsearch watch", () => {
  const env = { MEMSEARCH_WATCH_DEBOUNCE_MS: "300" };
  const hits = async (p: Project, q: string) => JSON.parse((await p.ms(["search", q, "-j"], env)).stdout) as { source: string }[];

  test("indexes at start and claims the project", async () => {
    const p = tempProject();
    const w = await startWatch(p, env);
    try {
      expect(JSON.parse(readFileSync(join(p.root, ".memsearch", "watch.pid"), "utf8")).pid).toBe(w.proc.pid);
      expect(await until(async () => (await hits(p, "redis pool")).length || undefined)).toBeGreaterThan(0);
    } finally {
      await w.stop();
    }
  });

  test("a file with a NUL in one section is indexed but that character and said once, however often it is re-indexed", async () => {
    const p = tempProject();
    const w = await startWatch(p, env);
    let stderr = "";
    try {
      const f = join(p.memory, "2026-11-23.md");
      writeFileSync(f, "# 2026-11-23\n\n### 09:00\n- Chose pnpm\0 workspaces over lerna.\n\n### 09:10\n- Moved CI to buildkite.\n");
      expect(await until(async () => ((await hits(p, "pnpm workspaces")).length === 1 && (await hits(p, "buildkite")).length === 1) || undefined)).toBe(true);
      // Another change elsewhere: the file is reported again by the re-index, and not said again.
      writeFileSync(join(p.memory, "2026-11-24.md"), "# 2026-11-24\n\n### 09:00\n- Chose turborepo.\n");
      expect(await until(async () => (await hits(p, "turborepo")).length === 1 || undefined)).toBe(true);
    } finally {
      await w.stop();
      stderr = await new Response(w.proc.stderr).text();
    }
    expect(stderr.split("\n").filter((l) => l.startsWith("memsearch: "))).toEqual([`memsearch: cleaned ${join(p.memory, "2026-11-23.md")}: 1 section held control characters or bytes that are not UTF-8 (indexed without them)`]);
  });

  test("a second watch for the same project refuses", async () => {
    const p = tempProject();
    const w = await startWatch(p, env);
    try {
      const r = await run(["watch"], { cwd: p.root, env: { ...p.env, ...env }, timeoutMs: 10_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`already running for this project (pid ${w.proc.pid})`);
    } finally {
      await w.stop();
    }
  });

  test("created, changed, renamed and deleted files are followed", async () => {
    const p = tempProject();
    const w = await startWatch(p, env);
    try {
      expect(await until(async () => (await hits(p, "redis pool")).length || undefined)).toBeGreaterThan(0);
      const f = join(p.memory, "2026-11-23.md");
      writeFileSync(f, "# 2026-11-23\n\n### 09:00\n- Chose pnpm workspaces over lerna.\n");
      expect(await until(async () => (await hits(p, "pnpm workspaces")).length === 1 || undefined)).toBe(true);
      writeFileSync(f, "# 2026-11-23\n\n### 09:00\n- Chose turborepo after all.\n");
      expect(await until(async () => ((await hits(p, "turborepo")).length === 1 && (await hits(p, "pnpm workspaces")).length === 0) || undefined)).toBe(true);
      const g = join(p.memory, "renamed.md");
      renameSync(f, g);
      expect(await until(async () => (await hits(p, "turborepo"))[0]?.source === g || undefined)).toBe(true);
      rmSync(g);
      expect(await until(async () => (await hits(p, "turborepo")).length === 0 || undefined)).toBe(true);
    } finally {
      await w.stop();
    }
  });

  test("SIGTERM stops it and removes its PID file", async () => {
    const p = tempProject();
    const w = await startWatch(p, env);
    w.proc.kill("SIGTERM");
    await w.proc.exited;
    expect(existsSync(join(p.root, ".memsearch", "watch.pid"))).toBe(false);
  });
});
