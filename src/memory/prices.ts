/**
 * What a model call cost, estimated: the one price table, and the ledger added up per day and
 * month. Ollama runs on the user's machine (zero); the extract is no call at all. A claude model
 * not in the table, or a call whose tokens were not reported, is "unknown", never guessed.
 */
import type { ModelCall } from "./ledger.ts";

/** When the prices below were last checked against Anthropic's published list prices. */
export const PRICES_AS_OF = "2025-11-24";

/**
 * US dollars per million tokens, by model name (`summarizer.model`: an alias such as `haiku`, or a
 * full id). The first row that matches wins; an alias is priced as the model it named on PRICES_AS_OF.
 */
export const CLAUDE_PRICES: readonly { model: RegExp; label: string; input: number; output: number }[] = [
  { model: /^opus$|opus-4-5|opus-4\.5/, label: "Claude Opus 4.5", input: 5, output: 25 },
  { model: /opus-4|opus-3|3-opus/, label: "Claude Opus 4 / 4.1 / 3", input: 15, output: 75 },
  { model: /^sonnet$|sonnet-4|sonnet-3|3-[57]-sonnet/, label: "Claude Sonnet 4.5 / 4 / 3.7", input: 3, output: 15 },
  { model: /^haiku$|haiku-4/, label: "Claude Haiku 4.5", input: 1, output: 5 },
  { model: /haiku-3-5|3-5-haiku/, label: "Claude Haiku 3.5", input: 0.8, output: 4 },
  { model: /haiku-3|3-haiku/, label: "Claude Haiku 3", input: 0.25, output: 1.25 },
];

/** Cache reads and (five-minute) cache writes, as multiples of the input price. */
const CACHE_READ = 0.1;
const CACHE_WRITE = 1.25;

/** A call's estimated price in dollars; undefined when it cannot be known. */
export function callCost(c: ModelCall): number | undefined {
  if (c.provider === "ollama") return 0;
  const price = CLAUDE_PRICES.find((p) => p.model.test(c.model.toLowerCase()));
  if (!price || c.inTokens === undefined || c.outTokens === undefined) return undefined;
  const read = c.cacheReadTokens ?? 0;
  const write = c.cacheWriteTokens ?? 0;
  const plain = Math.max(0, c.inTokens - read - write);
  return (plain * price.input + read * price.input * CACHE_READ + write * price.input * CACHE_WRITE + c.outTokens * price.output) / 1e6;
}

/** The calls of one day (`YYYY-MM-DD`) or month (`YYYY-MM`), added up. */
export interface CostRow {
  period: string;
  calls: number;
  /** Calls that failed or timed out (counted in `calls`: they were made). */
  failed: number;
  inTokens: number;
  outTokens: number;
  /** Calls whose provider gave no token counts: their characters. */
  charsOnly: number;
  /** Dollars of the calls that could be priced. */
  usd: number;
  /** Calls that could not be priced (a claude model not in the table, or no token counts). */
  unpriced: number;
  /** What `claude -p` itself reported the calls cost (its `total_cost_usd`), over the calls that reported one. */
  reportedUsd: number;
  reportedCalls: number;
  /** Calls by purpose. */
  purposes: Record<string, number>;
}

export interface CostReport {
  pricesAsOf: string;
  days: CostRow[];
  months: CostRow[];
  total: CostRow;
}

const pad = (n: number) => String(n).padStart(2, "0");

function emptyRow(period: string): CostRow {
  return { period, calls: 0, failed: 0, inTokens: 0, outTokens: 0, charsOnly: 0, usd: 0, unpriced: 0, reportedUsd: 0, reportedCalls: 0, purposes: {} };
}

function add(row: CostRow, c: ModelCall): void {
  row.calls++;
  if (c.outcome !== "ok") row.failed++;
  if (c.inTokens === undefined && c.outTokens === undefined) row.charsOnly += c.inChars + c.outChars;
  row.inTokens += c.inTokens ?? 0;
  row.outTokens += c.outTokens ?? 0;
  const usd = callCost(c);
  if (usd === undefined) row.unpriced++;
  else row.usd += usd;
  if (c.reportedUsd !== undefined) {
    row.reportedUsd += c.reportedUsd;
    row.reportedCalls++;
  }
  row.purposes[c.purpose] = (row.purposes[c.purpose] ?? 0) + 1;
}

/** The ledger per local day and month, newest first. */
export function costReport(calls: ModelCall[]): CostReport {
  const days = new Map<string, CostRow>();
  const months = new Map<string, CostRow>();
  const total = emptyRow("all");
  for (const c of calls) {
    const d = new Date(c.at);
    if (Number.isNaN(d.getTime())) continue;
    const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    const month = day.slice(0, 7);
    if (!days.has(day)) days.set(day, emptyRow(day));
    if (!months.has(month)) months.set(month, emptyRow(month));
    add(days.get(day)!, c);
    add(months.get(month)!, c);
    add(total, c);
  }
  const newest = (a: CostRow, b: CostRow) => b.period.localeCompare(a.period);
  return { pricesAsOf: PRICES_AS_OF, days: [...days.values()].sort(newest), months: [...months.values()].sort(newest), total };
}

/** `$0.0123`, `<$0.0001`, `$1.50`. */
export function dollars(usd: number): string {
  return usd === 0 ? "$0" : usd < 0.0001 ? "<$0.0001" : `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** `$0.0123`, `<$0.0001`, or `unknown`; with unpriced calls beside priced ones, `$0.01 + 3 unpriced`. */
export function formatUsd(row: Pick<CostRow, "usd" | "unpriced" | "calls">): string {
  if (row.calls > 0 && row.unpriced === row.calls) return "unknown";
  const usd = dollars(row.usd);
  return row.unpriced ? `${usd} + ${row.unpriced} unpriced` : usd;
}

/** What claude said the calls cost: `$0.0123`, `$0.0123 (3 of 4 calls)`, or "" when no call reported one. */
export function formatReported(row: Pick<CostRow, "reportedUsd" | "reportedCalls" | "calls">): string {
  if (!row.reportedCalls) return "";
  return row.reportedCalls === row.calls ? dollars(row.reportedUsd) : `${dollars(row.reportedUsd)} (${row.reportedCalls} of ${row.calls} calls)`;
}
