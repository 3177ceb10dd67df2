/**
 * Issue 12, through the binary: a stale index lock whose PID was reused, temp files of killed
 * index writers, an unbounded --top-k, and files that are not markdown text.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexedProject, run, tempProject } from "../helpers/cli.ts";
import { processStartTime } from "../../src/core/processes.ts";
import { deadPid, liveSleeper } from "../helpers/processes.ts";

const posix = process.platform !== "win32";

const sleeper = liveSleeper();

describe("a stale index lock whose PID now belongs to an unrelated live process", () => {
  test.if(posix)(
    "index breaks it at once instead of waiting for it",
    async () => {
      const p = tempProject();
      const idx = join(p.root, ".memsearch", "index");
      mkdirSync(idx, { recursive: true });
      const real = processStartTime(sleeper.pid);
      expect(real).toBeDefined();
      // Written by a memsearch that crashed; its PID is now the sleeper's (another start time).
      writeFileSync(join(idx, "index.lock"), `${sleeper.pid} ${Date.now()} deadbeef ${real}0\n`);
      const r = await run(["index"], { cwd: p.root, env: p.env, timeoutMs: 100_000 });
      expect(r.stderr).not.toContain("timed out");
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe("Indexed 6 chunks.");
      expect(existsSync(join(idx, "index.lock"))).toBe(false);
    },
    130_000,
  );
});

describe("temp files of killed index writers", () => {
  const temps = (idx: string) => readdirSync(idx).filter((n) => n.startsWith("index.bin.tmp-")).sort();

  test.if(posix)("index removes those of dead writers and old ones, and leaves a live writer's alone", async () => {
    const p = await indexedProject();
    const idx = join(p.root, ".memsearch", "index");
    const dead = `index.bin.tmp-${await deadPid()}-k1ll3d`;
    const old = `index.bin.tmp-${sleeper.pid}-0ld0ld`;
    const live = `index.bin.tmp-${sleeper.pid}-l1v3ab`;
    for (const n of [dead, old, live]) writeFileSync(join(idx, n), randomBytes(256 * 1024));
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(idx, old), hoursAgo, hoursAgo);
    // Nothing changed in the markdown: the no-op run sweeps too.
    const r = await p.ms(["index"]);
    expect(r.code).toBe(0);
    expect(temps(idx)).toEqual([live]);
    // And a run that saves.
    const again = `index.bin.tmp-${await deadPid()}-s4v1ng`;
    writeFileSync(join(idx, again), "x");
    writeFileSync(join(p.memory, "more.md"), "# More\n\nsomething new\n");
    expect((await p.ms(["index"])).code).toBe(0);
    expect(temps(idx)).toEqual([live]);
  });

  test.if(posix)("reset --yes removes them with the index and says how much it freed", async () => {
    const p = await indexedProject();
    const idx = join(p.root, ".memsearch", "index");
    // A live writer's temp file, which reset must leave alone.
    const live = `index.bin.tmp-${sleeper.pid}-l1v3ab`;
    writeFileSync(join(idx, live), randomBytes(256 * 1024));
    const dead = [`index.bin.tmp-${await deadPid()}-aaaaaa`, `index.bin.tmp-${await deadPid()}-bbbbbb`];
    for (const n of dead) writeFileSync(join(idx, n), randomBytes(1024 * 1024));
    const r = await p.ms(["reset", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Dropped index .* \(\d+\.\d MiB freed, including 2 temporary files of interrupted writes\)\. Markdown in .* is untouched\.\n$/);
    expect(existsSync(join(idx, "index.bin"))).toBe(false);
    expect(temps(idx)).toEqual([live]);
    // Only leftovers: said too.
    writeFileSync(join(idx, dead[0]!), randomBytes(2 * 1024 * 1024));
    const only = await p.ms(["reset", "--yes"]);
    expect(only.stdout.trim()).toBe("No index to drop; removed 1 temporary file of an interrupted write (2.0 MiB freed).");
  });
});

describe("--top-k is bounded", () => {
  const project = () => {
    const p = tempProject();
    return { p, ms: (args: string[]) => run(args, { cwd: p.root, env: p.env, timeoutMs: 20_000 }) };
  };

  test("out of range is a usage error, on the fast path and through yargs", async () => {
    const { ms } = project();
    expect((await ms(["index"])).code).toBe(0);
    for (const args of [
      ["search", "redis", "-k", "1001"], // fast path
      ["search", "redis", "-k", "1000000000"],
      ["search", "redis", "--top-k=1000000000", "-j"],
      ["search", "redis", "-k", "1000000000", "--provider", "none"], // yargs
      ["search", "redis", "--top-k", "0", "--provider", "none"],
      ["search", "redis", "-k", "0"],
    ]) {
      const r = await ms(args);
      const got = args.find((a) => /^\d+$/.test(a)) ?? args.find((a) => a.startsWith("--top-k="))!.slice(8);
      expect({ args, code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ args, code: 2, stderr: `Error: --limit must be between 1 and 1000 (got ${got})\n`, stdout: "" });
    }
    const ok = await ms(["search", "redis", "-k", "1000", "-j"]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).length).toBeGreaterThan(0);
  });

  test("--help gives the range; the config key has it too", async () => {
    const { p, ms } = project();
    expect((await ms(["search", "--help"])).stdout).toMatch(/--top-k.*1 to 1000/);
    const env = await run(["search", "redis"], { cwd: p.root, env: { ...p.env, MEMSEARCH_SEARCH_TOP_K: "1000000000" } });
    expect(env.code).not.toBe(0);
    expect(env.stderr.trim()).toMatch(/^Error: .*search\.top_k must be at most 1000/);
  });
});

describe("files that are not markdown text", () => {
  const lines = (s: string) => s.split("\n").filter(Boolean);

  test("a .md of random bytes is skipped with one line, a Latin-1 one is indexed without its bad byte with one line; the rest is indexed", async () => {
    const p = tempProject();
    const ms = p.ms;
    const random = join(p.memory, "random.md");
    const latin1 = join(p.memory, "latin1.md");
    writeFileSync(random, randomBytes(200 * 1024));
    writeFileSync(latin1, Buffer.concat([Buffer.from("# Bad bytes\n\nlatin1 caf"), Buffer.from([0xe9]), Buffer.from(" kombucha notes\n")]));
    const cleaned = `memsearch: cleaned ${latin1}: 1 section held control characters or bytes that are not UTF-8 (indexed without them)`;
    const said = (stderr: string) => lines(stderr).filter((l) => l.startsWith("memsearch: skipped") || l.startsWith("memsearch: cleaned"));
    const r = await ms(["index"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("Indexed 7 chunks.");
    expect(said(r.stderr)).toEqual([`memsearch: skipped ${random}: not UTF-8 text`, cleaned]);
    expect(JSON.parse((await ms(["search", "kombucha", "-j"])).stdout).length).toBe(1);
    // Said again on the next run, which stays a no-op.
    const again = await ms(["index"]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe("Indexed 0 chunks.");
    expect(said(again.stderr)).toEqual([`memsearch: skipped ${random}: not UTF-8 text`, cleaned]);
    expect((await ms(["stats"])).stdout).toContain("Total indexed chunks: 7");
    // Fixed: indexed as it is, and no longer said.
    writeFileSync(latin1, "# Good bytes\n\ncafé kombucha notes\n");
    const fixed = await ms(["index"]);
    expect(said(fixed.stderr)).toEqual([`memsearch: skipped ${random}: not UTF-8 text`]);
    expect(JSON.parse((await ms(["search", "café", "-j"])).stdout).length).toBe(1);
  });

  test("a named path that is not markdown is said; exit 1 only when every named path was rejected", async () => {
    const p = tempProject();
    const ms = p.ms;
    writeFileSync(join(p.root, "notes.txt"), "# Notes\n\nplain text\n");
    writeFileSync(join(p.root, "blob.md"), Buffer.from([0x23, 0x20, 0x00, 0x01, 0x02, 0x0a]));
    const txt = await ms(["index", "notes.txt"]);
    expect(txt.code).toBe(1);
    expect(lines(txt.stderr)).toEqual(["memsearch: skipped notes.txt: not a markdown file (.md, .markdown)", "Error: nothing to index: every path given was skipped"]);
    expect(txt.stdout).toBe("");
    const both = await ms(["index", "notes.txt", "blob.md"]);
    expect(both.code).toBe(1);
    expect(lines(both.stderr)).toEqual(["memsearch: skipped notes.txt: not a markdown file (.md, .markdown)", "memsearch: skipped blob.md: not UTF-8 text", "Error: nothing to index: every path given was skipped"]);
    const mixed = await ms(["index", "notes.txt", ".memsearch/memory"]);
    expect(mixed.code).toBe(0);
    expect(lines(mixed.stderr)).toContain("memsearch: skipped notes.txt: not a markdown file (.md, .markdown)");
    expect((await ms(["stats"])).stdout).toContain("Total indexed chunks: 6");
    expect(readFileSync(join(p.root, "notes.txt"), "utf8")).toBe("# Notes\n\nplain text\n");
  });
});

describe("confusing arguments get one clear line and exit 2 (issue 20)", () => {
  test("recall --since -3d, wherever the flag stands, says to count back without the minus", async () => {
    const p = tempProject();
    for (const args of [["recall", "--since", "-3d", "redis"], ["recall", "redis", "--since", "-3d"], ["recall", "redis", "--since=-3d"]]) {
      const r = await p.ms(args, { MEMSEARCH_EMBEDDING_PROVIDER: "none" });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      expect(r.stderr.trim().split("\n")).toEqual(["Error: --since counts back from now: write 3d, not -3d"]);
      expect(r.stdout).toBe("");
    }
  });

  test('search "" (or blanks, or no query at all), on the fast path and through yargs, asks for a query', async () => {
    const p = await indexedProject();
    for (const args of [["search", ""], ["search", "   "], ["search", "", "-j"], ["search", "", "--source-prefix", "x", "-k", "3"], ["search"], ["search", "-j"], ["search", "--agent", "codex"], ["search", "--"]]) {
      const r = await p.ms(args, { MEMSEARCH_EMBEDDING_PROVIDER: "none" });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      expect(r.stderr.trim().split("\n")).toEqual(["Error: search needs a query: the words to look for, e.g. memsearch search redis timeout"]);
      expect(r.stdout).toBe("");
    }
    // recall says it the same way, whether the query is missing or empty.
    for (const args of [["recall"], ["recall", ""], ["recall", "--raw", "-j"]]) {
      const r = await p.ms(args, { MEMSEARCH_EMBEDDING_PROVIDER: "none" });
      expect([args.join(" "), r.code, r.stderr.trim()]).toEqual([args.join(" "), 2, "Error: recall needs a query: the words to look for, e.g. memsearch recall redis timeout"]);
    }
  });
});

describe("what an error echoes, and how many lines it takes (issue 31)", () => {
  const HOSTILE = "\x1b[31mRED\x1b[0m\x07\x1b]0;owned\x07";
  // Each echoes the value it was given in its error line: a key, a path, a turn id, a duration.
  const CASES: string[][] = [
    ["forget", HOSTILE],
    ["expand", HOSTILE],
    ["transcript", HOSTILE],
    ["config", "get", HOSTILE],
    ["config", "set", HOSTILE, "1"],
    ["import", HOSTILE],
    ["recall", "redis", "--since", HOSTILE],
    ["index", HOSTILE],
    ["projects", HOSTILE],
    ["watch", HOSTILE],
  ];

  test("no escape sequence or control character of the input reaches the terminal; the error is one line", async () => {
    const p = tempProject();
    for (const args of CASES) {
      const r = await p.ms(args, { MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" });
      const what = args.slice(0, 2).join(" ");
      expect([what, r.code === 0]).toEqual([what, false]);
      expect([what, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(r.stderr)]).toEqual([what, false]);
      const lines = r.stderr.trim().split("\n");
      expect([what, lines.length, lines[0]!.startsWith("Error: ")]).toEqual([what, 1, true]);
      expect([what, lines[0]!.includes("RED")]).toEqual([what, true]);
    }
  });

  test("a value outside a flag's choices is one line (import -s bogus)", async () => {
    const p = tempProject();
    const r = await p.ms(["import", "-s", "bogus"]);
    expect(r.code).toBe(2);
    // One line, said the way memsearch says a value outside the choices (main.ts usageLine).
    expect(r.stderr.trim().split("\n")).toEqual(['Error: summarizer must be one of extract, claude, ollama (got "bogus")']);
  });

  test("with Ollama away, a run that indexes nothing does not say chunks were indexed", async () => {
    const p = tempProject();
    expect((await p.ms(["index"])).code).toBe(0);
    const r = await p.ms(["index"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("Indexed 0 chunks.");
    expect(r.stderr).not.toMatch(/\d+ chunks? indexed/);
    expect(r.stderr).toContain("6 of the index's 6 chunks have no vector yet");
  });
});
