/**
 * An Ollama double in a process of its own, so serving embeddings does not share the caller's
 * event loop: the test double (test/helpers/ollama-double.ts, a hashed bag of words) by default, or
 * another script that serves through the same server and prints its address first (the GloVe
 * double, scripts/eval/glove.ts; the Universal Sentence Encoder double, scripts/eval/use.ts). Used by
 * the benchmark and the evaluation.
 */
import { join } from "node:path";

export interface DoubleProcess {
  host: string;
  stop: () => Promise<void>;
}

export const TEST_DOUBLE_SCRIPT = join(import.meta.dir, "..", "..", "test", "helpers", "ollama-double.ts");

export async function startDoubleProcess(bun: string, dim = 768, script = TEST_DOUBLE_SCRIPT, args: string[] = ["--dim", String(dim)]): Promise<DoubleProcess> {
  const proc = Bun.spawn([bun, script, "--port", "0", ...args], { stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the Ollama double (${script}) exited before printing its address`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    host: text.trim(),
    stop: async () => {
      proc.kill();
      await proc.exited;
    },
  };
}
