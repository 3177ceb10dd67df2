/**
 * The README's command table, the binary's `--help` and the agent lists agree: every command the
 * binary has is in the table and no other, every flag a row names is in that command's `--help`,
 * and every list of agents (the README's, each `--agent`/`<agent>` choice, the registry) names
 * the same five (a filter of notes adds `you`).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_NAMES, NOTE_AGENTS } from "../../src/agents/names.ts";
import { AGENTS } from "../../src/agents/registry.ts";
import { BIN, REPO } from "../helpers/cli.ts";

const readme = readFileSync(join(REPO, "README.md"), "utf8");

function help(args: string[]): string {
  const p = Bun.spawnSync([BIN, ...args, "--help"], { env: { ...process.env, NO_COLOR: "1", COLUMNS: "200" }, stdout: "pipe", stderr: "pipe" });
  expect(p.exitCode).toBe(0);
  // yargs wraps at 100 columns: one line, so a wrapped list of choices reads whole.
  return (p.stdout.toString() + p.stderr.toString()).replace(/\s*\n\s*/g, " \n ");
}

/** A command's help, with its subcommands' (`config list --resolved`). */
function helpWithSubcommands(command: string): string {
  const h = help([command]);
  const subs = [...h.matchAll(new RegExp(`memsearch ${command} (\\w+)`, "g"))].map((m) => m[1]!);
  return [h, ...subs.map((sub) => help([command, sub]))].join("\n");
}

/** The Commands table: each row's first cell, split into `memsearch <command> …` pieces. */
function tableRows(): { command: string; text: string }[] {
  const at = readme.indexOf("\n## Commands\n");
  expect(at).toBeGreaterThan(0);
  const section = readme.slice(at, readme.indexOf("\n## ", at + 5));
  const rows: { command: string; text: string }[] = [];
  for (const line of section.split("\n")) {
    const cell = /^\| `(memsearch [^|]*(?:\\\|[^|]*)*)` \|/.exec(line)?.[1];
    if (!cell) continue;
    for (const piece of cell.split(/`, `|` or `/)) {
      const m = /^memsearch (\w[\w-]*)(.*)$/.exec(piece.replace(/^`|`$/g, ""));
      if (m) rows.push({ command: m[1]!, text: m[2]! });
    }
  }
  return rows;
}

const helpCommands = () => [...help([]).matchAll(/^ +memsearch (\w[\w-]*)/gm)].map((m) => m[1]!);

describe("README, --help and the agent lists agree", () => {
  test("the table names every command the binary has, and only those", () => {
    const inTable = new Set(tableRows().map((r) => r.command));
    expect([...inTable].sort()).toEqual([...new Set(helpCommands())].sort());
  });

  test("every flag a row names is in that command's --help", () => {
    for (const { command, text } of tableRows()) {
      const h = helpWithSubcommands(command);
      for (const [, flag] of text.matchAll(/(?:^|[\s[|(])(--[a-z][a-z-]*)/g)) expect({ command, flag, found: h.includes(flag!) }).toEqual({ command, flag, found: true });
      for (const [, flag] of text.matchAll(/(?:^|[\s[|(/])(-[a-zA-Z])\b/g)) expect({ command, flag, found: new RegExp(`(^|\\s)${flag}, `).test(h) }).toEqual({ command, flag, found: true });
    }
  });

  test("every agent list names the same five agents", () => {
    const five = [...AGENT_NAMES].sort();
    expect(Object.keys(AGENTS).sort()).toEqual(five);
    // The binary: each choice of an agent (install's <agent>, hook's and the filters' --agent); a
    // filter of notes also takes `you`, who wrote the notes of your own.
    const notes: string[] = [...NOTE_AGENTS].sort();
    expect(notes).toEqual([...five, "you"].sort());
    for (const command of ["install", "hook session-start", "search", "recall", "recent"]) {
      const h = help(command.split(" ")).replace(/\s+/g, " ");
      const choices = [...h.matchAll(/\[choices: ([^\]]+)\]/g)].map((m) => m[1]!.split(", ").map((x) => JSON.parse(x)).sort()).filter((c) => c.includes("codex"));
      expect({ command, choices }).toEqual({ command, choices: [command === "install" || command.startsWith("hook") ? five : notes] });
    }
    // What the binary says it covers, by the agents' names.
    for (const command of ["import"]) {
      const h = help([command]).replace(/\s+/g, " ");
      for (const a of Object.values(AGENTS)) expect({ command, agent: a.label, said: h.includes(a.label) }).toEqual({ command, agent: a.label, said: true });
    }
    // The README: every `claude|codex|…` list in the table, and the Other agents heading.
    const lists = [...readme.matchAll(/\b(?:claude|codex|gemini|opencode|copilot)(?:\\?\|(?:claude|codex|gemini|opencode|copilot))+\b/g)].map((m) => m[0].split(/\\?\|/).sort());
    expect(lists.length).toBeGreaterThan(2);
    for (const l of lists) expect(l).toEqual(five);
    const others = Object.values(AGENTS).filter((a) => a.name !== "claude").map((a) => a.label);
    const heading = /\n## Other agents: ([^\n]+)\n/.exec(readme)![1]!;
    for (const label of others) expect(heading).toContain(label.replace(/ CLI$/, ""));
  });
});
