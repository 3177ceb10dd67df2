import { afterAll } from "bun:test";

/** A process certainly alive for the whole test file (killed after it), to own a PID a test names. */
export function liveSleeper(): Bun.Subprocess {
  const sleeper = Bun.spawn(["sleep", "300"], { stdout: "ignore", stderr: "ignore" });
  afterAll(() => sleeper.kill(9));
  return sleeper;
}

/** The PID of a process that has certainly exited. */
export async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"], { stdout: "ignore", stderr: "ignore" });
  await p.exited;
  return p.pid;
}
