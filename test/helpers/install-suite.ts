/**
 * What the `memsearch install <agent>` suites share: a fresh temp project (and HOME) per test,
 * removed after the file's tests, and the agent's line of `memsearch doctor -j`.
 */
import { afterAll } from "bun:test";
import { rmSync } from "node:fs";
import { tempProject, type Project } from "./cli.ts";

/** A maker of temp projects, each removed once the calling file's tests are done. */
export function projectsRemovedAfterAll(): () => Project {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const p = tempProject({ notes: "none" });
    dirs.push(p.root, p.home);
    return p;
  };
}

/** The agent's check in `memsearch doctor -j`. */
export async function doctorCheck(ms: (a: string[]) => Promise<{ stdout: string }>, agent: string): Promise<any> {
  return JSON.parse((await ms(["doctor", "-j"])).stdout).find((c: { name: string }) => c.name === agent);
}
