/**
 * The OpenCode adapter: its hook input, `install opencode` as a plan (one file of ours, nothing
 * else touched, idempotent, undone exactly), doctor's wired check, the generated plugin run with a
 * stand-in memsearch, and the turn read from a database shaped like OpenCode's (1.18.33).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseOpencodeHookInput } from "../../src/agents/opencode/hook.ts";
import { opencodeWired, planOpencodeInstall, pluginPath } from "../../src/agents/opencode/install.ts";
import { pluginSource } from "../../src/agents/opencode/plugin.ts";
import { findStoppedOpencodeTurn, readOpencodeTurn } from "../../src/agents/opencode/db.ts";
import { openOpencodeDb } from "../../src/agents/opencode/session-key.ts";
import { adapterOf, AGENT_NAMES } from "../../src/agents/registry.ts";
import type { InstallPlan } from "../../src/agents/types.ts";
import { sanitize } from "../../src/core/redact.ts";
import { opencodeFixtureDb } from "../helpers/opencode-db.ts";

const temps: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe("OpenCode hook input", () => {
  test("is registered under its name", () => {
    expect(AGENT_NAMES).toContain("opencode");
    expect(adapterOf("opencode")?.label).toBe("OpenCode");
  });

  test("the plugin's fields become the neutral input; a field of the wrong type is dropped alone", () => {
    const i = parseOpencodeHookInput({ session_id: "ses_1", prompt_id: "msg_1", hook_event_name: "UserPromptSubmit", prompt: "hello there", cwd: 42, transcript_path: "/x/opencode.db", source: "startup" });
    // The transcript is the session in the database: the name a note's anchor carries and `memsearch transcript` opens.
    expect(i).toEqual({ agent: "opencode", session_id: "ses_1", prompt_id: "msg_1", hook_event_name: "UserPromptSubmit", prompt: "hello there", transcript_path: "/x/opencode.db#ses_1" });
    // Without a session id fit for a name, the database alone.
    expect(parseOpencodeHookInput({ session_id: "a b", transcript_path: "/x/opencode.db" }).transcript_path).toBe("/x/opencode.db");
    expect(parseOpencodeHookInput({ hook_event_name: "SessionStart", source: "startup" }).source).toBe("startup");
    expect(parseOpencodeHookInput({ transcript_path: "/a\0b" }).transcript_path).toBeUndefined();
  });
});

const EXE = ["/opt/memsearch/bin/memsearch"];

function home() {
  const h = temp("oc-install-");
  const env = { HOME: h, XDG_CONFIG_HOME: join(h, "cfg") };
  const dir = join(h, "cfg", "opencode");
  const apply = (plan: InstallPlan) => {
    for (const c of plan.changes) {
      if (c.after === undefined) rmSync(c.path);
      else {
        mkdirSync(join(c.path, ".."), { recursive: true });
        writeFileSync(c.path, c.after);
      }
    }
    return plan;
  };
  return { h, env, dir, install: (exe = EXE) => apply(planOpencodeInstall({ exe, env })), uninstall: () => apply(planOpencodeInstall({ exe: EXE, env, uninstall: true })) };
}

describe("memsearch install opencode", () => {
  test("writes only its plugin, under XDG_CONFIG_HOME; again is no change; uninstall removes exactly it", () => {
    const o = home();
    mkdirSync(join(o.dir, "plugins"), { recursive: true });
    const config = `{"$schema":"https://opencode.ai/config.json","plugin":["opencode-foo"]}\n`;
    writeFileSync(join(o.dir, "opencode.json"), config);
    writeFileSync(join(o.dir, "plugins", "mine.ts"), "export const Mine = async () => ({})\n");
    const first = o.install();
    expect(first.changes.map((c) => c.path)).toEqual([join(o.dir, "plugins", "memsearch.js")]);
    expect(pluginPath(o.env)).toBe(join(o.dir, "plugins", "memsearch.js"));
    expect(readFileSync(pluginPath(o.env), "utf8")).toContain(JSON.stringify(EXE));
    expect(o.install().changes).toEqual([]);
    // A new executable path replaces our file, and only it.
    expect(o.install(["/usr/local/bin/memsearch"]).changes.length).toBe(1);
    o.uninstall();
    expect(readdirSync(join(o.dir, "plugins"))).toEqual(["mine.ts"]);
    expect(readFileSync(join(o.dir, "opencode.json"), "utf8")).toBe(config);
    expect(o.uninstall().changes).toEqual([]);
  });

  test("a memsearch.js that is not ours, or a link, is refused and left as it is", () => {
    const o = home();
    mkdirSync(join(o.dir, "plugins"), { recursive: true });
    writeFileSync(pluginPath(o.env), "export const Other = async () => ({})\n");
    expect(() => o.install()).toThrow(/not memsearch's plugin/);
    expect(() => o.uninstall()).toThrow(/not memsearch's plugin/);
    expect(readFileSync(pluginPath(o.env), "utf8")).toBe("export const Other = async () => ({})\n");
    rmSync(pluginPath(o.env));
    const target = join(o.h, "elsewhere.js");
    writeFileSync(target, "x");
    symlinkSync(target, pluginPath(o.env));
    expect(() => o.install()).toThrow(/symbolic link/);
    expect(readFileSync(target, "utf8")).toBe("x");
  });

  test("doctor's check: wired once the plugin is there and its executable exists", () => {
    const o = home();
    expect(opencodeWired({ exe: EXE, env: o.env }).wired).toBe(false);
    o.install();
    const missing = opencodeWired({ exe: EXE, env: o.env });
    expect(missing.wired).toBe(false);
    expect(missing.detail).toContain("/opt/memsearch/bin/memsearch");
    o.install([process.execPath]);
    expect(opencodeWired({ exe: [process.execPath], env: o.env })).toEqual({ wired: true, detail: `plugin in ${pluginPath(o.env)}` });
  });
});

describe("the generated plugin, run with a stand-in memsearch", () => {
  test("prompt and session start before the model call, their context on the system prompt (not the title's), stop at idle", async () => {
    const d = temp("oc-plugin-");
    const calls = join(d, "calls.jsonl");
    const fake = join(d, "fake-memsearch.sh");
    // Records each call (its arguments and stdin) and answers with a context naming the event.
    writeFileSync(fake, `#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' "{\\"args\\":\\"$*\\",\\"input\\":$input}" >> ${JSON.stringify(calls)}\nprintf '{"hookSpecificOutput":{"hookEventName":"x","additionalContext":"CTX-%s"}}' "$2"\n`);
    chmodSync(fake, 0o755);
    const file = join(d, "memsearch.js");
    writeFileSync(file, pluginSource(["/bin/sh", fake]));
    const mod = await import(file);
    const logged: string[] = [];
    const hooks = await mod.MemsearchPlugin({ directory: d, client: { app: { log: async (x: any) => logged.push(x.body.message) } } });
    await hooks["chat.message"]({ sessionID: "ses_a", messageID: "msg_u1" }, { message: { id: "msg_u1" }, parts: [{ type: "text", text: "Which broker did we pick?" }, { type: "text", text: "scaffold", synthetic: true }] });
    const title = { system: ["You are a title generator. You output ONLY a thread title."] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_a" }, title);
    expect(title.system.length).toBe(1);
    const main = { system: ["You are opencode"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_a" }, main);
    expect(main.system).toEqual(["You are opencode", "CTX-session-start", "CTX-user-prompt-submit"]);
    await hooks.event({ event: { type: "message.part.updated", properties: { part: { id: "prt_1", type: "text", sessionID: "ses_a", messageID: "msg_a1", text: "Quill" } } } });
    await hooks.event({ event: { type: "message.part.updated", properties: { part: { id: "prt_1", type: "text", sessionID: "ses_a", messageID: "msg_a1", text: "Quillfeather." } } } });
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_a" } } });
    // A second idle without a prompt in between is not a turn.
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_a" } } });
    const got = readFileSync(calls, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const by = (e: string) => got.filter((c) => c.args.includes(`hook ${e} --agent opencode`));
    expect(by("session-start").length).toBe(1);
    expect(by("user-prompt-submit")[0].input).toEqual({ hook_event_name: "UserPromptSubmit", session_id: "ses_a", prompt_id: "msg_u1", prompt: "Which broker did we pick?", cwd: d });
    expect(by("stop").length).toBe(1);
    expect(by("stop")[0].input).toMatchObject({ session_id: "ses_a", prompt_id: "msg_u1", last_assistant_message: "Quillfeather.", cwd: d });
    expect(by("stop")[0].input.transcript_path).toEndWith(join("opencode", "opencode.db"));
  });

  test("a subagent's session (it has a parent) gets no recall and no note of its own", async () => {
    const d = temp("oc-plugin-");
    const calls = join(d, "calls.txt");
    const fake = join(d, "fake-memsearch.sh");
    writeFileSync(fake, `#!/bin/sh\necho "$*" >> ${JSON.stringify(calls)}\necho '{}'\n`);
    chmodSync(fake, 0o755);
    const file = join(d, "memsearch.js");
    writeFileSync(file, pluginSource(["/bin/sh", fake]));
    const hooks = await (await import(file)).MemsearchPlugin({ directory: d, client: {} });
    await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_parent" } } } });
    await hooks["chat.message"]({ sessionID: "ses_child" }, { message: { id: "msg_c1" }, parts: [{ type: "text", text: "Search the code for the broker" }] });
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
    expect(existsSync(calls)).toBe(false);
    await hooks["chat.message"]({ sessionID: "ses_parent" }, { message: { id: "msg_p1" }, parts: [{ type: "text", text: "Which broker did we pick?" }] });
    expect(readFileSync(calls, "utf8")).toContain("hook user-prompt-submit --agent opencode");
  });

  test("a memsearch that is missing gives no context and no error", async () => {
    const d = temp("oc-plugin-");
    const file = join(d, "memsearch.js");
    writeFileSync(file, pluginSource([join(d, "not-there")]));
    const hooks = await (await import(file)).MemsearchPlugin({ directory: d, client: {} });
    await hooks["chat.message"]({ sessionID: "ses_b" }, { message: { id: "msg_1" }, parts: [{ type: "text", text: "hello there friend" }] });
    const out = { system: ["s"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_b" }, out);
    expect(out.system).toEqual(["s"]);
  });
});

describe("OpenCode's database read into the neutral turn", () => {
  test("a finished turn: the prompt without scaffolding, tools paired with their output, the reply, redacted", () => {
    const db = openOpencodeDb(opencodeFixtureDb(temp("oc-db-")));
    try {
      const t = readOpencodeTurn(db, "msg_u1", sanitize)!;
      expect(t.sessionId).toBe("ses_1");
      expect(t.userText).toStartWith("Run the tests with key ");
      expect(t.userText).not.toContain("AAAAAAAAAAAAAAAA");
      expect(t.userText).not.toContain("scaffold");
      expect(t.tools).toEqual([
        { id: "call_1", name: "bash", input: "bun test", output: "3 pass", outputChars: 6, isError: false },
        { id: "call_2", name: "read", input: "/x", output: "no such file", outputChars: 12, isError: true },
      ]);
      expect(t.assistantTexts).toEqual(["All three tests pass."]);
      expect(t.complete).toBe(true);
      const open = readOpencodeTurn(db, "msg_u2")!;
      expect(open.complete).toBe(false);
      expect(open.tools[0]).toMatchObject({ name: "bash", input: "bun lint", unpaired: true });
      expect(readOpencodeTurn(db, "msg_a1")).toBeUndefined();
      expect(readOpencodeTurn(db, "msg_nope")).toBeUndefined();
    } finally {
      db.close();
    }
  });

  test("the drainer's finder: by prompt id, labelled for the summariser; a link is refused", async () => {
    const path = opencodeFixtureDb(temp("oc-db-"));
    const f = (await findStoppedOpencodeTurn(path, { promptId: "msg_u1", redact: sanitize }))!;
    expect(f.complete).toBe(true);
    expect(f.turn.turnUuid).toBe("msg_u1");
    expect(f.turn.text).toContain("[OpenCode calls tool]: bash bun test");
    expect(f.turn.text).toContain("[OpenCode]: All three tests pass.");
    expect(await findStoppedOpencodeTurn(path, { prompt: "Now the lint" })).toBeUndefined();
    // Named as the plugin's hook input now names it, the session in the database; another session's name finds nothing.
    expect((await findStoppedOpencodeTurn(`${path}#ses_1`, { promptId: "msg_u1", redact: sanitize }))?.turn.turnUuid).toBe("msg_u1");
    expect(await findStoppedOpencodeTurn(`${path}#ses_2`, { promptId: "msg_u1", redact: sanitize })).toBeUndefined();
    const link = join(temp("oc-link-"), "opencode.db");
    symlinkSync(path, link);
    await expect(findStoppedOpencodeTurn(link, { promptId: "msg_u1" })).rejects.toThrow(/not a plain file/);
    expect(existsSync(path)).toBe(true);
  });
});
