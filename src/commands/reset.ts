import { loadContext } from "../core/context.ts";
import { UsageError } from "../core/errors.ts";
import { removeIndex } from "../index/disk.ts";
import { command } from "./declare.ts";
import { print, printJson } from "./output.ts";
import { jsonFlag } from "./common.ts";
import { isTerminal, writeErr } from "../core/stdio.ts";

export const resetCommand = command({
  command: "reset",
  describe: "Delete the project's index (the markdown memory is kept; 'memsearch index' rebuilds it)",
  flags: { ...jsonFlag, yes: { alias: "y", type: "boolean", default: false, describe: "Do not ask for confirmation" } },
  run: async (a) => {
    const ctx = loadContext();
    if (!a.yes) {
      if (!isTerminal(0)) throw new UsageError("refusing to delete the index without --yes (no terminal to ask)");
      writeErr("This will delete all indexed data. Continue? [y/N] ");
      const answer = await readLine();
      if (!/^y(es)?$/i.test(answer.trim())) {
        if (a.jsonOutput) return printJson({ dropped: false, aborted: true });
        print("Aborted.");
        return;
      }
    }
    const { indexBytes, temps } = removeIndex(ctx.project.indexDir);
    if (a.jsonOutput) return printJson({ dropped: indexBytes !== undefined, index_dir: ctx.project.indexDir, freed_bytes: (indexBytes ?? 0) + temps.bytes, temp_files: temps.files });
    const freed = `${(((indexBytes ?? 0) + temps.bytes) / 1048576).toFixed(1)} MiB freed`;
    const leftovers = temps.files === 1 ? "1 temporary file of an interrupted write" : `${temps.files} temporary files of interrupted writes`;
    if (indexBytes !== undefined) {
      print(`Dropped index ${ctx.project.indexDir} (${freed}${temps.files ? `, including ${leftovers}` : ""}). Markdown in ${ctx.project.memoryDir} is untouched.`);
    } else print(temps.files ? `No index to drop; removed ${leftovers} (${freed}).` : "No index to drop.");
  },
});

async function readLine(): Promise<string> {
  for await (const line of console) return line;
  return "";
}
