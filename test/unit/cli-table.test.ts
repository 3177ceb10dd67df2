/**
 * The command table keeps the conventions of rg, fd and gh (issue 32): one meaning per short flag,
 * the result count spelled alike in search and recall, --json wherever a command prints results,
 * a fixed set of values checked by yargs' choices, unknown commands named with the nearest one.
 */
import { expect, test } from "bun:test";
import { commands } from "../../src/commands/index.ts";
import { aliasesOf, nameOf, type Described, type Flags } from "../../src/commands/declare.ts";
import { unknownCommand, usageLine } from "../../src/main.ts";
import { colorArgs, colorMode } from "../../src/commands/color.ts";

/** Every command of the tree with its path, subcommands included. */
function all(list: readonly Described[], parent: string[] = []): { path: string; flags: Flags; c: Described }[] {
  return list.flatMap((c) => {
    const path = [...parent, nameOf(c)];
    return [{ path: path.join(" "), flags: c.flags ?? {}, c }, ...all(c.subcommands ?? [], path)];
  });
}

const table = all(commands);
const flagOf = (path: string, short: string) => Object.entries(table.find((t) => t.path === path)!.flags).find(([, f]) => aliasesOf(f).includes(short));

test("-n is --dry-run wherever it exists, and nothing else", () => {
  const withN = table.flatMap((t) => Object.entries(t.flags).filter(([, f]) => aliasesOf(f).includes("n")).map(([name]) => `${t.path} ${name}`));
  expect(withN.length).toBeGreaterThan(0);
  for (const w of withN) expect(w).toEndWith(" dry-run");
});

test("the result count is -k / --limit (and --top-k) in both search and recall", () => {
  for (const cmd of ["search", "recall"]) {
    const [name, f] = flagOf(cmd, "k")!;
    expect([cmd, name, [...aliasesOf(f)].sort()]).toEqual([cmd, "limit", ["k", "top-k"]]);
  }
});

test("a short flag means one thing across every command", () => {
  const meaning = new Map<string, Set<string>>();
  for (const t of table) {
    for (const [name, f] of Object.entries(t.flags)) {
      if (f.positional) continue;
      for (const a of aliasesOf(f)) if (a.length === 1) meaning.set(a, (meaning.get(a) ?? new Set()).add(name));
    }
  }
  // -c is transcript's --context; -p/-m the embedding provider and model; -s import's summariser: one each.
  for (const [short, names] of meaning) expect([short, [...names]]).toEqual([short, [...names].slice(0, 1)]);
});

test("--json (and -j, --json-output) on every command that prints results", () => {
  const noResults = new Set(["hook", "completion", "config"]);
  for (const t of table) {
    if (noResults.has(t.path) || t.c.subcommands) continue;
    const json = Object.entries(t.flags).find(([name]) => name === "json-output");
    expect([t.path, json ? [...aliasesOf(json[1])].sort() : null]).toEqual([t.path, ["j", "json"]]);
  }
});

test("recall --source is checked by yargs' choices", () => {
  const source = table.find((t) => t.path === "recall")!.flags.source!;
  expect(source.choices).toEqual(["notes", "transcripts", "all"]);
  expect(usageLine('Invalid values:\n  Argument: source, Given: "nope", Choices: "notes", "transcripts", "all"', ["recall", "x", "--source", "nope"])).toBe('--source must be one of notes, transcripts, all (got "nope")');
});

test("an unknown command is named, with the nearest one when there is one", () => {
  expect(unknownCommand(["serch", "redis"], commands)).toBe("unknown command 'serch'; did you mean search?");
  expect(unknownCommand(["config", "lsit"], commands)).toBe("unknown command 'config lsit'; did you mean config list?");
  expect(unknownCommand(["xyzzy"], commands)).toStartWith("unknown command 'xyzzy'; the commands are: index, search, recall,");
  for (const ok of [["search", "serch"], ["config", "set", "a", "b"], ["--color=never", "search", "x"], []]) expect(unknownCommand(ok, commands)).toBeUndefined();
});

test("--color=WHEN, as ls and grep take it", () => {
  expect(colorMode(["search", "x"])).toBe("auto");
  expect(colorMode(["search", "x", "--color=never"])).toBe("never");
  expect(colorMode(["--color", "never", "search", "x"])).toBe("never");
  expect(colorMode(["search", "x", "--color"])).toBe("always");
  expect(colorMode(["search", "x", "--no-color", "--color=always"])).toBe("always");
  expect(colorMode(["search", "--", "--color=never"])).toBe("auto");
  expect(colorArgs(["--color", "search", "x"])).toEqual(["--color=always", "search", "x"]);
  expect(() => colorMode(["--color=sometimes"])).toThrow('--color must be auto, always or never (got "sometimes")');
});
