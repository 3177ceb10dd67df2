/**
 * What redaction costs (`sanitize`: control characters, <private> blocks, every secret rule), in
 * process, on the texts it meets: every message of the real transcript fixtures one by one (most
 * are short), the same text as one block, a 1 MiB server log, and 1 MiB of source code. The
 * baseline is one native scan of the same text (`indexOf` of a string it does not hold), so the
 * ratio holds from one machine to another. Best of several rounds: the machine is shared.
 *
 *   bun scripts/bench/redact.ts
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { sanitize } from "../../src/core/redact.ts";
import { realTranscripts } from "../../test/helpers/fixtures.ts";

const REPO = resolve(import.meta.dir, "../..");
const ROUNDS = 15;

export interface RedactRow {
  name: string;
  texts: number;
  kib: number;
  /** Best round: all the texts once. */
  ms: number;
  /** The same texts scanned once each by `indexOf`. */
  baselineMs: number;
}

/** Every string of a message's content in the real transcripts: prompts, replies, tool inputs and outputs. */
function transcriptTexts(): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      if (v.length > 0) out.push(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) if (k !== "signature" && k !== "data") walk(x);
  };
  for (const file of realTranscripts()) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      try {
        walk((JSON.parse(line) as { message?: { content?: unknown } }).message?.content);
      } catch {}
    }
  }
  return out;
}

function best(texts: string[], f: (s: string) => unknown): number {
  let min = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (const t of texts) f(t);
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

export function benchRedact(): RedactRow[] {
  const messages = transcriptTexts();
  const logLine = "2026-11-26T10:00:00.123Z INFO http request id=123e4567-e89b-12d3-a456-426614174000 method=GET path=/api/v1/users/42 status=200 bytes=5120 in 12ms\n";
  const log = logLine.repeat(Math.ceil((1 << 20) / logLine.length));
  const src = readFileSync(resolve(REPO, "src/core/redact.ts"), "utf8") + readFileSync(resolve(REPO, "src/index/store.ts"), "utf8");
  const code = src.repeat(Math.ceil((1 << 20) / src.length));
  const cases: [string, string[]][] = [
    ["real transcript messages, one by one", messages],
    ["the same, as one text", [messages.join("\n")]],
    ["server log, 1 MiB", [log]],
    ["source code, 1 MiB", [code]],
  ];
  const absent = "\u0001no such text\u0002";
  return cases.map(([name, texts]) => ({
    name,
    texts: texts.length,
    kib: texts.reduce((n, t) => n + t.length, 0) / 1024,
    ms: best(texts, sanitize),
    baselineMs: best(texts, (t) => t.indexOf(absent)),
  }));
}

if (import.meta.main) {
  for (const r of benchRedact()) console.log(`${r.name}: ${r.texts} texts, ${r.kib.toFixed(0)} KiB: ${r.ms.toFixed(2)} ms (one native scan: ${r.baselineMs.toFixed(2)} ms)`);
}
