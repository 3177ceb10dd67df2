/**
 * Fault injection 5: secrets planted everywhere a turn carries text — the prompt, Claude's last
 * message, tool inputs and tool outputs in the transcript — 38 kinds (vendor keys and tokens,
 * JWT, PEM private key, passwords in URLs, bearer tokens, .env and JSON assignments, CLI
 * passwords, <private> blocks, Slack, Discord and Teams webhooks, signed URLs, connection
 * strings), with seeded random bodies, driven through the real hooks with
 * MEMSEARCH_DEBUG=1, a hook-started watch process and the fake claude logging its stdin. None of
 * them may reach the markdown, the index, the pending queue (looked at while a turn waits in it),
 * the summariser's stdin, ~/.memsearch/logs or watch.log — nor any other file memsearch writes.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fakeClaudeCalls, writeFakeClaude } from "../helpers/fake-claude.ts";
import { anchorsOf, drained, faultKit, HANG_SLACK_MS, HOOK_BUDGET_MS, hookOutputProblem, isAlive, ms, queued, readMemory, tracked, type Project, type Rng, liveLockContent } from "./helpers.ts";
import { appendTurn, type TurnSpec } from "./transcript.ts";

const kit = faultKit("secrets");

const B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64 = B62 + "+/";
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

interface Secret {
  kind: string;
  /** As planted. */
  text: string;
  /** Pieces of it that must never be found anywhere memsearch writes. */
  needles: string[];
}

/** A random body with at least one digit and one letter (real keys have both; some rules rely on it). */
function body(r: Rng, n: number, alphabet = B62): string {
  return r.string(n - 2, alphabet) + r.string(1, "0123456789") + r.string(1, "abcdefghijklmnopqrstuvwxyz".split("").filter((c) => alphabet.includes(c)).join("") || alphabet);
}

const ends = (s: string) => [s.slice(0, 12), s.slice(-12)];

/** A PEM private key: `lines` base64 lines of 64 characters; its needles are the start of each line. */
function pemKey(r: Rng, label: string, lines: number): Secret {
  const bodyLines = Array.from({ length: lines }, () => r.string(64, B64));
  return {
    kind: `pem (${label})`,
    text: `-----BEGIN ${label} PRIVATE KEY-----\n${bodyLines.join("\n")}\n-----END ${label} PRIVATE KEY-----`,
    needles: bodyLines.map((l) => l.slice(0, 16)),
  };
}

/** Kinds of secret planted: 19 before issue 20, then webhooks and the kinds a review against gitleaks' rules added. */
const KINDS = 38;

