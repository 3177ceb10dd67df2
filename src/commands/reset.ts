import type { CommandModule } from "yargs";
import { loadContext } from "../core/context.ts";
import { UsageError } from "../core/errors.ts";
import { removeIndex } from "../core/index-file.ts";
import { action, print } from "./output.ts";

interface Args {
  yes: boolean;
}

export const resetCommand: CommandModule<{}, Args> = {
  command: "reset",
  describe: "Delete the project's index (the markdown memory is kept; 'memsearch index' rebuilds it)",
  builder: (y) => y.option("yes", { alias: "y", type: "boolean", default: false, describe: "Do not ask for confirmation" }) as never,
  handler: action(async (a: Args) => {
    const ctx = loadContext();
    if (!a.yes) {
      if (!process.stdin.isTTY) throw new UsageError("refusing to delete the index without --yes (no terminal to ask)");
      process.stderr.write("This will delete all indexed data. Continue? [y/N] ");
      const answer = await readLine();
      if (!/^y(es)?$/i.test(answer.trim())) {
        print("Aborted.");
        return;
      }
    }
    const had = removeIndex(ctx.project.indexDir);
    print(had ? `Dropped index ${ctx.project.indexDir}. Markdown in ${ctx.project.memoryDir} is untouched.` : "No index to drop.");
  }),
};

async function readLine(): Promise<string> {
  for await (const line of console) return line;
  return "";
}
