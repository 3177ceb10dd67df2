/**
 * A hook's command line as an agent's settings give it may hold more than `hook <event> [--agent
 * <name>]` (a flag of a newer plugin, a stray argument) or less (no event). Claude Code blocks the
 * user's prompt when UserPromptSubmit exits 2 and feeds Stop's stderr back to the model, so every
 * such line still answers with JSON and exit 0; the hook runs when its event is known.
 */
import { describe, expect, test } from "bun:test";
import { tempProject } from "../helpers/cli.ts";

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

  test("no event: {} and exit 0; --help still shows the help", async () => {
    const p = tempProject({ notes: "none" });
    const bare = await p.ms(["hook"], undefined, "{}");
    expect([bare.code, bare.stdout.trim()]).toEqual([0, "{}"]);
    expect(bare.stderr).toContain('unknown hook event ""');
    const help = await p.ms(["hook", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("always exits 0 with JSON");
  }, 60_000);
});
