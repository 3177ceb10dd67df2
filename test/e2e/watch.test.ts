import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, run, tempProject } from "../helpers/cli.ts";

async function until<T>(what: () => Promise<T | undefined>, ms = 8_000): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v || Date.now() > end) return v;
    await Bun.sleep(100);
  }
}

describe("memsearch watch", () => {
  const p = tempProject();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...p.env, MEMSEARCH_WATCH_DEBOUNCE_MS: "300" })) if (v !== undefined) env[k] = v;
  const proc = Bun.spawn([BIN, "watch"], { cwd: p.root, env, stdout: "pipe", stderr: "pipe" });
  const hits = async (q: string) => JSON.parse((await run(["search", q, "-j"], { cwd: p.root, env })).stdout) as { source: string }[];
  afterAll(() => proc.kill(9));

  test("indexes at start and claims the project", async () => {
    const pid = await until(async () => existsSync(join(p.root, ".memsearch", "watch.pid")) && JSON.parse(readFileSync(join(p.root, ".memsearch", "watch.pid"), "utf8")).pid);
    expect(pid).toBe(proc.pid);
    expect((await until(async () => (await hits("redis pool")).length || undefined))).toBeGreaterThan(0);
  });

  test("a second watch for the same project refuses", async () => {
    const r = await run(["watch"], { cwd: p.root, env, timeoutMs: 10_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`already running for this project (pid ${proc.pid})`);
  });

  test("created, changed, renamed and deleted files are followed", async () => {
    const f = join(p.memory, "2026-11-23.md");
    writeFileSync(f, "# 2026-11-23\n\n### 09:00\n- Chose pnpm workspaces over lerna.\n");
    expect(await until(async () => (await hits("pnpm workspaces")).length === 1 || undefined)).toBe(true);
    writeFileSync(f, "# 2026-11-23\n\n### 09:00\n- Chose turborepo after all.\n");
    expect(await until(async () => ((await hits("turborepo")).length === 1 && (await hits("pnpm workspaces")).length === 0) || undefined)).toBe(true);
    const g = join(p.memory, "renamed.md");
    renameSync(f, g);
    expect(await until(async () => (await hits("turborepo"))[0]?.source === g || undefined)).toBe(true);
    rmSync(g);
    expect(await until(async () => (await hits("turborepo")).length === 0 || undefined)).toBe(true);
  });

  test("SIGTERM stops it and removes its PID file", async () => {
    proc.kill("SIGTERM");
    await proc.exited;
    expect(existsSync(join(p.root, ".memsearch", "watch.pid"))).toBe(false);
  });
});
