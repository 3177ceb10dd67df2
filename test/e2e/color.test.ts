import { expect, test } from "bun:test";
import { colorWanted } from "../../src/commands/color.ts";
import { BIN, indexedProject, spawnEnv } from "../helpers/cli.ts";

const ESC = "\x1b[";

test("colour only for a terminal, and never when asked not to", () => {
  expect(colorWanted([], {}, true)).toBe(true);
  expect(colorWanted([], {}, false)).toBe(false);
  expect(colorWanted([], { TERM: "dumb" }, true)).toBe(false);
  expect(colorWanted([], { NO_COLOR: "1" }, true)).toBe(false);
  expect(colorWanted([], { NO_COLOR: "" }, true)).toBe(true);
  expect(colorWanted([], { FORCE_COLOR: "0" }, true)).toBe(false);
  expect(colorWanted([], { FORCE_COLOR: "1" }, false)).toBe(true);
  expect(colorWanted([], { FORCE_COLOR: "1", NO_COLOR: "1" }, false)).toBe(true);
  expect(colorWanted(["search", "q", "--no-color"], { FORCE_COLOR: "1" }, true)).toBe(false);
  // Under Claude Code a FORCE_COLOR it set for its children must not colour what Claude reads.
  expect(colorWanted([], { FORCE_COLOR: "3", CLAUDECODE: "1" }, false)).toBe(false);
  expect(colorWanted([], { FORCE_COLOR: "3", CLAUDECODE: "1" }, true)).toBe(true);
  // After `--` it is a query, not a flag.
  expect(colorWanted(["search", "--", "--no-color"], {}, true)).toBe(true);
});

test("FORCE_COLOR colours search and errors; --no-color and JSON stay plain", async () => {
  const p = await indexedProject();
  const forced = { FORCE_COLOR: "1", NO_COLOR: undefined, CLAUDECODE: undefined };
  const coloured = await p.ms(["search", "redis"], forced);
  expect(coloured.code).toBe(0);
  expect(coloured.stdout).toContain(ESC);
  expect(Bun.stripANSI(coloured.stdout)).toBe((await p.ms(["search", "redis"])).stdout);
  for (const args of [["search", "redis", "--no-color"], ["--no-color", "search", "redis", "-k", "1", "--provider", "none"], ["search", "redis", "-j"]]) {
    expect((await p.ms(args, forced)).stdout).not.toContain(ESC);
  }
  const bad = await p.ms(["search", "redis", "-k", "0"], forced);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toStartWith(`${ESC}31m`);
  expect((await p.ms(["search", "redis", "-k", "0", "--no-color"], forced)).stderr).toStartWith("Error: ");
});

/** The binary's output on a pseudo-terminal, as a person running it would see it. */
async function onTerminal(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<string> {
  let seen = "";
  const proc = Bun.spawn([BIN, ...args], { cwd, env: spawnEnv(env), terminal: { cols: 100, rows: 40, data: (_t, d) => void (seen += new TextDecoder().decode(d)) } });
  await proc.exited;
  proc.terminal!.close();
  return seen;
}

test("a terminal gets colour unless NO_COLOR or --no-color says otherwise", async () => {
  const p = await indexedProject();
  const tty = { ...p.env, FORCE_COLOR: undefined, NO_COLOR: undefined, CLAUDECODE: undefined, TERM: "xterm" };
  const shown = await onTerminal(["search", "redis"], tty, p.root);
  expect(shown).toContain("--- Result 1");
  expect(shown).toContain(ESC);
  expect(await onTerminal(["search", "redis"], { ...tty, NO_COLOR: "1" }, p.root)).not.toContain(ESC);
  expect(await onTerminal(["search", "redis", "--no-color"], tty, p.root)).not.toContain(ESC);
});
