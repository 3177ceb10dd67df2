/**
 * Fault injection: a cloned repository that planted links (and a FIFO) in its `.memsearch/`
 * folder (issue 20, defect 1). Each poison is tried against every entry point that touches the
 * data folder: the SessionStart, UserPromptSubmit and Stop hooks (and the drainer Stop starts),
 * the drainer on a turn queued before the poison arrived, and `index`, `search`, `remember` and
 * `watch`. Whatever the entry point: the files outside the project are byte for byte what they
 * were and nothing new appears there, nothing outside reaches the output, nothing is written in
 * the data folder either; SessionStart and Stop exit 0 with one status-line notice, the prompt
 * hook stays quiet, the CLI exits non-zero with one line. A turn queued before the poison stays
 * queued, and is written once the poison is removed.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { enqueueTurn } from "../../src/memory/pending.ts";
import { localDay } from "../../src/memory/journal.ts";
import { anchorsOf, BIN, drained, faultKit, HANG_SLACK_MS, HOOK_BUDGET_MS, hookOutputProblem, ms, queued, readMemory, stderrLines, tracked, type Project } from "./helpers.ts";
import { appendTurn, type TurnSpec } from "./transcript.ts";
import { projectSlug } from "../../src/core/claude-home.ts";

const kit = faultKit("hostile-repo");

const SECRET = "OUTSIDE-SECRET-7f3a";
const BASHRC = `# the user's own shell start-up file\nexport PATH="$HOME/bin:$PATH"\n# ${SECRET}\n`;
const OUTSIDE_NOTE = `# 2026-01-01\n\n## Session 09:00\n\n### 09:00\n<!-- session:out turn:out-1 transcript:- -->\n- ${SECRET} zebra deploy notes from outside the project\n`;

/**
 * What lies outside the project, where a link may point: a file standing for ~/.bashrc, a
 * folder of notes, a folder shaped like a data folder, and empty folders for the rest.
 */
function outside(p: Project): string {
  const out = join(p.root, "..", `${relative(join(p.root, ".."), p.root)}-outside`);
  mkdirSync(join(out, "notes"), { recursive: true });
  mkdirSync(join(out, "data", "memory"), { recursive: true });
  mkdirSync(join(out, "empty"), { recursive: true });
  writeFileSync(join(out, "bashrc"), BASHRC);
  writeFileSync(join(out, "notes", "2026-01-01.md"), OUTSIDE_NOTE);
  writeFileSync(join(out, "data", "memory", "2026-01-01.md"), OUTSIDE_NOTE);
  return out;
}

interface Poison {
  name: string;
  /** Plants the poison in the project; `out` is the outside folder. */
  plant(p: Project, out: string): void;
  /** Whether the queue (pending/) is the project's own after planting, for the drainer test. */
  keepsQueue: boolean;
}

const today = () => `${localDay(new Date())}.md`;
const link = (target: string, path: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  rmSync(path, { recursive: true, force: true });
  symlinkSync(target, path);
};

const POISONS: Poison[] = [
  { name: ".memsearch -> a folder outside", keepsQueue: false, plant: (p, out) => link(join(out, "data"), p.dataDir) },
  { name: "watch.log -> ~/.bashrc", keepsQueue: true, plant: (p, out) => link(join(out, "bashrc"), join(p.dataDir, "watch.log")) },
  { name: "watch.log -> a missing file outside", keepsQueue: true, plant: (p, out) => link(join(out, "created-by-memsearch"), join(p.dataDir, "watch.log")) },
  { name: "memory/<today>.md -> ~/.bashrc", keepsQueue: true, plant: (p, out) => link(join(out, "bashrc"), join(p.memory, today())) },
  { name: "memory/<old day>.md -> a note outside", keepsQueue: true, plant: (p, out) => link(join(out, "notes", "2026-01-01.md"), join(p.memory, "2026-01-02.md")) },
  { name: "memory/ -> a folder outside", keepsQueue: true, plant: (p, out) => link(join(out, "notes"), p.memory) },
  { name: "index/ -> a folder outside", keepsQueue: true, plant: (p, out) => link(join(out, "empty"), p.indexDir) },
  { name: "index/index.bin -> ~/.bashrc", keepsQueue: true, plant: (p, out) => link(join(out, "bashrc"), join(p.indexDir, "index.bin")) },
  { name: "pending/ -> a folder outside", keepsQueue: false, plant: (p, out) => link(join(out, "empty"), p.pending) },
  { name: "pending/prompts/ -> a folder outside", keepsQueue: true, plant: (p, out) => link(join(out, "empty"), join(p.pending, "prompts")) },
  { name: "sessions/ -> a folder outside", keepsQueue: true, plant: (p, out) => link(join(out, "empty"), join(p.dataDir, "sessions")) },
  { name: "watch.pid -> ~/.bashrc", keepsQueue: true, plant: (p, out) => link(join(out, "bashrc"), join(p.dataDir, "watch.pid")) },
  { name: "hook-problems.json -> ~/.bashrc", keepsQueue: true, plant: (p, out) => link(join(out, "bashrc"), join(p.dataDir, "hook-problems.json")) },
  {
    name: "memory/<today>.md is a FIFO",
    keepsQueue: true,
    plant: (p) => {
      const r = Bun.spawnSync(["mkfifo", join(p.memory, today())]);
      if (r.exitCode !== 0) throw new Error("mkfifo failed");
    },
  },
];

