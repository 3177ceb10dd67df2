/**
 * Redacted first, clipped afterwards: a secret that straddles a clip boundary (a tool input is
 * clipped to 500 chars by the reader and 300 by the conversation index, a tool output to 1,000 by
 * the reader and 2,000 by the conversation index) leaves no piece of itself in what the drainer
 * queues and summarises, in the conversation index, in what `memsearch import` summarises and
 * writes, nor in what the reader returns when asked to redact.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { agentOrDefault } from "../../src/agents/registry.ts";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveTurn } from "../../src/memory/capture.ts";
import { planImport, runImport } from "../../src/memory/import.ts";
import { sanitize } from "../../src/core/redact.ts";
import { extractBullets, type Summary } from "../../src/memory/summarizer.ts";
import { LAST_TURN_OUTPUT_CHARS } from "../../src/agents/claude/last-turn.ts";
import { listTurns, readTranscript, readTurnRange } from "../../src/agents/claude/reader.ts";
import type { LastTurn } from "../../src/transcript/types.ts";
import { openTranscriptDb } from "../../src/conversations/db.ts";
import { updateTranscriptIndex } from "../../src/conversations/ingest.ts";
import { INPUTS_MAX, RESULTS_MAX } from "../../src/conversations/rows.ts";
import { claudeIndex } from "../helpers/sources.ts";
import { claudeProject } from "../helpers/sources.ts";

const tmp = mkdtempSync(join(tmpdir(), "ms-redact-clip-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Test secrets are made at run time (a fixed LCG: the same every run), never stored in the repository. */
let seed = 20261123;
const rnd = (n: number, alphabet: string) => {
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % alphabet.length];
  return s;
};
const B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

interface Secret {
  text: string;
  /** Pieces of it that must never come out. */
  needles: string[];
}

function pem(lines: number): Secret {
  const body = Array.from({ length: lines }, () => rnd(64, B62 + "+/"));
  return { text: `-----BEGIN RSA PRIVATE KEY-----\n${body.join("\n")}\n-----END RSA PRIVATE KEY-----`, needles: body.map((l) => l.slice(0, 16)) };
}

function token(kind: "github" | "anthropic"): Secret {
  const body = rnd(kind === "github" ? 34 : 78, B62) + "7q";
  return { text: kind === "github" ? `ghp_${body}` : `sk-ant-api03-${body}`, needles: [body.slice(0, 12), body.slice(12, 24), body.slice(-12)] };
}

/** Words (never a base64-looking run) so that what follows starts at `at`: a secret there straddles a clip at `at + 10`. */
const filler = (at: number) => "the build log says ok ".repeat(Math.ceil(at / 22)).slice(0, at - 1) + " ";

/** Clip points of tool inputs (one-line summaries) and outputs, as the reader and the conversation index cut them. */
const INPUT_CLIPS = [300, 500];
const OUTPUT_CLIPS = [LAST_TURN_OUTPUT_CHARS, RESULTS_MAX];

/**
 * One turn whose tool calls carry a PEM key over every clip point of an input (a heredoc) and of
 * an output, and a token straddling each clip point of an input and of an output.
 */
function plantedTurn(): { secrets: Secret[]; tools: { input: string; output: string }[] } {
  const secrets: Secret[] = [];
  const tools: { input: string; output: string }[] = [];
  const key = pem(40); // 2,700 chars: over every clip point from its start
  secrets.push(key);
  tools.push({ input: `cat > /etc/ssl/deploy.pem <<'EOF'\n${key.text}\nEOF`, output: "" });
  const outKey = pem(40);
  secrets.push(outKey);
  tools.push({ input: "cat ~/.ssh/id_rsa", output: outKey.text });
  for (const at of INPUT_CLIPS) {
    for (const kind of ["github", "anthropic"] as const) {
      const t = token(kind);
      secrets.push(t);
      tools.push({ input: `git push ${filler(at - 10 - "git push ".length)}${t.text} --force`, output: "rejected" });
    }
  }
  for (const at of OUTPUT_CLIPS) {
    for (const kind of ["github", "anthropic"] as const) {
      const t = token(kind);
      secrets.push(t);
      tools.push({ input: "cat build.log", output: `${filler(at - 10)}${t.text} was rejected\nerror: 401` });
    }
  }
  return { secrets, tools };
}

