/**
 * The Memory Hub through the compiled binary: `memsearch hub` on a temporary project, its token
 * and loopback binding, its figures against `memsearch stats` and its search against the CLI's,
 * then the page itself in headless Chromium, with screenshots of every view kept in
 * test-artifacts/hub/ (git-ignored) and the page's weight written beside them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { heatmapLayout, longDay } from "../../src/hub/client/charts.ts";
import type { Overview, SearchPage } from "../../src/hub/types.ts";
import { isAlive } from "../../src/core/processes.ts";
import { localDay } from "../../src/memory/journal.ts";
import { contrasts, launchChromium } from "../helpers/browser.ts";
import { REPO, run, tempProject } from "../helpers/cli.ts";
import { startHub as startHubIn, type Hub } from "../helpers/hub.ts";
import { appendTurn } from "../fault/transcript.ts";
import { projectSlug } from "../../src/agents/claude/files.ts";

const ART = join(REPO, "test-artifacts", "hub");
const shots: { file: string; description: string }[] = [];

const p = tempProject();
const env = { ...p.env, MEMSEARCH_NO_WATCH: "1", CLAUDE_CONFIG_DIR: join(p.home, ".claude") };
const stateDir = join(p.home, ".memsearch", "hub");

// --- the project's memory: the sample notes, five months of generated ones, and one tied to a
// real transcript whose prompt and tool output hold secrets.
const TOPICS = ["Redis cache eviction", "deploy pipeline", "flaky checkout test", "database migration", "auth token refresh", "search ranking", "CSV export", "rate limiter"];
const days: Record<string, number> = { "2026-11-20": 3, "2026-11-21": 3 };
const SESSION = "4b1f7c2e-5555-4d6e-8f70-8192a3b4c5d6";
const TURN = "c0ffee00-0001-4000-8000-00000000beef";
const transcript = join(p.home, ".claude", "projects", "-hub-e2e", `${SESSION}.jsonl`);
const ANTHROPIC = `sk-ant-api03-${"H".repeat(64)}`;
const AWS = "AKIAZXCVBNMASDFGHJKL";

function addNotes(day: string, notes: { time: string; session: string; turn: string; bullets: string[]; transcript?: string }[]): void {
  const file = join(p.memory, `${day}.md`);
  let text = existsSync(file) ? "\n" : `# ${day}\n\n`;
  text += `## Session ${notes[0]!.time}\n\n`;
  for (const n of notes) text += `### ${n.time}\n<!-- session:${n.session} turn:${n.turn} transcript:${n.transcript ?? "-"} -->\n${n.bullets.map((b) => `- ${b}`).join("\n")}\n\n`;
  appendFileSync(file, text);
  days[day] = (days[day] ?? 0) + notes.length;
}

const now = new Date();
const dayBefore = (k: number) => localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - k, 12));
for (let k = 0; k < 160; k++) {
  // A pattern with quiet stretches, single notes and busy days, so every heatmap level shows.
  const n = k === 0 ? 3 : k % 11 === 0 ? 7 : k % 3 === 0 ? 1 + ((k * 5) % 4) : k % 7 === 2 ? 2 : 0;
  if (!n) continue;
  const day = dayBefore(k);
  addNotes(
    day,
    Array.from({ length: n }, (_, i) => {
      const topic = TOPICS[(k + i) % TOPICS.length]!;
      return { time: `${String(9 + i).padStart(2, "0")}:${String((k * 7) % 60).padStart(2, "0")}`, session: `gen-${k}`, turn: `gen-${k}-${i}`, bullets: [`User asked about the ${topic} (${day}, note ${i + 1})`, `Claude Code changed the ${topic} handling and ran the tests`] };
    }),
  );
}
mkdirSync(join(transcript, ".."), { recursive: true });
appendTurn(
  transcript,
  { sessionId: SESSION, uuid: TURN, promptId: "p-hub", prompt: `Set up the billing webhook; the key is ${ANTHROPIC}`, command: "cat .env", output: `AWS_ACCESS_KEY_ID=${AWS}\nSTRIPE_MODE=test`, reply: "The billing webhook now verifies Stripe signatures.", cwd: p.root },
  "all",
);
addNotes(dayBefore(1), [{ time: "23:10", session: SESSION, turn: TURN, transcript, bullets: ["User asked to set up the billing webhook", "Claude Code made it verify Stripe signatures"] }]);
// A turn of another session that has no note (the Stop hook never ran for it): its day gets a mark.
const MISSING_DAY = dayBefore(2);
const missingTranscript = join(p.home, ".claude", "projects", "-hub-e2e", "4b1f7c2e-6666-4d6e-8f70-8192a3b4c5d6.jsonl");
{
  const base = { sessionId: "4b1f7c2e-6666-4d6e-8f70-8192a3b4c5d6", cwd: p.root, timestamp: new Date(`${MISSING_DAY}T12:00:00`).toISOString() };
  writeFileSync(
    missingTranscript,
    [
      { ...base, type: "user", uuid: "d00d0000-0001-4000-8000-000000000001", message: { role: "user", content: "Rotate the staging database password" } },
      { ...base, type: "assistant", uuid: "d00d0000-0002-4000-8000-000000000002", message: { id: "m-missing", role: "assistant", content: [{ type: "tool_use", id: "tu-missing", name: "Bash", input: { command: "./rotate.sh staging" } }] } },
      { ...base, type: "user", uuid: "d00d0000-0003-4000-8000-000000000003", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "tu-missing", content: "rotated" }] } },
      { ...base, type: "assistant", uuid: "d00d0000-0004-4000-8000-000000000004", message: { id: "m-missing-2", role: "assistant", content: [{ type: "text", text: "The staging password is rotated." }] } },
    ]
      .map((l) => JSON.stringify(l))
      .join("\n") + "\n",
  );
  const old = new Date(Date.now() - 86_400_000);
  utimesSync(missingTranscript, old, old);
}
const totalNotes = Object.values(days).reduce((a, b) => a + b, 0);

// Claude Code's curated memory of the project: a CLAUDE.md and its memory folder, one file holding a secret.
const GITHUB_TOKEN = `ghp_${"J".repeat(36)}`;
const curatedMemory = join(p.home, ".claude", "projects", projectSlug(realpathSync(p.root)), "memory");
mkdirSync(curatedMemory, { recursive: true });
writeFileSync(join(curatedMemory, "MEMORY.md"), `# Memory\n\n- The quetzal release train leaves on fridays; its token was ${GITHUB_TOKEN} before rotation.\n`);
writeFileSync(join(p.root, "CLAUDE.md"), "# Project\n\nRun the quetzal smoke test before every release.\n");

// --- the hub process

function startHub(args: string[] = [], cwd = p.root): Promise<Hub> {
  return startHubIn(cwd, env, args);
}

const api = async <T>(hub: Pick<Hub, "port" | "token">, path: string, params: Record<string, string | number> = {}): Promise<T> => {
  const u = new URL(path, `http://127.0.0.1:${hub.port}`);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, String(v));
  const r = await fetch(u, { headers: { authorization: `Bearer ${hub.token}` } });
  expect(r.status).toBe(200);
  return (await r.json()) as T;
};

/** Listening sockets of a port, from /proc: the local address each is bound to. */
function boundAddresses(port: number): string[] {
  const out: string[] = [];
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 4 || cols[3] !== "0A") continue; // 0A: LISTEN
      const [addr, hexPort] = cols[1]!.split(":");
      if (parseInt(hexPort!, 16) === port) out.push(addr!);
    }
  }
  return out;
}

