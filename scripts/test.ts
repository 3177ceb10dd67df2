/**
 * The test command: builds the binary the e2e tests drive (MEMSEARCH_BIN, else dist/memsearch),
 * installs the pinned agents' CLIs the real-client suites drive into `.cache/agents/` when they
 * are not there yet (scripts/agents.ts: they are not dev dependencies, so `npm ci` stays small),
 * makes sure the browser the Memory Hub's page tests drive is there, runs `bun test` in a random
 * order, and ends with the `N passed, N failed` line CI reads (bun's own summary is not recognised).
 *
 * Every run shuffles the tests, so one that leans on another's leftovers fails sooner or later;
 * the seed is printed, and MEMSEARCH_TEST_SEED=<seed> replays that order.
 *
 * The tests and every process they start write their temp folders into one folder of this run
 * (TMPDIR), removed when the run passes: a test that forgets its own leaves nothing behind. A failed
 * run keeps it, and says where.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAgents } from "./agents.ts";
import { build } from "./build.ts";
import { ensureChromium } from "./chromium.ts";

const seedText = process.env.MEMSEARCH_TEST_SEED?.trim();
if (seedText && !/^\d+$/.test(seedText)) {
  console.error(`MEMSEARCH_TEST_SEED must be a whole number, not ${JSON.stringify(seedText)}`);
  process.exit(2);
}
const seed = seedText ? Number(seedText) : crypto.getRandomValues(new Uint32Array(1))[0]!;
const replay = `test order seed ${seed} (MEMSEARCH_TEST_SEED=${seed} replays it)`;

await build(process.env.MEMSEARCH_BIN || undefined);
// A failed install is said here; the suites that need a missing CLI then fail naming it.
const agentsProblem = ensureAgents();
if (agentsProblem) console.error(agentsProblem);
ensureChromium();
console.log(replay);
const runTmp = mkdtempSync(join(tmpdir(), "memsearch-tests-"));
const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", "--randomize", `--seed=${seed}`, ...process.argv.slice(2)], {
  stdout: "pipe",
  stderr: "pipe",
  env: { ...process.env, FORCE_COLOR: "0", TMPDIR: runTmp },
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
if (failed === 0) rmSync(runTmp, { recursive: true, force: true });
else console.log(`the run's temp folders are kept in ${runTmp}`);
console.log(replay);
console.log(`${passed} passed, ${failed} failed`);
process.exit(code === 0 && failed === 0 ? 0 : 1);

