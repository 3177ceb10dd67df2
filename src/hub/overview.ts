/** The overview's data (the cards, the heatmap's days, the embedding models' status), every turn accounted for, and what the memory cost. */
import pkg from "../../package.json" with { type: "json" };
import { projectTranscriptsOffThread } from "../agents/registry.ts";
import { noteAgent } from "../core/anchor.ts";
import type { Context } from "../core/context.ts";
import { embedderFor } from "../index/embedder.ts";
import { resolveOllamaHost } from "../core/ollama-client.ts";
import { oneLine } from "../core/errors.ts";
import type { IndexSummary } from "../index/format.ts";
import { projectsFile, readRegistry } from "../memory/projects.ts";
import { userFiles } from "../core/project.ts";
import { localDay } from "../memory/journal.ts";
import { accountTurns, turnsLine } from "../memory/accounting.ts";
import { readModelCalls } from "../memory/ledger.ts";
import { type CostRow, costReport, dollars, formatUsd } from "../memory/prices.ts";
import type { CostRowView, CostsPage, OllamaStatus, Overview, ProjectCard, TurnCounts, TurnsView } from "./types.ts";
import { redact, type HubProjects } from "./projects.ts";
import { curatedCard } from "./curated.ts";

const OLLAMA_CACHE_MS = 30_000;

export async function overviewOf(hub: HubProjects, now = new Date()): Promise<Overview> {
  const days: Record<string, number> = {};
  const totals = { notes: 0, chunks: 0, files: 0, vectors: 0, indexBytes: 0, projects: hub.list.length, knownProjects: 0, activeDays: 0, avgPerDay: 0, byAgent: {} as Record<string, number> };
  const cards: ProjectCard[] = [];
  const models = new Map<string, Context>();
  for (const p of hub.list) {
    const notes = hub.notes(p);
    let summary: IndexSummary | undefined;
    try {
      summary = await hub.indexSummary(p);
    } catch (e) {
      p.problem ??= oneLine(e);
    }
    for (const n of notes) {
      days[n.day] = (days[n.day] ?? 0) + 1;
      const who = noteAgent(n.anchor);
      totals.byAgent[who] = (totals.byAgent[who] ?? 0) + 1;
    }
    totals.notes += notes.length;
    totals.chunks += summary?.chunks ?? 0;
    totals.files += summary?.files ?? 0;
    totals.vectors += summary?.vectors ?? 0;
    totals.indexBytes += summary?.bytes ?? 0;
    cards.push(await hub.card(p, notes, summary));
    const ctx = hub.context(p);
    if (ctx) {
      const model = summary?.model ?? ctx.config["embedding.model"];
      const k = `${ctx.config["embedding.provider"]}|${ctx.config["embedding.host"]}|${model}`;
      if (!models.has(k)) models.set(k, ctx);
    }
  }
  totals.activeDays = Object.keys(days).length;
  totals.avgPerDay = totals.activeDays ? Math.round((totals.notes / totals.activeDays) * 10) / 10 : 0;
  try {
    totals.knownProjects = readRegistry(projectsFile(hub.env)).projects.length;
  } catch {
    totals.knownProjects = 0;
  }
  // Most recently active first; projects without any activity last.
  cards.sort((a, b) => (b.lastActive ?? "").localeCompare(a.lastActive ?? "") || a.name.localeCompare(b.name));
  const embedding = await Promise.all([...models.values()].map((ctx) => ollamaStatus(hub, ctx)));
  return { scope: hub.scope, version: pkg.version, today: localDay(now), totals, embedding, days, projects: cards, curated: curatedCard(hub) };
}

