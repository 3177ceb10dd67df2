/**
 * `import` plans other agents' transcripts by the time their adapter says each last changed: an
 * OpenCode session is a name (`<database>#<session id>`), no file to stat, and its turns are
 * planned all the same; a session changed in the last minutes keeps its last turn for its Stop hook.
 */
import { claudeProject, wholeSource } from "../helpers/sources.ts";
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENTS } from "../../src/agents/registry.ts";
import { planImport } from "../../src/memory/import.ts";
import { opencodeFixtureDb } from "../helpers/opencode-db.ts";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const home = mkdtempSync(join(tmpdir(), "ms-import-oc-"));
  temps.push(home);
  const root = join(home, "proj");
  mkdirSync(join(root, ".git"), { recursive: true });
  const data = join(home, ".local", "share", "opencode");
  mkdirSync(data, { recursive: true });
  const db = opencodeFixtureDb(data, root);
  const env: NodeJS.ProcessEnv = { HOME: home, XDG_DATA_HOME: join(home, ".local", "share"), XDG_CONFIG_HOME: join(home, ".config") };
  const t = AGENTS.opencode.transcripts;
  const plan = (now?: number) =>
    planImport({
      root,
      memoryDir: join(root, ".memsearch", "memory"),
      now,
      sources: [claudeProject(root, join(home, ".claude", "projects")), wholeSource({ agent: "opencode", files: t.projectFiles(root, env), read: (p) => t.read(p, env), render: t.render })],
    });
  return { db, root, plan };
}

describe("import of OpenCode sessions", () => {
  test("a session of the project is planned by its name, its turns with it, nothing skipped", async () => {
    const { db, plan } = setup();
    const p = await plan();
    expect(p.skipped).toEqual([]);
    // Every readable session of the project is planned, as a Claude Code transcript is: ses_2 holds no turn (an answer nobody asked for).
    expect(p.transcripts.map((x) => x.path)).toEqual([`${db}#ses_1`, `${db}#ses_2`]);
    expect(p.todo.map((x) => x.uuid)).toEqual(["msg_u1", "msg_u2"]);
  });

  test("a session changed in the last minutes keeps its last turn for its Stop hook", async () => {
    const { db, plan } = setup();
    const now = Date.now();
    const h = new Database(db);
    h.run("UPDATE part SET time_updated = ? WHERE id = 'prt_a3a'", [now - 60_000]);
    h.close();
    const p = await plan(now);
    expect(p.skipped).toEqual([]);
    expect(p.todo.map((x) => x.uuid)).toEqual(["msg_u1"]);
    expect(p.active).toBe(1);
  });
});

describe("a session whose working directory is relative (issue 31)", () => {
  // Resolved, "." would name the folder import runs in: the project itself.
  test("a Codex rollout or an OpenCode session started in \".\" belongs to no project, wherever import runs", async () => {
    const home = mkdtempSync(join(tmpdir(), "ms-import-rel-"));
    temps.push(home);
    const root = join(home, "proj");
    mkdirSync(join(root, ".git"), { recursive: true });
    const data = join(home, ".local", "share", "opencode");
    mkdirSync(data, { recursive: true });
    const db = opencodeFixtureDb(data, ".");
    const codexHome = join(home, ".codex");
    const day = join(codexHome, "sessions", "2025", "09", "01");
    mkdirSync(day, { recursive: true });
    const legacy = readFileSync(join(import.meta.dir, "..", "fixtures", "codex", "legacy.jsonl"), "utf8").replaceAll('"cwd": "/home/u/proj"', '"cwd": "."');
    const rollout = join(day, "rollout-2025-09-01T10-00-00-rel.jsonl");
    writeFileSync(rollout, legacy);
    const env: NodeJS.ProcessEnv = { HOME: home, XDG_DATA_HOME: join(home, ".local", "share"), XDG_CONFIG_HOME: join(home, ".config"), CODEX_HOME: codexHome };
    const before = process.cwd();
    process.chdir(root);
    try {
      const oc = AGENTS.opencode.transcripts;
      const cx = AGENTS.codex.transcripts!;
      expect(oc.list(env).map((s) => s.path)).toContain(`${db}#ses_1`);
      expect(cx.list(env).map((s) => s.path)).toEqual([rollout]);
      expect(oc.projectFiles(root, env, oc.list(env))).toEqual([]);
      expect(cx.projectFiles(root, env, cx.list(env))).toEqual([]);
      expect(() => cx.check(rollout, root, { env })).toThrow("another project's rollout");
      expect(() => oc.check(`${db}#ses_1`, root, { env })).toThrow("another project's session");
    } finally {
      process.chdir(before);
    }
  });
});
