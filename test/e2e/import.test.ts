import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { anchorsIn } from "../../src/core/anchor.ts";
import { listTurns } from "../../src/agents/claude/reader.ts";
import { turnKind } from "../../src/transcript/turn-kind.ts";
import { fakeClaudeCalls, writeFakeClaude } from "../helpers/fake-claude.ts";
import { BIN, run } from "../helpers/cli.ts";
import { FIXTURES } from "../helpers/fixtures.ts";

/**
 * `memsearch import` through the compiled binary, with a temporary HOME whose
 * `~/.claude/projects/<slug>/` holds fixture transcripts rewritten to belong to a temp project.
 */

// Real sessions (two with subagent folders, one spanning midnight UTC) and synthetic edge cases.
const MINE = [
  "spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
  "spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
  "spotter/tool_heavy.jsonl",
  "spotter/subagent.jsonl",
  "episodic-memory/large-conversation.jsonl",
  "episodic-memory/tiny-conversation.jsonl",
  "claude-code-log/edge_cases.jsonl",
  "claude-code-log/representative_messages.jsonl",
  "compaction.jsonl",
  "local-commands.jsonl",
  "garbage.jsonl",
  "images.jsonl",
];
// Another project's session, filed under a folder of its own.
const THEIRS = "spotter/short.jsonl";

const OLD = new Date("2026-03-02T00:00:00Z");
const slug = (p: string) => p.replace(/[^A-Za-z0-9]/g, "-");

/** Copy a transcript with every line's `cwd` pointed at `cwd` (lines that are not JSON are kept as they are). */
function copyAs(src: string, dest: string, cwd: string): void {
  const out = readFileSync(src, "utf8")
    .split("\n")
    .map((line) => {
      try {
        const o = JSON.parse(line);
        if (o && typeof o === "object" && !Array.isArray(o) && "cwd" in o) return JSON.stringify({ ...o, cwd });
      } catch {}
      return line;
    })
    .join("\n");
  mkdirSync(dirname(dest), { recursive: true });
  writeFileSync(dest, out);
  utimesSync(dest, OLD, OLD);
}

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

interface Setup {
  root: string;
  home: string;
  memory: string;
  mineDir: string;
  env: Record<string, string | undefined>;
}

function setup(): Setup {
  const base = mkdtempSync(join(tmpdir(), "ms-import-"));
  cleanup.push(base);
  const root = join(base, "proj");
  const other = join(base, "other");
  mkdirSync(join(root, ".git"), { recursive: true });
  mkdirSync(join(other, ".git"), { recursive: true });
  const home = join(base, "home");
  const projects = join(home, ".claude", "projects");
  const mineDir = join(projects, slug(root));
  for (const f of MINE) copyAs(join(FIXTURES, f), join(mineDir, basename(f)), root);
  // The spotter sessions' subagent files, beside their parents as Claude Code writes them.
  for (const s of ["4d5611e5-241a-462a-8d15-5122611a9569", "fa812bfe-b295-4cca-9c2f-fdf01028cb46"]) {
    for (const n of readdirSync(join(FIXTURES, "spotter", s, "subagents"))) copyAs(join(FIXTURES, "spotter", s, "subagents", n), join(mineDir, s, "subagents", n), root);
  }
  copyAs(join(FIXTURES, THEIRS), join(projects, slug(other), basename(THEIRS)), other);
  return {
    root,
    home,
    mineDir,
    memory: join(root, ".memsearch", "memory"),
    // UTC: the days below are the fixtures' UTC dates.
    env: { HOME: home, MEMSEARCH_HOME: join(home, ".memsearch"), OLLAMA_HOST: "http://127.0.0.1:9", MEMSEARCH_DIR: undefined, CLAUDE_PROJECT_DIR: undefined, CLAUDE_CONFIG_DIR: undefined, TZ: "UTC" },
  };
}

/**
 * What the fixtures hold besides work, counted by hand: `tool_heavy.jsonl` a `/mcp` nobody answered;
 * `representative_messages.jsonl` a last prompt without a reply; `local-commands.jsonl` a `/clear`
 * nobody answered, a `/compact` and an `/exit` answered only by Claude Code's `<synthetic>` line,
 * an API error and an interrupted prompt (no reply), and "Ok nice!" answered with words only.
 */
const NOT_WORK = "8 turns skipped, not work (4 local commands, 3 turns without a reply, 1 trivial prompt with a words-only reply)";
const NOT_WORK_RE = NOT_WORK.replace(/[()]/g, "\\$&");

