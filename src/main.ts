import yargs from "yargs";
import pkg from "../package.json" with { type: "json" };
import { globalFlags } from "./commands/common.ts";
import { applyFlags, nameOf, type Described } from "./commands/declare.ts";
import { fail, notice } from "./commands/output.ts";
import { oneLine } from "./core/text.ts";
import { commands } from "./commands/index.ts";

/**
 * `--since -3d` reaches --since as its value (yargs would read `-3d` as the flags -3 and -d and
 * say "Unknown arguments: 3, d"), so parseSince can say what is wrong with it.
 */
export function sinceValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1];
    if (argv[i] === "--since" && next !== undefined && /^-\d/.test(next)) {
      out.push(`--since=${next}`);
      i++;
    } else out.push(argv[i]!);
  }
  return out;
}

/** How many single-letter edits (a swap of two neighbours counting as one) lie between two words. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The line's command path checked against the table, before yargs: `serch` is an unknown command
 * (yargs would call it an unknown argument), with the nearest name when one is near enough.
 * Undefined when the line names commands that exist, or none at all (yargs then asks for one).
 */
export function unknownCommand(argv: readonly string[], table: readonly Described[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith("-"));
  let level = table;
  const path: string[] = [];
  for (const word of words) {
    const found = level.find((c) => nameOf(c) === word);
    if (!found) {
      const names = level.map(nameOf);
      const best = names.map((n) => ({ n, d: distance(word, n) })).sort((x, y) => x.d - y.d)[0];
      const near = best && (best.d <= Math.max(1, Math.floor(word.length / 3)) || (word.length >= 3 && best.n.startsWith(word)));
      const full = [...path, word].join(" ");
      return near ? `unknown command '${full}'; did you mean ${[...path, best.n].join(" ")}?` : `unknown command '${full}'; the commands are: ${names.join(", ")} (memsearch ${[...path, "--help"].join(" ")})`;
    }
    if (!found.subcommands) return undefined;
    path.push(word);
    level = found.subcommands;
  }
  return undefined;
}

/**
 * yargs' usage message on one line: a value outside a flag's choices said the way memsearch says
 * it (`--source must be one of notes, transcripts, all (got "nope")`), anything else joined up.
 */
export function usageLine(msg: string, argv: readonly string[] = []): string {
  // Named as typed: a flag with its dashes, a positional (`install <agent>`) by its name.
  const asTyped = (name: string) => (name.length === 1 ? `-${name}` : argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`)) ? `--${name}` : name);
  const bad = [...msg.matchAll(/Argument: ([\w-]+), Given: ("[^"]*"|\S+), Choices: (.+)/g)].map(([, name, given, choices]) => `${asTyped(name!)} must be one of ${choices!.replace(/"/g, "")} (got ${given})`);
  // yargs writes some of its messages on two lines ("Invalid values:\n  Argument: …").
  return oneLine(bad.length ? bad.join("; ") : msg);
}

export async function main(argv: string[]): Promise<void> {
  // Only what stands before `--` can be a command.
  const unknown = unknownCommand(argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv, commands);
  if (unknown && !argv.includes("--help") && !argv.includes("-h")) {
    notice(`Error: ${unknown}`);
    process.exitCode = 2;
    return;
  }
  const cli = yargs(sinceValues(argv))
    .parserConfiguration({ "populate--": true })
    .scriptName("memsearch")
    .version(`memsearch, version ${pkg.version}`)
    .alias("version", "V")
    .help()
    .alias("help", "h")
    .strict()
    .demandCommand(1, "Give a command; see 'memsearch --help'.")
    .recommendCommands()
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((msg, err) => {
      if (err) throw err;
      notice(`Error: ${usageLine(msg, argv)}`);
      process.exit(2);
    });
  applyFlags(cli, globalFlags);
  for (const c of commands) cli.command(c);
  try {
    await cli.parseAsync();
  } catch (e) {
    process.exitCode = fail(e);
  }
}