let hub: Hub;

beforeAll(async () => {
  rmSync(ART, { recursive: true, force: true });
  mkdirSync(ART, { recursive: true });
  // Built first, as `memsearch stats` would report it.
  const idx = await run(["index"], { cwd: p.root, env });
  expect(idx.code).toBe(0);
  hub = await startHub();
});

afterAll(() => {
  try {
    hub?.proc.kill(9);
  } catch {}
  writeFileSync(join(ART, "screenshots.json"), JSON.stringify(shots, null, 2) + "\n");
});

describe("memsearch hub: the server", () => {
  test("prints its address with a token and listens on 127.0.0.1 only", async () => {
    expect(hub.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/);
    const addrs = boundAddresses(hub.port);
    expect(addrs).toEqual(["0100007F"]);
    // An address of this machine other than loopback does not answer.
    const other = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal);
    if (other) {
      const err = await fetch(`http://${other.address}:${hub.port}/`, { signal: AbortSignal.timeout(3_000) }).then(
        () => undefined,
        (e) => e,
      );
      expect(err).toBeDefined();
    }
    // The record a second hub looks for, readable by the user only.
    const state = join(stateDir, (await api<{ key: string }>(hub, "/api/ping")).key + ".json");
    expect(JSON.parse(readFileSync(state, "utf8")).port).toBe(hub.port);
    expect(Bun.spawnSync(["stat", "-c", "%a", state]).stdout.toString().trim()).toBe("600");
  });

  test("every /api/ request without the right token is refused; the page's files need none", async () => {
    const base = `http://127.0.0.1:${hub.port}`;
    // One character off (never the same character: a token may end in any of them).
    const nearly = hub.token.slice(0, -1) + (hub.token.endsWith("x") ? "y" : "x");
    for (const path of ["/api/overview", "/api/ping", "/api/search?q=redis", `/api/overview?token=${nearly}`, "/api/nope"]) {
      const r = await fetch(base + path);
      expect(r.status).toBe(401);
      expect((await r.json()).error).toContain("token");
    }
    expect((await fetch(`${base}/api/overview`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await fetch(`${base}/api/overview?token=${hub.token}`)).status).toBe(200);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await page.text()).toContain("<title>Memory Hub");
    // Another site's name resolving to 127.0.0.1 (DNS rebinding) gets nothing.
    const rebinding = await fetch(`${base}/api/overview?token=${hub.token}`, { headers: { host: `evil.example:${hub.port}` } });
    expect(rebinding.status).toBe(403);
  });

  test("the totals are what `memsearch stats` reports, and every note is counted", async () => {
    const stats = JSON.parse((await run(["stats", "--json-output"], { cwd: p.root, env })).stdout);
    const o = await api<Overview>(hub, "/api/overview");
    expect(o.totals).toMatchObject({ chunks: stats.total_chunks, files: stats.files, vectors: stats.vectors, indexBytes: stats.index_bytes });
    expect(stats.total_chunks).toBeGreaterThan(50);
    expect(o.embedding.map((e) => e.model)).toEqual([stats.embedding_model]);
    expect(o.totals.notes).toBe(totalNotes);
    expect(o.days).toEqual(days);
    expect(o.today).toBe(localDay(new Date()));
  });

  test("search is the CLI's search, and notes + conversations is `recall --raw`", async () => {
    const cli = JSON.parse((await run(["search", "billing webhook", "-k", "5", "-j"], { cwd: p.root, env })).stdout) as { chunk_hash: string; score: number }[];
    const page = await api<SearchPage>(hub, "/api/search", { q: "billing webhook", limit: 5 });
    expect(page.hits.map((h) => [h.note!.chunk, h.score])).toEqual(cli.map((r) => [r.chunk_hash, r.score]));
    const raw = JSON.parse((await run(["recall", "billing webhook signatures", "--raw", "-j"], { cwd: p.root, env })).stdout);
    const rec = await api<SearchPage>(hub, "/api/search", { q: "billing webhook signatures", mode: "recall", limit: 8 });
    expect(rec.hits.map((h) => [h.score, h.from, h.note?.chunk ?? null])).toEqual(raw.results.map((r: { score: number; from: string[]; note: { chunk_hash: string } | null }) => [r.score, r.from, r.note?.chunk_hash ?? null]));
    expect(rec.hits.some((h) => h.from.includes("transcript"))).toBe(true);
  });

  test("a second `memsearch hub` for the same data reuses the running one", async () => {
    const t0 = Date.now();
    const again = await run(["hub", "--no-open"], { cwd: p.root, env, timeoutMs: 15_000 });
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`Memory Hub: ${hub.url}`);
    expect(again.stderr).toContain("already running");
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  test("a port in use, or not a port, is one line and a non-zero exit", async () => {
    const busy = await run(["hub", "--no-open", "--all-projects", "--port", String(hub.port)], { cwd: p.root, env });
    expect(busy.code).toBe(2);
    expect(busy.stderr.trim().split("\n")).toEqual([`Error: port ${hub.port} is in use; choose another with --port, or leave --port out for a free one`]);
    const bad = await run(["hub", "--no-open", "--port", "70000"], { cwd: p.root, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("memsearch hub: the page in Chromium", () => {
  let browser: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const problems: string[] = [];
  const weight: Record<string, number> = {};

  /** Every test starts from the overview, so any one runs alone and in any order. */
  const start = async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(hub.url);
    await page.waitForSelector(".cards");
  };
  const openTimeline = async () => {
    await start();
    await page.click("a.project");
    await page.waitForSelector(".timeline .day");
  };

  const shot = async (file: string, description: string, opts: { fullPage?: boolean } = { fullPage: true }) => {
    await page.screenshot({ path: join(ART, file), fullPage: opts.fullPage });
    shots.push({ file, description });
  };

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("request", (r) => requests.push(r.url()));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("response", async (r) => {
      const u = new URL(r.url());
      if (!u.pathname.startsWith("/api/") && r.status() === 200) weight[u.pathname] = (await r.body()).byteLength;
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  test("overview: cards, 6-month heatmap with tooltips, 7-day chart, the project", async () => {
    const o = await api<Overview>(hub, "/api/overview");
    await start();
    // The token is kept for the tab, not in the address bar.
    expect(page.url()).not.toContain("token=");
    const value = (stat: string) => page.locator(`[data-stat="${stat}"] .card-value`).innerText();
    expect(await value("notes")).toBe(o.totals.notes.toLocaleString("en-US"));
    expect(await value("chunks")).toBe(o.totals.chunks.toLocaleString("en-US"));
    expect(await value("projects")).toBe("1");
    expect(await value("active-days")).toBe(String(Object.keys(days).length));
    expect(await value("avg-per-day")).toBe(String(Math.round((totalNotes / Object.keys(days).length) * 10) / 10));
    expect(await value("embedding")).toBe("nomic-embed-text");
    expect(await page.locator('[data-stat="embedding"] .card-sub').innerText()).toContain("Ollama unavailable");
    expect(await page.locator('[data-stat="index-size"] .card-value').innerText()).toMatch(/^\d+(\.\d)? (KiB|MiB)$/);

    const lay = heatmapLayout(o.days, o.today);
    const cells = page.locator("rect.cell");
    expect(await cells.count()).toBe(lay.cells.length);
    // The mark of a day with a turn without a note comes later (its own test).
    const drawn = await cells.evaluateAll((els) => els.map((e) => [e.getAttribute("data-date"), Number(e.getAttribute("data-count")), e.getAttribute("class")!.replace(" missing", "")]));
    expect(drawn).toEqual(lay.cells.map((c) => [c.date, c.count, `cell l${c.level}`]));
    expect(new Set(lay.cells.map((c) => c.level))).toEqual(new Set([0, 1, 2, 3, 4]));
    expect(await page.locator("[data-heat-total]").innerText()).toStartWith(`${lay.total} notes on ${lay.activeDays} days`);

    // A tooltip names the day and its count.
    const busy = lay.cells.find((c) => c.level === 4)!;
    await page.hover(`rect[data-date="${busy.date}"]`);
    expect(await page.locator("#tip").innerText()).toBe(`${busy.count} notes on ${longDay(busy.date)}`);
    await shot("overview-1280-light.png", `Overview at 1,280 px, light theme: ${o.totals.notes} notes in ${Object.keys(days).length} active days, the 6-month heatmap with the tooltip of ${busy.date} (${busy.count} notes), the last 7 days and the project card`, { fullPage: false });

    const bars = await page.locator("svg.week g.bar").evaluateAll((els) => els.map((e) => [e.getAttribute("data-date"), Number(e.getAttribute("data-count"))]));
    expect(bars).toHaveLength(7);
    expect(bars[6]).toEqual([o.today, days[o.today] ?? 0]);
    expect(bars.map(([d, n]) => n === (days[d as string] ?? 0))).toEqual(Array(7).fill(true));
    const card = page.locator("a.project");
    expect(await card.count()).toBe(1);
    expect(await card.innerText()).toContain(`${totalNotes} notes`);
    expect(await card.innerText()).toContain("this project");
  }, 30_000);

  test("every turn accounted for: the day holding a turn without a note is marked, and the panel says how many turns have one", async () => {
    await start();
    const marked = page.locator("svg.heatmap rect.missing");
    await marked.first().waitFor();
    expect(await marked.evaluateAll((els) => els.map((e) => e.getAttribute("data-date")))).toEqual([MISSING_DAY]);
    expect(await marked.first().getAttribute("aria-label")).toEndWith("; 1 turn without a note");
    const line = page.locator(".turns-line");
    expect(await line.innerText()).toStartWith(`1 of 2 turns since `);
    expect(await line.innerText()).toContain('"Rotate the staging database password"');
    expect(await line.getAttribute("data-missing")).toBe("1");
    await shot("turns-mark-1280.png", `The heatmap marks ${MISSING_DAY}, a day holding a turn without a note; under it, the line memsearch doctor prints`, { fullPage: false });
  }, 30_000);

  test("keyboard: / focuses the search box, arrows walk the heatmap by day and week", async () => {
    await start();
    const today = localDay(new Date());
    await page.locator(`rect[data-date="${today}"]`).focus();
    await page.keyboard.press("ArrowLeft");
    const weekBefore = localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - 7, 12));
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-date"))).toBe(weekBefore);
    expect(await page.locator("#tip").innerText()).toBe(`${days[weekBefore] ?? 0} note${(days[weekBefore] ?? 0) === 1 ? "" : "s"} on ${longDay(weekBefore)}`);
    await page.keyboard.press("ArrowUp");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-date"))).toBe(localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - 8, 12)));
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press("/");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("q");
    await page.keyboard.press("Escape");
  });

  test("a heatmap day opens that day's notes (click or Enter), with steps to the active days around it", async () => {
    await start();
    const active = Object.keys(days).sort();
    const busy = active.filter((d) => days[d] === 7).at(-1)!;
    await page.click(`rect[data-date="${busy}"]`);
    await page.waitForSelector(".timeline .day");
    expect(page.url()).toEndWith(`#/day/${busy}`);
    expect(await page.locator("h1").innerText()).toBe(longDay(busy));
    const listed = await page.locator("button.note").evaluateAll((els) => els.map((e) => e.getAttribute("data-file")));
    expect(listed).toEqual(Array(7).fill(`${busy}.md`));
    await shot("day-1280.png", `A heatmap day opened: the ${days[busy]} notes of ${busy}, newest first, with links to the days with notes before and after`);
    // The earlier-day link skips the quiet days.
    const earlier = active[active.indexOf(busy) - 1]!;
    await page.click('a[data-day-link="prev"]');
    await page.waitForFunction((d) => location.hash === `#/day/${d}`, earlier);
    await page.waitForSelector(`button.note[data-file="${earlier}.md"]`);
    expect(await page.locator("button.note").count()).toBe(days[earlier]!);
    // A note of the day opens like one of the timeline.
    await page.locator("button.note").first().click();
    await page.waitForSelector("dialog#note[open]");
    // The dialog opens at once and says "Loading…" until the section arrives.
    await page.locator("#note-body", { hasText: `(${earlier}, note ` }).waitFor({ timeout: 10_000 });
    await page.keyboard.press("Escape");

    // From the keyboard: Enter on a focused day with notes; a quiet day does nothing.
    await start();
    const quiet = dayBefore(4);
    expect(days[quiet]).toBeUndefined();
    await page.locator(`rect[data-date="${quiet}"]`).focus();
    await page.keyboard.press("Enter");
    expect(page.url()).not.toContain("#/day/");
    const today = localDay(new Date());
    await page.locator(`rect[data-date="${today}"]`).focus();
    await page.keyboard.press("Enter");
    await page.waitForSelector(`button.note[data-file="${today}.md"]`);
    expect(await page.locator("button.note").count()).toBe(days[today]!);
    expect(await page.locator('a[data-day-link="next"]').count()).toBe(0);
    // A bar of the week chart opens its day too.
    await start();
    await page.click(`svg.week g.bar[data-date="${today}"]`);
    await page.waitForFunction((d) => location.hash === `#/day/${d}`, today);
  }, 30_000);

  test("a week bar with notes is a button: Tab reaches it, Enter opens its day", async () => {
    await start();
    const today = localDay(new Date());
    const bar = page.locator(`svg.week g.bar[data-date="${today}"]`);
    expect(await bar.getAttribute("role")).toBe("button");
    await bar.focus();
    await page.keyboard.press("Enter");
    await page.waitForFunction((d) => location.hash === `#/day/${d}`, today);
    await page.waitForSelector(`button.note[data-file="${today}.md"]`);
    await start();
    await page.locator(`svg.week g.bar[data-date="${today}"]`).focus();
    await page.keyboard.press(" ");
    await page.waitForFunction((d) => location.hash === `#/day/${d}`, today);
  });

  test("a view that loads after the user went elsewhere does not replace the newer one", async () => {
    await start();
    // The overview's data arrives late (Ollama's probe can take a while); the user opens a day meanwhile.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route("**/api/overview*", async (route) => {
      await held;
      await route.continue();
    });
    try {
      // Any other address shows the overview: this asks for it again, and it hangs.
      await page.evaluate(() => (location.hash = "#/overview-again"));
      await page.waitForSelector(".loading");
      const today = localDay(new Date());
      await page.evaluate((d) => (location.hash = `#/day/${d}`), today);
      await page.waitForSelector(`button.note[data-file="${today}.md"]`);
      release();
      await page.waitForLoadState("networkidle");
      await Bun.sleep(300);
      expect(await page.locator("h1").innerText()).toBe(longDay(today));
      expect(await page.locator(".cards").count()).toBe(0);
    } finally {
      release();
      await page.unroute("**/api/overview*");
    }
  });

  test("a project card opens its timeline: days newest first, 40 notes a page, then more", async () => {
    await openTimeline();
    const dayList = await page.locator(".day").evaluateAll((els) => els.map((e) => e.getAttribute("data-day")));
    expect(dayList[0]).toBe(localDay(new Date()));
    expect([...dayList].sort().reverse()).toEqual(dayList);
    expect(await page.locator("button.note").count()).toBe(40);
    const more = page.locator("button.more");
    expect(await more.innerText()).toBe(`Load more (${totalNotes - 40} remaining)`);
    await more.click();
    await page.waitForFunction(() => document.querySelectorAll("button.note").length > 40);
    expect(await page.locator("button.note").count()).toBe(Math.min(80, totalNotes));
    // Keyboard users land on the first note of the new page.
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-index"))).toBe("40");
    await page.evaluate(() => scrollTo(0, 0));
    await shot("timeline-1280.png", "A project's timeline (top of it, after one 'Load more'): notes grouped by day, newest first, each with its time and bullets", { fullPage: false });
  });

  test("a note opens its whole section, and its original turn with the transcript's secrets redacted", async () => {
    await openTimeline();
    const note = page.locator("button.note", { hasText: "set up the billing webhook" });
    while (!(await note.count()) && (await page.locator("button.more").count())) {
      const before = await page.locator("button.note").count();
      await page.click("button.more");
      await page.waitForFunction((n) => document.querySelectorAll("button.note").length > n, before);
    }
    await note.click();
    await page.waitForSelector("dialog[open] .md");
    expect(await page.locator("#note-title").innerText()).toStartWith("Note · ");
    expect(await page.locator("dialog .md").innerText()).toContain("Claude Code made it verify Stripe signatures");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("note-close");
    await page.click("#show-turn");
    await page.waitForSelector("dialog .turn");
    const turn = await page.locator("dialog .turn").innerText();
    expect(turn).toContain("Set up the billing webhook; the key is [REDACTED:anthropic-key]");
    expect(turn).toContain("The billing webhook now verifies Stripe signatures.");
    await page.locator("dialog details.tool summary").click();
    expect(await page.locator("dialog details.tool pre").innerText()).toContain("[REDACTED:aws-key]");
    const html = await page.content();
    for (const secret of [ANTHROPIC, AWS]) expect(html).not.toContain(secret);
    await shot("note-and-turn.png", "A note opened from the timeline (its whole section, `expand`) with its original turn (`transcript --turn`): the API key in the prompt and the AWS key in the tool output show as [REDACTED:…]", { fullPage: false });
    await page.keyboard.press("Escape");
    expect(await page.locator("dialog").evaluate((d) => (d as HTMLDialogElement).open)).toBe(false);
  });

  test("the Curated card lists Claude Code's curated files, each opens redacted; a search finds them labelled curated", async () => {
    await start();
    const section = page.locator("section.curated");
    await section.waitFor();
    expect(await section.getAttribute("data-curated")).toBe("2");
    const text = await section.innerText();
    expect(text).toContain(join(curatedMemory, "MEMORY.md"));
    expect(text).toContain(join(realpathSync(p.root), "CLAUDE.md"));
    expect(text).toContain("from the repository");
    await section.locator("button", { hasText: "MEMORY.md" }).click();
    await page.waitForSelector("dialog[open] .md");
    expect(await page.locator("#note-title").innerText()).toBe("Claude Code memory");
    expect(await page.locator("dialog .md").innerText()).toContain("quetzal release train");
    expect(await page.content()).not.toContain(GITHUB_TOKEN);
    await shot("curated.png", "The Curated card (Claude Code's memory folder and the project's CLAUDE.md) with MEMORY.md opened: the GitHub token in it shows as [REDACTED:…]", { fullPage: false });
    await page.keyboard.press("Escape");
    const s = await api<SearchPage>(hub, "/api/search", { q: "quetzal release train", mode: "notes" });
    expect(s.hits[0]?.from).toEqual(["curated"]);
  });

  test("the search box: hybrid notes search with score, date and source; notes + conversations", async () => {
    await start();
    await page.fill("#q", "billing webhook");
    await page.press("#q", "Enter");
    await page.waitForSelector(".hits");
    const first = page.locator(".hits button.hit").first();
    expect(await first.locator(".score").innerText()).toMatch(/^[01]\.\d{4}$/);
    // Every date the page shows is written one way (issue 32): the day as the headings write it, then the time.
    expect(await first.locator(".date").innerText()).toBe(`${longDay(dayBefore(1))}, 23:10`);
    expect(await first.locator(".src").innerText()).toMatch(new RegExp(`^${dayBefore(1)}\\.md:\\d+$`));
    expect(await first.innerText()).toContain("set up the billing webhook");
    await shot("search-notes.png", "Search results for “billing webhook” (notes, the CLI's hybrid search; BM25 here since Ollama is not running): score, date, source file:line, snippet");
    await page.selectOption("#mode", "recall");
    await page.press("#q", "Enter");
    await page.waitForSelector(".hits .from >> text=note + transcript");
    expect(page.url()).toContain("mode=recall");
    await shot("search-recall.png", "The same search over notes and past conversations (`recall --raw`): the note and its conversation turn fused into one result");
    // A hit opens the note and, from there, the conversation.
    await page.locator(".hits button.hit").first().click();
    await page.waitForSelector("dialog[open] .md");
    await page.keyboard.press("Escape");
  });

  /** The overview's texts: each needs a contrast of at least 4.5 : 1 against the page or its card (WCAG). */
  const OVERVIEW_TEXT = ["body", ".card-label", ".card-value", ".card-sub", ".project-path", ".heat-foot .muted", "button[type=submit]", "a.project"];

  test("readable in light and dark themes (system or toggled), no horizontal scrolling at 1,280 px", async () => {
    await start();
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    for (const [sel, ratio] of Object.entries(await contrasts(page, OVERVIEW_TEXT))) expect([sel, ratio >= 4.5]).toEqual([sel, true]);
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(14, 19, 24)");
    for (const [sel, ratio] of Object.entries(await contrasts(page, OVERVIEW_TEXT))) expect([sel, ratio >= 4.5]).toEqual([sel, true]);
    await shot("overview-1280-dark.png", "The overview in dark mode (the system's preference), 1,280 px");
    await page.emulateMedia({ colorScheme: "light" });
    await page.click("#theme");
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(14, 19, 24)");
    await page.click("#theme");
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(245, 246, 248)");
  });

  test("a phone-sized window: everything fits its width", async () => {
    await start();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForSelector(".cards");
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await shot("overview-phone.png", "The overview on a 390 × 844 phone-sized window: two cards a row, the heatmap scaled to the width");
    await page.click("a.project");
    await page.waitForSelector(".timeline .day");
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await page.emulateMedia({ colorScheme: "dark" });
    await shot("timeline-phone-dark.png", "A project's timeline on the phone-sized window, dark mode", { fullPage: false });
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test("without the token the page says what to do; nothing is ever fetched from elsewhere", async () => {
    // A first visit, for the page weight (the same files whichever test ran before).
    await start();
    const other = await browser.newPage();
    await other.goto(`http://127.0.0.1:${hub.port}/`);
    await other.waitForSelector(".error");
    expect(await other.locator(".error").innerText()).toContain("Not authorised");
    await other.close();
    const hosts = new Set(requests.map((u) => new URL(u).host));
    expect([...hosts]).toEqual([`127.0.0.1:${hub.port}`]);
    expect(problems).toEqual([]);
    // Page weight: what a first visit downloads besides the API's data.
    // The page's modules, each a file of its own (hub/assets.ts), and nothing else.
    expect(Object.keys(weight).sort()).toEqual(["/", "/assets/agents.js", "/assets/ago.js", "/assets/api.js", "/assets/app.js", "/assets/charts.js", "/assets/dom.js", "/assets/heatmap.js", "/assets/icon.svg", "/assets/markdown.js", "/assets/nav.js", "/assets/router.js", "/assets/style.css", "/assets/views/costs.js", "/assets/views/day.js", "/assets/views/note.js", "/assets/views/overview.js", "/assets/views/project.js", "/assets/views/search.js", "/assets/views/sessions.js"]);
    const total = Object.values(weight).reduce((a, b) => a + b, 0);
    writeFileSync(join(ART, "page-weight.json"), JSON.stringify({ total, files: weight }, null, 2) + "\n");
    expect(total).toBeLessThan(100_000);
  });
});

describe("memsearch hub: all projects, detached, stopped", () => {
  test("--all-projects shows every registered project, a gone one marked; --detach returns; --stop stops it", async () => {
    const other = mkdtempSync(join(tmpdir(), "ms-hub-other-"));
    mkdirSync(join(other, ".git"));
    mkdirSync(join(other, ".memsearch", "memory"), { recursive: true });
    writeFileSync(join(other, ".memsearch", "memory", `${dayBefore(2)}.md`), `# ${dayBefore(2)}\n\n## Session 08:00\n\n### 08:00\n<!-- session:o turn:o1 transcript:- -->\n- User asked to add a CSV export to the reports page\n`);
    const at = new Date().toISOString();
    const entry = (path: string) => ({ path, name: path.split("/").pop(), dataDir: join(path, ".memsearch"), firstSeen: at, lastSeen: at });
    writeFileSync(join(p.home, ".memsearch", "projects.json"), JSON.stringify({ version: 1, projects: [entry(p.root), entry(other), entry("/nowhere/old-project")] }));

    const start = await run(["hub", "--all-projects", "--detach", "--no-open"], { cwd: p.root, env, timeoutMs: 30_000 });
    expect(start.code).toBe(0);
    const url = /Memory Hub: (\S+)/.exec(start.stdout)![1]!;
    const u = new URL(url);
    const h = { port: Number(u.port), token: u.searchParams.get("token")! };
    const pid = (await api<{ pid: number }>(h, "/api/ping")).pid;
    try {
      expect(h.port).not.toBe(hub.port);
      const o = await api<Overview>(h, "/api/overview");
      expect(o.scope).toBe("all");
      expect(o.totals.projects).toBe(3);
      expect(o.totals.notes).toBe(totalNotes + 1);
      const gone = o.projects.find((x) => x.path === "/nowhere/old-project")!;
      expect(gone).toMatchObject({ exists: false, notes: 0 });
      const hits = await api<SearchPage>(h, "/api/search", { q: "CSV export reports page" });
      expect(hits.hits[0]!.note!.source).toStartWith(join(other, ".memsearch"));

      const browser = await launchChromium();
      try {
        const pg = await browser.newPage();
        await pg.goto(url);
        await pg.waitForSelector("a.project");
        expect(await pg.locator("a.project").count()).toBe(3);
        expect(await pg.locator("a.project", { hasText: "old-project" }).innerText()).toContain("folder gone");
        await pg.screenshot({ path: join(ART, "all-projects.png"), fullPage: true });
        shots.push({ file: "all-projects.png", description: "`memsearch hub --all-projects`: the totals of three registered projects and one card each, the one whose folder is gone marked so" });
        // A day holds the notes of every project that has some, under the project's name.
        const both = dayBefore(2);
        await pg.click(`rect[data-date="${both}"]`);
        await pg.waitForSelector(".timeline section.day");
        const groups = await pg.locator(".timeline section.day h2 a").allInnerTexts();
        expect(groups.sort()).toEqual([basename(other), basename(p.root)].sort());
        expect(await pg.locator("button.note").count()).toBe(days[both]! + 1);
        expect(await pg.locator("p.muted", { hasText: "in 2 projects" }).innerText()).toBe(`${days[both]! + 1} notes in 2 projects`);
        // With every project in view, a day of one project still names it.
        const today = localDay(new Date());
        await pg.click('a[data-day-link="next"]');
        await pg.waitForFunction((d) => location.hash !== `#/day/${d}`, both);
        await pg.goto(`${url}#/day/${today}`);
        await pg.waitForSelector(`button.note[data-file="${today}.md"]`);
        expect(await pg.locator(".timeline section.day h2 a").allInnerTexts()).toEqual([basename(p.root)]);
        expect(await pg.locator("p.muted", { hasText: "in 1 project" }).innerText()).toBe(`${days[today]} notes in 1 project`);
      } finally {
        await browser.close();
      }
    } finally {
      // A detached hub outlives this test process unless stopped: stop it whatever happened above.
      const stop = await run(["hub", "--all-projects", "--stop"], { cwd: p.root, env });
      expect(stop.code).toBe(0);
      expect(stop.stdout).toContain("Stopped the Memory Hub");
    }
    // (An exited process nobody reaps, as here where PID 1 does not, still answers kill(0): isAlive knows.)
    expect(isAlive(pid)).toBe(false);
    expect(await fetch(`http://127.0.0.1:${h.port}/`).then(() => "answers", () => "gone")).toBe("gone");
    expect((await run(["hub", "--all-projects", "--stop"], { cwd: p.root, env })).stdout).toContain("No Memory Hub is running");
  }, 60_000);

  test("the browser is started with a launch page, never with the token on its command line", async () => {
    const root = mkdtempSync(join(tmpdir(), "ms-hub-launch-"));
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, ".memsearch", "memory"), { recursive: true });
    writeFileSync(join(root, ".memsearch", "memory", `${dayBefore(0)}.md`), `# ${dayBefore(0)}\n\n### 08:00\n- a note to open\n`);
    // A stand-in for xdg-open that writes down what it was asked to open.
    const bin = mkdtempSync(join(tmpdir(), "ms-hub-bin-"));
    const asked = join(bin, "asked");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > "${asked}"\n`, { mode: 0o755 });
    const withOpener = { ...env, PATH: `${bin}:${process.env.PATH}` };
    const started = await run(["hub", "--detach"], { cwd: root, env: withOpener, timeoutMs: 30_000 });
    expect(started.code).toBe(0);
    const url = /Memory Hub: (\S+)/.exec(started.stdout)![1]!;
    const token = new URL(url).searchParams.get("token")!;
    try {
      for (let i = 0; i < 100 && !existsSync(asked); i++) await Bun.sleep(50);
      const args = readFileSync(asked, "utf8").trim().split("\n");
      expect(args).toHaveLength(1);
      expect(args[0]).not.toContain(token);
      const launch = args[0]!;
      expect(launch).toStartWith(stateDir);
      expect(Bun.spawnSync(["stat", "-c", "%a", launch]).stdout.toString().trim()).toBe("600");
      expect(readFileSync(launch, "utf8")).toContain(url);
      // Opened as the browser would: it goes on to the hub, which takes the token and shows the memory.
      const browser = await launchChromium();
      try {
        const pg = await browser.newPage();
        await pg.goto(`file://${launch}`);
        await pg.waitForSelector(".cards");
        expect(new URL(pg.url()).origin).toBe(new URL(url).origin);
        expect(pg.url()).not.toContain("token=");
        expect(await pg.locator('[data-stat="notes"] .card-value').innerText()).toBe("1");
      } finally {
        await browser.close();
      }
    } finally {
      expect((await run(["hub", "--stop"], { cwd: root, env })).code).toBe(0);
      rmSync(root, { recursive: true, force: true });
    }
    // Stopping the hub takes its launch page with it.
    for (let i = 0; i < 40 && existsSync(readFileSync(asked, "utf8").trim()); i++) await Bun.sleep(50);
    expect(existsSync(readFileSync(asked, "utf8").trim())).toBe(false);
  }, 60_000);

  test("a damaged or stale hub record is not trusted: the next hub starts fresh and replaces it", async () => {
    const root = mkdtempSync(join(tmpdir(), "ms-hub-record-"));
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, ".memsearch", "memory"), { recursive: true });
    const first = await startHub([], root);
    const key = (await api<{ key: string }>(first, "/api/ping")).key;
    first.proc.kill("SIGINT");
    await first.proc.exited;
    const record = join(stateDir, `${key}.json`);
    try {
      for (const bad of ["{not json", JSON.stringify({ pid: 1, port: 99999, token: "short", key }), JSON.stringify({ pid: 999999, port: first.port, token: first.token, key, version: "0", startedAt: "x" })]) {
        writeFileSync(record, bad);
        const again = await run(["hub", "--stop"], { cwd: root, env });
        expect(again.code).toBe(0);
        expect(again.stdout).toContain("No Memory Hub is running");
        expect(existsSync(record)).toBe(false);
      }
      writeFileSync(record, "{not json");
      const next = await startHub([], root);
      try {
        expect(JSON.parse(readFileSync(record, "utf8"))).toMatchObject({ pid: next.proc.pid, port: next.port });
      } finally {
        next.proc.kill("SIGINT");
        await next.proc.exited;
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("Ctrl+C stops the hub: exit 0, its record removed, the port closed", async () => {
    // A project of its own: the other tests share the hub of the main one.
    const root = mkdtempSync(join(tmpdir(), "ms-hub-ctrlc-"));
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, ".memsearch", "memory"), { recursive: true });
    const own = await startHub([], root);
    try {
      const key = (await api<{ key: string }>(own, "/api/ping")).key;
      expect(existsSync(join(stateDir, `${key}.json`))).toBe(true);
      own.proc.kill("SIGINT");
      expect(await own.proc.exited).toBe(0);
      expect(existsSync(join(stateDir, `${key}.json`))).toBe(false);
      expect(await fetch(`http://127.0.0.1:${own.port}/`).then(() => "answers", () => "gone")).toBe("gone");
    } finally {
      own.proc.kill(9);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
