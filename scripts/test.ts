/**
 * The test command: builds the binary the e2e tests drive, makes sure the browser the Memory
 * Hub's page tests drive is there, runs `bun test`, and ends with the `N passed, N failed` line
 * CI reads (bun's own summary is not recognised).
 */
import { build } from "./build.ts";
import { ensureChromium } from "./chromium.ts";

await build();
ensureChromium();
const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...process.argv.slice(2)], {
  stdout: "pipe",
  stderr: "pipe",
  env: { ...process.env, FORCE_COLOR: "0" },
});
let passed = 0;
let failed = 0;
async function pump(stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream): Promise<string> {
  let all = "";
  const dec = new TextDecoder();
  for await (const chunk of stream) {
    const s = dec.decode(chunk, { stream: true });
    all += s;
    sink.write(s);
  }
  return all;
}
const [out, err] = await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)]);
const code = await proc.exited;
// bun prints " N pass" / " N fail" in its summary (on stderr).
for (const text of [out, err]) {
  const p = /^\s*(\d+) pass$/m.exec(text);
  const f = /^\s*(\d+) fail$/m.exec(text);
  if (p) passed = Number(p[1]);
  if (f) failed = Number(f[1]);
}
if (code !== 0 && failed === 0) failed = 1; // a crash or load error is a failure, counted
console.log(`${passed} passed, ${failed} failed`);
process.exit(code === 0 && failed === 0 ? 0 : 1);

