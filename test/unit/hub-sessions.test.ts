/**
 * The hub's session view in-process: the injection log grouped by session, newest first, each
 * prompt's first words from the project's own transcript (redacted), and nothing from another
 * project's transcript of the same session id.
 */
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sessionsOf } from "../../src/hub/sessions.ts";
import { appendTurn } from "../fault/transcript.ts";

const ANTHROPIC = `sk-ant-api03-${"Q".repeat(64)}`;

test("first words come from the project's transcript, redacted; sessions newest first; a line that is not a record is skipped", async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "ms-hub-sessions-")));
  const root = join(base, "proj");
  const dataDir = join(root, ".memsearch");
  mkdirSync(dataDir, { recursive: true });
  const home = join(base, "home");
  const projects = join(home, ".claude", "projects");
  const mine = join(projects, root.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(mine, { recursive: true });
  appendTurn(join(mine, "s-old.jsonl"), { sessionId: "s-old", uuid: "u1", promptId: "p1", prompt: `Rotate the key ${ANTHROPIC} and   redeploy\nthe api`, command: "true", output: "", reply: "Done.", cwd: root }, "all");
  // Another project's transcript under the same session id: never read for this project.
  const theirs = join(projects, "-elsewhere");
  mkdirSync(theirs, { recursive: true });
  appendTurn(join(theirs, "s-new.jsonl"), { sessionId: "s-new", uuid: "u9", promptId: "p9", prompt: "their private prompt", command: "true", output: "", reply: "x", cwd: "/elsewhere" }, "all");
  const rec = (o: Record<string, unknown>) => JSON.stringify({ v: 1, mode: "inject", reason: "nothing through the gate", decision: "nothing", chars: 0, considered: [], ...o });
  writeFileSync(
    join(dataDir, "injections.jsonl"),
    [rec({ at: "2026-11-20T10:00:00Z", session: "s-old", prompt: "p1" }), "{broken", rec({ at: "2026-11-21T10:00:00Z", session: "s-new", prompt: "p9" })].join("\n") + "\n",
  );
  const page = await sessionsOf({ id: "abc", name: "proj", root, dataDir }, { HOME: home });
  expect(page.total).toBe(2);
  expect(page.sessions.map((s) => s.session)).toEqual(["s-new", "s-old"]);
  expect(page.sessions[0]!.prompts[0]!.firstWords).toBeNull();
  const words = page.sessions[1]!.prompts[0]!.firstWords!;
  expect(words).not.toContain(ANTHROPIC);
  expect(words).toStartWith("Rotate the key [REDACTED");
  expect(words).toEndWith("and redeploy the api");
  expect(page.sessions[1]!.prompts[0]!.verdict).toBe("nothing: no candidate found");
});
