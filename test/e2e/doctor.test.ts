import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";
import { REPO, tempProject } from "../helpers/cli.ts";
import { accountedSession, SESSION } from "../helpers/accounted-session.ts";
import { CODEX_MISSING, codexRollout } from "../helpers/accounted-others.ts";
import { writeFakeClaude } from "../helpers/fake-claude.ts";

describe("doctor, remember and recent", () => {
  // Shared by every test, and stateless: the tests never read what it was asked.
  let ollama: OllamaDouble;
  /** A project of the test's own, talking to the double. */
  const project = () => {
    const p = tempProject({ env: { OLLAMA_HOST: ollama.host } });
    return { p, ms: p.ms };
  };
  beforeAll(async () => {
    ollama = await startOllamaDouble({ dim: 768 });
  });
  afterAll(() => ollama.stop());

  test("doctor names what is wrong and how to fix it", async () => {
    const { ms } = project();
    const r = await ms(["doctor", "--json-output"], { OLLAMA_HOST: "http://127.0.0.1:9", CODEX_HOME: undefined, GEMINI_CLI_HOME: undefined, COPILOT_HOME: undefined, XDG_CONFIG_HOME: undefined, XDG_DATA_HOME: undefined });
    const checks = JSON.parse(r.stdout) as { name: string; status: string; detail: string; fix?: string }[];
    const by = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(Object.keys(by)).toEqual(["binary", "config", "plugin", "codex", "gemini", "opencode", "copilot", "ollama", "summarizer", "index", "curated memory", "turn queue", "turns", "watch"]);
    expect(by.codex!.detail).toContain("not set up on this machine");
    expect(by.gemini!.detail).toContain("Gemini CLI not set up on this machine");
    expect(by.opencode!.detail).toContain("not set up on this machine");
    expect(by.copilot!.detail).toContain("Copilot CLI not set up on this machine");
    expect(by["turn queue"]!.status).toBe("ok");
    expect(by.ollama!.status).toBe("warn");
    expect(by.ollama!.fix).toBe("ollama serve");
    expect(by.index!.fix).toBe("memsearch index");
    expect(by.plugin!.detail).toContain("not installed");
  });

  test("the repository's stand-in bin/memsearch is not taken for a binary", async () => {
    const { p, ms } = project();
    mkdirSync(join(p.home, ".claude"), { recursive: true });
    writeFileSync(join(p.home, ".claude", "settings.json"), JSON.stringify({ enabledPlugins: { "memsearch@memsearch": true } }));
    const pluginDir = join(p.home, ".claude", "plugins", "cache", "memsearch", "memsearch", "0.1.0");
    cpSync(join(REPO, "plugin"), pluginDir, { recursive: true });
    const r = await ms(["doctor", "-j"], { PATH: "/usr/bin:/bin" });
    const plugin = JSON.parse(r.stdout).find((c: { name: string }) => c.name === "plugin");
    expect(plugin.status).toBe("fail");
    expect(plugin.detail).toContain("its hooks find no memsearch binary");
  });

  test("doctor is happy once indexed with Ollama and the plugin enabled", async () => {
    const { p, ms } = project();
    await ms(["index"]);
    mkdirSync(join(p.home, ".claude"), { recursive: true });
    writeFileSync(join(p.home, ".claude", "settings.json"), JSON.stringify({ enabledPlugins: { "memsearch@memsearch": true } }));
    const binDir = join(p.home, "bin");
    mkdirSync(binDir);
    writeFileSync(join(binDir, "memsearch"), "#!/bin/sh\n", { mode: 0o755 });
    const r = await ms(["doctor"], { PATH: `${binDir}:${process.env.PATH}` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✓ ollama: ");
    expect(r.stdout).toContain("nomic-embed-text pulled, 768 dimensions");
    expect(r.stdout).toMatch(/✓ index: 6 chunks in 2 files, 6 with vectors/);
    expect(r.stdout).toContain("✓ plugin: memsearch@memsearch enabled");
  });

  test("a turn waiting long for its note is named, with the command that writes it", async () => {
    const { p, ms } = project();
    const pending = join(p.root, ".memsearch", "pending");
    mkdirSync(pending, { recursive: true });
    const file = join(pending, "s--p.json");
    writeFileSync(file, JSON.stringify({ sessionId: "s", promptId: "p", stoppedAt: new Date().toISOString(), prompt: "q", lastAssistantMessage: "a" }));
    const fresh = JSON.parse((await ms(["doctor", "-j"])).stdout).find((c: { name: string }) => c.name === "turn queue");
    expect(fresh.status).toBe("ok");
    expect(fresh.detail).toContain("1 turn(s) waiting");
    const old = new Date(Date.now() - 3600_000);
    utimesSync(file, old, old);
    const stale = JSON.parse((await ms(["doctor", "-j"])).stdout).find((c: { name: string }) => c.name === "turn queue");
    expect(stale.status).toBe("warn");
    expect(stale.fix).toStartWith("memsearch hook drain");
  });

  test("every turn accounted for: doctor and stats name the missing turn and say how it is counted; import writes exactly it", async () => {
    const { p, ms } = project();
    const s = await accountedSession(p.root, p.home);
    const turns = async () => JSON.parse((await ms(["doctor", "-j"])).stdout).find((c: { name: string }) => c.name === "turns");
    const before = await turns();
    expect(before.status).toBe("warn");
    expect(before.detail).toBe(`1 of 3 turns since 2026-02-10 have no note: 2026-02-10 12:04 session acc0be11 turn t-missin "Write the release notes for version 2"; 1 queued (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)`);
    expect(before.fix).toBe("memsearch import (writes exactly that turn)");
    const stats = JSON.parse((await ms(["stats", "-j"])).stdout);
    expect(stats.turns).toMatchObject({ turns: 5, to_capture: 3, queued: 1, missing: 1, not_turns: { "local-command": 2, "no-reply": 0, trivial: 1 } });
    expect(stats.turns.sessions[0]).toMatchObject({ session_id: SESSION, turns: 5 });
    expect(stats.turns.missing_turns.map((m: { turn: string }) => m.turn)).toEqual([s.missing]);
    expect((await ms(["stats"])).stdout).toContain("Turns: 1 of 3 turns since 2026-02-10 have no note");
    const imported = await ms(["import"]);
    expect(imported.stdout).toStartWith("Imported 1 turn from 1 session");
    expect(imported.stderr).toContain("1 turn waiting in the write-ahead queue left to the drainer");
    await ms(["hook", "drain"], {}, "");
    const after = await turns();
    expect(after.status).toBe("ok");
    expect(after.detail).toBe("3 of 3 turns since 2026-02-10 have a note (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)");
  });

  test("every agent's turns accounted for: a Codex CLI turn without a note is named with its agent, import writes it, and the line counts per agent", async () => {
    const { p, ms } = project();
    const agents = { CODEX_HOME: join(p.home, ".codex"), GEMINI_CLI_HOME: p.home, XDG_DATA_HOME: join(p.home, ".local", "share"), XDG_CONFIG_HOME: join(p.home, ".config") };
    await accountedSession(p.root, p.home);
    codexRollout(p.home, p.root, "paginated-tool-0.169.jsonl", "rollout-2026-11-26T11-17-51-01a21793.jsonl");
    const turns = async () => JSON.parse((await ms(["doctor", "-j"], agents)).stdout).find((c: { name: string }) => c.name === "turns");
    const before = await turns();
    expect(before.status).toBe("warn");
    expect(before.detail).toBe(`2 of 4 turns since 2026-02-10 have no note (Claude Code 3, Codex CLI 1): 2026-02-10 12:04 Claude Code session acc0be11 turn t-missin "Write the release notes for version 2", 2026-11-26 11:17 Codex CLI session 01a21793 turn 01a21793 "RUNTOOL show me what the fixture folder…"; 1 queued (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)`);
    expect(before.fix).toBe("memsearch import (writes exactly those 2)");
    const stats = JSON.parse((await ms(["stats", "-j"], agents)).stdout);
    expect(stats.turns.missing_turns.map((m: { agent: string; turn: string }) => [m.agent, m.turn])).toEqual([["claude", "t-missing"], ["codex", CODEX_MISSING.turn]]);
    expect((await ms(["stats"], agents)).stdout).toContain(`  Codex CLI session 01a21793 (2026-11-26 11:17): 1 turns, 0 noted, 1 missing`);
    const imported = await ms(["import"], agents);
    expect(imported.stdout).toStartWith("Imported 2 turns from 2 sessions");
    await ms(["hook", "drain"], agents, "");
    const after = await turns();
    expect(after.status).toBe("ok");
    expect(after.detail).toBe("4 of 4 turns since 2026-02-10 have a note (Claude Code 3, Codex CLI 1) (not turns to capture: 2 local commands, 1 trivial prompt with a words-only reply)");
  });

  test("a broken config makes doctor fail with the file and line", async () => {
    const { p, ms } = project();
    writeFileSync(join(p.root, ".memsearch.toml"), "[search\n");
    const r = await ms(["doctor"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ config: .*\.memsearch\.toml:1: malformed TOML/);
  });

  test("remember writes a redacted note that search finds; recent shows it", async () => {
    const { ms } = project();
    const r = await ms(["remember", "Staging DB password is postgres://app:hunter2secret@db.internal/app and we rotate it monthly"]);
    expect(r.code).toBe(0);
    const hits = JSON.parse((await ms(["search", "rotate staging database monthly", "-j", "-k", "1"])).stdout);
    expect(hits[0].content).toContain("rotate it monthly");
    expect(hits[0].content).not.toContain("hunter2secret");
    const recent = await ms(["recent"]);
    expect(recent.stdout).toContain("rotate it monthly");
  });

  test("remember: escape sequences and control characters never reach the note or the terminal; a webhook is redacted", async () => {
    const { p, ms } = project();
    const hook = "https://hooks.slack.com/services/T0" + "ABCDEF1/B0GHIJKL2/" + "aZ3kQ9mX7pL2aZ3kQ9mX7pL2";
    const r = await ms(["remember", `Deploys post to \x1b[1;31m${hook}\x1b[0m\x1b]0;owned\x07 the\x7f\u0085 releases channel\x08`]);
    expect(r.code).toBe(0);
    const md = readdirSync(p.memory).map((f) => readFileSync(join(p.memory, f), "utf8")).join("");
    expect(md).toContain("- Deploys post to https://hooks.slack.com/services/[REDACTED:slack-webhook] the releases channel");
    expect(md).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    const hits = JSON.parse((await ms(["search", "releases channel", "-j", "-k", "1"])).stdout);
    expect(hits[0].content).toContain("releases channel");
    for (const out of [(await ms(["recent"])).stdout, (await ms(["search", "releases channel"])).stdout]) {
      expect(out).toContain("releases channel");
      expect(out).not.toContain("\x1b");
      expect(out).not.toContain("aZ3kQ9mX7pL2");
    }
  });

  /** doctor's checks by name, in a project with the environment given over its own. */
  const checksOf = async (ms: (a: string[], e?: Record<string, string | undefined>) => Promise<{ stdout: string }>, extra: Record<string, string | undefined> = {}) =>
    Object.fromEntries((JSON.parse((await ms(["doctor", "-j"], extra)).stdout) as { name: string; status: string; detail: string; fix?: string }[]).map((c) => [c.name, c]));

  test("the summariser: claude -p on the PATH or not, another provider, or off (issue 32)", async () => {
    const { p, ms } = project();
    const noClaude = await checksOf(ms, { PATH: "/usr/bin:/bin" });
    expect(noClaude.summarizer).toEqual({
      name: "summarizer",
      status: "warn",
      detail: "claude is not on PATH: each turn's note is the plain extract instead of a summary (summarizer.provider = claude)",
      fix: "install Claude Code (npm install -g @anthropic-ai/claude-code), or memsearch config set summarizer.provider extract",
    });
    const bin = join(p.home, "bin");
    mkdirSync(bin);
    writeFakeClaude(bin);
    const found = await checksOf(ms, { PATH: `${bin}:/usr/bin:/bin` });
    expect(found.summarizer).toMatchObject({ status: "ok", detail: `claude -p (model haiku) at ${join(bin, "claude")}` });
    expect((await checksOf(ms, { PATH: "/usr/bin:/bin", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" })).summarizer!.status).toBe("ok");
    const ollamaModel = await checksOf(ms, { MEMSEARCH_SUMMARIZER_PROVIDER: "ollama", MEMSEARCH_SUMMARIZER_OLLAMA_MODEL: "no-such-chat-model" });
    expect(ollamaModel.summarizer).toMatchObject({ status: "warn", fix: "ollama pull no-such-chat-model" });
    const down = await checksOf(ms, { MEMSEARCH_SUMMARIZER_PROVIDER: "ollama", OLLAMA_HOST: "http://127.0.0.1:9" });
    expect(down.summarizer).toMatchObject({ status: "warn", fix: "ollama serve" });
  });

  test("embeddings turned off are a choice, not a warning (issue 32)", async () => {
    const { ms } = project();
    const off = await checksOf(ms, { MEMSEARCH_EMBEDDING_PROVIDER: "none", OLLAMA_HOST: "http://127.0.0.1:9" });
    expect(off.ollama!.status).toBe("ok");
    expect(off.ollama!.fix).toBeUndefined();
    expect(off.ollama!.detail).toStartWith("not used: embeddings are off (embedding.provider = none)");
  });

  test("while Ollama is down, an index fix starts Ollama first (issue 32)", async () => {
    const { ms } = project();
    const down = { OLLAMA_HOST: "http://127.0.0.1:9" };
    expect((await ms(["index"], down)).code).toBe(0);
    const c = await checksOf(ms, down);
    expect(c.ollama!.fix).toBe("ollama serve");
    expect(c.index).toMatchObject({ status: "warn", fix: "ollama serve, then memsearch index (fills in the missing vectors)" });
    // With Ollama answering, the index run alone is the fix.
    expect((await checksOf(ms)).index).toMatchObject({ status: "warn", fix: "memsearch index (fills in the missing vectors)" });
  });
});
