/**
 * The thread that reads OpenCode's database for the hub and the watch process (off-thread.ts): a
 * large database, or a slow disk, costs this thread's time, never their answers to requests.
 * Built as an entry point of its own (scripts/build.ts).
 */
import { listSessions, readSession } from "./sessions.ts";

declare const self: Worker;

self.onmessage = async (e: MessageEvent) => {
  const { id, op, env, path, root } = e.data as { id: number; op: "list" | "read"; env: NodeJS.ProcessEnv; path?: string; root?: string };
  try {
    const value = op === "list" ? listSessions(env, root) : await readSession(path ?? "", env);
    self.postMessage({ id, value });
  } catch (err) {
    self.postMessage({ id, error: (err as Error)?.message ?? String(err) });
  }
};
