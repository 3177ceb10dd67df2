/**
 * The standard streams without Node's stream objects. In the compiled binary the first touch of
 * `process.stdin`, `process.stdout` or `process.stderr` builds Node's stream machinery, which cost
 * a program that does nothing else 6 to 16 ms (figures: docs/BENCHMARKS.md), as much as a warm
 * search's own work. So results and notices are written to the descriptor, a terminal is told by
 * the descriptor's device, and a hook's input is read through Bun's native stdin stream. Used by
 * the hooks and the commands only: the core itself never prints.
 */
import { fstatSync, writeSync } from "node:fs";
import { errCode } from "./errors.ts";

export function writeOut(text: string): void {
  writeAll(1, text);
}

export function writeErr(text: string): void {
  writeAll(2, text);
}

/** A descriptor opened non-blocking by the parent is full while its reader lags: wait this long and try again. */
const FULL_PIPE_WAIT_MS = 1;

function writeAll(fd: 1 | 2, text: string): void {
  // A Windows console wants libuv's console writes (its code page, its escape handling).
  if (process.platform === "win32") {
    (fd === 1 ? process.stdout : process.stderr).write(text);
    return;
  }
  const bytes = Buffer.from(text, "utf8");
  let at = 0;
  while (at < bytes.length) {
    try {
      at += writeSync(fd, bytes, at, bytes.length - at);
    } catch (e) {
      const code = errCode(e);
      if (code === "EAGAIN") {
        Bun.sleepSync(FULL_PIPE_WAIT_MS);
        continue;
      }
      // The reader is gone (`memsearch … | head`) or there is no such stream: nobody is left to tell.
      if (code === "EPIPE" || code === "EBADF") return;
      throw e;
    }
  }
}

/** Linux's memory devices (/dev/null, zero, full, random, urandom, kmsg…): character devices, never terminals. */
const MEMORY_DEVICES = 1;

/**
 * Whether the descriptor is a terminal. On Linux a terminal is a character device that is not one
 * of the memory devices, the only other ones a program's streams are commonly tied to (node:tty
 * would load Node's stream machinery to say so); other systems ask node:tty.
 */
export function isTerminal(fd: 0 | 1 | 2): boolean {
  try {
    if (process.platform !== "linux") return (require("node:tty") as typeof import("node:tty")).isatty(fd);
    const st = fstatSync(fd);
    return st.isCharacterDevice() && ((st.rdev >> 8) & 0xfff) !== MEMORY_DEVICES;
  } catch {
    return false;
  }
}

export interface StdinRead {
  bytes: Uint8Array;
  /** More than `limit` bytes came; `bytes` holds none of them. */
  tooLarge: boolean;
  /** The stream had not ended after `timeoutMs`; `bytes` holds what came before. */
  timedOut: boolean;
}

/** Standard input to its end, at most `limit` bytes, waiting no longer than `timeoutMs` (a stdin nobody closes). */
export async function readStdin(limit: number, timeoutMs: number): Promise<StdinRead> {
  const reader = Bun.stdin.stream().getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: Timer | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), deadline]).catch(() => ({ done: true as const, value: undefined }));
      if (next === "timeout") {
        void reader.cancel().catch(() => {});
        return { bytes: Buffer.concat(chunks, size), tooLarge: false, timedOut: true };
      }
      if (next.done) return { bytes: Buffer.concat(chunks, size), tooLarge: false, timedOut: false };
      size += next.value.length;
      if (size > limit) {
        void reader.cancel().catch(() => {});
        return { bytes: new Uint8Array(0), tooLarge: true, timedOut: false };
      }
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
}
