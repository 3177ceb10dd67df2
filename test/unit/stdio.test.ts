/**
 * The standard streams without Node's stream objects (src/core/stdio.ts): every byte reaches a
 * slow reader, a reader that leaves early ends nothing but the writing, a terminal is told from a
 * pipe, a file and the memory devices, and a hook's input is read whole, refused past its limit,
 * and given up on when it never ends.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const STDIO = join(import.meta.dir, "..", "..", "src", "core", "stdio.ts");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A bun process running `body` with the module's exports in scope. */
function script(body: string): string[] {
  return [process.execPath, "-e", `const { writeOut, writeErr, isTerminal, readStdin } = await import(${JSON.stringify(STDIO)});\n${body}`];
}

const MIB = 1024 * 1024;

describe("writing", () => {
  test("4 MiB reach a reader that takes its time, whole and in order (the writes wait on the pipe)", async () => {
    const p = Bun.spawn(script(`for (let i = 0; i < 64; i++) writeOut(String(i % 10).repeat(65536));`), { stdout: "pipe", stderr: "pipe" });
    await Bun.sleep(200);
    const out = Buffer.from(await new Response(p.stdout).arrayBuffer());
    expect(await p.exited).toBe(0);
    expect(out.length).toBe(4 * MIB);
    for (let i = 0; i < 64; i++) expect(out[i * 65536]).toBe(48 + (i % 10));
  });

  test("a reader that leaves early (`| head`) ends the writing quietly, and the process goes on", async () => {
    const p = Bun.spawn(script(`writeOut("y".repeat(${4 * MIB})); writeErr("done\\n");`), { stdout: "pipe", stderr: "pipe" });
    const r = p.stdout.getReader();
    await r.read();
    await r.cancel();
    expect(await p.exited).toBe(0);
    expect(await new Response(p.stderr).text()).toBe("done\n");
  });
});

describe("a terminal", () => {
  test("a pseudo-terminal is one, on all three streams", async () => {
    let seen = "";
    const p = Bun.spawn(script(`writeOut(JSON.stringify([isTerminal(0), isTerminal(1), isTerminal(2)]));`), { terminal: { cols: 80, rows: 24, data: (_t, d) => void (seen += new TextDecoder().decode(d)) } });
    await p.exited;
    p.terminal!.close();
    expect(seen).toContain("[true,true,true]");
  });

  test("a memory device (/dev/zero, /dev/urandom) is no terminal, though a character device too", () => {
    const probe = script(`writeErr(JSON.stringify(isTerminal(0)));`);
    for (const dev of ["/dev/zero", "/dev/urandom"]) expect(Bun.spawnSync(probe, { stdin: Bun.file(dev), stdout: "pipe", stderr: "pipe" }).stderr.toString()).toBe("false");
  });

  test("is neither a pipe, nor a file, nor /dev/null", () => {
    const dir = mkdtempSync(join(tmpdir(), "ms-stdio-"));
    dirs.push(dir);
    const file = Bun.file(join(dir, "out"));
    const probe = script(`writeErr(JSON.stringify([isTerminal(0), isTerminal(1), isTerminal(2)]));`);
    const piped = Bun.spawnSync(probe, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    expect(JSON.parse(piped.stderr.toString())).toEqual([false, false, false]);
    // stdin from /dev/null, the one character device a program commonly gets instead of a terminal.
    const toFile = Bun.spawnSync(probe, { stdin: Bun.file("/dev/null"), stdout: file, stderr: "pipe" });
    expect(JSON.parse(toFile.stderr.toString())).toEqual([false, false, false]);
  });
});

describe("reading a hook's input", () => {
  test("whole, up to its end", () => {
    const input = JSON.stringify({ prompt: "é".repeat(100_000) });
    const p = Bun.spawnSync(script(`const r = await readStdin(${MIB}, 2000); writeErr(JSON.stringify({ n: r.bytes.length, tooLarge: r.tooLarge, timedOut: r.timedOut })); writeOut(new TextDecoder().decode(r.bytes));`), { stdin: new TextEncoder().encode(input) });
    expect(JSON.parse(p.stderr.toString())).toEqual({ n: Buffer.byteLength(input), tooLarge: false, timedOut: false });
    expect(p.stdout.toString()).toBe(input);
  });

  test("refused past its limit, with none of it kept", () => {
    const p = Bun.spawnSync(script(`const r = await readStdin(1000, 2000); writeOut(JSON.stringify({ n: r.bytes.length, tooLarge: r.tooLarge }));`), { stdin: new Uint8Array(5000).fill(65) });
    expect(JSON.parse(p.stdout.toString())).toEqual({ n: 0, tooLarge: true });
  });

  test("given up on when it never ends, with what came before", async () => {
    // No exit of its own: a reader left waiting would keep the process alive.
    const p = Bun.spawn(script(`const r = await readStdin(${MIB}, 300); writeOut(JSON.stringify({ text: new TextDecoder().decode(r.bytes), timedOut: r.timedOut }));`), { stdin: "pipe", stdout: "pipe" });
    p.stdin.write("{\"half\":");
    p.stdin.flush();
    const started = performance.now();
    expect(await p.exited).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(JSON.parse(await new Response(p.stdout).text())).toEqual({ text: "{\"half\":", timedOut: true });
    p.stdin.end();
  });
});