/** Every entry below `dir` without following links: relative path → kind and content hash. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const st = lstatSync(full);
      const rel = relative(dir, full);
      if (st.isSymbolicLink()) out.set(rel, `link:${readlinkSync(full)}`);
      else if (st.isDirectory()) {
        out.set(rel, "dir");
        walk(full);
      } else if (st.isFile()) out.set(rel, `file:${createHash("sha256").update(readFileSync(full)).digest("hex")}`);
      else out.set(rel, "special");
    }
  };
  try {
    lstatSync(dir).isSymbolicLink() ? out.set(".", `link:${readlinkSync(dir)}`) : walk(dir);
  } catch {}
  return out;
}


/** What changed between two trees, for a readable failure. */
function changes(a: Map<string, string>, b: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of b) if (a.get(k) !== v) out.push(`${a.has(k) ? "changed" : "new"}: ${k}`);
  for (const k of a.keys()) if (!b.has(k)) out.push(`gone: ${k}`);
  return out;
}

const NOTICE = /memory is off for .*nothing was read or written/;

type Entry = "session-start" | "user-prompt-submit" | "stop" | "index" | "search" | "remember" | "watch";
const ENTRIES: Entry[] = ["session-start", "user-prompt-submit", "stop", "index", "search", "remember", "watch"];
const HOOKS = new Set<Entry>(["session-start", "user-prompt-submit", "stop"]);

function turnFor(p: Project, label: string): TurnSpec & { transcript: string } {
  const transcript = join(p.root, "..", `${label.replace(/\W+/g, "-")}.jsonl`);
  const t = {
    sessionId: `sess-${label.replace(/\W+/g, "-")}`,
    uuid: `uuid-${Math.random().toString(36).slice(2, 10)}`,
    promptId: `prompt-${Math.random().toString(36).slice(2, 10)}`,
    prompt: "Why does the nightly zebra deploy time out?",
    command: "grep -rn zebra src/",
    output: "src/zebra.ts:12: await lock.acquire()",
    reply: "The zebra deploy waits on a lock held by the nightly backup.",
    cwd: p.root,
    transcript,
  };
  writeFileSync(transcript, "");
  appendTurn(transcript, t, "all");
  return t;
}

async function runEntry(p: Project, entry: Entry, label: string) {
  const env = { ...p.env, MEMSEARCH_NO_WATCH: undefined };
  if (HOOKS.has(entry)) {
    const t = turnFor(p, label);
    const input =
      entry === "stop"
        ? { hook_event_name: "Stop", session_id: t.sessionId, prompt_id: t.promptId, transcript_path: t.transcript, cwd: p.root, last_assistant_message: t.reply }
        : entry === "user-prompt-submit"
          ? { hook_event_name: "UserPromptSubmit", session_id: t.sessionId, prompt_id: t.promptId, transcript_path: t.transcript, cwd: p.root, prompt: "Why does the nightly zebra deploy time out?" }
          : { hook_event_name: "SessionStart", session_id: t.sessionId, source: "startup", transcript_path: t.transcript, cwd: p.root };
    return ms(["hook", entry], { cwd: p.root, env, stdin: JSON.stringify(input), hangMs: HOOK_BUDGET_MS[entry]! + HANG_SLACK_MS });
  }
  const args = entry === "search" ? ["search", "zebra deploy"] : entry === "remember" ? ["remember", "the zebra deploy needs the backup lock"] : [entry];
  // A watch that does not refuse runs until killed: the hang detector ends it, and that fails.
  return ms(args, { cwd: p.root, env, hangMs: entry === "watch" ? 8_000 : 60_000 });
}

