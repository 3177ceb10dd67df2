/**
 * The projects registry as the binary keeps it: SessionStart records each project (and says what
 * the last session was about), `memsearch projects` lists them, `memsearch debug` shows the hooks'
 * log. Every run uses its own HOME.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localDay } from "../../src/memory/journal.ts";
import { run, tempProject } from "../helpers/cli.ts";
import { appendTurn } from "../fault/transcript.ts";

const hookEnv = { MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" };

describe("SessionStart and the registry", () => {
  test("a session start records the project and names the last session, from its transcript", async () => {
    const p = tempProject();
    const env = { ...p.env, ...hookEnv };
    // Only this note: the sample's sessions are dated, and "the last one" must not depend on today's date.
    for (const f of readdirSync(p.memory)) rmSync(join(p.memory, f));
    // Yesterday's session, whose transcript is still on disk and began with a request holding a key.
    const transcript = join(p.home, ".claude", "projects", "-x", "prev.jsonl");
    mkdirSync(join(transcript, ".."), { recursive: true });
    const key = `sk-ant-api03-${"P".repeat(64)}`;
    appendTurn(transcript, { sessionId: "prev", uuid: "u-prev-1", promptId: "p1", prompt: `Wire the payments API with ${key} please`, command: "ls", output: "ok", reply: "Done." }, "all");
    const y = new Date();
    y.setDate(y.getDate() - 1);
    const day = localDay(y);
    writeFileSync(join(p.memory, `${day}.md`), `# ${day}\n\n## Session 09:30\n\n### 09:30\n<!-- session:prev turn:u-prev-1 transcript:${transcript} -->\n- User asked to wire the payments API\n`);

    const r = await run(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "now", cwd: p.root, source: "startup" }) });
    expect(r.code).toBe(0);
    const status: string = JSON.parse(r.stdout).systemMessage;
    expect(status).toMatch(/ \| Last session \(\d+[hd] ago\): "Wire the payments API with \[REDACTED:anthropic-key\] please"/);
    expect(status).not.toContain(key);

    const reg = JSON.parse(readFileSync(join(p.home, ".memsearch", "projects.json"), "utf8"));
    expect(reg.projects).toHaveLength(1);
    expect(reg.projects[0]).toMatchObject({ path: p.root, name: p.root.split("/").pop(), dataDir: join(p.root, ".memsearch") });

    // Resuming that same session: its own notes are not "the last session".
    const resumed = await run(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "prev", cwd: p.root, source: "resume" }) });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).systemMessage).not.toContain("Last session");
  });

  test("a registry that cannot be read never fails the hook; it is set aside and started again", async () => {
    const p = tempProject();
    mkdirSync(join(p.home, ".memsearch"), { recursive: true });
    writeFileSync(join(p.home, ".memsearch", "projects.json"), "{ broken");
    const r = await run(["hook", "session-start"], { cwd: p.root, env: { ...p.env, ...hookEnv }, stdin: JSON.stringify({ session_id: "s", cwd: p.root }) });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).systemMessage).toStartWith("[memsearch v");
    expect(JSON.parse(readFileSync(join(p.home, ".memsearch", "projects.json"), "utf8")).projects).toHaveLength(1);
  });
});

describe("memsearch projects", () => {
  test("one line per project with its notes and last activity; a gone folder is marked, not dropped", async () => {
    const p = tempProject();
    const env = { ...p.env, ...hookEnv };
    const none = await run(["projects"], { cwd: p.root, env });
    expect(none.code).toBe(0);
    expect(none.stdout).toContain("No projects recorded yet");

    expect((await run(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "s", cwd: p.root }) })).code).toBe(0);
    const reg = JSON.parse(readFileSync(join(p.home, ".memsearch", "projects.json"), "utf8"));
    const old = "2026-01-05T10:00:00.000Z";
    reg.projects.push({ path: "/nowhere/left-project", name: "left-project", dataDir: "/nowhere/left-project/.memsearch", firstSeen: old, lastSeen: old }, { path: "not absolute" });
    writeFileSync(join(p.home, ".memsearch", "projects.json"), JSON.stringify(reg));

    const text = await run(["projects"], { cwd: p.root, env });
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    // This project was seen just now: first.
    expect(lines[0]).toMatch(new RegExp(`^${p.root.split("/").pop()}\\s+${p.root}\\s+6 notes\\s+last active \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} \\(just now\\)$`));
    expect(lines[1]).toMatch(/^left-project\s+\/nowhere\/left-project\s+0 notes\s+last active \d{4}-\d{2}-\d{2} \d{2}:\d{2}.*\[folder gone\]$/);
    expect(text.stderr).toContain("1 entry of");

    const json = JSON.parse((await run(["projects", "--json-output"], { cwd: p.root, env })).stdout);
    expect(json.map((x: { name: string; exists: boolean; notes: number; last_note: string | null }) => [x.name, x.exists, x.notes, x.last_note])).toEqual([
      [p.root.split("/").pop(), true, 6, "2026-11-21 16:40"],
      ["left-project", false, 0, null],
    ]);
  });

  test("an unreadable registry is one line and exit 1", async () => {
    const p = tempProject();
    mkdirSync(join(p.home, ".memsearch"), { recursive: true });
    writeFileSync(join(p.home, ".memsearch", "projects.json"), '{"projects": 3}');
    const r = await run(["projects"], { cwd: p.root, env: p.env });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("is not a projects registry");
  });
});

describe("memsearch debug", () => {
  test("the last lines of the hooks' log, and how to turn it on when it is off", async () => {
    const p = tempProject();
    const env = { ...p.env, ...hookEnv };
    const off = await run(["debug"], { cwd: p.root, env: { ...env, MEMSEARCH_DEBUG: undefined } });
    expect(off.code).toBe(0);
    expect(off.stdout).toContain("Debug log: off");
    expect(off.stdout).toContain("MEMSEARCH_DEBUG=1 claude");
    expect(off.stdout).toContain("No hook has logged anything yet.");

    const key = `ghp_${"D".repeat(36)}`;
    for (let i = 0; i < 2; i++) {
      await run(["hook", "user-prompt-submit"], { cwd: p.root, env: { ...env, MEMSEARCH_DEBUG: "1" }, stdin: JSON.stringify({ session_id: "s", cwd: p.root, prompt: `why is the token ${key} rejected by the redis pool` }) });
    }
    const on = await run(["debug", "--lines", "3"], { cwd: p.root, env: { ...env, MEMSEARCH_DEBUG: "1" } });
    expect(on.code).toBe(0);
    const lines = on.stdout.trim().split("\n");
    expect(lines[0]).toStartWith(`Debug log: on in this environment (MEMSEARCH_DEBUG=1); logs in ${join(p.home, ".memsearch", "logs")}`);
    expect(lines[2]).toStartWith("Last 3 lines (newest file: ");
    expect(lines).toHaveLength(6);
    for (const l of lines.slice(-3)) expect(l).toMatch(/^\d{4}-\d{2}-\d{2}T.*user-prompt-submit/);
    expect(on.stdout).not.toContain(key);
    const json = JSON.parse((await run(["debug", "-j", "--lines", "50"], { cwd: p.root, env })).stdout);
    expect(json.enabled).toBe(false);
    expect(json.lines.some((l: string) => l.includes("[REDACTED:github-token]"))).toBe(true);

    const bad = await run(["debug", "--lines", "0"], { cwd: p.root, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toEqual(["Error: --lines must be a whole number between 1 and 5000"]);
  });
});

test("--help lists the new commands", async () => {
  const r = await run(["--help"], { cwd: mkdtempSync(join(tmpdir(), "ms-help-")) });
  for (const c of ["memsearch hub", "memsearch projects", "memsearch debug"]) expect(r.stdout).toContain(c);
});
