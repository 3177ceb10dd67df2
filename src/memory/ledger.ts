/**
 * The model-call ledger, `.memsearch/model-calls.jsonl`: one line per call memsearch makes to a
 * model (a turn's summary, `import --summarizer`, `recall`'s answer, the prompt hook's synthesis),
 * with who answered, how much went in and out (tokens when the provider says, characters always),
 * how long it took and how it ended. `memsearch stats` and the hub add it up per day and month, and
 * price claude's calls from the table in prices.ts.
 *
 * Writing it is one append of one line, link-safe, never fsynced (not a commit point); a ledger
 * that cannot be written never fails the call. Bounded as the injection log is: past
 * LEDGER_MAX_BYTES it becomes `model-calls.1.jsonl` and a new one starts. Read back line by line
 * against its schema: the file lives in the project, its bytes are not trusted. Only lines this
 * machine wrote are counted (each carries this machine's mark, core/machine-mark.ts): a committed
 * ledger cannot show costs nobody here spent. Each part is read from its last LEDGER_MAX_BYTES only.
 */
import * as v from "valibot";
import { appendBounded, readOwnTail } from "../core/fsutil.ts";
import { machineKey, markLine, unmarkLine } from "../core/machine-mark.ts";
import { parseJson } from "../core/json-file.ts";
import { dataFiles, makeDataDir } from "../core/project.ts";
import { redactedJsonLine } from "../core/redact.ts";

export const LEDGER_MAX_BYTES = 1024 * 1024;

const Count = v.pipe(v.number(), v.finite(), v.minValue(0));

/** Why the call was made. */
export const PURPOSES = ["summary", "import", "recall", "synthesize"] as const;
export type CallPurpose = (typeof PURPOSES)[number];

export const ModelCallSchema = v.object({
  v: v.literal(1),
  /** When the call ended (ISO). */
  at: v.pipe(v.string(), v.maxLength(40)),
  provider: v.picklist(["claude", "ollama"]),
  model: v.pipe(v.string(), v.maxLength(200)),
  purpose: v.picklist(PURPOSES),
  inChars: Count,
  outChars: Count,
  /** As the provider reported them; absent when it did not. Input tokens include cached ones. */
  inTokens: v.optional(Count),
  outTokens: v.optional(Count),
  cacheReadTokens: v.optional(Count),
  cacheWriteTokens: v.optional(Count),
  /** claude's own figure for the call, when it gives one. */
  reportedUsd: v.optional(Count),
  ms: Count,
  outcome: v.picklist(["ok", "failed", "timeout"]),
});

export type ModelCall = v.InferOutput<typeof ModelCallSchema>;

/** Where a caller wants its model calls recorded: the project's data folder, and why it calls. */
export interface LedgerTarget {
  dataDir: string;
  purpose: CallPurpose;
}

/** Append one call. Never throws: the ledger is an account, not a reason for a call to fail. */
export function recordModelCall(dataDir: string, call: ModelCall): void {
  try {
    const files = dataFiles(dataDir);
    makeDataDir(dataDir);
    appendBounded(files.modelLedger, files.modelLedgerOld, markLine(redactedJsonLine(call)), LEDGER_MAX_BYTES);
  } catch {}
}

/** The calls this machine recorded, oldest first, and how many other lines looked like calls (not counted). */
export function readModelLedger(dataDir: string, env = process.env): { calls: ModelCall[]; notOurs: number } {
  const files = dataFiles(dataDir);
  const key = machineKey(env);
  const calls: ModelCall[] = [];
  let notOurs = 0;
  for (const file of [files.modelLedgerOld, files.modelLedger]) {
    for (const line of (readOwnTail(file, LEDGER_MAX_BYTES) ?? "").split("\n")) {
      if (!line) continue;
      const ours = unmarkLine(line, key);
      const r = parseJson(ours ?? line, ModelCallSchema);
      if (!("value" in r)) continue;
      if (ours === undefined) notOurs++;
      else calls.push(r.value);
    }
  }
  return { calls, notOurs };
}

/** The calls of both parts of the ledger this machine recorded, oldest first. */
export function readModelCalls(dataDir: string, env = process.env): ModelCall[] {
  return readModelLedger(dataDir, env).calls;
}
