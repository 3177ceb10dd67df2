/**
 * The Memory Hub as a newcomer meets it (issue 32), through the compiled binary and headless
 * Chromium at phone width, light and dark: an empty project says what to do next; a note's
 * outcome is never hidden; a conversation hit shows the message that matched, marked in its turn;
 * a turn steps to the others of its session; every date is written one way; `memsearch expand ID`
 * in the sessions view opens the note; the cost panel stands apart and shows what claude -p
 * reported; the dark heatmap's first level stands out from an empty day; notes of your own are
 * yours. Screenshots in test-artifacts/hub-newcomer/.
 */
import { markLine } from "../../src/core/machine-mark.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import type { Overview } from "../../src/hub/types.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";
import { launchChromium } from "../helpers/browser.ts";
import { REPO, run, tempProject, type Project } from "../helpers/cli.ts";
import { startHub as startHubIn, type Hub } from "../helpers/hub.ts";

const ART = join(REPO, "test-artifacts", "hub-newcomer");
const PHONE = { width: 390, height: 844 };
const SESSION = "c0c0a000-1111-4222-8333-444455556666";

const p = tempProject({ notes: "none" });
const ms = (args: string[], project: Project = p) => run(args, { cwd: project.root, env: { ...project.env, MEMSEARCH_NO_WATCH: "1", CLAUDE_CONFIG_DIR: join(project.home, ".claude") } });

/**
 * A session of two turns in the temp HOME's Claude Code projects folder: the first edits a file
 * and runs the tests (its note gets four bullets, the outcome last), the second says "marmoset"
 * in a message before its last, which the note's extract leaves out.
 */
