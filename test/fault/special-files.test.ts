/**
 * Special files named like transcripts (issue 20, defect 6): a FIFO, a socket, a device, a folder,
 * links to them, planted as `~/.claude/projects/<slug>/x.jsonl` or named by a hook's
 * `transcript_path` or a note's anchor. Nothing memsearch runs may wait on one: every command and
 * hook that reads transcripts is run with a hang detector against each kind, and must end with
 * its usual outcome (a hook: exit 0 and one JSON object; the CLI: its answer, or one line and a
 * non-zero exit when the file was named).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { faultKit, HANG_SLACK_MS, HOOK_BUDGET_MS, hookOutputProblem, ms, tracked, type Project } from "./helpers.ts";

const kit = faultKit("special-files");
const HANG_MS = 20_000;

interface Kind {
  name: string;
  /** Make it at `path`; a server to close afterwards for a socket. */
  make(path: string, p: Project): Server | void;
}

const KINDS: Kind[] = [
  { name: "fifo", make: (path) => void expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0) },
  { name: "socket", make: (path) => createServer().listen(path) },
  { name: "link-to-device", make: (path) => symlinkSync("/dev/zero", path) },
  { name: "folder", make: (path) => mkdirSync(path) },
  {
    name: "link-to-fifo-outside",
    make: (path, p) => {
      const fifo = join(p.root, "..", `${p.root.split("/").pop()}-outside.fifo`);
      expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
      symlinkSync(fifo, path);
    },
  },
];

/** A project whose Claude Code folder holds one real session and the special file `x.jsonl`. */
async function planted(kind: Kind): Promise<{ p: Project; special: string; server?: Server }> {
  const p = kit.project();
  const dir = join(p.home, ".claude", "projects", p.root.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(dir, { recursive: true });
  const turn = (uuid: string, type: string, message: unknown) => JSON.stringify({ type, uuid, sessionId: "real", cwd: p.root, timestamp: "2026-11-20T10:00:00Z", isSidechain: false, message }) + "\n";
  writeFileSync(join(dir, "real.jsonl"), turn("u1", "user", { role: "user", content: "how does the zebrafish cluster rotate keys" }) + turn("a1", "assistant", { id: "m1", role: "assistant", content: [{ type: "text", text: "Every seventeen days." }] }));
  const special = join(dir, "x.jsonl");
  const server = kind.make(special, p) ?? undefined;
  if (server) await new Promise((r) => server.once("listening", r));
  // A note of an earlier session anchored to it: the last-session line reads its first request.
  mkdirSync(p.memory, { recursive: true });
  writeFileSync(join(p.memory, "2026-11-20.md"), `# 2026-11-20\n\n### 10:00\n<!-- session:earlier turn:t1 transcript:${special} -->\n- User asked about the zebrafish cluster\n`);
  return { p, special, server };
}

describe("no command or hook waits on a special file named *.jsonl", () => {
  for (const kind of KINDS) {
    test(
      `${kind.name}: import, recall, transcript, SessionStart and Stop all end`,
      tracked(kit, async () => {
        const { p, special, server } = await planted(kind);
        kit.count("kinds");
        try {
          const cli = async (args: string[]) => {
            const r = await ms(args, { cwd: p.root, env: p.env, hangMs: HANG_MS });
            kit.count("runs");
            if (r.hung) kit.count("hangs");
            expect({ args, hung: r.hung }).toEqual({ args, hung: false });
            return r;
          };
          const imp = await cli(["import", "--dry-run"]);
          expect(imp.code).toBe(0);
          if (kind.name !== "folder") expect(imp.stderr).toContain(`skipped ${special}: `);
          const rec = await cli(["recall", "--raw", "-j", "zebrafish cluster keys"]);
          expect(rec.code).toBe(0);
          expect(JSON.parse(rec.stdout).transcripts.hits).toBeGreaterThan(0);
          const tx = await cli(["transcript", special]);
          expect(tx.code).not.toBe(0);
          expect(tx.stderr.trim().split("\n")).toHaveLength(1);
          const named = await cli(["transcript", "--any-file", special]);
          expect(named.code).not.toBe(0);
          expect(named.stderr.trim().split("\n")).toHaveLength(1);
          for (const [event, input] of [
            ["session-start", { session_id: "now", cwd: p.root, source: "startup", transcript_path: special }],
            ["stop", { session_id: "now", cwd: p.root, transcript_path: special, stop_hook_active: false }],
          ] as const) {
            const r = await ms(["hook", event], { cwd: p.root, env: { ...p.env, MEMSEARCH_NO_WATCH: "1" }, stdin: JSON.stringify(input), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
            kit.count("runs");
            if (r.hung) kit.count("hangs");
            expect({ event, problem: hookOutputProblem(r) }).toEqual({ event, problem: undefined });
          }
        } finally {
          server?.close();
        }
      }),
      120_000,
    );
  }
});
