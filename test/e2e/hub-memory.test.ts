/**
 * The Memory Hub's views of what memory did (issue 23), through the compiled binary and headless
 * Chromium: what each prompt received (the injection log), what the memory cost (the ledger), the
 * heatmap across years, and forget: a button that asks first, and a POST the server takes only
 * from its own page (token and same origin). Screenshots in test-artifacts/hub-memory/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import type { CostsPage, Overview, SessionsPage } from "../../src/hub/types.ts";
import { contrasts, launchChromium } from "../helpers/browser.ts";
import { markLine } from "../../src/core/machine-mark.ts";
import { REPO, run, tempProject } from "../helpers/cli.ts";
import { startHub as startHubIn, type Hub } from "../helpers/hub.ts";

const ART = join(REPO, "test-artifacts", "hub-memory");
const shots: { file: string; description: string }[] = [];

const p = tempProject({ notes: { "2024-06-01.md": "# 2024-06-01\n\n## Session 09:00\n\n### 09:00\n<!-- session:old-s turn:old-t transcript:- -->\n- User asked about the old ledger format\n" } });
const env = { ...p.env, MEMSEARCH_NO_WATCH: "1" };
const SESSION = "aa11bb22-0000-4000-8000-00000000c0de";
const dataDir = join(p.root, ".memsearch");

/** A session of three prompts in the temp HOME's ~/.claude/projects, from March 2025. */
function writeTranscript(): string {
  const dir = join(p.home, ".claude", "projects", p.root.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(dir, { recursive: true });
  const b = { parentUuid: null, isSidechain: false, userType: "external", cwd: p.root, sessionId: SESSION, version: "2.1.40" };
  const turns = [
    ["u1", "p1", "How do we tune the redis pool for the billing service?", "Raised the redis pool to 64 connections for billing."],
    ["u2", "p2", "check the deploy queue again", "The deploy queue is empty."],
    ["u3", "p3", "What about the kafka consumer lag?", "Kafka lag is under a second."],
  ];
  const lines = turns.flatMap(([u, pid, q, a], i) => [
    { ...b, type: "user", uuid: u, promptId: pid, timestamp: `2025-03-02T10:0${i}:00Z`, message: { role: "user", content: q } },
    { ...b, type: "assistant", uuid: `a-${u}`, timestamp: `2025-03-02T10:0${i}:30Z`, message: { id: `m-${u}`, role: "assistant", content: [{ type: "text", text: a }] } },
  ]);
  const file = join(dir, `${SESSION}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  utimesSync(file, new Date("2025-03-02T12:00:00Z"), new Date("2025-03-02T12:00:00Z"));
  return file;
}

/** The prompt hook's log for that session: one injection, one wake-up skipped, one below the gate. */
function writeInjectionLog(): void {
  const rec = (o: Record<string, unknown>) => JSON.stringify({ v: 1, session: SESSION, mode: "inject", ...o });
  writeFileSync(
    join(dataDir, "injections.jsonl"),
    [
      rec({ at: "2025-03-02T10:00:01Z", prompt: "p1", search: "bm25", decision: "injected", reason: "memories through the gate", chars: 640, considered: [{ kind: "note", id: "0123456789abcdef", date: "2025-03-01 09:00", score: 0.82, outcome: "injected" }, { kind: "note", id: "fedcba9876543210", score: 0.2, outcome: "below-gate" }] }),
      rec({ at: "2025-03-02T10:01:01Z", prompt: "p2", source: "loop_wakeup", decision: "skipped", reason: "source loop_wakeup: not typed by a person", chars: 0, considered: [] }),
      rec({ at: "2025-03-02T10:02:01Z", prompt: "p3", search: "bm25", decision: "nothing", reason: "nothing through the gate", chars: 0, considered: [{ kind: "note", id: "00000000aaaaaaaa", score: 0.31, outcome: "below-gate" }] }),
      "a line that is not a record",
    ].join("\n") + "\n",
  );
}

function writeLedger(): void {
  // Marked as this machine (the project's home) writes them: only such lines are counted.
  const call = (at: string, over: Record<string, unknown> = {}) => markLine(JSON.stringify({ v: 1, at, provider: "claude", model: "haiku", purpose: "summary", inChars: 5200, outChars: 310, inTokens: 1400, outTokens: 90, ms: 2300, outcome: "ok", ...over }), env as NodeJS.ProcessEnv).trimEnd();
  writeFileSync(
    join(dataDir, "model-calls.jsonl"),
    [
      call("2025-02-27T09:00:00"),
      call("2025-03-02T10:00:40"),
      call("2025-03-02T10:01:40", { purpose: "synthesize", outcome: "timeout", inTokens: undefined, outTokens: undefined, outChars: 0 }),
      call("2025-03-02T10:02:40", { provider: "ollama", model: "llama3.2", purpose: "recall" }),
    ].join("\n") + "\n",
  );
}

const memoryText = () =>
  readdirSync(p.memory)
    .filter((f) => f.endsWith(".md"))
    .map((f) => readFileSync(join(p.memory, f), "utf8"))
    .join("\n");

function startHub(): Promise<Hub> {
  return startHubIn(p.root, env);
}

let hub: Hub;
let projectId: string;

const api = async <T>(path: string, params: Record<string, string> = {}): Promise<T> => {
  const u = new URL(path, `http://127.0.0.1:${hub.port}`);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  const r = await fetch(u, { headers: { authorization: `Bearer ${hub.token}` } });
  expect(r.status).toBe(200);
  return (await r.json()) as T;
};

beforeAll(async () => {
  rmSync(ART, { recursive: true, force: true });
  mkdirSync(ART, { recursive: true });
  writeTranscript();
  const imp = await run(["import"], { cwd: p.root, env });
  expect(imp.code).toBe(0);
  expect(memoryText()).toContain("redis pool");
  writeInjectionLog();
  writeLedger();
  hub = await startHub();
  projectId = (await api<Overview>("/api/overview")).projects[0]!.id;
}, 60_000);

afterAll(() => {
  try {
    hub?.proc.kill(9);
  } catch {}
  writeFileSync(join(ART, "screenshots.json"), JSON.stringify(shots, null, 2) + "\n");
  rmSync(p.root, { recursive: true, force: true });
  rmSync(p.home, { recursive: true, force: true });
});

describe("the API", () => {
  test("what each prompt received: the log's records by session, with the prompts' first words from the transcript", async () => {
    const s = await api<SessionsPage>("/api/sessions", { project: projectId });
    expect(s.total).toBe(1);
    const [session] = s.sessions;
    expect(session!.session).toBe(SESSION);
    expect(session!.injectedChars).toBe(640);
    expect(session!.prompts.map((x) => [x.promptId, x.firstWords, x.source, x.verdict, x.chars])).toEqual([
      ["p1", "How do we tune the redis pool for the billing service?", null, "injected 1 memory", 640],
      ["p2", "check the deploy queue again", "loop_wakeup", "skipped: not typed by a person", 0],
      ["p3", "What about the kafka consumer lag?", null, "nothing: best candidate below the gate", 0],
    ]);
    expect(session!.prompts[0]!.injected).toEqual([{ kind: "note", id: "0123456789abcdef", score: 0.82, date: "2025-03-01 09:00", fromRepository: false, instructionLike: false }]);
    expect(session!.prompts[2]!.bestScore).toBe(0.31);
    // The same records `memsearch debug --injections` prints.
    const debug = JSON.parse((await run(["debug", "--injections", "-j"], { cwd: p.root, env })).stdout);
    expect(debug.records.map((r: { prompt: string; decision: string }) => [r.prompt, r.decision])).toEqual(session!.prompts.map((x) => [x.promptId, x.decision]));
  });

  test("what the memory cost: the ledger per month and day, priced from the table", async () => {
    const c = await api<CostsPage>("/api/costs");
    expect(c.total).toMatchObject({ calls: 4, failed: 1, unpriced: 1, inTokens: 4200, outTokens: 270 });
    expect(c.months.map((m) => [m.period, m.calls])).toEqual([
      ["2025-03", 3],
      ["2025-02", 1],
    ]);
    // Haiku at $1 / $5 per million: 1,400 in and 90 out cost $0.00185.
    expect(c.months[1]!.shown).toBe("$0.0019");
    expect(c.days[0]).toMatchObject({ period: "2025-03-02", calls: 3, shown: "$0.0019 + 1 unpriced" });
  });

  test("a forget is taken only with the token in its header, from the hub's own origin, as JSON, confirmed", async () => {
    const before = memoryText();
    const line = before.split("\n").findIndex((l) => l.includes("redis pool")) + 1;
    const file = readdirSync(p.memory).find((f) => readFileSync(join(p.memory, f), "utf8").includes("redis pool"))!;
    const body = JSON.stringify({ project: projectId, file, id: "0123456789abcdef", line, confirmed: true });
    const origin = `http://127.0.0.1:${hub.port}`;
    const post = (headers: Record<string, string>, b = body, query = "") => fetch(`${origin}/api/forget${query}`, { method: "POST", headers, body: b });
    const json = { "content-type": "application/json" };
    const auth = { authorization: `Bearer ${hub.token}` };
    const cases: [string, Promise<Response>, number][] = [
      ["no token", post({ ...json, origin }), 401],
      ["the token in the address only", post({ ...json, origin }, body, `?token=${hub.token}`), 401],
      ["another origin", post({ ...json, ...auth, origin: "http://evil.example" }), 403],
      ["no origin", post({ ...json, ...auth }), 403],
      ["a cross-site fetch that claims the origin", post({ ...json, ...auth, origin, "sec-fetch-site": "cross-site" }), 403],
      ["a form's content type", post({ ...auth, origin, "content-type": "text/plain" }), 415],
      ["not confirmed", post({ ...json, ...auth, origin }, JSON.stringify({ project: projectId, file, id: "0123456789abcdef", line })), 400],
      ["a path for a file", post({ ...json, ...auth, origin }, JSON.stringify({ project: projectId, file: "../../x.md", id: "0123456789abcdef", line, confirmed: true })), 400],
      ["a line without the id of the note shown", post({ ...json, ...auth, origin }, JSON.stringify({ project: projectId, file, line, confirmed: true })), 400],
      // Well formed, but no section of the file has that text: the note the page showed is not there.
      ["a note that is not there any more", post({ ...json, ...auth, origin }), 409],
    ];
    for (const [what, res, status] of cases) expect([what, (await res).status]).toEqual([what, status]);
    expect((await fetch(`${origin}/api/forget`, { headers: auth })).status).toBe(404);
    expect(memoryText()).toBe(before);
    expect(existsSync(join(dataDir, "forgotten.json"))).toBe(false);
  });
});

describe("the page in Chromium", () => {
  let browser: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  const start = async (hash = "") => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(hub.url + hash);
    await page.waitForSelector(hash ? "main h1" : ".cards");
  };
  const shot = async (file: string, description: string, opts: { fullPage?: boolean; locator?: string } = { fullPage: true }) => {
    if (opts.locator) await page.locator(opts.locator).screenshot({ path: join(ART, file) });
    else await page.screenshot({ path: join(ART, file), fullPage: opts.fullPage });
    shots.push({ file, description });
  };
  const readable = async (sels: string[]) => {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [sel, ratio] of Object.entries(await contrasts(page, sels))) expect([scheme, sel, ratio >= 4.5]).toEqual([scheme, sel, true]);
    }
    await page.emulateMedia({ colorScheme: "light" });
  };

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  test("the heatmap opens on the year that holds the notes, says how many lie outside, and moves through the years", async () => {
    await start();
    const spans = await page.locator("button.span").evaluateAll((els) => els.map((e) => [e.textContent, e.getAttribute("aria-pressed")]));
    const thisYear = new Date().getFullYear();
    expect(spans[0]).toEqual(["Last 6 months", "false"]);
    expect(spans.map(([t]) => t)).toContain("2024");
    expect(spans.find(([t]) => t === "2025")).toEqual(["2025", "true"]);
    expect(spans).toHaveLength(2 + (thisYear - 2024));
    expect(await page.locator("#heat-title").innerText()).toBe("Activity, 2025");
    expect(await page.locator("[data-heat-total]").innerText()).toBe("3 notes on 1 day in 2025; 1 note outside this view");
    expect(await page.locator("rect.cell").first().getAttribute("data-date")).toBe("2025-01-01");
    expect(await page.locator('rect.cell[data-date="2025-03-02"]').getAttribute("data-count")).toBe("3");
    await page.click('button.span[data-span="2024"]');
    expect(await page.locator("#heat-title").innerText()).toBe("Activity, 2024");
    expect(await page.locator("[data-heat-total]").innerText()).toBe("1 note on 1 day in 2024; 3 notes outside this view");
    expect(await page.locator('button.span[data-span="2024"]').getAttribute("aria-pressed")).toBe("true");
    await shot("heatmap-2024-light.png", "The heatmap moved to 2024: the one note of June 1, 2024, and the 3 notes outside the view counted", { locator: '[aria-labelledby="heat-title"]' });
    await page.click('button.span[data-span="recent"]');
    expect(await page.locator("[data-heat-total]").innerText()).toEndWith("; 4 notes outside this view");
    await readable(["button.span", 'button.span[aria-pressed="true"]']);
  }, 30_000);

  test("the cost panel: calls, tokens and an estimate per month and day, in light and dark, and on a phone", async () => {
    await start();
    const panel = page.locator("#costs");
    expect(await panel.locator("[data-cost-total]").innerText()).toBe("4 model calls, $0.0037 + 1 unpriced: claude list prices as of Mon, Nov 24, 2025; Ollama and the extract cost nothing.");
    expect(await panel.locator('tr[data-period="2025-03"]').innerText()).toBe("Mar 2025\t3 (1 failed)\t2,800\t180\t$0.0019 + 1 unpriced");
    expect(await panel.locator('tr[data-period="2025-02-27"]').innerText()).toBe("Thu, Feb 27, 2025\t1\t1,400\t90\t$0.0019");
    await readable(["#costs .muted", "table.costs td", "table.costs th"]);
    await shot("costs-1280-light.png", "What the memory cost, 1,280 px, light: 4 model calls, per month and per day, claude priced from the table dated 2025-11-24, one timed-out call unpriced", { locator: "#costs" });
    await page.emulateMedia({ colorScheme: "dark" });
    await shot("costs-1280-dark.png", "The cost panel, dark", { locator: "#costs" });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "light" });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await shot("costs-phone-light.png", "The cost panel on a 390 px phone, light", { locator: "#costs" });
    await page.emulateMedia({ colorScheme: "dark" });
    await shot("costs-phone-dark.png", "The cost panel on a 390 px phone, dark", { locator: "#costs" });
  }, 30_000);

  test("what each prompt received: first words, source, the injected memory with its score and expand handle, or the reason for none", async () => {
    await start(`#/project/${projectId}`);
    await page.click("[data-sessions-link]");
    await page.waitForSelector(".prompt");
    expect(await page.locator("main h1").innerText()).toBe("What each prompt received");
    const prompts = page.locator(".prompt");
    expect(await prompts.count()).toBe(3);
    const [one, two, three] = [prompts.nth(0), prompts.nth(1), prompts.nth(2)];
    expect(await one.locator(".prompt-words").innerText()).toBe("“How do we tune the redis pool for the billing service?”");
    expect(await one.locator(".verdict").innerText()).toBe("injected 1 memory");
    expect(await one.locator(".injected-list").innerText()).toBe("note · score 0.82 · Sat, Mar 1, 2025, 09:00 · memsearch expand 0123456789abcdef");
    expect(await one.innerText()).toContain("640 characters");
    expect(await two.locator(".badge").innerText()).toBe("loop_wakeup");
    expect(await two.locator(".verdict").innerText()).toBe("skipped: not typed by a person");
    expect(await three.locator(".verdict").innerText()).toBe("nothing: best candidate below the gate (best score 0.31 of 1 candidate)");
    await readable([".prompt-words", ".verdict.injected", ".verdict.skipped", ".prompt .badge", ".injected-list button.link", ".day .muted"]);
    await shot("sessions-1280-light.png", "What each prompt received, 1,280 px, light: a typed prompt given one note (score, expand handle), a loop wake-up skipped, a prompt whose best candidate stayed below the gate");
    await page.emulateMedia({ colorScheme: "dark" });
    await shot("sessions-1280-dark.png", "The session view, dark");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await shot("sessions-phone-dark.png", "The session view on a 390 px phone, dark");
    await page.emulateMedia({ colorScheme: "light" });
    await shot("sessions-phone-light.png", "The session view on a 390 px phone, light");
  }, 30_000);

  test("forget from a note: it asks first; then the note is gone, and stays gone after index --force and import", async () => {
    // The other tests of this file read the memory as it is now, in any order: it is put back after.
    const saved = new Map(readdirSync(p.memory).map((f) => [f, readFileSync(join(p.memory, f), "utf8")]));
    try {
      await start(`#/project/${projectId}`);
      await page.waitForSelector("button.note");
      await page.locator("button.note", { hasText: "redis pool" }).click();
      await page.waitForSelector("#forget-ask");
      await page.click("#forget-ask");
      // Asking changes nothing; keeping it changes nothing.
      expect(await page.locator(".confirm").innerText()).toContain("never write this turn again");
      await readable([".confirm p", "button.danger", "button.secondary"]);
      await shot("forget-confirm-light.png", "Forget asks first: what will happen, and a button to keep the note", { locator: "#note" });
      await page.click("#forget-no");
      expect(memoryText()).toContain("redis pool");
      await page.click("#forget-ask");
      await page.click("#forget-yes");
      await page.waitForSelector("#forget-done");
      expect(await page.locator("#forget-done").innerText()).toBe("Forgotten: 1 note removed; turn u1 will not be written again.");
      await page.click("#note-close");
      await page.waitForSelector("button.note");
      // The list is fetched again once the note closes: the forgotten note leaves it when that answer comes.
      await page.locator("button.note", { hasText: "redis pool" }).waitFor({ state: "detached", timeout: 10_000 });
      expect(await page.locator("button.note", { hasText: "redis pool" }).count()).toBe(0);
      expect(memoryText()).not.toContain("redis pool");
      expect(JSON.parse(readFileSync(join(dataDir, "forgotten.json"), "utf8")).turns.map((t: { turn: string }) => t.turn)).toEqual(["u1"]);

      for (const args of [["index", "--force"], ["import"]]) expect((await run(args, { cwd: p.root, env })).code).toBe(0);
      expect(memoryText()).not.toContain("redis pool");
      expect(memoryText()).toContain("deploy queue");
      expect(JSON.parse((await run(["search", "redis pool billing", "-j"], { cwd: p.root, env })).stdout)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      for (const f of readdirSync(p.memory)) if (!saved.has(f)) rmSync(join(p.memory, f), { force: true });
      for (const [f, text] of saved) writeFileSync(join(p.memory, f), text);
      rmSync(join(dataDir, "forgotten.json"), { force: true });
      expect((await run(["index", "--force"], { cwd: p.root, env })).code).toBe(0);
    }
  }, 60_000);

  test("the file changed under an open note (issue 31): the shown note goes, never the one now at its line; an edited one gets a conflict and the page reads again", async () => {
    const saved = new Map(readdirSync(p.memory).map((f) => [f, readFileSync(join(p.memory, f), "utf8")]));
    try {
      await start(`#/project/${projectId}`);
      await page.waitForSelector("button.note");
      // BRAVO (the deploy queue) is shown; then ALPHA (the redis pool), above it, is forgotten from the CLI.
      await page.locator("button.note", { hasText: "deploy queue" }).click();
      await page.waitForSelector("#forget-ask");
      expect((await run(["forget", "u1"], { cwd: p.root, env })).code).toBe(0);
      await page.click("#forget-ask");
      await page.click("#forget-yes");
      await page.waitForSelector("#forget-done");
      expect(await page.locator("#forget-done").innerText()).toBe("Forgotten: 1 note removed; turn u2 will not be written again.");
      expect(memoryText()).not.toContain("deploy queue");
      expect(memoryText()).toContain("Kafka lag is under a second");
      await page.click("#note-close");

      // CHARLIE (the kafka lag) is shown, then edited by hand: nothing is forgotten, and the page says why.
      await page.locator("button.note", { hasText: "Kafka" }).click();
      await page.waitForSelector("#forget-ask");
      const file = readdirSync(p.memory).find((f) => readFileSync(join(p.memory, f), "utf8").includes("Kafka lag"))!;
      writeFileSync(join(p.memory, file), readFileSync(join(p.memory, file), "utf8").replace("Kafka lag is under a second.", "Kafka lag is under a second, checked twice."));
      const edited = memoryText();
      await page.click("#forget-ask");
      await page.click("#forget-yes");
      await page.waitForSelector("#forget-conflict");
      expect(await page.locator("#forget-conflict").innerText()).toStartWith("This note changed since it was opened");
      await shot("forget-conflict-light.png", "A note changed under the open dialog: nothing forgotten, the page says so", { locator: "#note" });
      expect(memoryText()).toBe(edited);
      expect(JSON.parse(readFileSync(join(dataDir, "forgotten.json"), "utf8")).turns.map((t: { turn: string }) => t.turn)).toEqual(["u1", "u2"]);
      expect(problems.filter((m) => !m.includes("409"))).toEqual([]);
    } finally {
      // The 409 this test asked for is its own: the page's other tests, in any order, see none.
      for (let i = problems.length - 1; i >= 0; i--) if (problems[i]!.includes("409")) problems.splice(i, 1);
      for (const f of readdirSync(p.memory)) if (!saved.has(f)) rmSync(join(p.memory, f), { force: true });
      for (const [f, text] of saved) writeFileSync(join(p.memory, f), text);
      rmSync(join(dataDir, "forgotten.json"), { force: true });
      expect((await run(["index", "--force"], { cwd: p.root, env })).code).toBe(0);
    }
  }, 60_000);
});
