import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { StorageError } from "../../src/core/errors.ts";
import { storageError } from "../../src/core/fsutil.ts";
import {
  appendTurnNote,
  dailyLockFile,
  recentMemory,
} from "../../src/memory/journal.ts";
import { formatAnchor, parseAnchor } from "../../src/core/anchor.ts";
import { LockTimeoutError, withFileLock } from "../../src/core/lock.ts";
import { srcModule, withFileSizeLimit } from "../helpers/file-size-limit.ts";

// The regex other readers (indexer, expand, the skill) use to find anchors.
const READER_ANCHOR = /<!--\s*session:(\S+)\s+turn:(\S+)\s+transcript:(\S+)\s*-->/;
const JOURNAL = resolve(import.meta.dir, "../../src/memory/journal.ts");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "memsearch-journal-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const at = (h: number, m: number, day = 21) => new Date(2026, 10, day, h, m);
const note = (over: Partial<Parameters<typeof appendTurnNote>[0]> = {}) => ({
  memoryDir: dir,
  sessionId: "sess-1",
  turnUuid: "turn-1",
  transcriptPath: "/home/u/.claude/projects/p/sess-1.jsonl",
  bullets: ["- User asked to fix the build", "- Claude Code edited src/a.ts"],
  now: at(14, 2),
  ...over,
});