function writeTranscript(): void {
  const dir = join(p.home, ".claude", "projects", projectSlug(realpathSync(p.root)));
  mkdirSync(dir, { recursive: true });
  const b = { parentUuid: null, isSidechain: false, userType: "external", cwd: p.root, sessionId: SESSION, version: "2.1.40" };
  const at = (m: number) => `2026-03-02T10:${String(m).padStart(2, "0")}:00Z`;
  const tool = (id: string, name: string, input: object, m: number) => [
    { ...b, type: "assistant", uuid: `a-${id}`, timestamp: at(m), message: { id: `m-${id}`, role: "assistant", content: [{ type: "tool_use", id: `tu-${id}`, name, input }] } },
    { ...b, type: "user", uuid: `r-${id}`, timestamp: at(m), message: { role: "user", content: [{ type: "tool_result", tool_use_id: `tu-${id}`, content: "ok" }] } },
  ];
  const text = (id: string, t: string, m: number) => ({ ...b, type: "assistant", uuid: `a-${id}`, timestamp: at(m), message: { id: `m-${id}`, role: "assistant", content: [{ type: "text", text: t }] } });
  const lines = [
    { ...b, type: "user", uuid: "aaaa0001-0000-4000-8000-000000000001", promptId: "p1", timestamp: at(0), message: { role: "user", content: "How do we tune the redis pool for the billing service?" } },
    ...tool("e1", "Edit", { file_path: join(p.root, "src", "pool.ts"), old_string: "16", new_string: "64" }, 1),
    ...tool("b1", "Bash", { command: "npm test" }, 2),
    text("t1", "Raised the redis pool to 64 connections for billing, and the tests pass.", 3),
    { ...b, type: "user", uuid: "aaaa0002-0000-4000-8000-000000000002", promptId: "p2", timestamp: at(10), message: { role: "user", content: "Why is the kafka consumer lagging behind?" } },
    text("t2", "Looking at the marmoset dashboard first, where the consumer group shows its offsets.", 11),
    ...tool("b2", "Bash", { command: "kafka-consumer-groups --describe" }, 12),
    text("t3", "Kafka lag is under five seconds after the rebalance.", 13),
  ];
  const file = join(dir, `${SESSION}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  // A session quiet for hours: import writes every turn (a live one's last turn is the Stop hook's).
  utimesSync(file, new Date("2026-03-02T12:00:00Z"), new Date("2026-03-02T12:00:00Z"));
}

/** The prompt hook's log: the first prompt was given the note of the first turn. */
function writeInjectionLog(chunk: string): void {
  const rec = { v: 1, session: SESSION, mode: "inject", at: "2026-03-02T10:00:01Z", prompt: "p1", search: "bm25", decision: "injected", reason: "memories through the gate", chars: 640, considered: [{ kind: "note", id: chunk, date: "2026-03-01 09:00", score: 0.82, outcome: "injected" }] };
  writeFileSync(join(p.root, ".memsearch", "injections.jsonl"), JSON.stringify(rec) + "\n");
}

/** Two claude -p calls; one reported its own cost. Marked as this machine's, as memsearch writes them: the hub counts no other line. */
function writeLedger(): void {
  const env = { ...process.env, ...p.env } as NodeJS.ProcessEnv;
  const call = (at: string, over: Record<string, unknown> = {}) => markLine(JSON.stringify({ v: 1, at, provider: "claude", model: "haiku", purpose: "summary", inChars: 5200, outChars: 310, inTokens: 1400, outTokens: 90, ms: 2300, outcome: "ok", ...over }), env);
  writeFileSync(join(p.root, ".memsearch", "model-calls.jsonl"), call("2026-03-02T10:00:40", { reportedUsd: 0.0123 }) + call("2026-03-02T10:10:40"));
}

function startHub(project: Project): Promise<Hub> {
  return startHubIn(project.root, { ...project.env, MEMSEARCH_NO_WATCH: "1", CLAUDE_CONFIG_DIR: join(project.home, ".claude") });
}

let hub: Hub;
let chunk: string;
let browser: BrowserContext;
let page: Page;
const problems: string[] = [];
const shots: { file: string; description: string }[] = [];

const api = async <T>(path: string): Promise<T> => {
  const r = await fetch(new URL(path, `http://127.0.0.1:${hub.port}`), { headers: { authorization: `Bearer ${hub.token}` } });
  expect(r.status).toBe(200);
  return (await r.json()) as T;
};

/** Screenshots of the view as it is, on the phone-sized window, light then dark. */
async function shots2(name: string, description: string): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: join(ART, `${name}-phone-${scheme}.png`), fullPage: true });
    shots.push({ file: `${name}-phone-${scheme}.png`, description: `${description} (390 px, ${scheme})` });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

async function open(hash = ""): Promise<void> {
  await page.setViewportSize(PHONE);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`${hub.url}${hash}`);
  await page.waitForSelector("main:not([aria-busy])");
  await page.waitForFunction(() => !document.querySelector("main .loading"));
}

/** Dates as the page writes them: `Mon, Mar 2, 2026`, with `, 10:00` when there is a time; a month `Mar 2026`; a time alone `10:00`. */
const DATE = /^((Mon|Tue|Wed|Thu|Fri|Sat|Sun), (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}, \d{4}(, \d\d:\d\d)?|(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}|\d\d:\d\d)$/;

/** Every date the view shows is in a <time> element written one way, and no other text holds a date (paths and commands aside). */
async function oneDateFormat(): Promise<void> {
  const got = await page.evaluate(() => {
    const times = [...document.querySelectorAll("main time, dialog[open] time")].map((t) => (t as HTMLElement).innerText.trim());
    const stray: string[] = [];
    const roots = [document.querySelector("main")!, ...(document.querySelector("dialog[open]") ? [document.querySelector("dialog[open]")!] : [])];
    for (const root of roots) {
      const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        const el = n.parentElement!;
        if (el.closest("time, code, pre, .src, .src-line, .path, .project-path, .small, summary, .muted.anchor")) continue;
        const t = n.textContent ?? "";
        if (/\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\/\d{1,2}\/\d{2,4}\b|\b\d{1,2}:\d{2}:\d{2}\b/.test(t)) stray.push(t.trim());
      }
    }
    return { times, stray };
  });
  expect(got.times.length).toBeGreaterThan(0);
  for (const t of got.times) expect([t, DATE.test(t)]).toEqual([t, true]);
  expect(got.stray).toEqual([]);
}