describe("a poisoned data folder is refused by every entry point, and nothing outside the project changes", () => {
  for (const poison of POISONS) {
    for (const entry of ENTRIES) {
      test(
        `${poison.name} × ${entry}`,
        tracked(kit, async () => {
          const p = kit.project();
          const out = outside(p);
          poison.plant(p, out);
          kit.count("poisoned-repos");
          const outBefore = tree(out);
          const dataBefore = tree(p.dataDir);

          const r = await runEntry(p, entry, `${poison.name}-${entry}`);
          if (entry === "stop") expect(await drained(kit, p, 30_000)).toBe(true);

          const writesOutside = changes(outBefore, tree(out));
          kit.count("writes-outside", writesOutside.length);
          expect(writesOutside).toEqual([]);
          expect(r.stdout + r.stderr).not.toContain(SECRET);
          expect(changes(dataBefore, tree(p.dataDir))).toEqual([]);
          expect(r.hung).toBe(false);
          if (HOOKS.has(entry)) {
            expect(hookOutputProblem(r)).toBeUndefined();
            const outJson = JSON.parse(r.stdout);
            if (entry === "user-prompt-submit") expect(outJson).toEqual({});
            else {
              expect(outJson.systemMessage).toMatch(NOTICE);
              expect(outJson.systemMessage.split("\n")).toHaveLength(1);
              expect(outJson.hookSpecificOutput).toBeUndefined();
            }
          } else {
            expect(r.code).not.toBe(0);
            expect(r.stdout).toBe("");
            expect(stderrLines(r.stderr)).toHaveLength(1);
            expect(r.stderr).toMatch(NOTICE);
          }
        }),
        30_000,
      );
    }
  }
});

/** A turn queued as this machine's Stop hook queues it for `p`: marked with the key of p's home, as the drainer will check it. */
function queueAsStop(p: Project, turn: Parameters<typeof enqueueTurn>[1], dataDir = p.dataDir): string {
  const mine = process.env.MEMSEARCH_HOME;
  process.env.MEMSEARCH_HOME = p.env.MEMSEARCH_HOME;
  try {
    return enqueueTurn(dataDir, turn);
  } finally {
    process.env.MEMSEARCH_HOME = mine;
  }
}

describe("a turn queued before the poison arrived is kept, and written once the poison is gone", () => {
  for (const poison of POISONS.filter((x) => x.keepsQueue)) {
    test(
      poison.name,
      tracked(kit, async () => {
        const p = kit.project();
        const out = outside(p);
        const t = turnFor(p, `drain-${poison.name}`);
        queueAsStop(p, { sessionId: t.sessionId, promptId: t.promptId, transcriptPath: t.transcript, stoppedAt: new Date().toISOString(), prompt: t.prompt, lastAssistantMessage: t.reply });
        poison.plant(p, out);
        kit.count("poisoned-repos");
        const outBefore = tree(out);

        const r = await ms(["hook", "drain"], { cwd: p.root, env: p.env, hangMs: 30_000 });
        expect(hookOutputProblem(r)).toBeUndefined();
        const writesOutside = changes(outBefore, tree(out));
        kit.count("writes-outside", writesOutside.length);
        expect(writesOutside).toEqual([]);
        expect(queued(p)).toHaveLength(1);

        // The user removes what the repository planted: the turn is written, in the project.
        for (const [rel, kind] of tree(p.dataDir)) if (kind.startsWith("link:") || kind === "special") rmSync(join(p.dataDir, rel));
        const again = await ms(["hook", "drain"], { cwd: p.root, env: p.env, hangMs: 60_000 });
        expect(hookOutputProblem(again)).toBeUndefined();
        expect(await drained(kit, p, 30_000)).toBe(true);
        expect(queued(p)).toHaveLength(0);
        expect(anchorsOf(p.memory).filter((a) => a.turn === t.uuid)).toHaveLength(1);
        expect(changes(outBefore, tree(out))).toEqual([]);
      }),
      90_000,
    );
  }
});