function makeSecrets(r: Rng): Secret[] {
  const s = (kind: string, text: string, secret: string, needles = ends(secret)): Secret => ({ kind, text, needles });
  const list: Secret[] = [];
  let b: string;
  b = body(r, 80, B62 + "-_");
  list.push(s("anthropic-key", `sk-ant-api03-${b}`, b));
  b = body(r, 48, B62 + "-_");
  list.push(s("openai-key (project)", `sk-proj-${b}`, b));
  b = body(r, 48);
  list.push(s("openai-key", `sk-${b}`, b));
  b = body(r, 16, UPPER_DIGITS).toUpperCase();
  list.push(s("aws-key", `AKIA${b}`, b, [b]));
  b = body(r, 40, B64);
  list.push(s("aws-secret", `aws_secret_access_key = ${b}`, b));
  b = body(r, 36);
  list.push(s("github-token", `ghp_${b}`, b));
  b = body(r, 82, B62 + "_");
  list.push(s("github-pat", `github_pat_${b}`, b));
  b = `${r.string(12, "0123456789")}-${r.string(12, "0123456789")}-${body(r, 24)}`;
  list.push(s("slack-token", `xoxb-${b}`, b));
  b = body(r, 24);
  list.push(s("stripe-key", `sk_live_${b}`, b));
  b = body(r, 35, B62 + "_-");
  list.push(s("google-api-key", `AIza${b}`, b));
  b = body(r, 36);
  list.push(s("npm-token", `npm_${b}`, b));
  const seg = (n: number) => r.string(n, B62 + "-_");
  const jwt = `eyJ${seg(30)}.eyJ${seg(60)}.${seg(43)}`;
  list.push(s("jwt", jwt, jwt, [jwt.slice(3, 20), jwt.slice(-16)]));
  list.push(pemKey(r, "EC", 3));
  b = body(r, 18);
  list.push(s("url-password", `postgres://admin:${b}@db.internal:5432/app`, b, [b]));
  b = body(r, 40);
  list.push(s("bearer", `Authorization: Bearer ${b}`, b));
  b = body(r, 22);
  list.push(s(".env line", `DB_PASSWORD=${b}`, b));
  b = `the launch code is ${body(r, 20)}`;
  list.push(s("<private> block", `<private>${b}\nand more private words</private>`, b, [b.slice(-16), "more private words"]));
  b = body(r, 18);
  list.push(s("cli password", `mysql --password ${b} prod`, b, [b]));
  b = body(r, 26);
  list.push(s("json api_key", `{"api_key": "${b}"}`, b));
  // Added after the review against gitleaks' rule set (issue 20).
  const hex = (n: number) => r.string(n, "0123456789abcdef");
  const uuid = () => [8, 4, 4, 4, 12].map(hex).join("-");
  b = body(r, 24);
  const slackIds = `T${r.string(8, UPPER_DIGITS)}/B${r.string(10, UPPER_DIGITS)}`;
  list.push(s("slack-webhook", `https://hooks.slack.com/services/${slackIds}/${b}`, b, [...ends(b), slackIds]));
  b = body(r, 68, B62 + "-_");
  list.push(s("discord-webhook", `https://discord.com/api/webhooks/${r.string(19, "0123456789")}/${b}`, b));
  b = hex(32);
  const teamsIds = `${uuid()}@${uuid()}`;
  list.push(s("teams-webhook", `https://contoso.webhook.office.com/webhookb2/${teamsIds}/IncomingWebhook/${b}/${uuid()}`, b, [...ends(b), teamsIds]));
  b = body(r, 43);
  list.push(s("signed URL", `https://acct.blob.core.windows.net/backups/db.tar?sv=2022-11-02&se=2026-12-01&sr=b&sp=r&sig=${b}%3D`, b));
  b = body(r, 86);
  list.push(s("azure connection string", `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${b}==;EndpointSuffix=core.windows.net`, b));
  b = body(r, 20, B62 + "_-");
  list.push(s("gitlab-token", `glpat-${b}`, b, [b]));
  b = body(r, 70, B62 + "_-");
  list.push(s("pypi-token", `pypi-AgEIcHlwaS5vcmc${b}`, b));
  b = `Q${r.string(32, B62)}a`;
  list.push(s("huggingface-token", `hf_${b}`, b));
  b = hex(32);
  list.push(s("twilio-key", `SK${b}`, b));
  b = body(r, 43, B62 + "-_");
  list.push(s("sendgrid-key", `SG.${body(r, 22, B62 + "-_")}.${b}`, b));
  b = hex(32);
  list.push(s("mailgun-key", `key-${b}`, b));
  b = hex(32);
  list.push(s("shopify-token", `shpat_${b}`, b));
  b = body(r, 28, B62 + "-_");
  list.push(s("google-oauth", `GOCSPX-${b}`, b));
  b = body(r, 95, B62 + "-_");
  list.push(s("vault-token", `hvs.${b}`, b));
  b = body(r, 32);
  list.push(s("stripe webhook secret", `whsec_${b}`, b));
  b = body(r, 52);
  list.push(s("groq-key", `gsk_${b}`, b));
  b = body(r, 33, B62 + "-_");
  list.push(s("telegram-bot-token", `${r.string(10, "0123456789")}:AA${b}`, b));
  b = body(r, 132, B62 + "+/");
  list.push(s("aws-bedrock-key", `ABSK${b}`, b));
  b = body(r, 18);
  list.push(s("curl password", `curl -u deploy:${b} https://api.internal/v1`, b, [b]));
  return list;
}

/** Every file below `dir` as text in the encodings a needle may hide in (the index stores some strings as UTF-16). */
function filesBelow(dir: string, skip: (path: string) => boolean = () => false): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (skip(path)) continue;
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) out.push({ path, bytes: readFileSync(path) });
    }
  };
  walk(dir);
  return out;
}

/** Where any needle of any secret shows up: "file: kind". */
function leaks(files: { path: string; bytes: Buffer }[], secrets: Secret[], base: string): string[] {
  const found: string[] = [];
  for (const f of files) {
    for (const sec of secrets) {
      for (const n of sec.needles) {
        if (f.bytes.includes(Buffer.from(n, "latin1")) || f.bytes.includes(Buffer.from(n, "utf16le"))) {
          found.push(`${relative(base, f.path)}: ${sec.kind} (${n})`);
          break;
        }
      }
    }
  }
  return found;
}

