/**
 * One memory, two agents: notes of Claude Code turns (the older anchor, no agent) and of Codex turns
 * (`agent:codex`) in the same daily file; `search`, `recall`, `recent` and the hub's timeline show
 * which agent each was with and filter by it (`--agent`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { HubData } from "../../src/hub/data.ts";
import { handleApi } from "../../src/hub/api.ts";
import type { TimelinePage } from "../../src/hub/types.ts";
import { tempProject, type Project } from "../helpers/cli.ts";

const DAY = `# 2026-11-24

## Session 09:00

### 09:00
<!-- session:claude-s turn:claude-t1 transcript:/home/u/.claude/projects/-p/claude-s.jsonl -->
- Decided the heronbolt cache keeps entries for two hours (with Claude Code)

## Session 10:00

### 10:00 (agent: codex)
<!-- session:codex-s turn:codex-t1 transcript:/home/u/.codex/sessions/2026/11/24/rollout-x.jsonl agent:codex -->
- Moved the heronbolt cache to the shared volume (with Codex)
`;

let p: Project;
beforeAll(async () => {
  p = tempProject({ notes: { "2026-11-24.md": DAY }, env: { MEMSEARCH_EMBEDDING_PROVIDER: "none", TZ: "UTC" } });
  const r = await p.ms(["index"]);
  if (r.code !== 0) throw new Error(r.stderr);
});
afterAll(() => {
  for (const d of [p.root, p.home]) rmSync(d, { recursive: true, force: true });
});

describe("--agent", () => {
  test("search shows each note's agent and keeps only the one asked for", async () => {
    const all = JSON.parse((await p.ms(["search", "heronbolt cache", "-j"])).stdout) as { agent: string; content: string }[];
    expect(all.map((r) => r.agent).sort()).toEqual(["claude", "codex"]);
    const codex = JSON.parse((await p.ms(["search", "heronbolt cache", "--agent", "codex", "-j"])).stdout) as { agent: string; content: string }[];
    expect(codex.length).toBe(1);
    expect(codex[0]!.content).toContain("shared volume");
    const claude = JSON.parse((await p.ms(["search", "heronbolt", "--agent", "claude", "-j"])).stdout) as { agent: string; content: string }[];
    expect(claude.map((r) => r.agent)).toEqual(["claude"]);
    const bad = await p.ms(["search", "heronbolt", "--agent", "cursor"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("cursor");
  });

  test("recall names the agent of each result and filters by it", async () => {
    const r = await p.ms(["recall", "heronbolt cache", "--raw", "--source", "notes", "--agent", "codex", "-j"]);
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout) as { results: { agent: string; note: { snippet: string } }[] };
    expect(res.results.length).toBe(1);
    expect(res.results[0]!.agent).toBe("codex");
    // The drill-down opens the Codex turn from its rollout (`transcript` reads them).
    const first = res.results[0] as unknown as { open: string | null; expand: string | null };
    expect(first.open).toBe("memsearch transcript /home/u/.codex/sessions/2026/11/24/rollout-x.jsonl --turn codex-t1");
    expect(first.expand).toContain("memsearch expand");
    const text = await p.ms(["recall", "heronbolt cache", "--raw", "--source", "notes"]);
    expect(text.stdout).toMatch(/\[note\]\s+codex/);
    expect(text.stdout).toMatch(/\[note\]\s+claude/);
  });

  test("recent shows the agent in the heading and keeps only the one asked for", async () => {
    const all = (await p.ms(["recent"])).stdout;
    expect(all).toContain("### 10:00 (agent: codex)");
    const codex = (await p.ms(["recent", "--agent", "codex"])).stdout;
    expect(codex).toContain("shared volume");
    expect(codex).not.toContain("two hours");
    const claude = (await p.ms(["recent", "--agent", "claude"])).stdout;
    expect(claude).toContain("two hours");
    expect(claude).not.toContain("shared volume");
  });

  test("the hub's timeline names each note's agent and filters by it", async () => {
    const data = HubData.open({ allProjects: false, cwd: p.root, env: { ...process.env, ...(p.env as Record<string, string>) } });
    const id = (await data.overview()).projects[0]!.id;
    const q = (o: Record<string, string>) => new URLSearchParams(o);
    const all = (await (await handleApi(data, "/api/timeline", q({ project: id }))).json()) as TimelinePage;
    expect(all.notes.map((n) => n.agent).sort()).toEqual(["claude", "codex"]);
    const codex = (await (await handleApi(data, "/api/timeline", q({ project: id, agent: "codex" }))).json()) as TimelinePage;
    expect(codex.total).toBe(1);
    expect(codex.notes[0]!.bullets[0]).toContain("shared volume");
    expect((await handleApi(data, "/api/timeline", q({ project: id, agent: "cursor" }))).status).toBe(400);
  });
});