describe("MEMSEARCH_DIR: the user's own folder may be anywhere, but links inside it are still refused", () => {
  test(
    "a data folder outside the project, chosen with MEMSEARCH_DIR, is used",
    tracked(kit, async () => {
      const p = kit.project();
      const chosen = join(p.root, "..", `${relative(join(p.root, ".."), p.root)}-chosen`);
      const env = { ...p.env, MEMSEARCH_DIR: chosen };
      const r = await ms(["remember", "the zebra deploy needs the backup lock"], { cwd: p.root, env });
      expect(r.code).toBe(0);
      expect(readdirSync(join(chosen, "memory"))).toEqual([today()]);
      const s = await ms(["search", "zebra deploy"], { cwd: p.root, env });
      expect(s.code).toBe(0);
      expect(s.stdout).toContain("backup lock");
    }),
    60_000,
  );

  test(
    "a link inside the chosen folder is refused",
    tracked(kit, async () => {
      const p = kit.project();
      const out = outside(p);
      const chosen = join(p.root, "..", `${relative(join(p.root, ".."), p.root)}-chosen`);
      link(join(out, "bashrc"), join(chosen, "memory", today()));
      kit.count("poisoned-repos");
      const before = tree(out);
      const r = await ms(["remember", "the zebra deploy needs the backup lock"], { cwd: p.root, env: { ...p.env, MEMSEARCH_DIR: chosen } });
      expect(r.code).not.toBe(0);
      expect(stderrLines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toMatch(NOTICE);
      expect(changes(before, tree(out))).toEqual([]);
    }),
    60_000,
  );
});

describe("doctor", () => {
  test(
    "names the planted link as a failing check and exits 1, writing nothing",
    tracked(kit, async () => {
      const p = kit.project();
      const out = outside(p);
      link(join(out, "bashrc"), join(p.dataDir, "watch.log"));
      kit.count("poisoned-repos");
      const before = tree(out);
      const dataBefore = tree(p.dataDir);
      const r = await ms(["doctor"], { cwd: p.root, env: p.env });
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/✗ data folder: memory is off for .*"\.memsearch\/watch\.log" is a symbolic link.*— fix: remove what is named above/);
      expect(changes(before, tree(out))).toEqual([]);
      expect(changes(dataBefore, tree(p.dataDir))).toEqual([]);
    }),
    60_000,
  );
});

describe("a watch process running when the repository changes under it (a pull during the session)", () => {
  test(
    "index/ turned into a link: the watch stops writing the index, nothing appears outside",
    tracked(kit, async () => {
      const p = kit.project();
      const out = outside(p);
      const env = { ...p.env, MEMSEARCH_WATCH_DEBOUNCE_MS: "100" };
      const watch = Bun.spawn([BIN, "watch"], { cwd: p.root, env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>, stdout: "ignore", stderr: "ignore" });
      kit.onCleanup(() => watch.kill(9));
      // The index is its base and the manifest of the segments after it: a new note changes the manifest.
      const files = [join(p.indexDir, "index.bin"), join(p.indexDir, "manifest.json")];
      const stamp = () => {
        try {
          return files.map((f) => {
            const st = lstatSync(f);
            return `${st.mtimeMs}:${st.size}:${st.ino}`;
          }).join("|");
        } catch {
          return "";
        }
      };
      const until = async (ok: () => boolean, ms: number) => {
        const end = Date.now() + ms;
        while (!ok() && Date.now() < end) await Bun.sleep(50);
        return ok();
      };
      expect(await until(() => stamp() !== "", 20_000)).toBe(true);

      // Control: while the folder is clean, a new note reaches the index; how long that takes.
      const first = stamp();
      const t0 = Date.now();
      writeFileSync(join(p.memory, "2026-11-25.md"), "# 2026-11-25\n\n### 09:00\n- The walrus cache is flushed nightly.\n");
      expect(await until(() => stamp() !== first, 20_000)).toBe(true);
      const latency = Date.now() - t0;

      link(join(out, "empty"), p.indexDir);
      kit.count("poisoned-repos");
      const before = tree(out);
      writeFileSync(join(p.memory, "2026-11-26.md"), "# 2026-11-26\n\n### 09:00\n- The narwhal queue drains at noon.\n");
      await Bun.sleep(Math.max(3_000, 5 * latency));
      const writesOutside = changes(before, tree(out));
      kit.count("writes-outside", writesOutside.length);
      expect(writesOutside).toEqual([]);
    }),
    90_000,
  );
});

