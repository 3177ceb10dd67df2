import yargs from "yargs";
import pkg from "../package.json" with { type: "json" };
import { globalFlags } from "./commands/common.ts";
import { applyFlags } from "./commands/declare.ts";
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

export async function main(argv: string[]): Promise<void> {
  const cli = yargs(sinceValues(argv))
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
      // yargs writes some of its messages on two lines ("Invalid values:\n  Argument: …").
      notice(`Error: ${oneLine(msg)}`);
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
