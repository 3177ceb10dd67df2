/** The Memory Hub as a user starts it (`memsearch hub --no-open`), for the hub's e2e tests. */
import { BIN } from "./cli.ts";

export interface Hub {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  port: number;
  token: string;
}

/** Start the hub in `cwd` with `env` over this process's, and wait for the address it prints. */
export async function startHub(cwd: string, env: Record<string, string | undefined>, args: string[] = []): Promise<Hub> {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) e[k] = v;
  const proc = Bun.spawn([BIN, "hub", "--no-open", ...args], { cwd, env: e, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 20_000;
  while (!/Memory Hub: (\S+)\n/.test(out)) {
    if (Date.now() > deadline) throw new Error(`hub printed no address: ${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`hub exited: ${out} ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = /Memory Hub: (\S+)\n/.exec(out)![1]!;
  const u = new URL(url);
  return { proc, url, port: Number(u.port), token: u.searchParams.get("token")! };
}
