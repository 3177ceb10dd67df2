import { readModelLedger } from "../memory/ledger.ts";
import { costReport, formatReported, formatUsd, type CostReport, type CostRow } from "../memory/prices.ts";

/** Days shown by `memsearch stats` (the JSON has them all). */
const SHOWN_DAYS = 7;

const fmt = (n: number) => n.toLocaleString("en-US");

/** The project's model-call ledger added up (memory/ledger.ts, memory/prices.ts); `notOurs`: lines another machine wrote, not counted. */
export function modelCosts(dataDir: string): CostReport & { notOurs: number } {
  const { calls, notOurs } = readModelLedger(dataDir);
  return { ...costReport(calls), notOurs };
}

function rowLine(r: CostRow): string {
  const tokens = r.inTokens || r.outTokens ? `, ${fmt(r.inTokens)} tokens in / ${fmt(r.outTokens)} out` : "";
  const chars = r.charsOnly ? `, ${fmt(r.charsOnly)} characters without token counts` : "";
  const failed = r.failed ? ` (${fmt(r.failed)} failed)` : "";
  const reported = formatReported(r);
  return `  ${r.period}: ${fmt(r.calls)} call${r.calls === 1 ? "" : "s"}${failed}${tokens}${chars}, ${formatUsd(r)}${reported ? `; claude reported ${reported}` : ""}`;
}

/** `memsearch stats`' lines about what the memory cost: per month, then the latest days. */
export function costLines(c: CostReport & { notOurs?: number }): string[] {
  const foreign = c.notOurs ? [`  (${fmt(c.notOurs)} ledger line${c.notOurs === 1 ? "" : "s"} not written on this machine, as from a repository: not counted)`] : [];
  if (!c.total.calls) return ["Model calls: none recorded (the extract and keyword search cost nothing)", ...foreign];
  return [
    `Model calls: ${fmt(c.total.calls)}, ${formatUsd(c.total)} (claude list prices as of ${c.pricesAsOf}; Ollama and the extract cost nothing)${formatReported(c.total) ? `; claude -p reported ${formatReported(c.total)}` : ""}`,
    ...foreign,
    "Per month:",
    ...c.months.map(rowLine),
    `Per day (latest ${Math.min(SHOWN_DAYS, c.days.length)}):`,
    ...c.days.slice(0, SHOWN_DAYS).map(rowLine),
  ];
}
