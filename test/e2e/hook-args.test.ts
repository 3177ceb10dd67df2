/**
 * A hook's command line as an agent's settings give it may hold more than `hook <event> [--agent
 * <name>]` (a flag of a newer plugin, a stray argument) or less (no event). Claude Code blocks the
 * user's prompt when UserPromptSubmit exits 2 and feeds Stop's stderr back to the model, so every
 * such line still answers with JSON and exit 0; the hook runs when its event is known.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, tempProject } from "../helpers/cli.ts";
import { appendTurn } from "../fault/transcript.ts";

const memoryText = (dir: string) => (existsSync(dir) ? readdirSync(dir).map((n) => readFileSync(join(dir, n), "utf8")).join("\n") : "");

describe("hook command lines", () => {
  test("an unknown flag or an extra argument is named on stderr and the hook still runs", async () => {
    const p = tempProject();
    const input = JSON.stringify({ session_id: "s-args", source: "startup", cwd: p.root });
    for (const extra of [["--verbose"], ["extra"], ["--agent", "claude", "--no-such-flag=1"]]) {
      const r = await p.ms(["hook", "session-start", ...extra], undefined, input);
      expect(r.code).toBe(0);
      // It ran: SessionStart's answer carries the status line, not the bare {} of a hook that did not.
      expect(JSON.parse(r.stdout).systemMessage).toContain("[memsearch");
      expect(r.stderr).toContain(`Warning: hook session-start: ignored ${JSON.stringify(extra.at(-1))}`);
    }
  }, 60_000);

  test("Stop with an extra argument still queues the turn; --agent with no name is the default agent", async () => {
    const p = tempProject({ notes: "none" });
    for (const [i, extra] of [["--verbose"], ["--agent="], ["--agent", "--verbose"]].entries()) {
      const reply = `The walrus-${i} job waits on the backup lock.`;
      const transcript = join(p.root, "..", `${i}-${Date.now()}.jsonl`);
      const turn = { sessionId: `s-args-${i}`, uuid: `u-${i}`, promptId: `p-${i}`, prompt: "Why does the walrus job stall?", command: "grep -rn walrus", output: "jobs/walrus.ts", reply, cwd: p.root };
      writeFileSync(transcript, "");
      appendTurn(transcript, turn, "all");
      const input = JSON.stringify({ session_id: turn.sessionId, prompt_id: turn.promptId, cwd: p.root, transcript_path: transcript, last_assistant_message: reply });
      const r = await p.ms(["hook", "stop", ...extra], { MEMSEARCH_NO_WATCH: "1" }, input);
      expect([r.code, r.stdout.trim()]).toEqual([0, "{}"]);
      // Queued, then written by the drainer from the transcript the hook named.
      let found = false;
      for (let t = 0; t < 300 && !found; t++) {
        found = memoryText(p.memory).includes(`walrus-${i}`);
        if (!found) await Bun.sleep(100);
      }
      expect(found).toBe(true);
    }
  }, 60_000);

  test("no event: {} and exit 0; --help still shows the help, piped or at a terminal", async () => {
    const p = tempProject({ notes: "none" });
    const bare = await p.ms(["hook"], undefined, "{}");
    expect([bare.code, bare.stdout.trim()]).toEqual([0, "{}"]);
    expect(bare.stderr.trim().split("\n")).toEqual(['Error: unknown hook event "" (one of session-start, user-prompt-submit, stop, session-end, drain)']);
    const piped = await p.ms(["hook", "--help"]);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain("always exits 0 with JSON");
    let out = "";
    const proc = Bun.spawn([BIN, "hook", "--help"], { cwd: p.root, env: p.env as Record<string, string>, terminal: { cols: 120, rows: 40, data: (_t, chunk) => void (out += new TextDecoder().decode(chunk)) } });
    expect(await proc.exited).toBe(0);
    // The terminal's last bytes may come after the exit.
    for (let i = 0; i < 40 && !out.includes("always exits 0 with JSON"); i++) await Bun.sleep(50);
    expect(out).toContain("always exits 0 with JSON");
  }, 60_000);
});