beforeAll(async () => {
  rmSync(ART, { recursive: true, force: true });
  mkdirSync(ART, { recursive: true });
  writeTranscript();
  expect((await ms(["import"])).code).toBe(0);
  expect((await ms(["remember", "the deploy key rotates every ninety days"])).code).toBe(0);
  const [hit] = JSON.parse((await ms(["search", "redis pool billing", "-j", "-k", "1"])).stdout);
  chunk = hit.chunk_hash;
  writeInjectionLog(chunk);
  writeLedger();
  hub = await startHub(p);
  browser = await launchChromium();
  page = await browser.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  try {
    hub?.proc.kill(9);
  } catch {}
  writeFileSync(join(ART, "screenshots.json"), JSON.stringify(shots, null, 2) + "\n");
});

describe("the hub for a newcomer (issue 32)", () => {
  test("an empty project says what to do next, not seven zeros", async () => {
    const empty = tempProject({ notes: "none" });
    const other = await startHub(empty);
    try {
      const q = await browser.newPage();
      q.on("pageerror", (e) => problems.push(e.message));
      await q.setViewportSize(PHONE);
      await q.goto(other.url);
      await q.waitForSelector(".getting-started");
      expect(await q.locator(".cards").count()).toBe(0);
      expect(await q.locator("[data-next]").evaluateAll((els) => els.map((e) => e.getAttribute("data-next")))).toEqual(["memsearch import", "memsearch install claude", "memsearch remember the staging database moved to port 5433"]);
      expect(await q.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
      for (const scheme of ["light", "dark"] as const) {
        await q.emulateMedia({ colorScheme: scheme });
        await q.screenshot({ path: join(ART, `empty-phone-${scheme}.png`), fullPage: true });
        shots.push({ file: `empty-phone-${scheme}.png`, description: `A project without notes: the next steps instead of cards of zeros (390 px, ${scheme})` });
      }
      await q.close();
    } finally {
      other.proc.kill(9);
    }
    // And the hub recorded the project it was opened in: `memsearch projects` lists it.
    expect(JSON.parse((await ms(["projects", "-j"], empty)).stdout).map((x: { path: string }) => x.path)).toEqual([empty.root]);
  });

  test("notes of your own are yours: their count and their badge", async () => {
    const o = await api<Overview>("/api/overview");
    expect(o.totals.byAgent).toEqual({ claude: 2, you: 1 });
    await open();
    expect(await page.locator('[data-stat="notes"] .card-sub').innerText()).toBe("2 from Claude Code · 1 of yours");
    await page.click("a.project");
    await page.waitForSelector(".timeline .day");
    const mine = page.locator("button.note", { hasText: "deploy key rotates" });
    expect(await mine.locator(".badge.agent").innerText()).toBe("you");
  });

  test("a note's outcome is never hidden behind +1 more", async () => {
    await open();
    await page.click("a.project");
    await page.waitForSelector(".timeline .day");
    const row = page.locator("button.note", { hasText: "redis pool" });
    const text = await row.innerText();
    expect(text).toContain("Outcome: Raised the redis pool to 64 connections");
    expect(text).toContain("+1 more");
    await oneDateFormat();
    await shots2("timeline", "A project's timeline: each note's request and outcome, your own note marked 'you'");
  });

  test("a conversation hit shows the message that matched, marked in its turn", async () => {
    await open("#/search?q=marmoset&mode=recall");
    const hit = page.locator("button.hit").first();
    expect(await hit.locator("[data-matched-message]").innerText()).toContain("marmoset dashboard");
    await oneDateFormat();
    await shots2("search-recall", "A recall search: the conversation hit shows the message it matched");
    await hit.click();
    await page.waitForSelector("dialog[open] .turn");
    const marked = page.locator("dialog[open] [data-match]");
    expect(await marked.count()).toBe(1);
    expect(await marked.innerText()).toContain("marmoset dashboard");
    expect(await marked.isVisible()).toBe(true);
    await page.keyboard.press("Escape");
  });

  test("Turn 1 of 2 steps to turn 2 and back", async () => {
    await open();
    await page.click("a.project");
    await page.waitForSelector(".timeline .day");
    await page.locator("button.note", { hasText: "redis pool" }).click();
    await page.click("#show-turn");
    await page.waitForSelector("dialog[open] .turn h3");
    expect(await page.locator("dialog[open] .turn h3").innerText()).toBe("Turn 1 of 2");
    await page.click('[data-turn-step="next"]');
    await page.waitForFunction(() => document.querySelector("dialog[open] .turn h3")?.textContent === "Turn 2 of 2");
    expect(await page.locator("dialog[open] .turn").innerText()).toContain("Why is the kafka consumer lagging behind?");
    await oneDateFormat();
    await shots2("turn-2", "The second turn of a session, reached from the first one's Next turn");
    await page.click('[data-turn-step="prev"]');
    await page.waitForFunction(() => document.querySelector("dialog[open] .turn h3")?.textContent === "Turn 1 of 2");
    await page.keyboard.press("Escape");
  });

  test("memsearch expand ID in the sessions view opens the note", async () => {
    const o = await api<Overview>("/api/overview");
    await open(`#/sessions/${encodeURIComponent(o.projects[0]!.id)}`);
    const expand = page.locator(`[data-expand="${chunk}"]`);
    expect(await expand.innerText()).toBe(`memsearch expand ${chunk}`);
    await oneDateFormat();
    await shots2("sessions", "What each prompt received: the note given is a link that opens it");
    await expand.click();
    await page.waitForSelector("dialog[open] .md");
    expect(await page.locator("dialog[open]").innerText()).toContain("Raised the redis pool to 64 connections");
    await page.keyboard.press("Escape");
  });

  test("the cost panel stands apart and shows what claude -p reported", async () => {
    await open();
    await page.waitForSelector("#costs");
    const gap = await page.evaluate(() => {
      const costs = document.getElementById("costs")!;
      return costs.getBoundingClientRect().top - costs.previousElementSibling!.getBoundingClientRect().bottom;
    });
    expect(gap).toBeGreaterThanOrEqual(8);
    expect(await page.locator("#costs thead").first().innerText()).toContain("Reported");
    expect(await page.locator("#costs [data-reported]").first().innerText()).toBe("$0.0123 (1/2)");
    expect(await page.locator("[data-cost-total]").innerText()).toContain("claude -p itself reported $0.0123 for 1 of the 2 calls");
    await oneDateFormat();
    await shots2("overview", "The overview: cards, heatmap, the project and the cost panel with claude -p's reported cost");
  });

  test("dark mode: the heatmap's first level stands out from an empty day (contrast of at least 3:1)", async () => {
    await open();
    await page.emulateMedia({ colorScheme: "dark" });
    const ratio = await page.evaluate(() => {
      const lum = (c: string) => {
        const [r, g, b] = c.match(/\d+(\.\d+)?/g)!.slice(0, 3).map((v) => {
          const x = Number(v) / 255;
          return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
      };
      const fill = (l: number) => getComputedStyle(document.querySelector(`.legend .swatch.l${l}`)!).backgroundColor;
      const [a, b] = [lum(fill(1)), lum(fill(0))];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    });
    expect(ratio).toBeGreaterThanOrEqual(3);
    await page.emulateMedia({ colorScheme: "light" });
  });

  test("no errors in the page's console", () => {
    expect(problems).toEqual([]);
  });
});
