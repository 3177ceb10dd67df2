import { out } from "./color.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { print, printJson } from "./output.ts";

const MARK = { ok: () => out.green("✓"), warn: () => out.yellow("!"), fail: () => out.red("✗") } as const;

export const doctorCommand = command({
  command: "doctor",
  describe: "Check the binary, plugin, Ollama, index and watch process; say how to fix what is wrong",
  flags: jsonFlag,
  run: async (a) => {
    const { runChecks } = await import("../doctor/doctor.ts");
    const checks = await runChecks();
    if (a.jsonOutput) printJson(checks);
    else print(checks.map((c) => `${MARK[c.status]()} ${c.name}: ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ""}`).join("\n"));
    if (checks.some((c) => c.status === "fail")) process.exitCode = 1;
  },
});
