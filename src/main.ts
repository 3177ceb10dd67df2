import yargs from "yargs";
import pkg from "../package.json" with { type: "json" };
import { fail } from "./commands/output.ts";
import { commands } from "./commands/index.ts";

export async function main(argv: string[]): Promise<void> {
  let cli = yargs(argv)
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
      process.stderr.write(`Error: ${msg}\n`);
      process.exit(2);
    });
  for (const c of commands) cli = cli.command(c as never);
  try {
    await cli.parseAsync();
  } catch (e) {
    process.exitCode = fail(e);
  }
}
