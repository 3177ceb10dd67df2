/**
 * OpenCode's sessions read on a thread of their own (worker.ts), for the processes that answer
 * requests while they keep the conversation index: the hub and the watch process. Their event loop
 * stays free (the hub's /api/ping answers while a large database is read), and a read that takes
 * longer than its bound is given up: the caller gets an error (nothing is taken for gone) and the
 * thread is ended. Bun's SQLite cannot interrupt a query, so the thread ends once that query
 * returns; what bounds the query itself is its shape (session-key.ts: OpenCode's indexes, rows of a
 * bounded size). The replies are checked against their schema, as every socket reply is.
 */
import * as v from "valibot";
import type { TranscriptStamp, Turn } from "../../transcript/types.ts";

/** How long a listing or a session's read may take before it is given up. */
export const OFF_THREAD_MS = 60_000;

const Stamp = v.object({ path: v.string(), size: v.number(), mtime: v.number() });
const Call = v.object({ id: v.string(), name: v.string(), input: v.string(), output: v.optional(v.string()), isError: v.optional(v.boolean()), unpaired: v.optional(v.boolean()), outputChars: v.optional(v.number()) });
const Item = v.variant("kind", [
  v.object({ kind: v.literal("assistant"), text: v.string() }),
  v.object({ kind: v.literal("tool"), call: Call }),
  v.object({ kind: v.literal("user"), text: v.string() }),
  v.object({ kind: v.literal("compaction"), trigger: v.optional(v.string()), preTokens: v.optional(v.number()) }),
]);
const TurnSchema = v.object({
  index: v.number(),
  uuid: v.string(),
  timestamp: v.optional(v.string()),
  promptId: v.optional(v.string()),
  kind: v.picklist(["prompt", "command"]),
  userText: v.string(),
  assistantTexts: v.array(v.string()),
  tools: v.array(Call),
  items: v.array(Item),
  toolCount: v.number(),
  replied: v.optional(v.boolean()),
  line: v.number(),
  start: v.number(),
  end: v.number(),
});
const Session = v.object({ sessionId: v.string(), cwd: v.optional(v.string()), turns: v.array(TurnSchema) });
const Reply = v.object({ id: v.number(), value: v.optional(v.unknown()), error: v.optional(v.string()) });

/**
 * The worker's module. In the compiled binary it is an entry point of its own (scripts/build.ts),
 * named by its path under src/, the bundle's root; this module then lives in a chunk at that root.
 */
function workerEntry(): string {
  const compiled = import.meta.url.includes("/$bunfs/") || import.meta.url.includes("~BUN");
  return compiled ? "./agents/opencode/worker.ts" : new URL("./worker.ts", import.meta.url).href;
}

let worker: Worker | undefined;
let next = 0;
const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(workerEntry());
  // The thread never keeps its process alive (Bun's Worker has unref; the DOM's type, which Bun's follows, does not).
  (w as unknown as { unref(): void }).unref();
  w.onmessage = (e: MessageEvent) => {
    const r = v.safeParse(Reply, e.data);
    if (!r.success) return;
    const call = waiting.get(r.output.id);
    if (!call) return;
    waiting.delete(r.output.id);
    if (r.output.error !== undefined) call.reject(new Error(r.output.error));
    else call.resolve(r.output.value);
  };
  w.onerror = (e) => stop(new Error(`OpenCode's reader stopped: ${e.message}`));
  worker = w;
  return w;
}

/** The thread ends; every call waiting on it fails with `why`. */
function stop(why: Error): void {
  worker?.terminate();
  worker = undefined;
  for (const call of waiting.values()) call.reject(why);
  waiting.clear();
}

function ask(msg: { op: "list" | "read"; env: NodeJS.ProcessEnv; path?: string; root?: string }, ms: number): Promise<unknown> {
  const id = next++;
  const w = thread();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => stop(new Error(`OpenCode's database took longer than ${Math.round(ms / 1000)} s to read; its sessions are left as they were`)), ms);
    timer.unref?.();
    waiting.set(id, {
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
    // Only what can be cloned: the environment's strings.
    const env = Object.fromEntries(Object.entries(msg.env).filter((e): e is [string, string] => typeof e[1] === "string"));
    w.postMessage({ ...msg, env, id });
  });
}

/** listSessions (sessions.ts), on the thread. */
export async function listSessionsOffThread(env: NodeJS.ProcessEnv, root?: string, ms = OFF_THREAD_MS): Promise<TranscriptStamp[]> {
  const r = v.safeParse(v.array(Stamp), await ask({ op: "list", env, ...(root !== undefined ? { root } : {}) }, ms));
  if (!r.success) throw new Error("OpenCode's reader gave a listing of another shape");
  return r.output;
}

/** readSession (sessions.ts), on the thread. */
export async function readSessionOffThread(path: string, env: NodeJS.ProcessEnv, ms = OFF_THREAD_MS): Promise<{ sessionId: string; cwd?: string; turns: Turn[] }> {
  const r = v.safeParse(Session, await ask({ op: "read", env, path }, ms));
  if (!r.success) throw new Error(`OpenCode's reader gave a session of another shape (${path})`);
  return r.output;
}
