import { describe, expect, test } from "bun:test";
import { clipRedacted, redactHead, redactSecrets, REDACT_MIN_WINDOW, sanitize, stripPrivate } from "../../src/core/redact.ts";
import { clip as clipEllipsis, clipMarked } from "../../src/core/text.ts";
import { summarizeToolInput } from "../../src/transcript/sanitize.ts";

/** What the transcript reader keeps of a tool output: redacted, then clipped with a marker. */
const clip = (text: string, max: number, redact?: (s: string) => string) => (redact ? clipRedacted(text, max, redact, clipMarked) : clipMarked(text, max));

// Test secrets are assembled at run time so the repository never holds a string that a secret
// scanner (or a reviewer) would take for a real credential.
const rep = (s: string, n: number) => s.repeat(n);

describe("stripPrivate", () => {
  test("removes a block, multi-line and case-insensitive", () => {
    expect(stripPrivate("a <private>x\ny</private> b")).toBe("a [private] b");
    expect(stripPrivate("a <PRIVATE>x</Private> b")).toBe("a [private] b");
  });
  test("several blocks, nested blocks", () => {
    expect(stripPrivate("<private>1</private> 2 <private>3</private>")).toBe("[private] 2 [private]");
    expect(stripPrivate("a <private>1<private>2</private>3</private> b")).toBe("a [private] b");
  });
  test("an unclosed block hides the rest of the text", () => {
    expect(stripPrivate("keep <private>secret\nmore secret")).toBe("keep [private]");
  });
  test("text without tags, or with look-alikes, is untouched", () => {
    expect(stripPrivate("no tags here")).toBe("no tags here");
    expect(stripPrivate("<privateer> and </private> stray")).toBe("<privateer> and </private> stray");
  });
});

