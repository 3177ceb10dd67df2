/**
 * Layer 1, Claude Code's curated memory, through the compiled binary: a project with a Claude Code
 * memory folder chosen by `autoMemoryDirectory` (MEMORY.md and a topic file), a root, a nested and
 * a local CLAUDE.md, and a CLAUDE.md link to a file outside the project. `index`, `search`,
 * `recall`, `doctor`, the watch process and the hub's API find what they should and nothing else.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { handleApi } from "../../src/hub/api.ts";
import { HubData } from "../../src/hub/data.ts";
import type { CuratedView, Overview, SearchPage } from "../../src/hub/types.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { run, startWatch, tempProject } from "../helpers/cli.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const GITHUB_TOKEN = `ghp_${"Q".repeat(36)}`;

function curatedProject() {
  const p = tempProject();
  const root = realpathSync(p.root);
  const home = realpathSync(p.home);
  const outside = mkdtempSync(join(tmpdir(), "ms-outside-"));
  dirs.push(p.root, p.home, outside);
  const write = (path: string, text: string) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, text);
  };
  const config = join(home, "claude-config");
  // autoMemoryDirectory in the user's settings: Claude Code's memory of this project lives there.
  write(join(config, "settings.json"), JSON.stringify({ autoMemoryDirectory: "~/cc-memory/proj" }));
  const mem = join(home, "cc-memory", "proj");
  write(join(mem, "MEMORY.md"), `# Memory index\n- [Decisions](decisions.md): what we settled on\n- deploy token kept in the vault, not ${GITHUB_TOKEN}\n`);
  write(join(mem, "decisions.md"), "# Decisions\n\nRetries go through the flamingo queue, never inline sleeps.\n");
  // The default folder is not Claude Code's memory once the setting names another.
  write(join(config, "projects", projectSlug(root), "memory", "MEMORY.md"), "# Stale\n\nThe armadillo cache was dropped.\n");
  write(join(root, "CLAUDE.md"), "# Project\n\nDeploys go through the heron pipeline.\n");
  write(join(root, "pkg", "api", "CLAUDE.md"), "# API\n\nErrors use the pangolin envelope.\n");
  write(join(root, "CLAUDE.local.md"), "# Mine\n\nMy sandbox is walrus.local.\n");
  write(join(outside, "CLAUDE.md"), "# Someone else's\n\nThe ocelot credentials live here.\n");
  mkdirSync(join(root, "pkg", "evil"), { recursive: true });
  symlinkSync(join(outside, "CLAUDE.md"), join(root, "pkg", "evil", "CLAUDE.md"));
  const env = { ...p.env, CLAUDE_CONFIG_DIR: config, MEMSEARCH_EMBEDDING_PROVIDER: "none", TZ: "UTC" };
  const ms = (args: string[], extra: Record<string, string> = {}) => run(args, { cwd: root, env: { ...env, ...extra }, timeoutMs: 60_000 });
  return { p, root, home, mem, config, env, ms };
}

type Hit = { source: string; kind: string; from_repository: boolean };

describe("Claude Code's curated memory (layer 1)", () => {
  test("index, search and recall find a decision recorded only in Claude Code's memory, labelled curated; links out and the unused default folder stay out", async () => {
    const c = curatedProject();
    const idx = await c.ms(["index"]);
    expect(idx.code).toBe(0);

    const hits = JSON.parse((await c.ms(["search", "flamingo queue retries", "-j"])).stdout) as Hit[];
    expect(hits[0]).toMatchObject({ source: join(c.mem, "decisions.md"), kind: "curated", from_repository: false });
    const text = (await c.ms(["search", "flamingo queue retries"])).stdout;
    expect(text).toContain(`Curated: ${join(c.mem, "decisions.md")}`);

    // Notes stay notes; the root and nested CLAUDE.md and the local one are curated (a CLAUDE.md comes with the repository).
    expect((JSON.parse((await c.ms(["search", "redis pool", "-j"])).stdout) as Hit[])[0]?.kind).toBe("note");
    expect((JSON.parse((await c.ms(["search", "heron pipeline", "-j"])).stdout) as Hit[])[0]).toMatchObject({ source: join(c.root, "CLAUDE.md"), kind: "curated", from_repository: true });
    expect((JSON.parse((await c.ms(["search", "pangolin envelope", "-j"])).stdout) as Hit[])[0]).toMatchObject({ source: join(c.root, "pkg", "api", "CLAUDE.md"), kind: "curated" });
    expect((JSON.parse((await c.ms(["search", "walrus sandbox", "-j"])).stdout) as Hit[])[0]).toMatchObject({ source: join(c.root, "CLAUDE.local.md"), kind: "curated", from_repository: false });
    expect(JSON.parse((await c.ms(["search", "ocelot", "-j"])).stdout)).toEqual([]);
    expect(JSON.parse((await c.ms(["search", "armadillo", "-j"])).stdout)).toEqual([]);

    const r = await c.ms(["recall", "flamingo queue retries", "--raw", "-j"]);
    expect(r.code).toBe(0);
    const top = JSON.parse(r.stdout).results[0];
    expect(top.from).toEqual(["curated"]);
    expect(top.note).toMatchObject({ source: join(c.mem, "decisions.md"), kind: "curated" });
    const plain = await c.ms(["recall", "flamingo queue retries", "--raw"]);
    expect(plain.stdout).toContain("[curated]");
    expect(plain.stdout).toContain(`Curated: ${join(c.mem, "decisions.md")}`);
  }, 120_000);

  test("a deleted curated file leaves the index at the next index run", async () => {
    const c = curatedProject();
    expect((await c.ms(["index"])).code).toBe(0);
    expect(JSON.parse((await c.ms(["search", "pangolin envelope", "-j"])).stdout)).toHaveLength(1);
    rmSync(join(c.root, "pkg", "api", "CLAUDE.md"));
    expect((await c.ms(["index"])).code).toBe(0);
    expect(JSON.parse((await c.ms(["search", "pangolin envelope", "-j"])).stdout)).toEqual([]);
  }, 120_000);

  test("indexing.curated = false: the curated files indexed before leave the index, notes stay", async () => {
    const c = curatedProject();
    expect((await c.ms(["index"])).code).toBe(0);
    expect(JSON.parse((await c.ms(["search", "flamingo queue", "-j"])).stdout)).toHaveLength(1);
    const off = { MEMSEARCH_INDEXING_CURATED: "false" };
    expect((await c.ms(["index"], off)).code).toBe(0);
    expect(JSON.parse((await c.ms(["search", "flamingo queue", "-j"], off)).stdout)).toEqual([]);
    expect((JSON.parse((await c.ms(["search", "redis pool", "-j"], off)).stdout) as Hit[])[0]?.kind).toBe("note");
  }, 120_000);

  test("doctor names the curated files, where the memory folder resolved, and the link it did not follow", async () => {
    const c = curatedProject();
    await c.ms(["index"]);
    const d = await c.ms(["doctor", "-j"]);
    const check = (JSON.parse(d.stdout) as { name: string; status: string; detail: string }[]).find((x) => x.name === "curated memory")!;
    expect(check).toBeDefined();
    for (const name of ["CLAUDE.md", "CLAUDE.local.md", "pkg/api/CLAUDE.md", "MEMORY.md (memory folder)", "decisions.md (memory folder)"]) expect(check.detail).toContain(name);
    expect(check.detail).toContain("5 curated file(s)");
    expect(check.detail).toContain("5 in the index");
    expect(check.detail).toContain(`memory folder ${c.mem} (autoMemoryDirectory in ${join(c.config, "settings.json")})`);
    expect(check.detail).toContain(`${join(c.root, "pkg", "evil", "CLAUDE.md")} not read: a symbolic link leading out of the project`);
    expect(check.status).toBe("warn");
  }, 120_000);

  test("the watch process indexes the curated files, picks up an edit of CLAUDE.md and of MEMORY.md, and a new nested CLAUDE.md", async () => {
    const c = curatedProject();
    const extra = { MEMSEARCH_WATCH_DEBOUNCE_MS: "200" };
    const w = await startWatch({ ...c.p, root: c.root, env: c.env }, extra);
    const hits = async (q: string) => JSON.parse((await c.ms(["search", q, "-j"], extra)).stdout) as Hit[];
    const until = async (ok: () => Promise<boolean>, ms = 15_000) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (await ok()) return true;
        await Bun.sleep(150);
      }
      return false;
    };
    try {
      expect(await until(async () => (await hits("flamingo queue"))[0]?.kind === "curated")).toBe(true);
      appendFileSync(join(c.root, "CLAUDE.md"), "\n## Releases\n\nReleases are tagged by the kookaburra bot.\n");
      expect(await until(async () => (await hits("kookaburra bot"))[0]?.source === join(c.root, "CLAUDE.md"))).toBe(true);
      appendFileSync(join(c.mem, "MEMORY.md"), "- the staging database is called narwhal\n");
      expect(await until(async () => (await hits("narwhal staging"))[0]?.source === join(c.mem, "MEMORY.md"))).toBe(true);
      // A CLAUDE.md in a folder made after the start (not watched yet): found by the next walk.
      mkdirSync(join(c.root, "apps", "web"), { recursive: true });
      writeFileSync(join(c.root, "apps", "web", "CLAUDE.md"), "# Web\n\nThe web app renders with the axolotl engine.\n");
      expect(await until(async () => (await hits("axolotl engine"))[0]?.source === join(c.root, "apps", "web", "CLAUDE.md"), 60_000)).toBe(true);
    } finally {
      await w.stop();
    }
  }, 120_000);

  test("the prompt hook gates curated chunks like notes and quotes them as curated data, a committed CLAUDE.md labelled as from the repository", async () => {
    const c = curatedProject();
    expect((await c.ms(["index"])).code).toBe(0);
    const hook = async (prompt: string, session: string) => {
      const r = await run(["hook", "user-prompt-submit"], { cwd: c.root, env: { ...c.env, MEMSEARCH_NO_WATCH: "1", MEMSEARCH_NO_TRANSCRIPT_INDEX: "1" }, stdin: JSON.stringify({ session_id: session, prompt, cwd: c.root }), timeoutMs: 30_000 });
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout).hookSpecificOutput?.additionalContext as string | undefined;
    };
    const mine = await hook("how do retries use the flamingo queue?", "s-1");
    expect(mine).toContain("curated decisions.md");
    expect(mine).toContain('· "Retries go through the flamingo queue');
    expect(mine).not.toContain('(from the repository) "Retries');
    const committed = await hook("which heron pipeline do deploys go through?", "s-2");
    expect(committed).toContain("curated CLAUDE.md");
    expect(committed).toContain('(from the repository) "Deploys go through the heron pipeline');
    // Below the gate: a prompt sharing no rare word with any file gets nothing.
    expect(await hook("what is the weather like on jupiter today?", "s-3")).toBeUndefined();
  }, 120_000);

  test("the hub lists the curated files and opens each one redacted; its search labels them", async () => {
    const c = curatedProject();
    await c.ms(["index"]);
    const data = HubData.open({ allProjects: false, cwd: c.root, env: { ...process.env, ...c.env } as NodeJS.ProcessEnv });
    const get = async <T>(path: string, params: Record<string, string | number> = {}) => {
      const r = await handleApi(data, path, new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])));
      return { status: r.status, body: (await r.json()) as T };
    };
    const o = (await get<Overview>("/api/overview")).body;
    expect(o.curated).not.toBeNull();
    const files = o.curated!.files;
    expect(files.map((f) => f.path).sort()).toEqual([join(c.mem, "MEMORY.md"), join(c.mem, "decisions.md"), join(c.root, "CLAUDE.local.md"), join(c.root, "CLAUDE.md"), join(c.root, "pkg", "api", "CLAUDE.md")].sort());
    expect(o.curated!.memoryFolder).toMatchObject({ dir: c.mem, from: "user settings", exists: true });
    const memory = files.find((f) => f.path === join(c.mem, "MEMORY.md"))!;
    const view = await get<CuratedView>("/api/curated", { project: o.curated!.project, index: memory.index });
    expect(view.status).toBe(200);
    expect(view.body.content).toContain("Decisions");
    expect(view.body.content).not.toContain(GITHUB_TOKEN);
    expect((await get("/api/curated", { project: o.curated!.project, index: 99 })).status).toBe(404);
    const s = (await get<SearchPage>("/api/search", { q: "flamingo queue", mode: "notes" })).body;
    expect(s.hits[0]?.from).toEqual(["curated"]);
  }, 120_000);

  test("a project with only CLAUDE.md and Claude Code's MEMORY.md, never indexed: search and recall index them first and find them (issue 31)", async () => {
    const p = tempProject({ notes: "none" });
    dirs.push(p.root, p.home);
    const root = realpathSync(p.root);
    writeFileSync(join(root, "CLAUDE.md"), "# Project\n\nDeploys go through the heron pipeline.\n");
    const mem = join(realpathSync(p.home), ".claude", "projects", projectSlug(root), "memory");
    mkdirSync(mem, { recursive: true });
    writeFileSync(join(mem, "MEMORY.md"), "# Memory\n\n- Retries go through the flamingo queue, never inline sleeps.\n");
    const env = { ...p.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };
    const ms = (args: string[]) => run(args, { cwd: root, env, timeoutMs: 60_000 });

    const s = await ms(["search", "flamingo queue", "-j"]);
    expect(s.code).toBe(0);
    expect(s.stderr).not.toContain("Nothing is indexed");
    expect((JSON.parse(s.stdout) as Hit[])[0]).toMatchObject({ source: join(mem, "MEMORY.md"), kind: "curated" });

    const q = tempProject({ notes: "none" });
    dirs.push(q.root, q.home);
    const qroot = realpathSync(q.root);
    writeFileSync(join(qroot, "CLAUDE.md"), "# Project\n\nDeploys go through the heron pipeline.\n");
    const r = await run(["recall", "heron pipeline deploys", "--raw", "-j"], { cwd: qroot, env: { ...q.env, MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" }, timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    const top = JSON.parse(r.stdout).results[0];
    expect(top?.note).toMatchObject({ source: join(qroot, "CLAUDE.md"), kind: "curated" });
  }, 120_000);
});
