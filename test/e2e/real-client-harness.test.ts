/**
 * The harness itself, against the real Claude Code CLI (2.1.328) and the local Messages API mock:
 * a scratch plugin whose bin/memsearch only logs what it receives (argv, stdin, parent, ancestry)
 * and prints `{}` (or fixed additionalContext markers), so these tests say nothing about memsearch
 * and everything about the client and the helpers.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockApi, type MockApi } from "../helpers/anthropic-mock.ts";
import { hookTimings, killLeftovers, leftovers, readTranscript, assertRealClaude, runPrint, startInteractive, transcriptFiles, type InteractiveSession } from "../helpers/real-claude.ts";

const LOGGER = `#!/bin/sh
# Scratch memsearch stand-in: logs one hook call and answers.
log="\${PROBE_LOG:-$(dirname "$0")/../hook.log}"
# claude -p sends SIGTERM to a running async Stop hook at teardown: record the input first.
trap '' TERM
input=$(cat)
printf 'HOOK %s %s %s\\n' "$$" "$PPID" "$*" >> "$log"
printf 'STDIN %s %s\\n' "$$" "$input" >> "$log"
trap - TERM
p=$$
while [ -n "$p" ] && [ "$p" -gt 1 ]; do
  ps -o pid=,ppid=,pgid=,sid=,comm= -p "$p" | sed "s/^/PS $$ /" >> "$log"
  p=$(ps -o ppid= -p "$p" | tr -d ' ')
done
if [ -n "$PROBE_CONTEXT" ]; then
  case "$2" in
    session-start) echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"PROBE-SESSIONSTART-CONTEXT kiwi"}}'; exit 0;;
    user-prompt-submit) echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"PROBE-PROMPT-CONTEXT mango"}}'; exit 0;;
  esac
fi
echo '{}'
`;

const hook = (event: string, async = false, timeout = 10) => [
  { hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/bin/memsearch", args: ["hook", event], timeout, ...(async ? { async: true } : {}) }] },
];

/**
 * A scratch plugin in a temp dir: exec-form hooks.json calling the logging bin/memsearch. Its Stop
 * is async unless `syncStop` (as the real plugin's is): claude -p ends an async one at teardown,
 * on a loaded machine before it has logged its input.
 */
function scratchPlugin(o: { syncStop?: boolean } = {}): { dir: string; log: string } {
  const dir = mkdtempSync(join(tmpdir(), "rc-plugin-"));
  mkdirSync(join(dir, ".claude-plugin"));
  mkdirSync(join(dir, "hooks"));
  mkdirSync(join(dir, "bin"));
  writeFileSync(join(dir, ".claude-plugin", "plugin.json"), JSON.stringify({ name: "memsearch-probe", version: "0.0.0" }));
  writeFileSync(
    join(dir, "hooks", "hooks.json"),
    JSON.stringify({
      hooks: { SessionStart: hook("session-start"), UserPromptSubmit: hook("user-prompt-submit", false, 5), Stop: o.syncStop ? hook("stop") : hook("stop", true, 120), SessionEnd: hook("session-end", false, 2) },
    }),
  );
  writeFileSync(join(dir, "bin", "memsearch"), LOGGER);
  chmodSync(join(dir, "bin", "memsearch"), 0o755);
  return { dir, log: join(dir, "hook.log") };
}

interface HookCall {
  pid: number;
  ppid: number;
  argv: string;
  input: any;
  ancestry: string[];
}

function hookCalls(log: string): HookCall[] {
  if (!existsSync(log)) return [];
  const calls = new Map<number, HookCall>();
  for (const line of readFileSync(log, "utf8").split("\n")) {
    let m = /^HOOK (\d+) (\d+) (.*)$/.exec(line);
    if (m) calls.set(Number(m[1]), { pid: Number(m[1]), ppid: Number(m[2]), argv: m[3]!, input: undefined, ancestry: [] });
    else if ((m = /^STDIN (\d+) (.*)$/.exec(line))) {
      const c = calls.get(Number(m[1]));
      if (c) c.input = JSON.parse(m[2]!);
    } else if ((m = /^PS (\d+) (.*)$/.exec(line))) calls.get(Number(m[1]))?.ancestry.push(m[2]!.trim());
  }
  return [...calls.values()];
}

