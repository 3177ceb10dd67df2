/** Search over the projects in view: their notes through the index gateway, or notes and conversations (recall). */
import { transcriptSources } from "../agents/registry.ts";
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { DEFAULT_AGENT, noteAgent } from "../core/anchor.ts";
import { oneLine } from "../core/errors.ts";
import { chunkAnchor } from "../index/expand.ts";
import { searchIndex } from "../watch/gateway.ts";
import { recall } from "../recall/recall.ts";
import { transcriptHealLine } from "../conversations/db.ts";
import type { SearchResponse } from "../index/search.ts";
import type { StoredChunk } from "../index/types.ts";
import { isDailyFile } from "../memory/journal.ts";
import type { SearchHit, SearchPage } from "./types.ts";
import { redact, round, SNIPPET_CHARS, type HubProjects, type Project } from "./projects.ts";

/** The CLI's search, through the index gateway (the watch process, else this hub's loaded indexes). */
async function searchProject(hub: HubProjects, p: Project, query: string, topK: number): Promise<SearchResponse | undefined> {
  const ctx = hub.context(p);
  if (!ctx || !existsSync(ctx.project.dataDir)) return undefined;
  const found = await searchIndex(ctx, { query, topK }, { cache: hub.indexes });
  return found.kind === "results" ? found.response : undefined;
}

/** Notes of every project in view, one ranking (the fused scores are comparable across indexes). */
async function searchAll(hub: HubProjects, query: string, topK: number): Promise<{ res: SearchResponse; owner: Map<string, Project> }> {
  const owner = new Map<string, Project>();
  const results: SearchResponse["results"] = [];
  let hybrid = false;
  const warnings = new Set<string>();
  for (const p of hub.list) {
    let r: SearchResponse | undefined;
    try {
      r = await searchProject(hub, p, query, topK);
    } catch (e) {
      warnings.add(`${p.name}: ${oneLine(e)}`);
      continue;
    }
    if (!r) continue;
    if (r.mode === "hybrid") hybrid = true;
    if (r.warning) warnings.add(r.warning);
    for (const x of r.results) {
      owner.set(x.chunk.chunkHash, p);
      results.push(x);
    }
  }
  results.sort((a, b) => b.score - a.score);
  return { res: { results: results.slice(0, topK), mode: hybrid ? "hybrid" : "bm25", warning: [...warnings].join("; ") || undefined }, owner };
}

export async function searchPage(hub: HubProjects, query: string, mode: "notes" | "recall", limit: number): Promise<SearchPage> {
  if (mode === "notes") {
    const { res, owner } = await searchAll(hub, query, limit);
    return {
      query,
      mode,
      scope: hub.scope,
      ranking: res.results.length ? res.mode : null,
      warnings: res.warning ? [redact(res.warning, 500)] : [],
      hits: res.results.map((r) => {
        const p = owner.get(r.chunk.chunkHash)!;
        return { project: p.id, projectName: p.name, score: round(r.score), date: r.kind === "curated" ? null : dateOfChunk(r.chunk), from: [r.kind === "curated" ? "curated" : "note"], note: noteHit(r.chunk), transcript: null, agent: r.kind === "curated" ? DEFAULT_AGENT : noteAgent(chunkAnchor(r.chunk)) };
      }),
    };
  }
  const current = hub.current();
  let owner = new Map<string, Project>();
  const res = await recall(
    { query, limit, project: current.root, allProjects: hub.scope === "all", source: "all" },
    {
      env: hub.env,
      // OpenCode's database read on a thread of its own: the hub answers every other request meanwhile.
      sources: transcriptSources(hub.env, { offThread: true }),
      searchNotes: async (q, topK) => {
        const found = await searchAll(hub, q, topK);
        owner = found.owner;
        return found.res;
      },
    },
  );
  const hits: SearchHit[] = res.results.map((r) => {
    const p = r.note ? owner.get(r.note.chunkHash) : undefined;
    const c = r.sessionContent;
    const t = r.transcript ? { path: r.transcript.path, turn: r.transcript.turnUuid } : (r.anchorTranscript ?? (c?.turnUuid ? { path: c.path, turn: c.turnUuid } : undefined));
    if (t) hub.knownTranscripts.add(t.path);
    return {
      project: p?.id ?? null,
      projectName: p?.name ?? null,
      // Fused ranks are small numbers: six decimals, as `recall --json-output` gives them.
      score: Math.round(r.score * 1e6) / 1e6,
      date: r.date ?? null,
      from: r.from,
      note: r.note ? { chunk: r.note.chunkHash, source: r.note.source, line: r.note.startLine, heading: redact(r.note.heading, 200), snippet: redact(r.note.snippet, SNIPPET_CHARS) } : null,
      transcript: t ? { path: t.path, turn: t.turn, role: r.transcript?.role ?? "user", snippet: redact(r.transcript?.snippet ?? c?.snippet ?? "", SNIPPET_CHARS), matched: r.transcript !== undefined } : null,
      agent: r.agent,
    };
  });
  const healed = res.transcripts.healed ? transcriptHealLine(res.transcripts.healed) : undefined;
  const warnings = [res.notes.warning, healed, res.transcripts.unavailable, ...(res.transcripts.update?.errors ?? []).slice(0, 3).map((e) => `${e.path}: ${e.message}`)].filter((w): w is string => !!w).map((w) => redact(w, 500));
  return { query, mode, scope: hub.scope, ranking: res.notes.mode ?? null, warnings, hits };
}

function noteHit(c: StoredChunk): NonNullable<SearchHit["note"]> {
  // The anchor comment is for drilling down and the heading is shown apart: neither is for reading here.
  const text = c.content
    .replace(/<!--[\s\S]*?-->\s*/g, "")
    .replace(/^#{1,6}\s+.*(\n|$)/, "")
    .trim();
  return { chunk: c.chunkHash, source: c.source, line: c.startLine, heading: redact(c.heading, 200), snippet: redact(text, SNIPPET_CHARS) };
}

/** A chunk of a daily file is dated by the file, and by its heading's time when it has one. */
function dateOfChunk(c: StoredChunk): string | null {
  const name = basename(c.source);
  if (!isDailyFile(name)) return null;
  const time = /^\d{1,2}:\d{2}\b/.exec(c.heading)?.[0];
  return time ? `${name.slice(0, 10)} ${time}` : name.slice(0, 10);
}
