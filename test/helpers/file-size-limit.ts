import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** A module of the repository by its path from the root, for `import` in a script run elsewhere. */
export const srcModule = (path: string) => JSON.stringify(resolve(import.meta.dir, "../..", path));

/**
 * Runs `script` (a module: top-level await, imports by absolute path) in a child bun whose files
 * cannot grow past `bytes` (`ulimit -f`, which counts 512-byte blocks). A write that crosses the
 * limit is cut short and the next one fails with EFBIG, as on a disk that fills up mid-write: a real
 * fault, with no fs function replaced. SIGXFSZ is ignored, so the process gets the error instead of
 * being killed. The script reports by printing one JSON value, which is returned.
 */
export async function withFileSizeLimit<T = unknown>(bytes: number, script: string): Promise<T> {
  if (bytes % 512 !== 0) throw new Error(`ulimit -f counts 512-byte blocks: ${bytes} is not a multiple of 512`);
  // The script is written before the limit applies; bun's transpiler cache is off so it writes nothing of its own.
  const dir = mkdtempSync(join(tmpdir(), "ms-fsize-"));
  const file = join(dir, "script.ts");
  writeFileSync(file, script);
  try {
    const proc = Bun.spawn(["sh", "-c", `trap '' XFSZ; ulimit -f ${bytes / 512}; exec "$0" "$@"`, process.execPath, file], {
      env: { ...process.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`the limited script exited ${code}: ${stderr}`);
    return JSON.parse(stdout) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