/** Turns of the project's transcripts worth a note, counted by the reader itself (a uuid repeated across files once). */
async function expectedTurns(s: Setup): Promise<{ uuids: Set<string>; sessions: Set<string>; days: Set<string> }> {
  const uuids = new Set<string>();
  const sessions = new Set<string>();
  const days = new Set<string>();
  for (const f of MINE) {
    const t = await listTurns(join(s.mineDir, basename(f)));
    for (const turn of t.turns) {
      if (uuids.has(turn.uuid) || turnKind(turn) !== "work") continue;
      uuids.add(turn.uuid);
      sessions.add(t.sessionId);
      days.add(turn.timestamp!.slice(0, 10));
    }
  }
  return { uuids, sessions, days };
}

function anchors(memory: string) {
  if (!existsSync(memory)) return [];
  return readdirSync(memory)
    .filter((n) => /^\d{4}-\d{2}-\d{2}\.md$/.test(n))
    .sort()
    .flatMap((n) => anchorsIn(readFileSync(join(memory, n), "utf8")).map((a) => ({ ...a, file: n })));
}

/** Every anchor is followed by at least one bullet, and every `### ` heading by an anchor: no torn note. */
function expectWholeNotes(memory: string): void {
  for (const n of readdirSync(memory).filter((x) => x.endsWith(".md"))) {
    const lines = readFileSync(join(memory, n), "utf8").split("\n");
    lines.forEach((l, i) => {
      if (l.startsWith("### ")) expect(lines[i + 1]).toMatch(/^<!-- session:/);
      if (l.startsWith("<!-- session:")) expect(lines[i + 1]).toMatch(/^- \S/);
    });
  }
}

/** A fresh setup whose transcripts `memsearch import` has already turned into notes. */
async function imported(): Promise<Setup> {
  const s = setup();
  const r = await run(["import"], { cwd: s.root, env: s.env });
  if (r.code !== 0) throw new Error(`import failed (${r.code}): ${r.stderr}`);
  return s;
}