/** Whether Ollama answers for a project's model; asked at most every 30 s. */
function ollamaStatus(hub: HubProjects, ctx: Context): Promise<OllamaStatus> {
  const c = ctx.config;
  const key = `${c["embedding.provider"]}|${c["embedding.host"]}|${c["embedding.model"]}`;
  const hit = hub.ollama.get(key);
  if (hit && Date.now() - hit.at < OLLAMA_CACHE_MS) return hit.status;
  const model = redact(c["embedding.model"], 200);
  const status = (async (): Promise<OllamaStatus> => {
    // A setting the embedder refuses (a bad host, say) is this card's problem, not the page's.
    try {
      const embedder = embedderFor(c, "query");
      if (!embedder) return { model, host: null, ok: null, detail: "embeddings off: keyword search only" };
      let host: string | null = null;
      try {
        host = redact(resolveOllamaHost(c["embedding.host"], hub.env), 300);
      } catch {}
      const probe = await embedder.probe(1_500);
      return probe.ok
        ? { model, host, ok: true, detail: `answers, ${probe.dim} dimensions` }
        : { model, host, ok: false, detail: redact(`${probe.reason.message}; keyword search only`, 500) };
    } catch (e) {
      return { model, host: null, ok: false, detail: redact(`${oneLine(e)}; keyword search only`, 500) };
    }
  })();
  hub.ollama.set(key, { at: Date.now(), status });
  return status;
}

/** Every turn of each project's sessions accounted for, as `memsearch doctor` and `stats` count them. */
export async function turnsOf(hub: HubProjects): Promise<TurnsView> {
  const view: TurnsView = { projects: [], missingDays: {} };
  for (const p of hub.list) {
    const base = { project: p.id, projectName: p.name };
    let a;
    try {
      a = await accountTurns({ root: p.root, memoryDir: hub.memoryDir(p), dataDir: p.dataDir, cacheFile: userFiles(hub.env).turnsCache, sources: await projectTranscriptsOffThread(p.root, hub.env) });
    } catch (e) {
      view.projects.push({ ...base, turns: 0, noted: 0, queued: 0, running: 0, missing: 0, notTurns: {}, toCapture: 0, since: null, line: "", sessions: [], missingTurns: [], problem: redact(oneLine(e), 500) });
      continue;
    }
    const counts = (c: TurnCounts) => ({ turns: c.turns, noted: c.noted, queued: c.queued, running: c.running, missing: c.missing, notTurns: { ...c.notTurns } });
    view.projects.push({
      ...base,
      ...counts(a),
      toCapture: a.toCapture,
      since: a.since ?? null,
      line: a.sessions.length ? redact(turnsLine(a), 1_000) : "",
      sessions: a.sessions.map((x) => ({ agent: x.agent, sessionId: redact(x.sessionId, 200), first: x.first ?? null, last: x.last ?? null, ...counts(x) })),
      missingTurns: a.missingTurns.map((m) => ({ agent: m.agent, sessionId: redact(m.sessionId, 200), turn: redact(m.turn, 200), at: m.at, prompt: redact(m.prompt, 200) })),
      problem: null,
    });
    for (const [day, d] of Object.entries(a.days)) if (d.missing) view.missingDays[day] = (view.missingDays[day] ?? 0) + d.missing;
  }
  return view;
}

/** What the memory cost, over the projects in view. */
export function costsPage(hub: HubProjects): CostsPage {
  return costsOf(hub.list.map((p) => p.dataDir));
}

function costRow(r: CostRow): CostRowView {
  const six = (x: number) => Math.round(x * 1e6) / 1e6;
  return { period: r.period, calls: r.calls, failed: r.failed, inTokens: r.inTokens, outTokens: r.outTokens, charsOnly: r.charsOnly, usd: six(r.usd), unpriced: r.unpriced, reportedUsd: six(r.reportedUsd), reportedCalls: r.reportedCalls, shown: formatUsd(r), reportedShown: r.reportedCalls ? dollars(r.reportedUsd) : "" };
}

/** The ledgers of the projects in view, added up per month and day. */
export function costsOf(dataDirs: string[]): CostsPage {
  const c = costReport(dataDirs.flatMap((d) => readModelCalls(d)));
  return { pricesAsOf: c.pricesAsOf, total: costRow(c.total), months: c.months.map(costRow), days: c.days.slice(0, 31).map(costRow) };
}
