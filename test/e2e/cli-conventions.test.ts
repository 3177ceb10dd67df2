/**
 * The command line as users of rg, fd, gh and atuin expect it (issue 32), through the compiled
 * binary: queries without quotes and after `--`, --json everywhere with snake_case keys, -n for a
 * dry run only, --color=never on a real pseudo-terminal, completions for bash, zsh and fish that
 * the shells themselves run, unknown commands named, anchors shown as expand shows them; and what
 * the newcomer met: nothing made by a read in a folder without memory, `.memsearch/.gitignore`
 * when memsearch makes the folder (checked by git itself), projects recorded by import, remember,
 * index and hub, notes of your own marked `you`, and forget/undo of one.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commands } from "../../src/commands/index.ts";
import { aliasesOf, nameOf, type Described } from "../../src/commands/declare.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { BIN, indexedProject, run, spawnEnv, tempProject, type Project } from "../helpers/cli.ts";
import { appendTurn } from "../fault/transcript.ts";

const ESC = "\x1b[";
const NONE = { MEMSEARCH_EMBEDDING_PROVIDER: "none" };

/** Every key of a JSON value, at any depth. */
function keysOf(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) keysOf(x, out);
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) keysOf(x, (out.push(k), out));
  return out;
}

/** A past session of the project in the temp HOME's Claude Code folder, quiet for an hour (import writes all of it). */
function pastSession(p: Project): void {
  const dir = join(p.home, ".claude", "projects", projectSlug(realpathSync(p.root)));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "5e551000-0000-4000-8000-000000000001.jsonl");
  appendTurn(file, { sessionId: "5e551000-0000-4000-8000-000000000001", uuid: "0e0e0e0e-0001-4000-8000-000000000001", promptId: "p-1", prompt: "Why does the okapi job time out?", command: "cat okapi.log", output: "timeout after 30s", reply: "The okapi job timed out on a cold cache; raised its timeout to 90 s.", cwd: p.root }, "all");
  const old = new Date(Date.now() - 3_600_000);
  utimesSync(file, old, old);
}

/** The binary's output on a pseudo-terminal, as a person running it would see it. */
async function onTerminal(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<string> {
  let seen = "";
  const proc = Bun.spawn([BIN, ...args], { cwd, env: spawnEnv(env), terminal: { cols: 120, rows: 40, data: (_t, d) => void (seen += new TextDecoder().decode(d)) } });
  await proc.exited;
  proc.terminal!.close();
  return seen;
}

describe("queries", () => {
  test("several words need no quotes, on the fast path and through yargs, in search and recall", async () => {
    const p = await indexedProject();
    const quoted = JSON.parse((await p.ms(["search", "redis pool", "-j"], NONE)).stdout);
    expect(quoted.length).toBeGreaterThan(0);
    expect(JSON.parse((await p.ms(["search", "redis", "pool", "-j"], NONE)).stdout)).toEqual(quoted);
    // --json=true is a form only yargs reads.
    expect(JSON.parse((await p.ms(["search", "redis", "pool", "--json=true"], NONE)).stdout)).toEqual(quoted);
    const recall = async (args: string[]) => JSON.parse((await p.ms(["recall", ...args, "--raw", "-j", "--source", "notes"], NONE)).stdout).results.map((r: { note: { chunk_hash: string } }) => r.note.chunk_hash);
    expect(await recall(["redis", "pool"])).toEqual(await recall(["redis pool"]));
  });

  test("-- ends the options: a query may start with -", async () => {
    const p = await indexedProject({ notes: { "2026-11-20.md": "# 2026-11-20\n\n### 09:00\n- The deploy script takes --frobnicate to skip the canary\n" } });
    const bad = await p.ms(["search", "--frobnicate"], NONE);
    expect(bad.code).toBe(2);
    for (const args of [["search", "--", "--frobnicate"], ["search", "-k", "1", "--json=true", "--", "--frobnicate"], ["search", "-j", "--", "-x", "--frobnicate"]]) {
      const r = await p.ms(args.includes("-j") || args.includes("--json=true") ? args : [...args.slice(0, 1), "-j", ...args.slice(1)], NONE);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 0]);
      expect(JSON.parse(r.stdout)[0].content).toContain("--frobnicate");
    }
    const note = await p.ms(["remember", "-j", "--", "-5", "degrees", "at", "the", "depot"]);
    expect(note.code).toBe(0);
    expect(readFileSync(JSON.parse(note.stdout).file, "utf8")).toContain("- -5 degrees at the depot");
  });

  test("a missing query gets the same sentence as an empty one", async () => {
    const p = await indexedProject();
    for (const cmd of ["search", "recall"]) {
      const none = await p.ms([cmd], NONE);
      const empty = await p.ms([cmd, " "], NONE);
      expect([none.code, none.stderr]).toEqual([2, `Error: ${cmd} needs a query: the words to look for, e.g. memsearch ${cmd} redis timeout\n`]);
      expect([empty.code, empty.stderr]).toEqual([none.code, none.stderr]);
    }
  });
});