describe("memsearch import", () => {
  test("--dry-run says what it would write and that the extract costs nothing; writes nothing", async () => {
    const s = setup();
    const want = await expectedTurns(s);
    const r = await run(["import", "--dry-run"], { cwd: s.root, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Would import ${want.uuids.size} turns from ${want.sessions.size} sessions (${MINE.length} transcripts) into ${want.days.size} daily files; 0 turns already have notes; ${NOT_WORK}.`);
    expect(r.stdout).toContain("Cost: none (deterministic extract, no model calls).");
    expect(existsSync(s.memory)).toBe(false);
    const j = await run(["import", "--dry-run", "--summarizer", "claude", "-j"], { cwd: s.root, env: s.env });
    const plan = JSON.parse(j.stdout);
    expect(plan).toMatchObject({ transcripts: MINE.length, turns: want.uuids.size, sessions: want.sessions.size, already_noted: 0, other_projects: 1 });
    expect(plan.cost.calls).toBe(want.uuids.size);
    expect(plan.cost.input_tokens).toBe(Math.ceil(plan.cost.input_chars / 4));
    const c = await run(["import", "-n", "-s", "claude"], { cwd: s.root, env: s.env });
    expect(c.stdout).toMatch(new RegExp(`Cost: ${want.uuids.size} claude -p calls \\(model haiku\\), about [\\d,]+ input tokens \\(an estimate`));
    expect(existsSync(s.memory)).toBe(false);
  });

  test("import writes one anchored note per turn into the day of the turn, another project's and subagents' turns not included", async () => {
    const s = setup();
    const want = await expectedTurns(s);
    const r = await run(["import"], { cwd: s.root, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Imported ${want.uuids.size} turns from ${want.sessions.size} sessions into ${want.days.size} daily files \\(0 already had notes; ${NOT_WORK_RE}\\) in [\\d.]+ s; notes by the plain extract \\(no model: the request, files and outcome as written; --summarizer claude or ollama for a model's notes\\)\\n$`));
    expect(r.stderr).not.toContain("importing"); // no progress bar off a terminal
    const a = anchors(s.memory);
    expect(a.map((x) => x.turn).sort()).toEqual([...want.uuids].sort());
    expect(new Set(a.map((x) => x.file.slice(0, 10)))).toEqual(want.days);
    // Each note in the file of its turn's own (UTC here) date.
    for (const f of MINE) {
      const t = await listTurns(join(s.mineDir, basename(f)));
      for (const turn of t.turns) if (want.uuids.has(turn.uuid)) expect(a.find((x) => x.turn === turn.uuid)!.file).toBe(`${turn.timestamp!.slice(0, 10)}.md`);
    }
    // The anchor points at the transcript, so `memsearch transcript --turn` drills down.
    const first = a.find((x) => x.transcript.endsWith("tool_heavy.jsonl"))!;
    const drill = await run(["transcript", first.transcript, "--turn", first.turn, "-c", "0"], { cwd: s.root, env: s.env });
    expect(drill.code).toBe(0);
    const theirs = await listTurns(join(s.home, ".claude", "projects", slug(join(dirname(s.root), "other")), basename(THEIRS)));
    for (const turn of theirs.turns) expect(a.some((x) => x.turn === turn.uuid)).toBe(false);
    expectWholeNotes(s.memory);
    // A session spanning midnight gets a session heading in each day's file, in time order.
    const day19 = readFileSync(join(s.memory, "2025-09-19.md"), "utf8");
    expect(day19).toStartWith("# 2025-09-19\n\n## Session ");
    const times = [...day19.matchAll(/^### (\d\d:\d\d)$/gm)].map((m) => m[1]!);
    expect(times).toEqual([...times].sort());
    expect(readFileSync(join(s.memory, "2025-09-20.md"), "utf8")).toStartWith("# 2025-09-20\n\n## Session 00:");
  });

  test("no note for a local command, a turn without a reply or a trivial words-only turn; the run says how many it skipped and why", async () => {
    const s = setup();
    const r = await run(["import", "-j"], { cwd: s.root, env: s.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).not_turns).toEqual({ "local-command": 4, "no-reply": 3, trivial: 1 });
    const notes = readdirSync(s.memory)
      .map((n) => readFileSync(join(s.memory, n), "utf8"))
      .join("\n");
    for (const gone of ["asked: /exit", "asked: /clear", "asked: /compact", "asked: /mcp", "Ok nice!", "No response requested", "API Error", "integration tests time out", "port the same change", "implement a timing decorator"]) expect(notes).not.toContain(gone);
    // The fixture's work turns, a one-word prompt that ran a tool included, are noted.
    expect(notes).toContain("Rename the retry helper");
    expect(notes).toContain("- User asked: yes\n- Tools run: Bash");
  });

  test("search finds an imported fact", async () => {
    const s = await imported();
    const r = await run(["search", "bead spotter-dov", "-j"], { cwd: s.root, env: s.env });
    expect(r.code).toBe(0);
    const hits = JSON.parse(r.stdout) as { content: string; source: string }[];
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]!.content).toContain("spotter-dov");
    expect(hits[0]!.source).toContain("2026-02-12.md");
  });

  test("a second run writes nothing and leaves the files as they were", async () => {
    const s = await imported();
    const want = await expectedTurns(s);
    const before = readdirSync(s.memory).map((n) => readFileSync(join(s.memory, n), "utf8"));
    const r = await run(["import"], { cwd: s.root, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Imported 0 turns from 0 sessions into 0 daily files \\(${want.uuids.size} already had notes; ${NOT_WORK_RE}\\)`));
    expect(readdirSync(s.memory).map((n) => readFileSync(join(s.memory, n), "utf8"))).toEqual(before);
  });

  test("the progress bar shows on a terminal", async () => {
    const fresh = setup();
    const want = await expectedTurns(fresh);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...fresh.env })) if (v !== undefined) env[k] = v;
    // Bun's own pseudo-terminal: the binary's stderr is a TTY, as in a person's shell.
    let out = "";
    const decoder = new TextDecoder();
    const proc = Bun.spawn([BIN, "import"], { cwd: fresh.root, env, terminal: { cols: 120, rows: 40, data: (_t, d) => void (out += decoder.decode(d, { stream: true })) } });
    expect(await proc.exited).toBe(0);
    proc.terminal!.close();
    expect(out).toMatch(/importing \d+\/\d+ turns \(\d+ sessions? left\)/);
    expect(out).toContain(`importing ${want.uuids.size}/${want.uuids.size} turns (0 sessions left)`);
  });
});

describe("interrupted and resumed", () => {
  test("killed after a few notes, a re-run writes every turn exactly once and no note is torn", async () => {
    const s = setup();
    const want = await expectedTurns(s);
    // A claude that takes its time, so the import can be killed in the middle.
    const bin = mkdtempSync(join(tmpdir(), "ms-slowclaude-"));
    cleanup.push(bin);
    writeFileSync(join(bin, "claude"), "#!/bin/sh\ncat > /dev/null\nsleep 0.15\nprintf -- '- User asked the slow claude something\\n- Slow claude noted it\\n'\n");
    chmodSync(join(bin, "claude"), 0o755);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...s.env, PATH: `${bin}:${process.env.PATH}` })) if (v !== undefined) env[k] = v;
    const proc = Bun.spawn([BIN, "import", "--summarizer", "claude", "--jobs", "1"], { cwd: s.root, env, stdout: "pipe", stderr: "pipe" });
    const deadline = Date.now() + 20_000;
    while (anchors(s.memory).length < 5 && Date.now() < deadline) await Bun.sleep(20);
    proc.kill("SIGKILL");
    await proc.exited;
    const partial = anchors(s.memory).length;
    expect(partial).toBeGreaterThanOrEqual(5);
    expect(partial).toBeLessThan(want.uuids.size);
    expectWholeNotes(s.memory);

    const r = await run(["import", "-j"], { cwd: s.root, env: s.env });
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res.already_noted).toBe(partial);
    expect(res.written).toBe(want.uuids.size - partial);
    const a = anchors(s.memory).map((x) => x.turn);
    expect(a).toHaveLength(want.uuids.size);
    expect(new Set(a)).toEqual(want.uuids);
    expectWholeNotes(s.memory);
  }, 30_000);
});

describe("with a model", () => {
  test("--summarizer claude asks the fake claude once per turn, with redacted input and our hooks off", async () => {
    const s = setup();
    const secret = "sk-ant-api03-" + "Zq9Xw8Vu7Ts6Rq5Po4Nm3".repeat(4);
    // One session of our own carrying a key in its prompt.
    const line = (o: object) => JSON.stringify({ parentUuid: null, isSidechain: false, userType: "external", cwd: s.root, sessionId: "keyed", version: "2.1.40", ...o });
    const keyed = join(s.mineDir, "keyed.jsonl");
    writeFileSync(
      keyed,
      [
        line({ type: "user", message: { role: "user", content: `deploy with ${secret} please` }, uuid: "k1", timestamp: "2026-03-01T09:00:00.000Z" }),
        line({ type: "assistant", message: { id: "mk", role: "assistant", content: [{ type: "text", text: "Deployed." }] }, uuid: "k1a", timestamp: "2026-03-01T09:00:05.000Z" }),
      ].join("\n") + "\n",
    );
    utimesSync(keyed, OLD, OLD);
    const want = await expectedTurns(s);
    const bin = mkdtempSync(join(tmpdir(), "ms-fakebin-"));
    const log = mkdtempSync(join(tmpdir(), "ms-claude-log-"));
    cleanup.push(bin, log);
    writeFakeClaude(bin);
    const env = { ...s.env, PATH: `${bin}:${process.env.PATH}`, FAKE_CLAUDE_LOG: log, FAKE_CLAUDE_MODE: "echo" };
    const r = await run(["import", "--summarizer", "claude"], { cwd: s.root, env, timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    const total = want.uuids.size + 1;
    expect(r.stdout).toStartWith(`Imported ${total} turns`);
    const calls = fakeClaudeCalls(log);
    expect(calls).toHaveLength(total);
    for (const c of calls) {
      expect(c.stdin).not.toContain(secret);
      expect(c.env.MEMSEARCH_DISABLE).toBe("1");
      expect(c.argv).toContain("haiku");
    }
    expect(calls.some((c) => c.stdin.includes("deploy with [REDACTED"))).toBe(true);
    const text = readdirSync(s.memory).map((n) => readFileSync(join(s.memory, n), "utf8")).join("\n");
    expect(text).toContain("- Summary of: deploy with [REDACTED");
    expect(text).toContain("- Noted by the fake claude");
    expect(text).not.toContain(secret);
    expect(anchors(s.memory)).toHaveLength(total);
  }, 60_000);
});

describe("what a user can get wrong", () => {
  test("no transcripts for this project: one line saying where it looked, exit 0", async () => {
    const base = mkdtempSync(join(tmpdir(), "ms-import-none-"));
    cleanup.push(base);
    mkdirSync(join(base, "proj", ".git"), { recursive: true });
    const cfg = join(base, "claude-config");
    const r = await run(["import"], { cwd: join(base, "proj"), env: { HOME: join(base, "home"), MEMSEARCH_HOME: join(base, "ms"), CLAUDE_CONFIG_DIR: cfg, MEMSEARCH_DIR: undefined, CLAUDE_PROJECT_DIR: undefined } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`No transcripts of this project (${join(base, "proj")}) in ${join(cfg, "projects")}.\n`);
    expect(r.stderr).toBe("");
    expect(existsSync(join(base, "proj", ".memsearch", "memory"))).toBe(false);
  });

  test("named files: a garbage one is skipped with one warning and the good ones imported; only garbage fails", async () => {
    const s = setup();
    const foreign = join(FIXTURES, "codex-rollout.jsonl");
    const good = join(s.mineDir, "tool_heavy.jsonl");
    const r = await run(["import", foreign, good], { cwd: s.root, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n").filter((l) => l.includes("skipped"))).toEqual([`Warning: skipped ${foreign}: not a Claude Code transcript (unrecognised format)`]);
    expect(r.stdout).toStartWith("Imported 2 turns from 1 session into 1 daily file");
    const bad = await run(["import", foreign], { cwd: s.root, env: s.env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Error: nothing to import: every transcript given was skipped");
    const missing = await run(["import", join(s.root, "nope.jsonl")], { cwd: s.root, env: s.env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`Error: transcript not found: ${join(s.root, "nope.jsonl")}\n`);
  });

  test("special files named *.jsonl (FIFO, socket, links out) are skipped with a warning, never opened: import finishes", async () => {
    const s = setup();
    const fifo = join(s.mineDir, "x.jsonl");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const sock = join(s.mineDir, "sock.jsonl");
    const server = createServer().listen(sock);
    await new Promise((r) => server.once("listening", r));
    // A regular transcript of this project, but outside Claude Code's folder, and a device.
    const outside = join(dirname(s.root), "outside.jsonl");
    copyAs(join(FIXTURES, "spotter/short.jsonl"), outside, s.root);
    symlinkSync(outside, join(s.mineDir, "link-out.jsonl"));
    symlinkSync("/dev/zero", join(s.mineDir, "zero.jsonl"));
    try {
      // A hang fails here (the process is killed) rather than blocking the suite.
      const r = await run(["import", "--dry-run"], { cwd: s.root, env: s.env, timeoutMs: 20_000 });
      expect(r.code).toBe(0);
      const warnings = r.stderr.split("\n").filter((l) => l.includes("skipped"));
      expect(warnings).toEqual([
        `Warning: skipped ${join(s.mineDir, "link-out.jsonl")}: a symbolic link out of Claude Code's projects folder, not a transcript file`,
        `Warning: skipped ${sock}: a socket, not a transcript file`,
        `Warning: skipped ${fifo}: a FIFO, not a transcript file`,
        `Warning: skipped ${join(s.mineDir, "zero.jsonl")}: a symbolic link out of Claude Code's projects folder, not a transcript file`,
      ]);
      expect(r.stdout).toContain(`(${MINE.length} transcripts)`);
      // Named on the command line: skipped with the reader's reason, nothing to import.
      const named = await run(["import", fifo, "/dev/zero"], { cwd: s.root, env: s.env, timeoutMs: 20_000 });
      expect(named.code).toBe(1);
      expect(named.stderr).toContain(`Warning: skipped ${fifo}: transcript is not a regular file`);
      expect(named.stderr).toContain("Warning: skipped /dev/zero: transcript is not a regular file");
      expect(named.stderr).toContain("Error: nothing to import: every transcript given was skipped");
    } finally {
      server.close();
    }
  });

  test("a subagent file named on the command line is refused: its parent's turn holds its work", async () => {
    const s = setup();
    const sub = join(s.mineDir, "4d5611e5-241a-462a-8d15-5122611a9569", "subagents", "agent-a2898e3.jsonl");
    const r = await run(["import", sub], { cwd: s.root, env: s.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("a subagent transcript");
  });

  test("a memory folder that cannot take the notes: one line, non-zero, nothing half-written", async () => {
    const s = setup();
    // Stand-ins for a full disk (the unit tests simulate ENOSPC itself): a read-only folder, or,
    // for root who ignores permissions, a file where the folder should be.
    const root = process.getuid?.() === 0;
    if (root) {
      mkdirSync(dirname(s.memory), { recursive: true });
      writeFileSync(s.memory, "");
    } else {
      mkdirSync(s.memory, { recursive: true });
      chmodSync(s.memory, 0o555);
    }
    try {
      const r = await run(["import"], { cwd: s.root, env: s.env });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toStartWith(`Error: cannot write ${s.memory}`);
      expect(r.stdout).toBe("");
    } finally {
      if (!root) chmodSync(s.memory, 0o755);
    }
    if (root) expect(readFileSync(s.memory, "utf8")).toBe("");
    else expect(readdirSync(s.memory)).toEqual([]);
  });
});
