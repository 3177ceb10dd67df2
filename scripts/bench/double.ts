/**
 * The Ollama test double (test/helpers/ollama-double.ts) in a process of its own, so serving
 * embeddings does not share the caller's event loop. Used by the benchmark and the evaluation.
 */
import { join } from "node:path";

export interface DoubleProcess {
  host: string;
  stop: () => Promise<void>;
}

export async function startDoubleProcess(bun: string, dim = 768): Promise<DoubleProcess> {
  const script = join(import.meta.dir, "..", "..", "test", "helpers", "ollama-double.ts");
  const proc = Bun.spawn([bun, script, "--port", "0", "--dim", String(dim)], { stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the Ollama double exited before printing its address");
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