const SECRETS: [kind: string, secret: string][] = [
  ["aws-key", "AKIA" + "IOSFODNN7EXAMPLE"],
  ["aws-key", "ASIA" + "Y34FZKBOKMUTVV7A"],
  ["github-token", "ghp_" + rep("aB3d", 9)],
  ["github-token", "gho_" + rep("Zx9Q", 9)],
  ["github-token", "ghs_" + rep("k2Lm", 9)],
  ["github-token", "github_pat_" + "11ABCDEFG0" + rep("aZ_9", 15)],
  ["anthropic-key", "sk-ant-api03-" + rep("Qw3-Er5_", 10)],
  ["openai-key", "sk-proj-" + rep("Ab1Cd2", 8)],
  ["openai-key", "sk-" + rep("T3BlbkFJ", 6)],
  ["slack-token", "xoxb-" + "123456789012-" + rep("AbCd", 6)],
  ["google-api-key", "AIza" + "SyD" + rep("x1_Y", 8)],
  ["stripe-key", "sk_live_" + rep("4eC39Hq", 4)],
  ["stripe-key", "rk_live_" + rep("51HzQ", 5)],
  ["jwt", "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
  ["npm-token", "npm_" + rep("a1B2c3", 6)],
];

describe("redactSecrets: vendor tokens", () => {
  for (const [kind, secret] of SECRETS) {
    test(`${kind}: ${secret.slice(0, 8)}…`, () => {
      const out = redactSecrets(`before ${secret} after`);
      expect(out).toBe(`before [REDACTED:${kind}] after`);
      expect(out).not.toContain(secret);
    });
  }
});

describe("redactSecrets: structured secrets", () => {
  test("PEM private key block, and a clipped one without its END line", () => {
    const body = "MIIEowIBAAKCAQEA" + rep("q83vEjRW", 8) + "\n" + rep("Zm9vYmFy", 8) + "==";
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`;
    const out = redactSecrets(`key:\n${pem}\ndone`);
    expect(out).toBe("key:\n[REDACTED:private-key]\ndone");
    const clipped = redactSecrets(`-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n[output clipped]`);
    expect(clipped).toBe("[REDACTED:private-key]\n[output clipped]");
    // Two keys, one of them clipped, with text around and between them.
    const two = redactSecrets(`a\n-----BEGIN PRIVATE KEY-----\n${body}\nthen b\n${pem}\nc`);
    expect(two).toBe("a\n[REDACTED:private-key]\nthen b\n[REDACTED:private-key]\nc");
    // JSON-escaped newlines, as in a tool input rendered as compact JSON.
    expect(redactSecrets(`{"k":"${pem.replace(/\n/g, "\\n")}"}`)).toBe('{"k":"[REDACTED:private-key]"}');
    // A public key or certificate is not a secret.
    const cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    expect(redactSecrets(cert)).toBe(cert);
  });

  test("AWS secret access key assignment", () => {
    const secret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY";
    expect(redactSecrets(`aws_secret_access_key = ${secret}`)).toBe("aws_secret_access_key = [REDACTED:aws-secret]");
    expect(redactSecrets(`AWS_SECRET_ACCESS_KEY=${secret}`)).toBe("AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret]");
  });

  test("password in a URL keeps the user", () => {
    expect(redactSecrets("postgres://admin:" + "s3cr3t-pw" + "@db.local:5432/app")).toBe(
      "postgres://admin:[REDACTED:url-password]@db.local:5432/app",
    );
    expect(redactSecrets("https://user@example.com/x")).toBe("https://user@example.com/x");
    expect(redactSecrets("http://localhost:8080/a@b")).toBe("http://localhost:8080/a@b");
  });

  test("Authorization headers", () => {
    expect(redactSecrets("Authorization: Bearer " + "abcDEF1234567890xyz")).toBe("Authorization: Bearer [REDACTED:bearer]");
    expect(redactSecrets(`-H "Authorization: Basic ${"dXNlcjpwYXNz"}"`)).toBe('-H "Authorization: Basic [REDACTED:bearer]"');
    // A shell variable is a reference, not a secret.
    expect(redactSecrets("-H 'Authorization: Bearer $TOKEN'")).toBe("-H 'Authorization: Bearer $TOKEN'");
  });

  test("generic assignments in env, JSON, YAML and CLI styles", () => {
    expect(redactSecrets("DB_PASSWORD=" + "hunter2hunter2")).toBe("DB_PASSWORD=[REDACTED:password]");
    expect(redactSecrets('{"password": "' + "correct horse" + '", "user": "bob"}')).toBe(
      '{"password": "[REDACTED:password]", "user": "bob"}',
    );
    expect(redactSecrets("client_secret: '" + "abcdefgh1234" + "'")).toBe("client_secret: '[REDACTED:secret]'");
    expect(redactSecrets("api_key: " + "abc123def456")).toBe("api_key: [REDACTED:api-key]");
    expect(redactSecrets("export GITHUB_TOKEN=" + "plainvalue99")).toBe("export GITHUB_TOKEN=[REDACTED:token]");
    expect(redactSecrets("curl 'https://x.test/?token=" + "abcdefgh123" + "&page=2'")).toBe(
      "curl 'https://x.test/?token=[REDACTED:token]&page=2'",
    );
    expect(redactSecrets("mysql --password " + "hunter2hunter2" + " db")).toBe("mysql --password [REDACTED:password] db");
  });

  test("short values and code references are not secrets", () => {
    for (const s of [
      "password=short",
      "token = getToken()",
      "token = self.token_value",
      "export GITHUB_TOKEN=${GH_TOKEN}",
      "tokenizer = AutoTokenizer.from_pretrained('bert')",
      "Password: incorrect",
      "the secret: nothing special",
      'password: "none"',
    ]) {
      expect(redactSecrets(s)).toBe(s);
    }
  });
});

describe("redactSecrets: no false positives", () => {
  test("git SHAs, UUIDs, hashes, prose and code pass through", () => {
    const text = [
      "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
      "session 123e4567-e89b-12d3-a456-426614174000 turn 9b2f0c4e-1d3a-4b5c-8e7f-0a1b2c3d4e5f",
      "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "The secret to a good token budget is a small prompt; tokens are cheap.",
      "Use sk-learn or the disk-usage-report-for-all-servers script; ask-questions-first.",
      "const apiKey = config.get('api.key'); if (!password) throw new Error('no password');",
      "See https://github.com/org/repo/pull/123 and git@github.com:org/repo.git",
      "AKIA is the prefix of AWS keys; eyJ starts base64 JSON.",
    ].join("\n");
    expect(redactSecrets(text)).toBe(text);
  });

  test("a GitHub token glued to the word before it is still a token", () => {
    const token = "ghp_" + rep("aB3d", 9);
    expect(redactSecrets(`the buil${token} was rejected`)).toBe("the buil[REDACTED:github-token] was rejected");
    expect(redactSecrets(`xgithub_pat_${"11ABCDEFG0" + rep("aZ_9", 15)} ok`)).toBe("x[REDACTED:github-token] ok");
  });

  test("already redacted text is stable", () => {
    const once = redactSecrets("token=" + "ghp_" + rep("aB3d", 9));
    expect(once).toBe("token=[REDACTED:github-token]");
    expect(redactSecrets(once)).toBe(once);
  });
});

describe("sanitize", () => {
  test("strips private blocks and redacts what is left", () => {
    const key = "AKIA" + "IOSFODNN7EXAMPLE";
    expect(sanitize(`<private>${key}</private> and ${key}`)).toBe("[private] and [REDACTED:aws-key]");
  });

  test("removes control characters first: a key split by a colour sequence is whole again, and redacted", () => {
    const key = "ghp_" + rep("aB3d", 9);
    expect(sanitize(`token ${key.slice(0, 10)}\x1b[0m${key.slice(10)}\0 end`)).toBe("token [REDACTED:github-token]  end");
    expect(sanitize("a\0b\x1b[31mc\x1b[0m\r\nd\x7f")).toBe("a bc\nd ");
  });
});

describe("linear time", () => {
  const MB = 1 << 20;
  const inputs: [string, string][] = [
    ["prose with secrets", (rep("The quick brown fox edits src/app.ts; password=hunter2hunter2 ", 100) + "ghp_" + rep("aB3d", 9) + "\n").repeat(Math.ceil(MB / 6400))],
    ["one long word", rep("a", MB)],
    ["repeated key names", rep("password=", MB / 9)],
    ["unclosed PEM headers", rep("-----BEGIN RSA PRIVATE KEY-----", MB / 31)],
    ["unclosed private tags", rep("<private ", MB / 9)],
    ["JWT-like prefixes", rep("eyJabcde.eyJ", MB / 12)],
    ["dashed JWT prefixes", rep("eyJ-", MB / 4)],
    ["dashed key prefixes", rep("sk-", MB / 3) + " " + rep("xoxb-", MB / 5) + " " + rep("AIza-", MB / 5)],
    ["PEM with END markers only", rep("-----END RSA PRIVATE KEY-----", MB / 29)],
    ["PEM header then base64 lines", "-----BEGIN PRIVATE KEY-----" + rep("\nQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", MB / 37)],
    ["Bearer words", rep("Bearer ", MB / 7)],
    ["URL-like", rep("http://aaaa:", MB / 12)],
    ["base64 soup", rep("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", MB / 36)],
  ];
  for (const [name, input] of inputs) {
    test(`1 MB of ${name}`, () => {
      const t0 = performance.now();
      sanitize(input);
      expect(performance.now() - t0).toBeLessThan(1500);
    });
  }
});

describe("redacted before clipped (redactHead, clipRedacted)", () => {
  const words = (n: number) => "the build log says ok ".repeat(Math.ceil(n / 22)).slice(0, n - 1) + " ";
  const pemOf = (lines: number) => {
    const body = Array.from({ length: lines }, (_, i) => rep(`Q${i % 10}x${String.fromCharCode(65 + (i % 26))}`, 16));
    return { text: `-----BEGIN RSA PRIVATE KEY-----\n${body.join("\n")}\n-----END RSA PRIVATE KEY-----`, body };
  };
  const token = "ghp_" + rep("k2Lm", 9);
  const piecesOf = (s: string) => [s.slice(4, 16), s.slice(-12)];

  test("a PEM key or a token straddling the kept length is redacted whole, not cut (output 1,000, input 500)", () => {
    const pem = pemOf(25);
    for (const keep of [1000, 500, 300, 2000]) {
      for (const at of [Math.max(10, keep - 600), keep - 20, keep - 1]) {
        const text = words(at) + pem.text + "\nafter";
        const out = clip(text, keep, sanitize);
        for (const line of pem.body) expect(out).not.toContain(line.slice(0, 16));
        const t = clip(words(keep - 10) + token + " rejected", keep, sanitize);
        for (const p of piecesOf(token)) expect(t).not.toContain(p);
        expect(clipEllipsis(sanitize(words(keep - 10) + token), keep)).toBe(clipRedacted(words(keep - 10) + token, keep));
      }
    }
    // The old order, for contrast: clipped first, the line the clip cut (48 of its chars kept) went through.
    expect(sanitize(clip(words(400) + pem.text, 1000))).toContain(pem.body[8]!.slice(0, 16));
    // A tool input: made one line after it is redacted.
    const input = summarizeToolInput("Bash", { command: `cat > k.pem <<'EOF'\n${pem.text}\nEOF` }, 500, sanitize);
    expect(input).toBe("cat > k.pem <<'EOF' ↵ [REDACTED:private-key] ↵ EOF");
    const cut = summarizeToolInput("Bash", { command: `git push ${words(480)}${token} --force` }, 500, sanitize);
    expect(cut.length).toBeLessThanOrEqual(500);
    for (const p of piecesOf(token)) expect(cut).not.toContain(p);
  });

  test("what is kept is what redacting the whole text keeps, when the window holds it all", () => {
    let seed = 7;
    const pick = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const kinds = [token, "AKIA" + "IOSFODNN7EXAMPLE", "DB_PASSWORD=" + "hunter2hunter2", pemOf(3).text, "<private>my salary</private>", "Authorization: Bearer " + "abcDEF1234567890xyz"];
    for (let i = 0; i < 200; i++) {
      const parts: string[] = [];
      while (parts.join("").length < 1500) parts.push(pick(3) ? words(5 + pick(60)) : kinds[pick(kinds.length)]! + " ");
      const text = parts.join("");
      const keep = 100 + pick(1200);
      expect(clipRedacted(text, keep)).toBe(clipEllipsis(sanitize(text), keep));
    }
  });

  test("a secret cut by the window's edge leaves no piece, even when redaction shrinks the window onto the kept part", () => {
    // A token cut at the window's edge (8,000 chars for 1,000 kept): its piece is dropped.
    const far = words(REDACT_MIN_WINDOW - 12) + token + " " + words(5000);
    const head = redactHead(far, 1000);
    expect(head.whole).toBe(false);
    for (const p of piecesOf(token)) expect(head.text).not.toContain(p);
    // A big PEM key shrinks to one tag: the edge of the window, which cuts a quoted password
    // after it, would come into the kept part: the window is widened instead.
    const pem = pemOf(119);
    const lead = "start " + pem.text + ' {"password": "';
    const text = lead + "correct horse battery staple " + words(200) + '"} ' + words(30_000);
    expect(lead.length).toBeLessThan(REDACT_MIN_WINDOW);
    expect(lead.length + 29 + 200).toBeGreaterThan(REDACT_MIN_WINDOW); // the edge cuts the quoted value
    const out = clipRedacted(text, 1000);
    expect(out).not.toContain("correct horse");
    expect(out).toStartWith("start [REDACTED:private-key] ");
    for (const line of pem.body) expect(out).not.toContain(line.slice(0, 16));
  });

  test("only a bounded window of a long text is redacted, at worst all of it", () => {
    let seen = 0;
    const counting = (s: string) => ((seen += s.length), sanitize(s));
    const big = words(1 << 20);
    const head = redactHead(big, 1000, counting);
    expect(head.whole).toBe(false);
    expect(seen).toBe(REDACT_MIN_WINDOW);
    // One 1 MB run without white space (minified JSON): the cut run would be all of it, so the
    // window grows until it holds the whole text.
    seen = 0;
    const run = rep("a1b2", 1 << 18);
    const all = redactHead(run, 1000, counting);
    expect(all.whole).toBe(true);
    expect(seen).toBeLessThan(3 * run.length);
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) clip(big, 1000, sanitize);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