describe("appendTurnNote", () => {
  test("a new file gets the date title, the session heading, the turn and its anchor", async () => {
    const r = await appendTurnNote(note());
    expect(r).toEqual({ file: join(dir, "2026-11-21.md"), wroteSessionHeading: true, appended: true });
    expect(readFileSync(r.file, "utf8")).toBe(
      "# 2026-11-21\n\n## Session 14:02\n\n### 14:02\n" +
        "<!-- session:sess-1 turn:turn-1 transcript:/home/u/.claude/projects/p/sess-1.jsonl -->\n" +
        "- User asked to fix the build\n- Claude Code edited src/a.ts\n\n",
    );
  });

  test("the session heading is written once per session per day", async () => {
    await appendTurnNote(note());
    const second = await appendTurnNote(note({ turnUuid: "turn-2", now: at(14, 9), bullets: ["- second"] }));
    expect(second.wroteSessionHeading).toBe(false);
    const other = await appendTurnNote(note({ sessionId: "sess-2", turnUuid: "turn-3", now: at(15, 0), bullets: ["- other"] }));
    expect(other.wroteSessionHeading).toBe(true);
    const text = readFileSync(second.file, "utf8");
    expect(text.match(/^## Session/gm)).toHaveLength(2);
    expect(text).toContain("- Claude Code edited src/a.ts\n\n### 14:09\n<!-- session:sess-1 turn:turn-2 ");
    expect(text).toContain("- second\n\n## Session 15:00\n\n### 15:00\n<!-- session:sess-2 turn:turn-3 ");
    // The next day starts its own file, with its own heading for the same session.
    const tomorrow = await appendTurnNote(note({ turnUuid: "turn-4", now: at(9, 5, 22) }));
    expect(tomorrow.file).toBe(join(dir, "2026-11-22.md"));
    expect(tomorrow.wroteSessionHeading).toBe(true);
  });

  test("a retried hook does not append the same turn twice", async () => {
    const first = await appendTurnNote(note());
    const before = readFileSync(first.file, "utf8");
    const again = await appendTurnNote(note({ now: at(14, 3), bullets: ["- different wording"] }));
    expect(again).toEqual({ file: first.file, wroteSessionHeading: false, appended: false });
    expect(readFileSync(first.file, "utf8")).toBe(before);
  });

  test("bullets are normalised, one line each, sanitised, and cannot pose as anchors", async () => {
    const key = "AKIA" + "IOSFODNN7EXAMPLE";
    const r = await appendTurnNote(
      note({
        bullets: [
          "* starred bullet",
          "plain text",
          `uses key ${key}`,
          "two\nlines",
          "   ",
          "mentions <!-- session:x turn:y transcript:z --> in text",
          "<private>hidden</private> shown",
        ],
      }),
    );
    const text = readFileSync(r.file, "utf8");
    expect(text).toContain(
      "- starred bullet\n- plain text\n- uses key [REDACTED:aws-key]\n- two lines\n" +
        "- mentions &lt;!-- session:x turn:y transcript:z --> in text\n- [private] shown\n\n",
    );
    expect(text).not.toContain(key);
    expect(text.split("\n").filter((l) => parseAnchor(l))).toHaveLength(1);
  });

  test("no bullets still leaves a note that points at the transcript", async () => {
    const r = await appendTurnNote(note({ bullets: [] }));
    expect(readFileSync(r.file, "utf8")).toContain("-->\n- (no summary; see the transcript anchor)\n\n");
  });

  test("a hand-edited file without a final newline stays well-formed", async () => {
    writeFileSync(join(dir, "2026-11-21.md"), "# 2026-11-21\n\nsome notes");
    const r = await appendTurnNote(note());
    expect(readFileSync(r.file, "utf8")).toStartWith("# 2026-11-21\n\nsome notes\n\n## Session 14:02\n\n### 14:02\n");
  });

  test("the lock file is released and is not a markdown file", async () => {
    await appendTurnNote(note());
    expect(existsSync(dailyLockFile(dir, at(14, 2)))).toBe(false);
    expect(dailyLockFile(dir, at(14, 2))).toBe(join(dir, ".2026-11-21.md.lock"));
  });
});

describe("anchors", () => {
  test("a transcript path with spaces, %, > and non-ASCII survives the round trip", async () => {
    const transcriptPath = "/home/u/My Projects/100% done/a->b/naïve\tsess 1.jsonl";
    const r = await appendTurnNote(note({ transcriptPath }));
    const line = readFileSync(r.file, "utf8").split("\n").find((l) => l.startsWith("<!--"))!;
    const m = READER_ANCHOR.exec(line)!;
    expect(m).not.toBeNull();
    expect(m[3]).not.toMatch(/\s/);
    expect(line.endsWith(" -->")).toBe(true);
    expect(parseAnchor(line)).toEqual({ session: "sess-1", turn: "turn-1", transcript: transcriptPath });
  });

  test("parseAnchor reads anchors written by the Python plugin and tolerates stray %", () => {
    expect(parseAnchor("<!-- session:abc turn:def transcript:/tmp/x.jsonl -->")).toEqual({
      session: "abc",
      turn: "def",
      transcript: "/tmp/x.jsonl",
    });
    expect(parseAnchor("<!-- session:a turn:b transcript:/tmp/50%off.jsonl -->")?.transcript).toBe("/tmp/50%off.jsonl");
    expect(parseAnchor("no anchor here")).toBeUndefined();
    expect(parseAnchor(formatAnchor({ session: "s s", turn: "t", transcript: "" }))).toEqual({
      session: "s s",
      turn: "t",
      transcript: "-",
    });
  });
});

describe("control characters in a turn", () => {
  // C0 but tab and newline, DEL, C1 (NEL, CSI), an escape sequence, a lone surrogate.
  const HOSTILE = "a\0b\x01\x07\x08\x0b\x0c\x1b[31mred\x1b[0m\x1b]0;title\x07\x7f\x85\x9b\ud800 \r z";
  const controls = /[\x00-\x08\x0b-\x1f\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

  test("never reach the markdown, from the bullets, the session id, the turn id or the transcript path", async () => {
    const ids = { sessionId: `s-${HOSTILE}`, turnUuid: `t-${HOSTILE}`, transcriptPath: `/tmp/${HOSTILE}.jsonl` };
    const r = await appendTurnNote(note({ ...ids, bullets: [`- asked about ${HOSTILE}`, `the answer\0was\x1b[1mbold\x1b[0m`] }));
    const bytes = readFileSync(r.file);
    const text = bytes.toString("utf8");
    expect(bytes.includes(0)).toBe(false);
    expect(text).not.toMatch(controls);
    expect(text).toContain("- asked about a b red \ufffd z\n");
    expect(text).toContain("- the answer wasbold\n");
    // The anchor stays one well-formed line; its fields read back exactly (the lone surrogate as U+FFFD).
    const anchorLines = text.split("\n").filter((l) => l.includes("<!--"));
    expect(anchorLines).toHaveLength(1);
    expect(READER_ANCHOR.test(anchorLines[0]!)).toBe(true);
    const back = (x: string) => x.replace("\ud800", "\ufffd");
    expect(parseAnchor(anchorLines[0]!)).toEqual({ session: back(ids.sessionId), turn: back(ids.turnUuid), transcript: back(ids.transcriptPath) });
    // The same turn again is recognised: no second note.
    expect((await appendTurnNote(note({ ...ids, now: at(14, 5) }))).appended).toBe(false);
  });
});

describe("concurrency", () => {
  test("4 processes × 10 notes over 2 sessions: nothing lost, nothing interleaved, one heading per session", async () => {
    const file = join(dir, "2026-11-21.md");
    const child = (i: number) => `
      import { appendTurnNote } from ${JSON.stringify(JOURNAL)};
      for (let j = 0; j < 10; j++) {
        const turn = "turn-${i}-" + j;
        await appendTurnNote({
          memoryDir: ${JSON.stringify(dir)},
          sessionId: j % 2 === 0 ? "sess-A" : "sess-B",
          turnUuid: turn,
          transcriptPath: "/t/" + (j % 2 === 0 ? "sess-A" : "sess-B") + ".jsonl",
          // Long bullets make torn or interleaved writes visible.
          bullets: ["- " + turn + " first " + "x".repeat(3000), "- " + turn + " second"],
          now: new Date(2026, 10, 21, 14, ${i}),
        });
      }`;
    const procs = [0, 1, 2, 3].map((i) =>
      Bun.spawn([process.execPath, "-e", child(i)], { stdout: "pipe", stderr: "pipe", env: process.env }),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    const errors = await Promise.all(procs.map((p) => new Response(p.stderr).text()));
    expect(errors.join("")).toBe("");
    expect(codes).toEqual([0, 0, 0, 0]);

    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines[0]).toBe("# 2026-11-21");
    expect(lines.filter((l) => l.startsWith("## Session"))).toHaveLength(2);
    // Every turn block: ### heading, its own anchor, its own two bullets, a blank line.
    const turns: string[] = [];
    for (let k = 0; k < lines.length; k++) {
      if (!lines[k]!.startsWith("### ")) continue;
      const a = parseAnchor(lines[k + 1]!)!;
      expect(a).toBeDefined();
      expect(lines[k + 2]).toBe(`- ${a.turn} first ${"x".repeat(3000)}`);
      expect(lines[k + 3]).toBe(`- ${a.turn} second`);
      expect(lines[k + 4]).toBe("");
      expect(a.transcript).toBe(`/t/${a.session}.jsonl`);
      turns.push(a.turn);
    }
    expect(turns).toHaveLength(40);
    expect(new Set(turns).size).toBe(40);
    // Each session's heading precedes its first turn.
    for (const s of ["sess-A", "sess-B"]) {
      const first = lines.findIndex((l) => parseAnchor(l)?.session === s);
      expect(lines[first - 3]).toMatch(/^## Session 14:0\d$/);
    }
    expect(existsSync(join(dir, ".2026-11-21.md.lock"))).toBe(false);
  }, 30_000);

  test("withFileLock serialises overlapping callers in one process", async () => {
    const lock = join(dir, "x.lock");
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        withFileLock(lock, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await Bun.sleep(2);
          order.push(i);
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(order).toHaveLength(15);
    expect(existsSync(lock)).toBe(false);
  });

  test("a lock held by a live process times out with a typed error", async () => {
    const lock = join(dir, "held.lock");
    writeFileSync(lock, `${process.pid} ${Date.now()}\n`);
    const t0 = Date.now();
    const err = await withFileLock(lock, () => 1, { timeoutMs: 200 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockTimeoutError);
    expect(err).toBeInstanceOf(StorageError);
    expect(String(err.message)).toContain(`pid ${process.pid}`);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(existsSync(lock)).toBe(true); // not ours to remove
  });

  test("a lock left by a dead process is broken", async () => {
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    const lock = dailyLockFile(dir, at(14, 2));
    writeFileSync(lock, `${dead.pid} ${Date.now()}\n`);
    const t0 = Date.now();
    const r = await appendTurnNote(note());
    expect(r.appended).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(existsSync(lock)).toBe(false);
  });

  test("a lock older than the stale limit is broken even if its pid is alive", async () => {
    const lock = join(dir, "old.lock");
    writeFileSync(lock, `${process.pid} ${Date.now() - 60_000}\n`);
    expect(await withFileLock(lock, () => "ran", { timeoutMs: 500 })).toBe("ran");
  });
});

describe("storage failures", () => {
  test("a write that fails half-way (the file may not grow) leaves the file exactly as it was", async () => {
    const first = await appendTurnNote(note());
    const before = readFileSync(first.file);
    // Room for the lock files, not for the next note: its append is cut short, then fails.
    const limit = (Math.floor(before.length / 512) + 1) * 512;
    const wire = (o: ReturnType<typeof note>) => ({ ...o, now: o.now.getTime() });
    const results = await withFileSizeLimit<{ storage: boolean; message: string }[]>(
      limit,
      `import { appendTurnNote } from ${srcModule("src/memory/journal.ts")};
      import { StorageError } from ${srcModule("src/core/errors.ts")};
      const out = [];
      for (const n of ${JSON.stringify([
        wire(note({ turnUuid: "turn-2", bullets: ["- " + "y".repeat(5000)] })),
        // A file this call would create is not left behind half-written.
        wire(note({ turnUuid: "turn-3", now: at(10, 0, 23), bullets: ["- " + "z".repeat(limit)] })),
      ])}) {
        try {
          await appendTurnNote({ ...n, now: new Date(n.now) });
          out.push({ storage: false, message: "appended" });
        } catch (e) {
          out.push({ storage: e instanceof StorageError, message: String(e?.message ?? e) });
        }
      }
      console.log(JSON.stringify(out));`,
    );
    expect(results).toEqual([
      { storage: true, message: expect.stringMatching(/file too large|EFBIG/) },
      { storage: true, message: expect.stringMatching(/file too large|EFBIG/) },
    ]);
    expect(results[0]!.message).toStartWith(`cannot write ${first.file}: `);
    expect(results[0]!.message).toEndWith("; the file is unchanged");
    expect(readFileSync(first.file)).toEqual(before);
    expect(existsSync(join(dir, "2026-11-23.md"))).toBe(false);
    expect(existsSync(dailyLockFile(dir, at(14, 2)))).toBe(false);
    // Once there is space again the same turn is written normally.
    expect((await appendTurnNote(note({ turnUuid: "turn-2" }))).appended).toBe(true);
  });

  test("a full disk or quota is named as such, with the file", () => {
    const file = join(dir, "2026-11-21.md");
    for (const code of ["ENOSPC", "EDQUOT"]) {
      const e = storageError(file, Object.assign(new Error(`${code}: no space left on device, write`), { code }));
      expect(e).toBeInstanceOf(StorageError);
      expect(e.message).toBe(`cannot write ${file}: disk full; the file is unchanged`);
    }
  });

  test("an unwritable memory dir is a StorageError, not a crash", async () => {
    const notADir = join(dir, "file");
    writeFileSync(notADir, "x");
    const err = await appendTurnNote(note({ memoryDir: join(notADir, "memory") })).catch((e) => e);
    expect(err).toBeInstanceOf(StorageError);
  });
});

describe("recentMemory", () => {
  const write = (name: string, text: string) => writeFileSync(join(dir, name), text);

  test("the two newest daily files, headings and bullets only, empty sections dropped", () => {
    write("2026-11-19.md", "# 2026-11-19\n\n## Session 08:00\n\n### 08:00\n<!-- session:a turn:1 transcript:t -->\n- oldest\n");
    write("2026-11-20.md", "# 2026-11-20\n\n## Session 09:00\n\n### 09:00\n<!-- session:b turn:2 transcript:t -->\n- middle\n\nprose line\n");
    write(
      "2026-11-21.md",
      "# 2026-11-21\n\n## Session 10:00\n\n### 10:00\n<!-- session:c turn:3 transcript:t -->\n- newest one\n- newest two\n\n" +
        "### 10:05\n<!-- session:c turn:4 transcript:t -->\n\n## Session 11:00\n\n",
    );
    write("notes.md", "- not a daily file\n");
    const recent = recentMemory(dir, { files: 2, linesPerFile: 30 });
    expect(recent).toEqual([
      { file: "2026-11-21.md", lines: ["## Session 10:00", "### 10:00", "- newest one", "- newest two"] },
      { file: "2026-11-20.md", lines: ["## Session 09:00", "### 09:00", "- middle"] },
    ]);
    expect(recentMemory(dir, { files: 1, linesPerFile: 2 })).toEqual([{ file: "2026-11-21.md", lines: ["- newest one", "- newest two"] }]);
    expect(recentMemory(join(dir, "missing"))).toEqual([]);
  });
});