const CWD = "/nonexistent/dev/proj";
const TS = "2026-02-10T12:00:00.000Z";

function transcriptLines(session: string, tools: { input: string; output: string }[], cwd = CWD): string {
  const base = { parentUuid: null, isSidechain: false, userType: "external", cwd, sessionId: session, version: "2.1.40", timestamp: TS };
  const lines: unknown[] = [{ ...base, type: "user", uuid: "u1", promptId: "p1", message: { role: "user", content: "Why is the deploy rejected?" } }];
  tools.forEach((t, i) => {
    lines.push({ ...base, type: "assistant", uuid: `a${i}`, message: { id: `m${i}`, role: "assistant", content: [{ type: "tool_use", id: `tu${i}`, name: "Bash", input: { command: t.input } }] } });
    lines.push({ ...base, type: "user", uuid: `r${i}`, message: { role: "user", content: [{ type: "tool_result", tool_use_id: `tu${i}`, content: t.output }] } });
  });
  lines.push({ ...base, type: "assistant", uuid: "a-end", message: { id: "m-end", role: "assistant", content: [{ type: "text", text: "The key was revoked." }] } });
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

function leaks(where: string | Buffer, secrets: Secret[]): string[] {
  const bytes = typeof where === "string" ? Buffer.from(where) : where;
  return secrets.flatMap((s) => s.needles.filter((n) => bytes.includes(Buffer.from(n, "latin1")) || bytes.includes(Buffer.from(n, "utf16le"))));
}

const { secrets, tools } = plantedTurn();

test("the planted secrets really straddle the clip points", () => {
  for (const at of INPUT_CLIPS) expect(tools.some((t) => t.input.indexOf("ghp_") < at && t.input.indexOf("ghp_") + 40 > at)).toBe(true);
  for (const at of OUTPUT_CLIPS) expect(tools.some((t) => t.output.indexOf("sk-ant-") < at && t.output.indexOf("sk-ant-") + 91 > at)).toBe(true);
  // Whole, every one of them is caught.
  expect(leaks(sanitize(tools.map((t) => `${t.input}\n${t.output}`).join("\n")), secrets)).toEqual([]);
});

describe("the reader", () => {
  const path = join(tmp, "reader.jsonl");
  writeFileSync(path, transcriptLines("S-reader", tools));

  test("with `redact`: no piece of a secret in any text it returns, the clips and their markers kept", async () => {
    for (const maxOutput of [LAST_TURN_OUTPUT_CHARS, 4000]) {
      const t = await readTranscript(path, { maxOutput, redact: sanitize });
      expect(leaks(JSON.stringify(t), secrets)).toEqual([]);
      const calls = t.turns[0]!.tools;
      expect(calls.length).toBe(tools.length);
      expect(calls[0]!.input).toBe("cat > /etc/ssl/deploy.pem <<'EOF' ↵ [REDACTED:private-key] ↵ EOF");
      expect(calls[1]!.output).toBe("[REDACTED:private-key]");
      for (const c of calls) expect(c.input.length).toBeLessThanOrEqual(500);
      const cut = calls.filter((c) => c.output?.includes("…[truncated,"));
      expect(cut.length).toBeGreaterThan(maxOutput < RESULTS_MAX ? 0 : -1);
      for (const c of cut) expect(c.output!.indexOf(" …[truncated,")).toBeLessThanOrEqual(maxOutput);
    }
    const [turn] = await readTurnRange(await listTurns(path), 0, 0, { maxOutput: LAST_TURN_OUTPUT_CHARS, redact: sanitize });
    expect(leaks(JSON.stringify(turn), secrets)).toEqual([]);
  });

  test("without `redact` the texts are the transcript's own (the `transcript` command and the consumers below ask for it)", async () => {
    const t = await readTranscript(path, { maxOutput: LAST_TURN_OUTPUT_CHARS });
    expect(leaks(JSON.stringify(t), secrets).length).toBeGreaterThan(0);
  });
});

describe("the drainer (capture)", () => {
  test("the resolved turn, what is queued and summarised, holds no piece of a secret", async () => {
    const path = join(tmp, "capture.jsonl");
    writeFileSync(path, transcriptLines("S-capture", tools));
    const r = await resolveTurn({ sessionId: "S-capture", promptId: "p1", transcriptPath: path, stoppedAt: new Date().toISOString(), lastAssistantMessage: "The key was revoked." }, { readerFor: agentOrDefault, transcriptWaitMs: 0 });
    expect(r).toMatchObject({ source: "transcript", turnUuid: "u1" });
    expect(r!.text).toContain("[REDACTED:private-key]");
    expect(r!.text).toContain("[REDACTED:github-token]");
    expect(leaks(JSON.stringify(r), secrets)).toEqual([]);
  });
});

describe("the conversation index (ingest)", () => {
  test("no piece of a secret in its rows nor anywhere in its database file", async () => {
    const dir = join(tmp, "ingest");
    const projects = join(dir, "projects");
    mkdirSync(join(projects, "-dev-proj"), { recursive: true });
    writeFileSync(join(projects, "-dev-proj", "S-ingest.jsonl"), transcriptLines("S-ingest", tools));
    const dbPath = join(dir, "t.sqlite");
    const db = openTranscriptDb(dbPath);
    await updateTranscriptIndex(db, { sources: [claudeIndex(projects)] });
    const rows = db.query("SELECT * FROM messages").all() as Record<string, unknown>[];
    expect(rows.length).toBe(tools.length + 2); // the prompt, one message per tool call, the reply
    const all = JSON.stringify(rows);
    expect(all).toContain("[REDACTED:private-key]");
    expect(all).toContain("[REDACTED:github-token]");
    expect(leaks(all, secrets)).toEqual([]);
    for (const r of rows) {
      expect(String(r.inputs ?? "").length).toBeLessThanOrEqual(INPUTS_MAX);
      expect(String(r.results ?? "").length).toBeLessThanOrEqual(RESULTS_MAX);
    }
    db.close();
    for (const f of readdirSync(dir).filter((n) => n.startsWith("t.sqlite"))) expect(leaks(readFileSync(join(dir, f)), secrets)).toEqual([]);
  });
});

describe("memsearch import", () => {
  test("what the summariser gets and the notes written hold no piece of a secret", async () => {
    const dir = join(tmp, "import");
    const root = join(dir, "proj");
    mkdirSync(join(root, ".git"), { recursive: true });
    const memory = join(root, ".memsearch", "memory");
    const projects = join(dir, "projects");
    const slug = join(projects, root.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(slug, { recursive: true });
    const file = join(slug, "S-import.jsonl");
    writeFileSync(file, transcriptLines("S-import", tools, root));
    const old = new Date("2026-01-01T00:00:00Z");
    utimesSync(file, old, old);
    const plan = await planImport({ root, memoryDir: memory, sources: [claudeProject(root, projects)] });
    expect(plan.todo.length).toBe(1);
    const seen: LastTurn[] = [];
    const summarize = async (t: LastTurn): Promise<Summary> => {
      seen.push(t);
      return { bullets: extractBullets(t), provider: "extract" };
    };
    const res = await runImport(plan, { memoryDir: memory, summarize });
    expect(res.written).toBe(1);
    expect(seen.length).toBe(1);
    expect(seen[0]!.text).toContain("[REDACTED:private-key]");
    expect(leaks(JSON.stringify(seen), secrets)).toEqual([]);
    expect(existsSync(memory)).toBe(true);
    for (const f of readdirSync(memory)) expect(leaks(readFileSync(join(memory, f)), secrets)).toEqual([]);
  });
});
