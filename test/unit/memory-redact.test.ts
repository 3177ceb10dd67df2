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

// Kinds added after a review against a current secret-scanner rule set (gitleaks' config): one
// realistic fake value each, assembled at run time.
const hex = (n: number) => rep("0123456789abcdef", Math.ceil(n / 16)).slice(0, n);
const b62 = (n: number) => rep("aZ3kQ9mX7pL2", Math.ceil(n / 12)).slice(0, n);
const UUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";
const MORE_SECRETS: [kind: string, secret: string][] = [
  ["gitlab-token", "glpat-" + b62(20)],
  ["gitlab-token", "glpat-" + b62(27) + ".01.0w1x2y3z4"],
  ["gitlab-token", "gldt-" + b62(20)],
  ["gitlab-token", "glrt-" + b62(20)],
  ["gitlab-token", "glptt-" + hex(40)],
  ["gitlab-token", "GR1348941" + b62(20)],
  ["pypi-token", "pypi-AgEIcHlwaS5vcmc" + b62(70)],
  ["huggingface-token", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"],
  ["huggingface-token", "api_org_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"],
  ["twilio-key", "SK" + hex(32)],
  ["sendgrid-key", "SG." + b62(22) + "." + b62(43)],
  ["mailgun-key", "key-" + hex(32)],
  ["mailchimp-key", hex(32) + "-us21"],
  ["brevo-key", "xkeysib-" + hex(64) + "-" + b62(16)],
  ["shopify-token", "shpat_" + hex(32)],
  ["shopify-token", "shpss_" + hex(32)],
  ["stripe-key", "sk_prod_" + b62(24)],
  ["stripe-key", "whsec_" + b62(32)],
  ["slack-token", "xoxe-1-" + b62(146)],
  ["slack-token", "xoxe.xoxp-1-" + b62(163)],
  ["azure-client-secret", "abc8Q~" + b62(34)],
  ["google-oauth", "GOCSPX-" + b62(28)],
  ["google-oauth", "ya29." + b62(120)],
  ["aws-bedrock-key", "ABSK" + b62(132)],
  ["alibaba-key", "LTAI" + b62(20)],
  ["digitalocean-token", "dop_v1_" + hex(64)],
  ["databricks-token", "dapi" + hex(32)],
  ["atlassian-token", "ATATT3" + b62(186)],
  ["linear-key", "lin_api_" + b62(40)],
  ["notion-token", "ntn_" + "12345678901" + b62(35)],
  ["postman-key", "PMAK-" + hex(24) + "-" + hex(34)],
  ["pulumi-token", "pul-" + hex(40)],
  ["grafana-token", "glc_" + b62(60)],
  ["grafana-token", "glsa_" + b62(32) + "_" + hex(8)],
  ["terraform-token", b62(14) + ".atlasv1." + b62(67)],
  ["vault-token", "hvs." + b62(95)],
  ["sentry-token", "sntrys_" + "eyJ" + b62(100)],
  ["telegram-bot-token", "1234567890:AA" + b62(33)],
  ["heroku-key", "HRKU-AA" + b62(58)],
  ["flyio-token", "fm2_" + b62(150)],
  ["age-secret-key", "AGE-SECRET-KEY-1" + rep("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 2).slice(0, 58)],
  ["1password-token", "ops_eyJ" + b62(200)],
  ["1password-token", "A3-ABC123-DEF456GHI78-JK9LM-NP0QR-ST1UV"],
  ["square-token", "sq0atp-" + b62(22)],
  ["mapbox-token", "sk.eyJ" + b62(60) + "." + b62(22)],
  ["cloudflare-ca-key", "v1.0-" + hex(24) + "-" + hex(146)],
  ["perplexity-key", "pplx-" + b62(48)],
  ["groq-key", "gsk_" + b62(52)],
  ["xai-key", "xai-" + b62(80)],
  ["replicate-token", "r8_" + b62(37)],
  ["rubygems-key", "rubygems_" + hex(48)],
  ["nuget-key", "oy2" + "a1b2c3d4e5".repeat(5).slice(0, 43)],
  ["docker-token", "dckr_pat_" + b62(27)],
  ["sourcegraph-token", "sgp_" + hex(16) + "_" + hex(40)],
  ["planetscale-token", "pscale_tkn_" + b62(43)],
  ["prefect-key", "pnu_" + b62(36)],
  ["readme-key", "rdme_" + "a1b2c3d4e5".repeat(7)],
  ["newrelic-key", "NRAK-" + "A1B2C3D4E5F6G7H8I9J0K1L2M3N"],
  ["dynatrace-token", "dt0c01." + "ABCDEFGHIJKLMNOPQRSTUVWX" + "." + rep("ABCD1234", 8)],
  ["easypost-key", "EZAK" + b62(54)],
  ["duffel-token", "duffel_test_" + b62(43)],
  ["flutterwave-key", "FLWSECK_TEST-" + "abcdef0123456789abcdef0123456789" + "-X"],
  ["frameio-token", "fio-u-" + b62(64)],
  ["infracost-key", "ico-" + b62(32)],
  ["octopus-key", "API-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"],
  ["openshift-token", "sha256~" + b62(43)],
  ["plaid-token", "access-sandbox-" + UUID],
  ["shippo-token", "shippo_live_" + hex(40)],
  ["typeform-token", "tfp_" + b62(59)],
  ["artifactory-key", "AKCp" + b62(69)],
  ["adobe-secret", "p8e-" + b62(32)],
  ["clojars-token", "CLOJARS_" + "a1b2c3d4e5".repeat(6)],
];

describe("redactSecrets: more vendor tokens", () => {
  for (const [kind, secret] of MORE_SECRETS) {
    test(`${kind}: ${secret.slice(0, 10)}…`, () => {
      const out = redactSecrets(`before ${secret} after`);
      expect(out).toBe(`before [REDACTED:${kind}] after`);
      // In JSON and in an env line too.
      expect(redactSecrets(`{"v": "${secret}"}`)).toBe(`{"v": "[REDACTED:${kind}]"}`);
      expect(redactSecrets(`X=${secret}\n`)).toBe(`X=[REDACTED:${kind}]\n`);
    });
  }
});

describe("redactSecrets: webhooks and signed URLs keep their host, lose their path", () => {
  const slackPath = "T0" + "ABCDEF1/B0GHIJKL2/" + b62(24);
  const cases: [string, string][] = [
    [`curl -X POST https://hooks.slack.com/services/${slackPath} -d '{"text":"hi"}'`, `curl -X POST https://hooks.slack.com/services/[REDACTED:slack-webhook] -d '{"text":"hi"}'`],
    [`SLACK_URL=hooks.slack.com/workflows/T0ABCDEF1/A0GHIJKL2/412345678901234567/${b62(24)}`, "SLACK_URL=hooks.slack.com/workflows/[REDACTED:slack-webhook]"],
    [`https://hooks.slack.com/triggers/T0ABCDEF1/412345678901/${hex(32)}`, "https://hooks.slack.com/triggers/[REDACTED:slack-webhook]"],
    [`{"url":"https:\\/\\/hooks.slack.com\\/services\\/${slackPath.replace(/\//g, "\\/")}"}`, '{"url":"https:\\/\\/hooks.slack.com\\/services\\/[REDACTED:slack-webhook]"}'],
    [`https://discord.com/api/webhooks/1234567890123456789/${b62(68)}`, "https://discord.com/api/webhooks/[REDACTED:discord-webhook]"],
    [`https://canary.discordapp.com/api/v10/webhooks/1234567890123456789/${b62(68)}?wait=true`, "https://canary.discordapp.com/api/v10/webhooks/[REDACTED:discord-webhook]?wait=true"],
    [`https://contoso.webhook.office.com/webhookb2/${UUID}@${UUID}/IncomingWebhook/${hex(32)}/${UUID}`, "https://contoso.webhook.office.com/webhookb2/[REDACTED:teams-webhook]"],
    [`https://prod-12.westus.logic.azure.com:443/workflows/${hex(32)}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=${b62(43)}`, `https://prod-12.westus.logic.azure.com:443/workflows/${hex(32)}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=[REDACTED:url-signature]`],
    [`https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-12-01&sr=b&sp=r&sig=${b62(40)}%3D`, "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-12-01&sr=b&sp=r&sig=[REDACTED:url-signature]"],
    [`https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=${hex(64)}`, "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=[REDACTED:url-signature]"],
    [`DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${b62(86)}==;EndpointSuffix=core.windows.net`, "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net"],
    [`Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=${b62(43)}=`, "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=[REDACTED:azure-key]"],
  ];
  for (const [input, want] of cases) {
    test(want.slice(0, 60), () => expect(redactSecrets(input)).toBe(want));
  }
});

describe("redactSecrets: near misses of the added kinds are left alone", () => {
  test("prefixes in prose, identifiers, hashes and short values", () => {
    const text = [
      "Post to https://hooks.slack.com/ (see https://api.slack.com/messaging/webhooks) or https://discord.com/channels/123/456.",
      "https://discord.com/api/webhooks is the endpoint; teams uses *.webhook.office.com.",
      "glpat- tokens expire; set gl_project_id=42; the gldt-prefix is for deploy tokens.",
      "hf_hub_download(repo_id) and hf_transfer; HF_TOKEN is read by huggingface_hub.",
      "hf_modelweightsdownloadercachedirectoryxyz is a snake-less identifier; so is hf_MODELWEIGHTSDOWNLOADERCACHEDIRECTORY.",
      "SKU-1234 and SKIP_TESTS=1; key-value store; the us-east-1 region; sha256:" + hex(64),
      "secret_santa_assignments and secret_key_base are names.",
      "commit " + hex(40) + " and md5 " + hex(32) + "; " + hex(32) + "-use-this is a slug.",
      "pat is a name; pattern.match(x); access-control-allow-origin; API-KEY-HEADER; API-V2.",
      "v1.0-beta and sha256~ and sk.eyJ alone; dapi is a word; pul-request typo; ico-file.",
      "url ?sig=short&Signature=abc and sig= alone",
      "AccountKey=; SharedAccessKeyName=RootManageSharedAccessKey",
      "a time 12:34:56 and port 12345:Abc; ratio 100000:A",
    ].join("\n");
    expect(redactSecrets(text)).toBe(text);
  });
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

  test("a GCP service-account key file: the private key goes whole, the rest stays", () => {
    const body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + rep("q83vEjRW", 4), rep("Zm9vYmFy", 8), "QUJD=="].join("\\n");
    const json = `{"type": "service_account", "project_id": "demo-proj", "private_key_id": "${rep("0a1b2c3d4e", 4)}", "private_key": "-----BEGIN PRIVATE KEY-----\\n${body}\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@demo-proj.iam.gserviceaccount.com"}`;
    const out = redactSecrets(json);
    expect(out).toContain('"private_key": "[REDACTED:private-key]\\n"');
    expect(out).not.toContain("q83vEjRW");
    expect(out).toContain('"client_email": "ci@demo-proj.iam.gserviceaccount.com"');
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
    expect(redactSecrets("curl -u admin:" + "s3cr3t-pw" + " https://x.test")).toBe("curl -u admin:[REDACTED:password] https://x.test");
    expect(redactSecrets("curl -s --user 'deploy:" + "Tr0ub4dor&3" + "' https://x.test")).toBe("curl -s --user 'deploy:[REDACTED:password]' https://x.test");
    expect(redactSecrets("wget --user=bob:" + "hunter2hunter2")).toBe("wget --user=bob:[REDACTED:password]");
    // A uid:gid and a reference are not passwords.
    for (const s of ["docker run -u 1000:1000 img", 'curl -u "$USER:$TOKEN" x', "ps -u root"]) expect(redactSecrets(s)).toBe(s);
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
    ["webhook prefixes", rep("hooks.slack.com/services/", MB / 50) + rep("discord.com/api/webhooks/1234567/", MB / 66) + rep("a.webhook.office.com/webhookb2/", MB / 62)],
    ["long runs before a webhook host", rep("a", MB / 2) + "x.webhook.office.com/webhookb2/" + rep("b", MB / 2)],
    ["Azure secret look-alikes", rep("abc1Q~", MB / 6)],
    ["hex before -us", rep(hex(40) + "-us", MB / 43)],
    ["digits before :A", rep("1234567890:A", MB / 12)],
    ["vendor prefixes", rep("glpat-SG.sk.eyJhvs.ATATT3xoxe.xoxp-", MB / 35)],
    ["signed URL parameters", rep("?sig=&Signature=", MB / 16)],
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