describe("flags", () => {
  test("--json on every command that prints results, every key snake_case", async () => {
    const p = await indexedProject();
    pastSession(p);
    const [hit] = JSON.parse((await p.ms(["search", "redis", "-j"], NONE)).stdout);
    const transcript = join(p.home, ".claude", "projects", projectSlug(realpathSync(p.root)), "5e551000-0000-4000-8000-000000000001.jsonl");
    const runs = [
      ["search", "redis"],
      ["recall", "redis", "--raw"],
      ["expand", hit.chunk_hash],
      ["stats"],
      ["doctor"],
      ["transcript", transcript],
      ["transcript", transcript, "--turn", "0e0e0e0e"],
      ["debug"],
      ["debug", "--injections"],
      ["config", "list"],
      ["config", "get", "search.top_k"],
      ["config", "set", "search.top_k", "7"],
      ["config", "init", "--project", "--force"],
      ["recent"],
      ["forget", "--list"],
      ["import", "--dry-run"],
      ["import"],
      ["index"],
      ["remember", "the", "okapi", "cache", "warms", "at", "six"],
      ["projects"],
      ["reset", "--yes"],
    ];
    // watch runs on: one JSON object a line per event.
    const watch = Bun.spawn([BIN, "watch", "--json"], { cwd: p.root, env: spawnEnv(p.env, NONE, { MEMSEARCH_NO_WATCH: "1" }), stdout: "pipe", stderr: "pipe" });
    const reader = watch.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    watch.kill(9);
    await watch.exited;
    expect(JSON.parse(out.split("\n")[0]!)).toMatchObject({ event: "watching", paths: [p.memory] });
    // The reference's own spellings still work.
    for (const flag of ["-j", "--json-output"]) expect(JSON.parse((await p.ms(["stats", flag])).stdout).total_chunks).toBeGreaterThan(0);
    for (const args of runs) {
      const r = await p.ms([...args, "--json"], NONE);
      expect([args.join(" "), r.code, r.stderr.includes("Unknown argument")]).toEqual([args.join(" "), 0, false]);
      const value = JSON.parse(r.stdout);
      const camel = keysOf(value).filter((k) => /^[a-z]+[A-Z]/.test(k));
      expect([args.join(" "), camel]).toEqual([args.join(" "), []]);
    }
  }, 60_000);

  test("-n is a dry run; the result count is -k / --limit / --top-k in search and recall", async () => {
    const p = await indexedProject();
    pastSession(p);
    const before = readFileSync(join(p.memory, "2026-11-20.md"), "utf8");
    const dry = await p.ms(["import", "-n"]);
    expect(dry.stdout).toStartWith("Would import 1 turn");
    const [hit] = JSON.parse((await p.ms(["search", "redis", "-j"], NONE)).stdout);
    expect((await p.ms(["forget", "-n", hit.chunk_hash])).stdout).toStartWith("Would forget turn");
    expect(readFileSync(join(p.memory, "2026-11-20.md"), "utf8")).toBe(before);
    for (const cmd of [["search", "redis"], ["recall", "redis", "--raw"]]) {
      for (const limit of [["-k", "1"], ["--limit", "1"], ["--top-k", "1"]]) {
        const out = JSON.parse((await p.ms([...cmd, ...limit, "-j"], NONE)).stdout);
        expect([cmd[0], limit[0], (Array.isArray(out) ? out : out.results).length]).toEqual([cmd[0], limit[0], 1]);
      }
    }
    // -n means nothing else: not expand's or debug's --lines, not recall's --limit.
    for (const args of [["expand", hit.chunk_hash, "-n", "1"], ["recall", "redis", "-n", "1"]]) expect((await p.ms(args, NONE)).code).toBe(2);
  });

  test("--color=never on a pseudo-terminal; --color=always through a pipe; a bad value is one line", async () => {
    const p = await indexedProject();
    const tty = { ...p.env, FORCE_COLOR: undefined, NO_COLOR: undefined, CLAUDECODE: undefined, TERM: "xterm" };
    const coloured = await onTerminal(["search", "redis"], tty, p.root);
    expect(coloured).toContain("--- Result 1");
    expect(coloured).toContain(ESC);
    for (const args of [["search", "redis", "--color=never"], ["--color", "never", "search", "redis"], ["search", "redis", "--no-color"], ["stats", "--color=never"], ["search", "redis", "-k", "0", "--color=never"]]) {
      const seen = await onTerminal(args, tty, p.root);
      expect([args.join(" "), seen.length > 0, seen.includes(ESC)]).toEqual([args.join(" "), true, false]);
    }
    expect(await onTerminal(["search", "redis", "--color=auto"], tty, p.root)).toContain(ESC);
    for (const env of [{}, { NO_COLOR: "1" }, { FORCE_COLOR: "0" }]) expect((await p.ms(["search", "redis", "--color=always"], env)).stdout).toContain(ESC);
    expect((await p.ms(["search", "redis", "--color"])).stdout).toContain(ESC);
    const bad = await p.ms(["search", "redis", "--color=sometimes"]);
    expect([bad.code, bad.stderr, bad.stdout]).toEqual([2, 'Error: --color must be auto, always or never (got "sometimes")\n', ""]);
  });

  test("an unknown command says so, with the nearest one; recall --source takes its choices", async () => {
    const p = tempProject();
    for (const [args, line] of [
      [["serch", "redis"], "Error: unknown command 'serch'; did you mean search?"],
      [["config", "lsit"], "Error: unknown command 'config lsit'; did you mean config list?"],
    ] as const) {
      const r = await p.ms([...args]);
      expect([r.code, r.stderr, r.stdout]).toEqual([2, `${line}\n`, ""]);
    }
    const bad = await p.ms(["recall", "redis", "--source", "nope"], NONE);
    expect([bad.code, bad.stderr]).toEqual([2, 'Error: --source must be one of notes, transcripts, all (got "nope")\n']);
    expect((await p.ms(["recall", "--help"])).stdout).toMatch(/--source .*\[choices: "notes", "transcripts", "all"\]/s);
  });
});

