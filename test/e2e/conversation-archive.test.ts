/**
 * Issue 22, part B, through the compiled binary: the session table (a plan written through
 * ExitPlanMode, a compaction summary, a TodoWrite list) searched by `recall` beside the messages,
 * and conversations kept after Claude Code deletes their transcript (`cleanupPeriodDays`):
 * `recall` still finds them (marked archived), `transcript --turn` answers from the archive,
 * `recall --reindex` keeps them, `conversations.archive_days` prunes them and `stats` counts them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, tempProject } from "../helpers/cli.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PLAN_SESSION = "aa000000-0000-4000-8000-00000000000a";
const COMPACT_SESSION = "bb000000-0000-4000-8000-00000000000b";
const OLD_SESSION = "cc000000-0000-4000-8000-00000000000c";
const OLD_TURN = "cc111111-0000-4000-8000-000000000001";
const SLUG = "quiet-bright-otter";
// Filler that pushes the decision past what the message row keeps of a tool input (300 chars).
const FILLER = "Context: the billing service exports invoices nightly to the finance team. ".repeat(6);

function archiveProject() {
  const p = tempProject({ notes: "none" });
  dirs.push(p.root, p.home);
  const projects = join(p.home, ".claude", "projects");
  const folder = join(projects, "-proj");
  mkdirSync(folder, { recursive: true });
  const line = (session: string, o: Record<string, unknown>) => JSON.stringify({ sessionId: session, cwd: p.root, isSidechain: false, ...o }) + "\n";
  const plan = `# Billing export plan\n\n${FILLER}\n\nDecision: write the nightly export with the wombatcsv encoder, one file per tenant.`;
  writeFileSync(
    join(folder, `${PLAN_SESSION}.jsonl`),
    line(PLAN_SESSION, { type: "user", uuid: "pa-u1", timestamp: "2026-11-20T09:00:00Z", message: { role: "user", content: "plan the billing export rework" } }) +
      line(PLAN_SESSION, {
        type: "assistant",
        uuid: "pa-a1",
        slug: SLUG,
        timestamp: "2026-11-20T09:01:00Z",
        message: { id: "pm1", role: "assistant", content: [{ type: "tool_use", id: "tp1", name: "ExitPlanMode", input: { plan } }] },
      }) +
      line(PLAN_SESSION, { type: "user", uuid: "pa-r1", timestamp: "2026-11-20T09:01:30Z", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "tp1", content: "User has approved your plan." }] } }) +
      line(PLAN_SESSION, {
        type: "assistant",
        uuid: "pa-a2",
        slug: SLUG,
        timestamp: "2026-11-20T09:02:00Z",
        message: { id: "pm2", role: "assistant", content: [{ type: "tool_use", id: "tt1", name: "TodoWrite", input: { todos: [{ content: "Port the quokkaledger reconciliation", status: "pending" }] } }] },
      }) +
      line(PLAN_SESSION, { type: "user", uuid: "pa-r2", timestamp: "2026-11-20T09:02:10Z", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "tt1", content: "Todos have been modified successfully" }] } }),
  );
  writeFileSync(
    join(folder, `${COMPACT_SESSION}.jsonl`),
    line(COMPACT_SESSION, { type: "user", uuid: "cb-u1", timestamp: "2026-11-21T09:00:00Z", message: { role: "user", content: "keep going with the retry work" } }) +
      line(COMPACT_SESSION, { type: "assistant", uuid: "cb-a1", timestamp: "2026-11-21T09:01:00Z", message: { id: "cm1", role: "assistant", content: [{ type: "text", text: "Continuing." }] } }) +
      line(COMPACT_SESSION, { type: "system", subtype: "compact_boundary", uuid: "cb-s1", timestamp: "2026-11-21T09:30:00Z", compactMetadata: { trigger: "auto", preTokens: 150000 } }) +
      line(COMPACT_SESSION, {
        type: "user",
        uuid: "cb-c1",
        isCompactSummary: true,
        isVisibleInTranscriptOnly: true,
        timestamp: "2026-11-21T09:30:01Z",
        message: { role: "user", content: "This session is being continued from a previous conversation.\n\nDecision: retries use the zanzibarbackoff schedule, capped at 7 attempts." },
      }),
  );
  const old = join(folder, `${OLD_SESSION}.jsonl`);
  writeFileSync(
    old,
    line(OLD_SESSION, { type: "user", uuid: OLD_TURN, timestamp: "2026-10-10T09:00:00Z", message: { role: "user", content: "which wire format for telemetry?" } }) +
      line(OLD_SESSION, { type: "assistant", uuid: "cc-a1", timestamp: "2026-10-10T09:01:00Z", message: { id: "om1", role: "assistant", content: [{ type: "text", text: "We chose the marmaladewire format over protobuf for telemetry." }] } }),
  );
  const fortyDaysAgo = new Date(Date.now() - 40 * 86_400_000);
  utimesSync(old, fortyDaysAgo, fortyDaysAgo);
  const env = { ...p.env, TZ: "UTC", MEMSEARCH_EMBEDDING_PROVIDER: "none", CLAUDE_CONFIG_DIR: undefined };
  const ms = (args: string[], extra: Record<string, string | undefined> = {}) => run(args, { cwd: p.root, env: { ...env, ...extra }, timeoutMs: 60_000 });
  const recallJson = async (q: string, extra: string[] = [], e: Record<string, string | undefined> = {}) => {
    const r = await ms(["recall", q, "--raw", "-j", ...extra], e);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout);
  };
  return { p, projects, folder, old, ms, recallJson };
}

describe("the session table", () => {
  test("recall finds a decision only in a plan (naming session and plan file), one only in a compaction summary, one only in a todo list", async () => {
    const { projects, folder, ms, recallJson } = archiveProject();
    const plan = await recallJson("wombatcsv encoder");
    const hit = plan.results[0];
    expect(hit.from).toEqual(["session"]);
    expect(hit.transcript).toBeNull();
    expect(hit.session_content.table).toBe("session");
    expect(hit.session_content.kind).toBe("plan");
    expect(hit.session_content.session).toBe(PLAN_SESSION);
    expect(hit.session_content.title).toBe("Billing export plan");
    expect(hit.session_content.plan_file).toBe(join(projects, "..", "plans", `${SLUG}.md`).replace(/\/projects\/\.\./, ""));
    expect(hit.open).toBe(`memsearch transcript ${join(folder, `${PLAN_SESSION}.jsonl`)} --turn pa-u1`);
    const raw = await ms(["recall", "wombatcsv", "--raw"]);
    expect(raw.stdout).toContain(`Plan [session table] of session ${PLAN_SESSION}: Billing export plan`);
    expect(raw.stdout).toContain(`plan file: ${join(projects, "..", "plans", `${SLUG}.md`).replace(/\/projects\/\.\./, "")}`);

    const summary = await recallJson("zanzibarbackoff");
    expect(summary.results[0].session_content.kind).toBe("summary");
    expect(summary.results[0].session_content.session).toBe(COMPACT_SESSION);
    const todos = await recallJson("quokkaledger");
    expect(todos.results.some((r: { session_content: { kind: string } | null }) => r.session_content?.kind === "todos")).toBe(true);
  });
});

describe("conversations kept past Claude Code's clean-up", () => {
  test("a deleted 40-day-old transcript: recall finds it (archived), transcript --turn answers from the archive, --reindex keeps it, stats counts it", async () => {
    const { old, ms, recallJson } = archiveProject();
    const before = await recallJson("marmaladewire");
    expect(before.results[0].transcript.archived_at).toBeNull();
    rmSync(old);
    expect(existsSync(old)).toBe(false);

    const after = await recallJson("marmaladewire");
    const hit = after.results[0];
    expect(hit.from).toEqual(["transcript"]);
    expect(hit.transcript.table).toBe("messages");
    expect(hit.transcript.archived_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const raw = await ms(["recall", "marmaladewire", "--raw"]);
    expect(raw.stdout).toMatch(/Conversation \[messages table; archived: transcript deleted \d{4}-\d\d-\d\d\]/);

    const t = await ms(["transcript", old, "--turn", OLD_TURN.slice(0, 8), "-c", "0"]);
    expect(t.stderr).toBe("");
    expect(t.code).toBe(0);
    expect(t.stdout).toContain("[from the archive: Claude Code deleted this transcript");
    expect(t.stdout).toContain("We chose the marmaladewire format over protobuf");
    const tj = JSON.parse((await ms(["transcript", old, "--turn", OLD_TURN, "-j"])).stdout);
    expect(tj.archived).toBe(true);
    expect(tj.target).toBe(OLD_TURN);

    const re = await recallJson("marmaladewire", ["--reindex"]);
    expect(re.results[0].transcript.archived_at).toMatch(/^\d{4}-/);
    // The plan, still on disk, is found again after the rebuild.
    expect((await recallJson("wombatcsv")).results[0].session_content.kind).toBe("plan");

    const s = await ms(["stats"]);
    expect(s.code).toBe(0);
    expect(s.stdout).toMatch(/^Conversation archive: 1 deleted transcript, 2 messages, 1 session row, [\d.]+ KiB of text, oldest deleted \d{4}-\d\d-\d\d; kept without limit/m);
    const sj = JSON.parse((await ms(["stats", "-j"])).stdout);
    expect(sj.conversation_archive.transcripts).toBe(1);
    expect(sj.conversation_archive.messages).toBe(2);
  });

  test("recall --reindex right after Claude Code deleted a transcript, before any update noticed: the conversation is archived, not lost (issue 31)", async () => {
    const { old, ms, recallJson } = archiveProject();
    expect((await recallJson("marmaladewire")).results[0].transcript.archived_at).toBeNull();
    rmSync(old);
    const re = await recallJson("marmaladewire", ["--reindex"]);
    expect(re.results[0]?.transcript?.archived_at).toMatch(/^\d{4}-/);
    const t = await ms(["transcript", old, "--turn", OLD_TURN, "-c", "0"]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain("We chose the marmaladewire format over protobuf");
    // The conversations still on disk are read again by the rebuild, not archived.
    expect((await recallJson("wombatcsv")).results[0].session_content.kind).toBe("plan");
    expect(JSON.parse((await ms(["stats", "-j"])).stdout).conversation_archive.transcripts).toBe(1);
  });

  test("conversations.archive_days prunes archived conversations older than it; 0 keeps them", async () => {
    const { old, ms, recallJson } = archiveProject();
    await recallJson("marmaladewire");
    rmSync(old);
    await recallJson("marmaladewire", [], { MEMSEARCH_CONVERSATIONS_ARCHIVE_DAYS: "60" });
    expect((await recallJson("marmaladewire", [], { MEMSEARCH_CONVERSATIONS_ARCHIVE_DAYS: "60" })).results[0].transcript.archived_at).toMatch(/^\d{4}-/);
    const pruned = await ms(["recall", "marmaladewire", "--raw", "-j"], { MEMSEARCH_CONVERSATIONS_ARCHIVE_DAYS: "30" });
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout).results).toEqual([]);
    expect((await ms(["stats"])).stdout).toMatch(/^Conversation archive: empty/m);
    // The other conversations are untouched.
    expect((await recallJson("wombatcsv")).results[0].session_content.kind).toBe("plan");
  });
});
