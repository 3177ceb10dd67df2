/**
 * Copilot CLI through the compiled binary, without the real client: `memsearch install copilot`
 * (dry run, install, doctor, uninstall, a settings file it must not rewrite) and the Stop hook's
 * turn named by Copilot's own time of it. Always a temp HOME.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { localMinute } from "../../src/core/text.ts";
import { BIN } from "../helpers/cli.ts";
import { doctorCheck, projectsRemovedAfterAll } from "../helpers/install-suite.ts";
import { notesOf, until } from "../helpers/real-agent.ts";

const newProject = projectsRemovedAfterAll();

function setup() {
  const p = newProject();
  const dir = join(p.home, ".copilot");
  mkdirSync(dir);
  const settings = `${JSON.stringify({ banner: "never", hooks: { preToolUse: [{ type: "command", bash: "./guard.sh", timeoutSec: 5 }] } }, null, 2)}\n`;
  const path = join(dir, "settings.json");
  writeFileSync(path, settings);
  const env = { COPILOT_HOME: dir, MEMSEARCH_SUMMARIZER_PROVIDER: "extract", MEMSEARCH_NO_WATCH: "1" };
  return { p, dir, path, settings, ms: (args: string[], stdin?: string) => p.ms(args, env, stdin) };
}

describe("memsearch install copilot", () => {
  test("dry run, install, doctor, a second install, uninstall back to the user's file byte for byte", async () => {
    const { path, settings, ms } = setup();
    expect((await doctorCheck(ms, "copilot")).status).toBe("warn");
    expect((await doctorCheck(ms, "copilot")).fix).toBe("memsearch install copilot");

    const dry = await ms(["install", "copilot", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`--- ${path} (would update)`);
    expect(dry.stdout).toContain("would wire memsearch's hooks into");
    expect(dry.stdout).toContain(`"bash": "${BIN} hook user-prompt-submit --agent copilot"`);
    expect(dry.stdout).toContain("(dry run: nothing written)");
    expect(readFileSync(path, "utf8")).toBe(settings);

    const inst = await ms(["install", "copilot"]);
    expect(inst.code).toBe(0);
    const doc = JSON.parse(readFileSync(path, "utf8"));
    expect(doc.banner).toBe("never");
    expect(doc.hooks.preToolUse).toEqual([{ type: "command", bash: "./guard.sh", timeoutSec: 5 }]);
    expect(doc.hooks.Stop).toEqual([{ type: "command", bash: `${BIN} hook stop --agent copilot`, timeoutSec: 10 }]);
    const check = await doctorCheck(ms, "copilot");
    expect(check.status).toBe("ok");
    expect(check.detail).toContain("Copilot CLI: 4 hooks in");
    expect((await ms(["install", "copilot"])).stdout).toContain("already wired");

    const un = await ms(["install", "copilot", "--uninstall"]);
    expect(un.code).toBe(0);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(JSON.parse(settings));
    expect((await doctorCheck(ms, "copilot")).status).toBe("warn");
  });

  test("settings that are not plain JSON: one clear line, exit 1, nothing written", async () => {
    const { path, ms } = setup();
    const text = '{\n  // mine\n  "banner": "never"\n}\n';
    writeFileSync(path, text);
    const r = await ms(["install", "copilot"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    expect(r.stderr).toContain("plain JSON");
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("Copilot CLI's Stop hook through the binary", () => {
  const line = (type: string, data: object, timestamp: string) => JSON.stringify({ type, data, id: `e-${timestamp}-${type}`, timestamp, parentId: null });

  test("the turn is the one Copilot recorded at the Stop's own time, though a later turn is in the file; the note bears that time", async () => {
    const { p, dir, ms } = setup();
    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    const [asked, stopped, later] = [at(5 * 60_000 + 900), at(5 * 60_000), at(60_000)];
    const file = join(dir, "session-state", "s-cop-1", "events.jsonl");
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(
      file,
      [
        line("session.start", { sessionId: "s-cop-1", context: { cwd: p.root } }, asked),
        line("user.message", { content: "Which queue does the Brambleton exporter write to?", transformedContent: "<system_reminder>[memsearch] Memories …</system_reminder>", interactionId: "i-1" }, asked),
        line("assistant.message", { content: "It writes to the Hollowmere queue.", toolRequests: [] }, asked),
        line("assistant.turn_end", { turnId: "0" }, asked),
        line("hook.start", { hookType: "agentStop", input: {} }, stopped),
        line("user.message", { content: "And the retry policy?", interactionId: "i-2" }, later),
        line("assistant.message", { content: "Three tries.", toolRequests: [] }, later),
      ].join("\n") + "\n",
    );
    const r = await ms(["hook", "stop", "--agent", "copilot"], JSON.stringify({ hook_event_name: "Stop", session_id: "s-cop-1", timestamp: stopped, cwd: p.root, transcript_path: file, stop_reason: "end_turn", stop_hook_active: false }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({});
    expect(await until(() => notesOf(p.memory).length > 0, 20_000)).toBe(true);
    const [note] = notesOf(p.memory);
    expect(note!.anchor).toMatchObject({ agent: "copilot", turn: "i-1", session: "s-cop-1" });
    expect(`${note!.day} ${note!.time}`).toBe(localMinute(Date.parse(stopped)));
    const text = note!.bullets.join(" ");
    expect(text).toContain("Brambleton");
    expect(text).toContain("Hollowmere");
    expect(text).not.toContain("retry");
    expect(text).not.toContain("memsearch");
  }, 30_000);

  test("a session file that cannot be read loses no turn: the note is written from the prompt the prompt hook kept (Copilot's Stop carries no text)", async () => {
    const { p, dir, ms } = setup();
    const prompt = "Where does the Wrenfield importer log its failures?";
    const up = await ms(["hook", "user-prompt-submit", "--agent", "copilot"], JSON.stringify({ hook_event_name: "UserPromptSubmit", session_id: "s-cop-3", cwd: p.root, prompt, timestamp: new Date().toISOString() }));
    expect(up.code).toBe(0);
    const gone = join(dir, "session-state", "s-cop-3", "events.jsonl");
    const r = await ms(["hook", "stop", "--agent", "copilot"], JSON.stringify({ hook_event_name: "Stop", session_id: "s-cop-3", cwd: p.root, transcript_path: gone, timestamp: new Date().toISOString() }));
    expect(r.code).toBe(0);
    expect(await until(() => notesOf(p.memory).length > 0, 30_000)).toBe(true);
    const [note] = notesOf(p.memory);
    expect(note!.anchor).toMatchObject({ agent: "copilot", session: "s-cop-3" });
    expect(note!.bullets.join(" ")).toContain("Wrenfield importer");
  }, 40_000);

  test("a hook given no JSON still answers with valid JSON and exit 0", async () => {
    const { ms } = setup();
    const r = await ms(["hook", "user-prompt-submit", "--agent", "copilot"], "not json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({});
  });

  test("a Stop time no clock of this machine would give is not the note's: it is dated when the hook ran", async () => {
    const { p, dir, ms } = setup();
    const wrong = "1999-01-01T00:00:00.000Z";
    const file = join(dir, "session-state", "s-cop-2", "events.jsonl");
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(
      file,
      [
        line("session.start", { sessionId: "s-cop-2", context: { cwd: p.root } }, wrong),
        line("user.message", { content: "Where do the Quarrystone backups go?", interactionId: "i-9" }, wrong),
        line("assistant.message", { content: "To the Fernhollow bucket.", toolRequests: [] }, wrong),
        line("hook.start", { hookType: "agentStop", input: {} }, wrong),
      ].join("\n") + "\n",
    );
    const before = Date.now();
    const r = await ms(["hook", "stop", "--agent", "copilot"], JSON.stringify({ hook_event_name: "Stop", session_id: "s-cop-2", timestamp: wrong, cwd: p.root, transcript_path: file }));
    expect(r.code).toBe(0);
    expect(await until(() => notesOf(p.memory).length > 0, 25_000)).toBe(true);
    const [note] = notesOf(p.memory);
    expect(note!.anchor?.turn).toBe("i-9");
    expect(note!.bullets.join(" ")).toContain("Fernhollow");
    expect([localMinute(before), localMinute(Date.now())]).toContain(`${note!.day} ${note!.time}`);
  }, 40_000);
});