interface Harness {
  p: Project;
  env: Record<string, string | undefined>;
  log: string;
  transcripts: string;
  /** Every file of the pending queue seen while turns waited in it. */
  pendingSeen: { path: string; bytes: Buffer }[];
  /** Conversation messages `recall --raw` found (the transcript index holds the turns). */
  transcriptHits?: number;
}

function harness(watch: boolean): Harness {
  const p = kit.project();
  const bin = mkdtempSync(join(kit.base, "bin-"));
  writeFakeClaude(bin);
  const log = mkdtempSync(join(kit.base, "claude-log-"));
  // Where Claude Code keeps them, so the conversation index (Layer 3, ~/.memsearch/transcripts.sqlite) reads them too.
  const transcripts = join(p.home, ".claude", "projects", p.root.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(transcripts, { recursive: true });
  const env = { ...p.env, PATH: `${bin}:${process.env.PATH}`, MEMSEARCH_SUMMARIZER_PROVIDER: "claude", FAKE_CLAUDE_MODE: "echo", FAKE_CLAUDE_LOG: log, MEMSEARCH_DEBUG: "1", MEMSEARCH_NO_WATCH: watch ? undefined : "1" };
  return { p, env, log, transcripts, pendingSeen: [] };
}

async function hook(h: Harness, event: string, input: unknown): Promise<void> {
  const r = await ms(["hook", event], { cwd: h.p.root, env: h.env, stdin: JSON.stringify(input), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
  kit.count("hook-runs");
  expect(hookOutputProblem(r)).toBeUndefined();
}

/** Holds the queue as a live drainer would: the Stop hooks only queue, and the queue can be looked at. */
function holdQueue(h: Harness): () => void {
  mkdirSync(h.p.pending, { recursive: true });
  const lock = join(h.p.pending, ".drain.lock");
  writeFileSync(lock, liveLockContent());
  return () => rmSync(lock, { force: true });
}

function lookAtQueue(h: Harness): void {
  h.pendingSeen.push(...filesBelow(h.p.pending));
}

/** One turn through the hooks; `inTranscript` false: the transcript never gets it (the note comes from what the hooks saw). */
async function driveTurn(h: Harness, t: TurnSpec, transcript: string, inTranscript = true): Promise<void> {
  t.cwd = h.p.root;
  const base = { session_id: t.sessionId, transcript_path: transcript, cwd: h.p.root, prompt_id: t.promptId };
  if (inTranscript) appendTurn(transcript, t, "user");
  await hook(h, "user-prompt-submit", { ...base, hook_event_name: "UserPromptSubmit", prompt: t.prompt });
  lookAtQueue(h);
  if (inTranscript) appendTurn(transcript, t, "reply");
  await hook(h, "stop", { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: t.reply });
  lookAtQueue(h);
}

/**
 * Let the queue go, write every note, index the notes and the conversations (`recall --raw`
 * updates the transcript index), let a model answer a recall; then every file memsearch wrote,
 * plus everything the summariser got.
 */
async function drainAndCollect(h: Harness, release: () => void): Promise<{ path: string; bytes: Buffer }[]> {
  release();
  const drain = await ms(["hook", "drain"], { cwd: h.p.root, env: h.env, hangMs: 120_000 });
  expect(drain.hung).toBe(false);
  expect(drain.code).toBe(0);
  expect(await drained(kit, h.p, 60_000)).toBe(true);
  const idx = await ms(["index"], { cwd: h.p.root, env: h.env });
  expect(idx.code).toBe(0);
  for (const args of [["recall", "--raw", "-j", "credential deploy key"], ["recall", "which credential was revoked"]]) {
    const r = await ms(args, { cwd: h.p.root, env: h.env, hangMs: 60_000 });
    kit.count("recalls");
    expect(r.code).toBe(0);
    if (args.includes("--raw")) h.transcriptHits = JSON.parse(r.stdout).transcripts.hits;
  }
  expect(existsSync(join(h.p.home, ".memsearch", "transcripts.sqlite"))).toBe(true);
  // Claude Code's own files (the transcripts) hold the secrets, of course: everything else is ours.
  const claudeCode = (path: string) => path.startsWith(join(h.p.home, ".claude"));
  return [
    ...h.pendingSeen,
    ...filesBelow(h.p.dataDir),
    ...filesBelow(h.p.home, claudeCode),
    ...filesBelow(h.log),
    ...filesBelow(h.p.root, (path) => path.startsWith(h.p.dataDir) || path.endsWith(".git")),
  ];
}

describe("planted secrets", () => {
  test(
    `${KINDS} kinds in prompts, final messages, tool inputs and tool outputs: none reaches the markdown, the note or conversation index, the queue, the summariser, the logs or watch.log`,
    tracked(kit, async () => {
      const rng = kit.rngFor("planted");
      const secrets = makeSecrets(rng);
      expect(secrets.length).toBe(KINDS);
      const h = harness(true);
      const sessions = ["sec-a", "sec-b"].map((s) => `${s}-${rng.string(6)}`);
      for (const s of sessions) await hook(h, "session-start", { session_id: s, cwd: h.p.root, source: "startup" });
      const release = holdQueue(h);
      const turns: TurnSpec[] = [];
      const K = secrets.length;
      // Turn i plants kind (i + 7·l) in location l (prompt, tool input, tool output): over K
      // turns, every kind in every location once.
      for (let i = 0; i < K; i++) {
        const at = (l: number) => secrets[(i + 7 * l) % K]!.text;
        const sessionId = sessions[i % 2]!;
        const t: TurnSpec = {
          sessionId,
          uuid: `sec-u-${i}-${rng.string(8)}`,
          promptId: `sec-p-${i}-${rng.string(8)}`,
          prompt: `Turn ${i}: the deploy fails, here is what I use: ${at(0)} — why is it rejected?`,
          command: `deploy --verbose --cred '${at(1)}'`,
          output: `connecting with ${at(2)}\nerror: 401 unauthorized`,
          reply: `The credential was revoked yesterday (turn ${i}).`,
        };
        await driveTurn(h, t, join(h.transcripts, `${sessionId}.jsonl`));
        turns.push(t);
        kit.count("secrets-planted", 3);
      }
      const all = secrets.map((s) => s.text).join("\n");
      // Claude's final message (Stop's last_assistant_message and the transcript's last entry)
      // holding every kind: found complete in the transcript at once (see "a final message holding a secret…" below).
      const replyTurn: TurnSpec = {
        sessionId: sessions[1]!,
        uuid: `sec-u-reply-${rng.string(8)}`,
        promptId: `sec-p-reply-${rng.string(8)}`,
        prompt: "Which of my credentials are still valid?",
        command: "deploy --check-credentials",
        output: `checked ${KINDS} credentials`,
        reply: `None of these is valid any more:\n${all}`,
      };
      await driveTurn(h, replyTurn, join(h.transcripts, `${sessions[1]}.jsonl`));
      turns.push(replyTurn);
      kit.count("secrets-planted", K);
      // A turn the transcript never gets: written from the hooks' record, every kind in it.
      const fallback: TurnSpec = { sessionId: sessions[0]!, uuid: "unused", promptId: `sec-p-fallback-${rng.string(8)}`, prompt: `Here are all my keys:\n${all}\nwhich one is wrong?`, command: "", output: "", reply: `None of these is right:\n${all}` };
      await driveTurn(h, fallback, join(h.transcripts, "never-written.jsonl"), false);
      kit.count("secrets-planted", 2 * K);
      expect(queued(h.p).length).toBe(K + 2);

      const files = await drainAndCollect(h, release);
      for (const s of sessions) await hook(h, "session-end", { session_id: s, cwd: h.p.root, reason: "prompt_input_exit" });
      // The watch process leaves on its own after SessionEnd; its log is complete then.
      const watchPid = () => {
        try {
          return JSON.parse(readFileSync(join(h.p.dataDir, "watch.pid"), "utf8")).pid as number;
        } catch {
          return 0;
        }
      };
      for (let i = 0; i < 100 && watchPid() && isAlive(watchPid()); i++) await Bun.sleep(100);
      files.push(...filesBelow(h.p.dataDir));

      // The pipeline really ran: every turn has its note, every summariser call saw redactions.
      const anchors = anchorsOf(h.p.memory);
      for (const t of [...turns, fallback]) expect(anchors.filter((a) => a.turn === t.uuid || a.turn === t.promptId).length).toBe(1);
      // K + 2 notes summarised, plus the answer of `recall`.
      const calls = fakeClaudeCalls(h.log);
      expect(calls.length).toBe(K + 3);
      expect(calls.filter((c) => c.stdin.includes("[REDACTED:")).length).toBeGreaterThanOrEqual(K + 2);
      const md = [...readMemory(h.p.memory).values()].join("\n");
      expect(md).toContain("[REDACTED:");
      expect(existsSync(join(h.p.dataDir, "watch.log"))).toBe(true);
      expect(readdirSync(join(h.p.home, ".memsearch", "logs")).length).toBeGreaterThan(0);
      expect(h.pendingSeen.length).toBeGreaterThan(2 * K);
      expect(h.transcriptHits).toBeGreaterThan(0);

      const found = leaks(files, secrets, h.p.root);
      kit.set("files-searched", new Set(files.map((f) => f.path)).size);
      kit.set("secret-kinds", K);
      expect(found).toEqual([]);
    }),
    180_000,
  );
});

/**
 * Bugs this suite found, now fixed; each test asserts the right behaviour.
 *
 * Redacted, then clipped: the transcript reader clips a tool input to 500 characters (newlines
 * turned into " ↵ ") and a tool output to 1,000. It once did so before the drainer redacted them,
 * so a secret cut by the clip lost what its rule needs (a PEM key its END line and, in a tool
 * input, the line breaks the unclosed-block rule follows; a token cut short was too short for its
 * pattern) and reached the pending queue file (resolved.text), the summariser's stdin and the
 * conversation index. Now the reader redacts (when asked: the drainer, `import` and the
 * `transcript` command ask) before it clips, and the conversation index does too.
 */
describe("fixed bugs", () => {
  /**
   * The drainer decides whether the transcript holds a turn's final message by comparing Stop's
   * last_assistant_message, redacted when it was queued, with the transcript's text redacted the
   * same way. It once compared it with the raw text: with a secret in Claude's final message every
   * such turn waited the whole transcript wait, then had the message twice in the summariser's input.
   */
  test(
    "a final message holding a secret is found in the transcript: the summariser gets it once",
    tracked(kit, async () => {
      const rng = kit.rngFor("final message");
      const h = harness(false);
      const release = holdQueue(h);
      const secret = makeSecrets(rng).find((x) => x.kind === ".env line")!;
      const turn: TurnSpec = { sessionId: "final-s", uuid: "final-u", promptId: "final-p", prompt: "which password does the app use?", command: "cat .env", output: "(redacted by the tool)", reply: `It reads ${secret.text} from .env, a password that was revoked.` };
      await driveTurn(h, turn, join(h.transcripts, "t.jsonl"));
      await drainAndCollect(h, release);
      // The summariser's call (drainAndCollect also has a model answer a recall).
      const calls = fakeClaudeCalls(h.log).filter((c) => c.stdin.includes("You are a note-taker"));
      expect(calls.length).toBe(1);
      expect(calls[0]!.stdin.split("a password that was revoked").length - 1).toBe(1);
    }),
    60_000,
  );

  const oneTurn = async (label: string, t: Omit<TurnSpec, "sessionId" | "uuid" | "promptId">, secret: Secret) => {
    const h = harness(false);
    const release = holdQueue(h);
    const turn: TurnSpec = { ...t, sessionId: `${label}-s`, uuid: `${label}-u`, promptId: `${label}-p` };
    await driveTurn(h, turn, join(h.transcripts, "t.jsonl"));
    const files = await drainAndCollect(h, release);
    expect(anchorsOf(h.p.memory).filter((a) => a.turn === turn.uuid || a.turn === turn.promptId).length).toBe(1);
    expect(leaks(files, [secret], h.p.root)).toEqual([]);
  };

  test(
    "a PEM private key in a tool input longer than 500 characters is redacted whole",
    tracked(kit, async () => {
      const rng = kit.rngFor("PEM input");
      const key = pemKey(rng, "RSA", 25);
      await oneTurn("pem-input", { prompt: "install the deploy key", command: `cat > /etc/ssl/deploy.pem <<'EOF'\n${key.text}\nEOF`, output: "", reply: "Installed the key." }, key);
    }),
    60_000,
  );

  test(
    "a PEM private key in a tool output longer than 1,000 characters is redacted whole",
    tracked(kit, async () => {
      const rng = kit.rngFor("PEM output");
      const key = pemKey(rng, "RSA", 25);
      await oneTurn("pem-output", { prompt: "show me the deploy key", command: "cat ~/.ssh/id_rsa", output: key.text, reply: "That is the key." }, key);
    }),
    60_000,
  );

  test(
    "a token cut by the 1,000-character clip of a tool output leaves no piece of itself",
    tracked(kit, async () => {
      const rng = kit.rngFor("token clip");
      const b = body(rng, 36);
      const token: Secret = { kind: "github-token cut by the clip", text: `ghp_${b}`, needles: [b.slice(0, 12)] };
      // Words, not one base64-looking run (that would be scrubbed whole): the token starts 24 characters before the clip.
      const filler = "the build log says ok ".repeat(60).slice(0, 1_000 - 24);
      await oneTurn("token-clip", { prompt: "why does the push fail", command: "git push", output: `${filler}${token.text} was rejected`, reply: "The token was rejected." }, token);
    }),
    60_000,
  );
});
