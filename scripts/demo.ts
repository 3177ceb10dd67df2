/**
 * `npm run demo`: the product in a minute, in a throwaway project and home (removed at the end, so
 * nothing of yours is read or written): a Claude Code turn goes through memsearch's hooks and
 * becomes a note, then `search` finds it, `recall` brings notes and the conversation together and
 * drills down to the note and the original turn, and the way to the Memory Hub is printed. It says
 * what it saw of Ollama (semantic search when it answers, keywords alone otherwise).
 *
 *   bun scripts/demo.ts        (MEMSEARCH_BIN=<binary> uses that binary instead of building one)
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { projectSlug } from "../src/agents/claude/files.ts";
import { build } from "./build.ts";

const ROOT = resolve(import.meta.dir, "..");
const bin = process.env.MEMSEARCH_BIN ? resolve(process.env.MEMSEARCH_BIN) : await build();
const tmp = mkdtempSync(join(tmpdir(), "memsearch-demo-"));
const cleanup = () => rmSync(tmp, { recursive: true, force: true });
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));

const home = join(tmp, "home");
const project = join(tmp, "shop");
mkdirSync(join(project, ".git"), { recursive: true });
mkdirSync(home);
// The project already has two days of notes (sample/memory), as after a few sessions.
const memory = join(project, ".memsearch", "memory");
mkdirSync(memory, { recursive: true });
for (const f of readdirSync(join(ROOT, "sample", "memory"))) writeFileSync(join(memory, f), readFileSync(join(ROOT, "sample", "memory", f)));

const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MEMSEARCH_|CLAUDE)/.test(k)) env[k] = v;
Object.assign(env, {
  HOME: home,
  MEMSEARCH_HOME: join(home, ".memsearch"),
  // A demo leaves no process behind, and calls no model: notes come from the plain extract.
  MEMSEARCH_NO_WATCH: "1",
  MEMSEARCH_SUMMARIZER_PROVIDER: "extract",
  NO_COLOR: "1",
});

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const say = (s = "") => console.log(s);
const indent = (s: string) => s.replace(/\n+$/, "").replace(/^/gm, "    ");

async function ms(args: string[], stdin?: string): Promise<{ code: number; out: string; ms: number }> {
  const t0 = performance.now();
  const p = Bun.spawn([bin, ...args], { cwd: project, env, stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: out + err, ms: performance.now() - t0 };
}

async function show(args: string[], note?: string): Promise<string> {
  say(`\n  $ memsearch ${args.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ")}${note ? `    # ${note}` : ""}`);
  const r = await ms(args);
  say(indent(r.out));
  if (r.code !== 0) throw new Error(`memsearch ${args[0]} exited with ${r.code}`);
  return r.out;
}

// --- 1. a turn, as Claude Code writes it and runs the hooks --------------------------------------
const session = "5e55a0de-2c4f-4d1a-9b7e-0c1d2e3f4a5b";
const promptId = "9f1c2d3e-demo-4b5a-8c7d-6e5f4a3b2c1d";
const transcriptDir = join(home, ".claude", "projects", projectSlug(project));
mkdirSync(transcriptDir, { recursive: true });
const transcript = join(transcriptDir, `${session}.jsonl`);
const prompt = "The nightly export job dies with ENOSPC. Where does it write its temp files?";
const reply = "It wrote them to /tmp, a 512 MB tmpfs on the build hosts. I moved them to /var/cache/export in jobs/export.ts; the nightly export now finishes in 4 minutes.";
const now = new Date().toISOString();
const line = (x: object) => JSON.stringify({ sessionId: session, cwd: project, isSidechain: false, timestamp: now, ...x }) + "\n";
writeFileSync(
  transcript,
  line({ type: "user", uuid: "d1e2m3o4-0000-4000-8000-000000000001", promptId, message: { role: "user", content: prompt } }) +
    line({ type: "assistant", uuid: "d1e2m3o4-0000-4000-8000-000000000002", message: { id: "msg_demo", role: "assistant", content: [{ type: "text", text: reply }] } }),
);
const hookInput = (event: string, extra: object) => JSON.stringify({ session_id: session, prompt_id: promptId, transcript_path: transcript, cwd: project, hook_event_name: event, ...extra });

say(bold("memsearch demo") + ` (memsearch ${(await ms(["--version"])).out.trim().replace(/^memsearch, version /, "")}, in ${tmp}: removed at the end)`);
say(`\n${bold("1. A turn is captured.")} A Claude Code session in the project "shop" asks:`);
say(`    "${prompt}"\n  and Claude answers:\n    "${reply}"`);
say("  Claude Code runs memsearch's hooks with the turn as JSON on stdin:");
const ups = await ms(["hook", "user-prompt-submit"], hookInput("UserPromptSubmit", { prompt }));
say(`\n  $ memsearch hook user-prompt-submit < {…"prompt": …}    # exit ${ups.code}, ${ups.ms.toFixed(0)} ms: records the prompt, looks for memories to add`);
const stop = await ms(["hook", "stop"], hookInput("Stop", { last_assistant_message: reply, stop_hook_active: false }));
say(`  $ memsearch hook stop < {…"last_assistant_message": …}   # exit ${stop.code}, ${stop.ms.toFixed(0)} ms: the turn is queued on disk, a background writer takes it`);
if (ups.code !== 0 || stop.code !== 0) throw new Error("a hook failed");

// The background writer (it outlives Claude Code) writes the note; wait for it.
let noteFile: string | undefined;
for (let i = 0; i < 300 && !noteFile; i++) {
  noteFile = readdirSync(memory).find((f) => readFileSync(join(memory, f), "utf8").includes("ENOSPC"));
  if (!noteFile) await Bun.sleep(50);
}
const pending = join(project, ".memsearch", "pending");
for (let i = 0; i < 100 && existsSync(pending) && readdirSync(pending).some((f) => f.endsWith(".json")); i++) await Bun.sleep(50);
if (!noteFile) throw new Error("the turn's note was not written");
const section = readFileSync(join(memory, noteFile), "utf8").split(/\n(?=### )/).find((s) => s.includes("ENOSPC"))!;
say(`\n  The note, in .memsearch/memory/${noteFile} (today's file; plain markdown you may edit or commit):`);
say(indent(section.split("\n").filter((l) => !l.startsWith("<!--")).join("\n")));
say("    (plus one comment line that ties it to the conversation: session, turn and transcript)");

// --- 2. search ------------------------------------------------------------------------------------
say(`\n${bold("2. Search")} finds it among the project's notes:`);
const found = await show(["search", "why did the nightly export fail", "--top-k", "2"]);
const hybrid = /^Search mode: hybrid/m.test(found);

// --- 3. recall and its drill-down ----------------------------------------------------------------
say(`\n${bold("3. Recall")} searches the notes and the past conversations together; each result says how to open it:`);
const recalled = await show(["recall", "--raw", "nightly export ENOSPC", "--limit", "1"], "--raw: the results, no model");
const expand = /memsearch expand (\S+)/.exec(recalled)?.[1];
const turn = /memsearch transcript (\S+) --turn (\S+)/.exec(recalled);
if (!expand || !turn) throw new Error("recall gave no drill-down");
say("\n  The drill-down, from the note to the original turn:");
await show(["expand", expand], "the whole note");
await show(["transcript", turn[1]!, "--turn", turn[2]!, "--context", "0"], "the conversation it came from");

// --- 4. what Ollama did, and the hub -------------------------------------------------------------
const checks = (await ms(["doctor", "-j"])).out;
const ollama = (JSON.parse(checks.slice(checks.indexOf("["))) as { name: string; detail: string }[]).find((c) => c.name === "ollama");
say(`\n${bold("4. What this machine has.")}`);
if (hybrid) say(`  Ollama answered (${ollama?.detail ?? "embeddings on"}): search ranked by keywords and by meaning (vectors).`);
else say(`  Search ran on keywords (BM25) alone: ${ollama?.detail ?? "no embeddings"}. With Ollama and \`ollama pull nomic-embed-text\`, it also ranks by meaning.`);
say("  The notes were written by the plain extract summariser here (no model called); with Claude Code installed the default is `claude -p --model haiku`.");
say(`\n  Your own memory in the browser: ${bold("memsearch hub")} (in one of your projects, after \`memsearch install claude\` or \`memsearch import\`).`);
say("  Install: npm install -g memsearch (README, \"Try it\").");
