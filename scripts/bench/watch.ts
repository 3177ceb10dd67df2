/**
 * The warm process as the benchmark drives it: `memsearch watch` started as a child in the
 * project, timed until it says it is watching, asked over its socket (the product's one-JSON-
 * line protocol) to finish pending re-index work, and its peak RSS read before it stops.
 */
import { askWatch } from "../../src/watch/client.ts";
import type { WatchRequest } from "../../src/watch/protocol.ts";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { residentKiB, vmHwmKiB } from "./proc.ts";

const READY = /Watching \d+ path/;

/** `p`, or `fallback` after `ms`; the timer is cleared so it cannot hold the benchmark open. */
function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export class WatchProcess {
  private proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
  private output = "";
  /** Spawn → "Watching…" printed: the initial load of the index plus a no-op re-index. */
  readyMs = NaN;

  constructor(
    private bin: string,
    private root: string,
    private env: Record<string, string>,
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(timeoutMs: number): Promise<void> {
    const t = performance.now();
    this.proc = Bun.spawn([this.bin, "watch"], { cwd: this.root, env: this.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    void this.drain(this.proc.stderr);
    const ready = this.drain(this.proc.stdout, READY);
    const exited = this.proc.exited.then(() => false);
    if (!(await within(Promise.race([ready, exited]), timeoutMs, false))) {
      this.kill();
      throw new Error(`memsearch watch did not become ready: ${this.output.trim().slice(-300)}`);
    }
    this.readyMs = performance.now() - t;
  }

  /** Keep reading (a full pipe would block the child); resolves true once `until` has been seen. */
  private drain(stream: ReadableStream<Uint8Array>, until?: RegExp): Promise<boolean> {
    return new Promise((resolve) => {
      const dec = new TextDecoder();
      void (async () => {
        for await (const chunk of stream) {
          this.output += dec.decode(chunk, { stream: true });
          if (until && until.test(this.output)) resolve(true);
        }
        resolve(false);
      })();
    });
  }

  /** One request over the watch's socket (the product's own client); undefined when it does not answer in time. */
  ask<R extends WatchRequest>(req: R, timeoutMs = 600_000): ReturnType<typeof askWatch<R>> {
    return askWatch(join(this.root, ".memsearch"), req, timeoutMs);
  }

  /** Peak RSS so far, MiB (the warm process lives on, so GNU time cannot report it). */
  peakRssMiB(): number | undefined {
    const kib = this.proc ? vmHwmKiB(this.proc.pid) : undefined;
    return kib === undefined ? undefined : kib / 1024;
  }

  /** Resident now, MiB: in all, private, and file pages (shared with every process mapping the same files). */
  residentMiB(): { rss: number; anon: number; file: number } | undefined {
    const kib = this.proc ? residentKiB(this.proc.pid) : undefined;
    return kib && { rss: kib.rss / 1024, anon: kib.anon / 1024, file: kib.file / 1024 };
  }

  /** Wait for the process to leave (SessionEnd asks it to); kill it if it does not. */
  async waitExit(timeoutMs: number): Promise<boolean> {
    if (!this.proc) return true;
    const left = await within(this.proc.exited.then(() => true), timeoutMs, false);
    if (!left) this.kill();
    return left;
  }

  /** If the process has died: its exit code and last output, for the report. */
  exitNote(): string {
    if (!this.proc || this.proc.exitCode === null) return "";
    return ` (watch exited with ${this.proc.exitCode ?? this.proc.signalCode}: ${this.output.trim().split("\n").slice(-3).join(" / ").slice(0, 300)})`;
  }

  kill(): void {
    if (this.proc && this.proc.exitCode === null) this.proc.kill(9);
  }
}