describe("a queued turn naming a transcript that is not the project's", () => {
  /**
   * Project B's session on this machine, with a private fact, and a turn in A's queue naming a
   * transcript, as a cloned repository could ship it (no mark of this machine): B's in Claude
   * Code's folder, one filed under A's folder but recorded in B, one outside every agent's folder
   * (recorded in B, or saying it was recorded in A), A's own named as another agent's: all
   * refused; A's own is read. An entry this machine's Stop hook queued for A (marked) is read as
   * its agent named it; copied into another project, it is refused there.
   */
  const PRIVATE = "PRIVATE-B-MARKER-payroll";
  const SESSION = "0b0b0b0b-0000-4000-8000-000000000000";
  type Where = "self" | "other" | "outside";
  const cases: { name: string; slugOf: Where; cwdOf: "self" | "other"; marked?: "here" | "copied"; agent?: string; read: boolean }[] = [
    { name: "another project's Claude Code transcript", slugOf: "other", cwdOf: "other", read: false },
    { name: "a transcript filed under this project's folder but recorded in another project", slugOf: "self", cwdOf: "other", read: false },
    { name: "a transcript outside Claude Code's folder, recorded in another project", slugOf: "outside", cwdOf: "other", read: false },
    { name: "a file outside every agent's folder that says it was recorded here", slugOf: "outside", cwdOf: "self", read: false },
    { name: "this project's transcript, named as another agent's", slugOf: "self", cwdOf: "self", agent: "opencode", read: false },
    { name: "control: this project's own transcript", slugOf: "self", cwdOf: "self", read: true },
    { name: "queued by this machine's Stop hook for this project: read as the agent named it", slugOf: "outside", cwdOf: "other", marked: "here", read: true },
    { name: "queued by this machine for another project, copied into this one: refused", slugOf: "other", cwdOf: "other", marked: "copied", read: false },
  ];
  for (const c of cases) {
    test(
      c.name,
      tracked(kit, async () => {
        const a = kit.project({ memory: "none" });
        const b = kit.project({ memory: "none" });
        const env = { ...a.env, CLAUDE_CONFIG_DIR: join(a.home, ".claude") };
        const folder = c.slugOf === "outside" ? join(a.home, "exports") : join(a.home, ".claude", "projects", projectSlug(c.slugOf === "self" ? a.root : b.root));
        mkdirSync(folder, { recursive: true });
        const transcript = join(folder, `${SESSION}.jsonl`);
        const t = { sessionId: SESSION, uuid: "u-private-1", promptId: "p-private-1", prompt: "Where is the payroll export?", command: "ls jobs", output: "payroll.ts", reply: `It is in jobs/payroll.ts and runs as ${PRIVATE} every night.`, cwd: c.cwdOf === "self" ? a.root : b.root };
        writeFileSync(transcript, "");
        appendTurn(transcript, t, "all");
        // Stopped an hour ago: the drainer looks once, without waiting for the file to change.
        const entry = { sessionId: SESSION, promptId: t.promptId, transcriptPath: transcript, stoppedAt: new Date(Date.now() - 3_600_000).toISOString(), prompt: "the queued entry's own prompt", ...(c.agent ? { agent: c.agent } : {}) };
        if (c.marked) {
          // Queued as the Stop hook queues it, under the drainer's machine key: for A, or for B and then copied into A.
          const file = queueAsStop(a, entry, c.marked === "here" ? a.dataDir : b.dataDir);
          if (c.marked === "copied") {
            mkdirSync(a.pending, { recursive: true });
            writeFileSync(join(a.pending, "copied.json"), readFileSync(file));
            rmSync(file);
          }
        } else {
          // As a repository ships it: a file in the queue, no mark.
          mkdirSync(a.pending, { recursive: true });
          writeFileSync(join(a.pending, `${SESSION}--${t.promptId}.json`), JSON.stringify(entry));
        }

        const r = await ms(["hook", "drain"], { cwd: a.root, env, hangMs: 30_000 });
        expect(hookOutputProblem(r)).toBeUndefined();
        expect(await drained(kit, a, 30_000)).toBe(true);
        const written = [...readMemory(a.memory).values()].join("\n");
        if (c.read) {
          expect(written).toContain(PRIVATE);
        } else {
          kit.count("cross-project-reads-refused");
          expect(written).not.toContain(PRIVATE);
          // The turn is what the entry itself held: the project's own data.
          expect(written).toContain("the queued entry's own prompt");
        }
      }),
      60_000,
    );
  }
});
