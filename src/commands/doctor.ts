import type { CommandModule } from "yargs";
import { jsonFlag } from "./common.ts";
import { action, print, printJson } from "./output.ts";

const MARK = { ok: "✓", warn: "!", fail: "✗" } as const;

export const doctorCommand: CommandModule<{}, { jsonOutput: boolean }> = {
  command: "doctor",
  describe: "Check the binary, plugin, Ollama, index and watch process; say how to fix what is wrong",
  builder: (y) => jsonFlag(y) as never,
  handler: action(async (a: { jsonOutput: boolean }) => {
    const { runChecks } = await import("../core/doctor.ts");
    const checks = await runChecks();
    if (a.jsonOutput) printJson(checks);
    else print(checks.map((c) => `${MARK[c.status]} ${c.name}: ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ""}`).join("\n"));
    if (checks.some((c) => c.status === "fail")) process.exitCode = 1;
  }),
};