describe("completion bash|zsh|fish, from the command table", () => {
  /** Every command path and every flag spelling the table declares. */
  function declared(list: readonly Described[], parent: string[] = []): { words: string[]; flags: string[] } {
    const out = { words: [] as string[], flags: [] as string[] };
    for (const c of list) {
      out.words.push(nameOf(c));
      for (const [name, f] of Object.entries(c.flags ?? {})) if (!f.positional && !f.hidden) out.flags.push(name, ...aliasesOf(f).filter((a) => a.length > 1));
      const sub = declared(c.subcommands ?? [], [...parent, nameOf(c)]);
      out.words.push(...sub.words);
      out.flags.push(...sub.flags);
    }
    return out;
  }

  const script = async (shell: string) => {
    const r = await Bun.spawn([BIN, "completion", shell], { stdout: "pipe", stderr: "pipe" });
    const text = await new Response(r.stdout).text();
    expect(await r.exited).toBe(0);
    return text;
  };
  const need = (shell: string) => {
    const path = Bun.which(shell);
    if (!path) throw new Error(`${shell} is not installed: the completion tests run it (npm test installs Debian's ${shell} package; apt-get install ${shell})`);
    return path;
  };

  test("each shell's script names every command and flag of the table", async () => {
    const { words, flags } = declared(commands);
    for (const shell of ["bash", "zsh", "fish"]) {
      const text = await script(shell);
      for (const w of words) expect([shell, w, new RegExp(`(^|[^\\w-])${w}([^\\w-]|$)`, "m").test(text)]).toEqual([shell, w, true]);
      for (const f of flags) expect([shell, f, text.includes(`--${f}`) || text.includes(`-l ${f}`)]).toEqual([shell, f, true]);
    }
    const bad = await Bun.spawn([BIN, "completion", "tcsh"], { stdout: "pipe", stderr: "pipe" });
    expect(await bad.exited).toBe(2);
  });

  test("bash completes commands, subcommands, flags and their choices", async () => {
    const file = join(tempProject().root, "c.bash");
    writeFileSync(file, await script("bash"));
    const complete = (line: string[]) => {
      const cmd = `source ${JSON.stringify(file)}; COMP_WORDS=(${line.map((w) => JSON.stringify(w)).join(" ")}); COMP_CWORD=${line.length - 1}; _memsearch; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return Bun.spawnSync([need("bash"), "-c", cmd]).stdout.toString().trim().split("\n").filter(Boolean);
    };
    expect(complete(["memsearch", "se"])).toEqual(["search"]);
    expect(complete(["memsearch", "config", "s"])).toEqual(["set"]);
    expect(complete(["memsearch", "search", "--li"])).toEqual(["--limit"]);
    expect(complete(["memsearch", "recall", "redis", "--source", ""])).toEqual(["notes", "transcripts", "all"]);
    expect(complete(["memsearch", "--color=n"])).toEqual(["--color=never"]);
    expect(complete(["memsearch", "completion", ""])).toEqual(["bash", "zsh", "fish"]);
  });

  test("zsh runs its script: commands with descriptions, flags, choices", async () => {
    const file = join(tempProject().root, "_memsearch");
    writeFileSync(file, await script("zsh"));
    // The completion system's functions stand in as recorders: what the script offers is printed.
    const harness = (line: string[]) => `
      compdef() { : }
      compadd() { local a; for a in "$@"; do [[ $a == -* || $a == -- ]] || print -r -- "$a"; done }
      _describe() { local arr; arr=("\${(@P)2}"); print -rl -- "\${arr[@]%%:*}" }
      _files() { print -r -- "(files)" }
      source ${JSON.stringify(file)}
      words=(${line.map((w) => `'${w}'`).join(" ")}); CURRENT=${line.length}
      _memsearch`;
    const complete = (line: string[]) => {
      const r = Bun.spawnSync([need("zsh"), "-f", "-c", harness(line)]);
      expect(r.stderr.toString()).toBe("");
      return r.stdout.toString().trim().split("\n").filter(Boolean);
    };
    expect(complete(["memsearch", ""])).toContain("search");
    expect(complete(["memsearch", "config", ""])).toEqual(["init", "get", "set", "list"]);
    expect(complete(["memsearch", "search", "-"])).toContain("--limit");
    expect(complete(["memsearch", "recall", "x", "--source", ""])).toEqual(["notes", "transcripts", "all"]);
    expect(complete(["memsearch", "hook", ""])).toContain("session-start");
  });

  test("fish runs its script: complete -C gives commands, flags and choices", async () => {
    const file = join(tempProject().root, "memsearch.fish");
    writeFileSync(file, await script("fish"));
    const complete = (line: string) => {
      const r = Bun.spawnSync([need("fish"), "--no-config", "-c", `source ${JSON.stringify(file)}; complete -C ${JSON.stringify(line)}`], { env: spawnEnv({ HOME: tempProject().home, XDG_CONFIG_HOME: undefined, XDG_DATA_HOME: undefined }) });
      expect(r.stderr.toString()).toBe("");
      return r.stdout.toString().trim().split("\n").filter(Boolean).map((l) => l.split("\t")[0]!);
    };
    expect(complete("memsearch se")).toEqual(["search"]);
    expect(complete("memsearch config ")).toEqual(["get", "init", "list", "set"]);
    expect(complete("memsearch search --li")).toEqual(["--limit"]);
    expect(complete("memsearch recall x --source ").sort()).toEqual(["all", "notes", "transcripts"]);
  });
});

describe("output for people", () => {
  test("search and expand show anchors as Session / Turn lines, never as raw comments", async () => {
    const p = await indexedProject();
    const s = await p.ms(["search", "document the cache decision", "-k", "1"], NONE);
    expect(s.stdout).toContain("[Session: 7f3c2a10-5b1e-4c8e-9a61-2d4f8e0b7c11  Turn: 0a1b2c3d-2222-4e5f-8a9b-0c1d2e3f4a5b]");
    expect(s.stdout).not.toContain("<!--");
    const [hit] = JSON.parse((await p.ms(["search", "document the cache decision", "-k", "1", "-j"], NONE)).stdout);
    // The JSON keeps the note as written: the anchor is its drill-down.
    expect(hit.content).toContain("<!-- session:");
    const x = await p.ms(["expand", hit.chunk_hash]);
    expect(x.stdout).toContain("[Session: 7f3c2a10-5b1e-4c8e-9a61-2d4f8e0b7c11  Turn: 0a1b2c3d-2222-4e5f-8a9b-0c1d2e3f4a5b]");
    // Once, in the header: the note's own anchor is not said again in its body.
    expect(x.stdout.split("[Session: 7f3c2a10").length - 1).toBe(1);
    expect(x.stdout).not.toContain("<!--");
  });
});

describe("the project's data folder", () => {
  test("a read in a folder without memory makes nothing there (a CLAUDE.md to search included)", async () => {
    const p = tempProject({ notes: "none" });
    writeFileSync(join(p.root, "CLAUDE.md"), "# Project\n\nThe okapi job runs nightly.\n");
    for (const args of [["search", "okapi"], ["stats"], ["doctor"], ["recall", "okapi", "--raw"], ["recent"], ["expand", "0123456789abcdef"], ["forget", "--list"], ["debug", "--injections"], ["config", "list"], ["projects"]]) {
      await p.ms(args, NONE);
      expect([args.join(" "), existsSync(join(p.root, ".memsearch"))]).toEqual([args.join(" "), false]);
    }
  });

  test(".memsearch/.gitignore on the first write keeps all but the notes out of git; a folder already there is left as it is", async () => {
    const p = tempProject({ notes: "none" });
    rmGit(p);
    const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: p.root, env: spawnEnv({ HOME: p.home, GIT_CONFIG_GLOBAL: "/dev/null" }) }).stdout.toString();
    git("init", "-q");
    expect((await p.ms(["remember", "the", "okapi", "job", "runs", "nightly"])).code).toBe(0);
    expect(readFileSync(join(p.root, ".memsearch", ".gitignore"), "utf8")).toContain("!memory/**");
    // Everything else a project's memory makes: the index, a hook's prompt queue, its injection log, a session file.
    const hookEnv = { MEMSEARCH_NO_WATCH: "1", CLAUDE_PROJECT_DIR: p.root, MEMSEARCH_SUMMARIZER_PROVIDER: "extract" };
    const input = { session_id: "s-git", transcript_path: join(p.home, "t.jsonl"), cwd: p.root, prompt_id: "p-1" };
    await p.ms(["hook", "session-start"], hookEnv, JSON.stringify({ ...input, hook_event_name: "SessionStart", source: "startup" }));
    await p.ms(["hook", "user-prompt-submit"], hookEnv, JSON.stringify({ ...input, hook_event_name: "UserPromptSubmit", prompt: "why does the okapi job run nightly?" }));
    expect(existsSync(join(p.root, ".memsearch", "index"))).toBe(true);
    const status = git("status", "--porcelain", "--untracked-files=all").trim().split("\n").sort();
    const day = status.find((l) => l.endsWith(".md"))!;
    expect(status).toEqual([day, "?? .memsearch/.gitignore"].sort());
    expect(day).toMatch(/^\?\? \.memsearch\/memory\/\d{4}-\d{2}-\d{2}\.md$/);

    // A data folder the user made (or kept from before) is theirs: no .gitignore appears in it.
    const q = tempProject();
    expect((await q.ms(["remember", "a", "note"])).code).toBe(0);
    expect(existsSync(join(q.root, ".memsearch", ".gitignore"))).toBe(false);
  });

  test("hooks making the folder write the .gitignore too", async () => {
    for (const event of ["session-start", "user-prompt-submit", "stop"]) {
      const p = tempProject({ notes: "none" });
      const input = { session_id: "s-1", transcript_path: join(p.home, "t.jsonl"), cwd: p.root, prompt_id: "p-1", prompt: "why does the okapi job time out?", last_assistant_message: "It was cold.", stop_hook_active: false };
      const r = await p.ms(["hook", event], { MEMSEARCH_NO_WATCH: "1", CLAUDE_PROJECT_DIR: p.root, MEMSEARCH_SUMMARIZER_PROVIDER: "extract" }, JSON.stringify(input));
      expect(r.code).toBe(0);
      if (existsSync(join(p.root, ".memsearch"))) expect([event, existsSync(join(p.root, ".memsearch", ".gitignore"))]).toEqual([event, true]);
    }
  });
});

/** tempProject makes an empty `.git` folder; `git init` wants to make its own. */
function rmGit(p: Project): void {
  Bun.spawnSync(["rm", "-rf", join(p.root, ".git")]);
}

describe("what the newcomer walk found", () => {
  const listed = async (p: Project) => JSON.parse((await p.ms(["projects", "-j"])).stdout).map((x: { path: string }) => x.path);

  test("a project is listed after import, remember, index or hub, not only after a session start", async () => {
    const imported = tempProject({ notes: "none" });
    pastSession(imported);
    expect((await imported.ms(["import"])).stdout).toStartWith("Imported 1 turn");
    expect(await listed(imported)).toEqual([imported.root]);

    const remembered = tempProject({ notes: "none" });
    await remembered.ms(["remember", "the", "okapi", "job", "runs", "nightly"]);
    expect(await listed(remembered)).toEqual([remembered.root]);

    const indexed = tempProject();
    await indexed.ms(["index"]);
    expect(await listed(indexed)).toEqual([indexed.root]);

    const hubbed = tempProject();
    const up = await hubbed.ms(["hub", "--detach", "--no-open", "--json"]);
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect((await hubbed.ms(["hub", "--stop"])).code).toBe(0);
    expect(await listed(hubbed)).toEqual([hubbed.root]);

    // And hub --all-projects shows it, opened from anywhere.
    const elsewhere = mkdtempSync(join(tmpdir(), "ms-elsewhere-"));
    const all = await run(["hub", "--all-projects", "--detach", "--no-open", "--json"], { cwd: elsewhere, env: remembered.env });
    expect(all.code).toBe(0);
    const { url } = JSON.parse(all.stdout);
    try {
      const u = new URL(url);
      const o = await (await fetch(new URL("/api/overview", u.origin), { headers: { authorization: `Bearer ${u.searchParams.get("token")}` } })).json();
      expect(o.projects.map((x: { path: string }) => x.path)).toContain(remembered.root);
    } finally {
      await run(["hub", "--all-projects", "--stop"], { cwd: elsewhere, env: remembered.env });
    }
    // A folder without memory that only opened every project's hub is not recorded as a project.
    expect(await listed(remembered)).toEqual([remembered.root]);
  }, 60_000);

  test("notes of your own say so: agent 'you' in search, recall, recent and --agent", async () => {
    const p = await indexedProject();
    await p.ms(["remember", "the", "okapi", "cache", "warms", "at", "six"]);
    const [mine] = JSON.parse((await p.ms(["search", "okapi", "cache", "-j"], NONE)).stdout);
    expect(mine.agent).toBe("you");
    const r = JSON.parse((await p.ms(["recall", "okapi", "cache", "--raw", "-j", "--source", "notes"], NONE)).stdout);
    expect(r.results[0].agent).toBe("you");
    expect(JSON.parse((await p.ms(["search", "redis", "-j"], NONE)).stdout)[0].agent).toBe("claude");
    expect(JSON.parse((await p.ms(["search", "okapi", "--agent", "you", "-j"], NONE)).stdout)).toHaveLength(1);
    expect(JSON.parse((await p.ms(["search", "okapi", "--agent", "claude", "-j"], NONE)).stdout)).toHaveLength(0);
    expect((await p.ms(["recent", "--agent", "you"])).stdout).toContain("the okapi cache warms at six");
  });

  test("forget of a note of your own says --undo puts it back, and --undo does", async () => {
    const p = await indexedProject();
    const { turn, file } = JSON.parse((await p.ms(["remember", "-j", "the", "okapi", "cache", "warms", "at", "six"])).stdout);
    const written = readFileSync(file, "utf8");
    const f = await p.ms(["forget", turn]);
    expect(f.stdout).toStartWith(`Forgot your note ${turn}: removed 1 note; memsearch forget --undo ${turn} puts its text back`);
    expect(readFileSync(file, "utf8")).not.toContain("okapi");
    expect(JSON.parse((await p.ms(["search", "okapi", "-j"], NONE)).stdout)).toEqual([]);
    const u = await p.ms(["forget", "--undo", turn]);
    expect([u.code, u.stdout]).toEqual([0, `Put your note ${turn} back in ${file}.\n`]);
    expect(readFileSync(file, "utf8")).toBe(written);
    expect(JSON.parse((await p.ms(["search", "okapi", "-j"], NONE)).stdout)[0].content).toContain("the okapi cache warms at six");
    expect((await p.ms(["forget", "--list"])).stdout).toBe("No forgotten turns.\n");

    // A turn of a transcript: --undo lets import write it again, and says so.
    const [hit] = JSON.parse((await p.ms(["search", "document the cache decision", "-k", "1", "-j"], NONE)).stdout);
    expect((await p.ms(["forget", hit.chunk_hash])).stdout).toContain("memsearch forget --undo 0a1b2c3d-2222-4e5f-8a9b-0c1d2e3f4a5b lets import write it again from its transcript");
    // A hand note forgotten before its text was kept cannot come back: refused, and still forgotten.
    const list = join(p.root, ".memsearch", "forgotten.json");
    const old = JSON.parse(readFileSync(list, "utf8"));
    old.turns.push({ turn: "note-old", session: "manual", at: new Date().toISOString(), file: "2026-11-20.md", summary: "an old note" });
    writeFileSync(list, JSON.stringify(old));
    const refused = await p.ms(["forget", "--undo", "note-old"]);
    expect([refused.code, refused.stderr]).toEqual([1, "Error: note-old was a note of your own (memsearch remember) and its text was not kept when it was forgotten, so it cannot be put back; write it again with memsearch remember\n"]);
    expect((await p.ms(["forget", "--list"])).stdout).toContain("note-old");
  });
});