async function noLeftovers(runId: string, withinMs = 8_000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  while (leftovers(runId).length && Date.now() < deadline) await Bun.sleep(100);
  return leftovers(runId);
}

const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function track(api: MockApi, ...dirs: string[]): void {
  cleanup.push(() => api.stop());
  for (const d of dirs) cleanup.push(() => rmSync(d, { recursive: true, force: true }));
}

assertRealClaude();

describe("real Claude Code against the mock API", () => {
  test("claude -p gets a plain reply; hooks see SessionStart, UserPromptSubmit, Stop, SessionEnd; injected context reaches the model", async () => {
    const plugin = scratchPlugin();
    const api = await startMockApi({ rules: [{ match: "pelican", reply: { type: "text", text: "Pelicans store fish in PELICAN-POUCH-7." } }] });
    track(api, plugin.dir);
    const r = await runPrint({ api, prompt: "tell me about the pelican", pluginDir: plugin.dir, env: { PROBE_CONTEXT: "1" } });
    cleanup.push(() => void killLeftovers(r.runId));
    cleanup.push(() => rmSync(r.home, { recursive: true, force: true }));
    cleanup.push(() => rmSync(r.projectDir, { recursive: true, force: true }));

    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("PELICAN-POUCH-7");

    // One main-model request, carrying the prompt and both hooks' additionalContext.
    const main = api.main();
    expect(main).toHaveLength(1);
    expect(main[0]!.prompt).toBe("tell me about the pelican");
    expect(api.withText("PROBE-SESSIONSTART-CONTEXT kiwi", "main")).toHaveLength(1);
    expect(api.withText("UserPromptSubmit hook additional context: PROBE-PROMPT-CONTEXT mango", "main")).toHaveLength(1);

    const calls = hookCalls(plugin.log);
    const events = calls.map((c) => c.argv);
    expect(events).toContain("hook session-start");
    expect(events).toContain("hook user-prompt-submit");
    expect(events).toContain("hook stop");
    expect(events).toContain("hook session-end");
    const ups = calls.find((c) => c.argv === "hook user-prompt-submit")!;
    const stop = calls.find((c) => c.argv === "hook stop")!;
    expect(ups.input.prompt).toBe("tell me about the pelican");
    expect(stop.input.prompt_id).toBe(ups.input.prompt_id);
    expect(stop.input.last_assistant_message).toContain("PELICAN-POUCH-7");
    expect(calls.find((c) => c.argv === "hook session-end")!.input.reason).toBe("other");
    // Exec form: spawned directly by the client (no sh in between), in a session of its own.
    const claudePid = r.pid;
    for (const c of calls) expect(c.ppid).toBe(claudePid);
    expect(ups.ancestry[1]).toMatch(/ claude$/);
    expect(ups.ancestry[0]).toMatch(new RegExp(`^${ups.pid}\\s+${claudePid}\\s+${ups.pid}\\s+${ups.pid}\\s+memsearch$`));

    const timings = hookTimings(r.debugFile!);
    expect(timings.find((t) => t.event === "SessionStart")?.outcome).toBe("finished");
    expect(timings.find((t) => t.event === "UserPromptSubmit")?.durationMs).toBeGreaterThan(0);
    expect(timings.find((t) => t.event === "Stop")?.outcome).toBe("backgrounded");
    expect(timings.find((t) => t.event === "SessionEnd")?.outcome).toBe("completed");

    expect(await noLeftovers(r.runId)).toEqual([]);
  }, 120_000);

  test("interactive session in a pseudo-terminal: two turns, then /exit", async () => {
    const plugin = scratchPlugin();
    const api = await startMockApi({
      rules: [
        { match: "walrus", reply: { type: "text", text: "Walruses use their tusks, WALRUS-TUSK-1." } },
        { match: "narwhal", reply: { type: "text", text: "A narwhal tusk is a tooth, NARWHAL-TOOTH-2." } },
      ],
    });
    track(api, plugin.dir);
    let s: InteractiveSession | undefined;
    cleanup.push(() => s?.kill());
    s = startInteractive({ api, pluginDir: plugin.dir, timeoutMs: 110_000 });
    cleanup.push(() => rmSync(s!.home, { recursive: true, force: true }));
    cleanup.push(() => rmSync(s!.projectDir, { recursive: true, force: true }));
    try {
      await s.ready();
      const t1 = await s.ask("what about the walrus", { expectText: "WALRUS-TUSK-1" });
      expect(t1.prompt).toBe("what about the walrus");
      const t2 = await s.ask("and the narwhal", { expectText: "NARWHAL-TOOTH-2" });
      expect(t2.prompt).toBe("and the narwhal");
      expect(s.screen()).toContain("WALRUS-TUSK-1");
      expect(s.screen()).toContain("NARWHAL-TOOTH-2");
      const end = await s.exit();
      expect(end.timedOut).toBe(false);
      expect(end.exitCode).toBe(0);
    } catch (err) {
      throw new Error(`${err}\n--- screen ---\n${s.screen()}`);
    }
    expect(api.finishedTurns()).toHaveLength(2);

    // Async Stop hooks may still be running right after /exit: give them a moment.
    expect(await noLeftovers(s.runId)).toEqual([]);
    const calls = hookCalls(plugin.log);
    const ups = calls.filter((c) => c.argv === "hook user-prompt-submit");
    const stops = calls.filter((c) => c.argv === "hook stop");
    expect(ups.map((c) => c.input.prompt)).toEqual(["what about the walrus", "and the narwhal"]);
    expect(stops).toHaveLength(2);
    expect(new Set(stops.map((c) => c.input.prompt_id))).toEqual(new Set(ups.map((c) => c.input.prompt_id)));
    expect(stops.map((c) => c.input.last_assistant_message).sort()).toEqual(["A narwhal tusk is a tooth, NARWHAL-TOOTH-2.", "Walruses use their tusks, WALRUS-TUSK-1."]);
    expect(calls.find((c) => c.argv === "hook session-end")?.input.reason).toBe("prompt_input_exit");
    expect(calls.find((c) => c.argv === "hook session-start")?.input.source).toBe("startup");
    for (const c of calls) expect(c.ppid).toBe(s.pid);

    const timings = hookTimings(s.debugFile!);
    expect(timings.filter((t) => t.event === "UserPromptSubmit" && t.outcome === "finished")).toHaveLength(2);
    expect(timings.filter((t) => t.event === "Stop" && t.outcome === "backgrounded")).toHaveLength(2);
  }, 120_000);

  test("a Bash tool call runs for real and its output comes back to the model", async () => {
    // What Stop saw is read below: the Stop must not be ended before it logs.
    const plugin = scratchPlugin({ syncStop: true });
    const api = await startMockApi({
      rules: [{ match: "count", reply: { type: "bash", command: "echo HARNESS-$((6*7)); command -v memsearch", description: "Print a number" } }],
    });
    track(api, plugin.dir);
    const r = await runPrint({ api, prompt: "count for me", pluginDir: plugin.dir, args: ["--allowedTools", "Bash"] });
    cleanup.push(() => void killLeftovers(r.runId));
    cleanup.push(() => rmSync(r.home, { recursive: true, force: true }));
    cleanup.push(() => rmSync(r.projectDir, { recursive: true, force: true }));

    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("HARNESS-42");
    const main = api.main();
    expect(main).toHaveLength(2);
    expect(main[0]!.answer?.stopReason).toBe("tool_use");
    // The plugin's bin/ is on the Bash tool's PATH.
    expect(main[1]!.toolResults).toEqual([{ toolUseId: main[0]!.answer!.toolUse!.id, output: `HARNESS-42\n${plugin.dir}/bin/memsearch`, isError: false }]);
    expect(main[1]!.answer?.text).toContain("HARNESS-42");

    // The transcript holds the tool_result and the Bash result.
    const [file] = transcriptFiles(r.home, r.projectDir);
    const lines = readTranscript(file!);
    const result = lines.find((l) => l.type === "user" && Array.isArray(l.message?.content) && l.message.content.some((b: any) => b.type === "tool_result"));
    expect(result?.toolUseResult?.stdout).toBe(`HARNESS-42\n${plugin.dir}/bin/memsearch`);
    expect(hookCalls(plugin.log).find((c) => c.argv === "hook stop")?.input.last_assistant_message).toContain("HARNESS-42");
    expect(await noLeftovers(r.runId)).toEqual([]);
  }, 120_000);
});
