/**
 * Recall on real work with the real Claude Code (issue 30), `claude -p` sessions against the local
 * Messages API mock, the plugin with the freshly built binary. A session fixes the flamingo
 * parser's cache in a file of the project (the real Write tool); an unrelated session follows, so
 * that the fix is not the newest session SessionStart gives whole. Then two long task prompts, as
 * people type a first prompt: one continues the work on that file and gets that session's note
 * from the prompt hook; one asks for something memory does not hold and gets nothing from it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { stagePlugin } from "../../scripts/install-plugin-bin.ts";
import { InjectionRecordSchema } from "../../src/memory/injections.ts";
import { startMockApi, type MockApi, type MockRequest } from "../helpers/anthropic-mock.ts";
import { BIN } from "../helpers/cli.ts";
import { assertRealClaude, killLeftovers, makeClaudeHome, runPrint } from "../helpers/real-claude.ts";

assertRealClaude();

const tmp = mkdtempSync(join(tmpdir(), "ms-real-recall-"));
const project = join(tmp, "project");
const home = join(tmp, "home");
const cacheFile = join(project, "src", "parser", "flamingo-cache.ts");
let plugin = "";
let api: MockApi;
const runIds: string[] = [];
const env = { MEMSEARCH_DEBUG: "1" };

const FIX = "In src/parser/flamingo-cache.ts the flamingo parser cache never evicts: evictOldest is skipped once the cache holds 512 entries. Fix the eviction in flamingo-cache.ts.";
const OTHER = "Add the documentation badges to the README header.";
// Two first prompts of 40 to 60 words, as task descriptions are typed.
const CONTINUE =
  "The flamingo parser cache in src/parser/flamingo-cache.ts keeps growing again after the eviction fix: evictOldest still looks skipped when the flamingo cache holds 512 entries, and the parser slows down on large inputs. Look at how the eviction in flamingo-cache.ts was fixed last time, make evictOldest run whenever the cache reaches 512 entries, and add a test for that limit.";
const UNHELD =
  "Set up a GitHub Actions workflow that builds the Docker image of the reporting service on every push to main, pushes it to our container registry tagged with the commit sha, and posts the image digest as a comment on the pull request once the build has succeeded, so reviewers can pull exactly that image.";

const memoryDir = () => join(project, ".memsearch", "memory");
const notesText = () => (existsSync(memoryDir()) ? readdirSync(memoryDir()).filter((n) => n.endsWith(".md")).map((n) => readFileSync(join(memoryDir(), n), "utf8")).join("\n") : "");

async function until(ok: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms`);
    await Bun.sleep(250);
  }
}

async function session(prompt: string, args: string[] = []): Promise<MockRequest[]> {
  const before = api.main().length;
  const r = await runPrint({ api, projectDir: project, home, pluginDir: plugin, prompt, env, args });
  runIds.push(r.runId);
  expect(r.exitCode).toBe(0);
  return api.main().slice(before);
}

/** What the prompt's own user message carried (the hook's context is added to it). */
const ownTurn = (reqs: MockRequest[], prompt: string) => {
  const messages: { role: string; content: unknown }[] = (reqs[0]!.body as { messages: { role: string; content: unknown }[] }).messages;
  const at = messages.findLastIndex((m) => m.role === "user" && JSON.stringify(m.content).includes(prompt.slice(0, 60)));
  return JSON.stringify(messages.slice(at));
};

beforeAll(async () => {
  mkdirSync(join(project, ".git"), { recursive: true });
  mkdirSync(join(project, "src", "parser"), { recursive: true });
  makeClaudeHome({ home, projectDirs: [project] });
  plugin = stagePlugin(BIN, join(tmp, "plugin"));
  api = await startMockApi({ summaryDelayMs: 500 });
  // The fix: the real Write tool writes the file, then the reply says what changed.
  api.script.rules = [
    {
      match: "never evicts",
      times: 1,
      reply: {
        type: "tool",
        name: "Write",
        input: { file_path: cacheFile, content: "export function evictOldest(cache: Map<string, unknown>) {\n  if (cache.size >= 512) cache.delete(cache.keys().next().value);\n}\n" },
        after: () => "Fixed evictOldest in src/parser/flamingo-cache.ts: the size check was off by one, so the flamingo cache now evicts at 512 entries.",
      },
    },
  ];
  await session(FIX, ["--allowedTools", "Write"]);
  await until(() => existsSync(cacheFile) && notesText().includes("flamingo"));
  await session(OTHER);
  await until(() => notesText().includes("badges"));
}, 300_000);

afterAll(async () => {
  for (const id of runIds) killLeftovers(id);
  await api?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe("recall on real work with the real Claude Code", () => {
  test("a long task prompt that continues earlier work gets the note of the session that touched the same file; one about something memory does not hold gets nothing", async () => {
    const logFile = join(project, ".memsearch", "injections.jsonl");
    const decisions = () => readFileSync(logFile, "utf8").split("\n").filter(Boolean).map((l) => v.parse(InjectionRecordSchema, JSON.parse(l))).filter((r) => !r.event);
    const before = existsSync(logFile) ? decisions().length : 0;

    const continued = ownTurn(await session(CONTINUE), CONTINUE);
    expect(continued).toContain("UserPromptSubmit hook additional context: [memsearch] Memories from earlier sessions");
    expect(continued).toMatch(/memsearch expand [0-9a-f]{16} · \\"[^"]*flamingo/);

    const unheld = ownTurn(await session(UNHELD), UNHELD);
    expect(unheld).not.toContain("UserPromptSubmit hook additional context");

    const mine = decisions().slice(before);
    expect(mine.map((r) => r.decision)).toEqual(["injected", "nothing"]);
    expect(mine[1]!.reason).toBe("nothing through the gate");
    // Both prompts are task descriptions of 40 to 60 words.
    for (const p of [CONTINUE, UNHELD]) expect(p.split(/\s+/).length).toBeGreaterThanOrEqual(40);
  }, 300_000);
});
