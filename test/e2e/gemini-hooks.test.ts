/**
 * Gemini CLI through the compiled binary, without the real client: `memsearch install gemini`
 * (dry run, install, doctor, uninstall, a settings file it must not rewrite) and the AfterAgent
 * hook's write-ahead capture when the chat never shows the turn. Always a temp HOME.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { notesIn } from "../../src/memory/journal.ts";
import { BIN } from "../helpers/cli.ts";
import { doctorCheck, projectsRemovedAfterAll } from "../helpers/install-suite.ts";

const newProject = projectsRemovedAfterAll();

function setup() {
  const p = newProject();
  const dir = join(p.home, ".gemini");
  mkdirSync(dir);
  const settings = `${JSON.stringify({ ui: { theme: "GitHub" }, hooks: { AfterTool: [{ hooks: [{ type: "command", command: "audit.sh" }] }] } }, null, 2)}\n`;
  const path = join(dir, "settings.json");
  writeFileSync(path, settings);
  const env = { GEMINI_CLI_HOME: p.home, MEMSEARCH_SUMMARIZER_PROVIDER: "extract", MEMSEARCH_NO_WATCH: "1" };
  return { p, path, settings, ms: (args: string[], stdin?: string) => p.ms(args, env, stdin) };
}

const agentCheck = (ms: (a: string[]) => Promise<{ stdout: string }>) => doctorCheck(ms, "gemini");

describe("memsearch install gemini", () => {
  test("dry run, install, doctor, a second install, uninstall back to the user's file byte for byte", async () => {
    const { path, settings, ms } = setup();
    expect((await agentCheck(ms)).status).toBe("warn");
    expect((await agentCheck(ms)).fix).toBe("memsearch install gemini");

    const dry = await ms(["install", "gemini", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`--- ${path} (would update)`);
    expect(dry.stdout).toContain("would wire memsearch's hooks into");
    expect(dry.stdout).toContain(`"command": "${BIN} hook user-prompt-submit --agent gemini"`);
    expect(dry.stdout).toContain("(dry run: nothing written)");
    expect(readFileSync(path, "utf8")).toBe(settings);

    const inst = await ms(["install", "gemini"]);
    expect(inst.code).toBe(0);
    const doc = JSON.parse(readFileSync(path, "utf8"));
    expect(doc.ui).toEqual({ theme: "GitHub" });
    expect(doc.hooks.AfterTool).toEqual([{ hooks: [{ type: "command", command: "audit.sh" }] }]);
    expect(doc.hooks.AfterAgent[0].hooks[0].command).toBe(`${BIN} hook stop --agent gemini`);
    const check = await agentCheck(ms);
    expect(check.status).toBe("ok");
    expect(check.detail).toContain("Gemini CLI: 4 hooks in");
    expect((await ms(["install", "gemini"])).stdout).toContain("already wired");

    const un = await ms(["install", "gemini", "--uninstall"]);
    expect(un.code).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(settings);
    expect((await agentCheck(ms)).status).toBe("warn");
  });

  test("settings with comments: one clear line, exit 1, nothing written", async () => {
    const { path, ms } = setup();
    const text = '{\n  // my theme\n  "ui": { "theme": "GitHub" }\n}\n';
    writeFileSync(path, text);
    const r = await ms(["install", "gemini"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    expect(r.stderr).toContain("without comments");
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("Gemini CLI's hooks through the binary", () => {
  test("AfterAgent writes the turn ahead: with no chat to read, the note still has the prompt (without our context) and the answer, and names the agent", async () => {
    const { p, ms } = setup();
    const prompt = "Which queue does the Brambleton exporter write to?";
    const r = await ms(["hook", "stop", "--agent", "gemini"], JSON.stringify({ session_id: "g-1", hook_event_name: "AfterAgent", cwd: p.root, timestamp: new Date().toISOString(), prompt: `<hook_context># Recent memory (memsearch)\n- an older note</hook_context>\n\n${prompt}`, prompt_response: "It writes to the Hollowmere queue.", stop_hook_active: false }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({});
    const notes = () => (existsSync(p.memory) ? readdirSync(p.memory).filter((n) => n.endsWith(".md")).flatMap((n) => notesIn(readFileSync(join(p.memory, n), "utf8"), n)) : []);
    const end = Date.now() + 20_000;
    while (!notes().length && Date.now() < end) await Bun.sleep(100);
    const [note] = notes();
    expect(note?.anchor?.agent).toBe("gemini");
    const text = note!.bullets.join(" ");
    expect(text).toContain(prompt);
    expect(text).toContain("Hollowmere");
    expect(text).not.toContain("Recent memory");
  }, 30_000);

  test("a hook given no JSON still answers Gemini CLI with valid JSON and exit 0", async () => {
    const { ms } = setup();
    const r = await ms(["hook", "user-prompt-submit", "--agent", "gemini"], "not json");
    expect(r.code).toBe(0);
    expect(() => JSON.parse(r.stdout)).not.toThrow();
  });
});
