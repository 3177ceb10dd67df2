import { loadContext } from "../core/context.ts";
import { NOTE_AGENTS } from "../agents/names.ts";
import { UsageError } from "../core/errors.ts";
import { DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT, RECALL_SOURCES, type RecallResponse, type RecallResult, type RecallSource } from "../recall/recall.ts";
import { parseSince } from "../core/since.ts";
import type { UpdateProgress, UpdateReport } from "../conversations/ingest.ts";
import { transcriptHealLine } from "../conversations/db.ts";
import { drill } from "../recall/drill.ts";
import type { SessionKind } from "../conversations/rows.ts";
import { localMinute } from "../core/text.ts";
import { out } from "./color.ts";
import { jsonFlag, needsQuery, queryText } from "./common.ts";
import { command, flags, type Args } from "./declare.ts";
import { healNotices } from "./notices.ts";
import { notice, print, printJson } from "./output.ts";
import { isTerminal, writeErr } from "../core/stdio.ts";
import type { LoadedIndexes } from "../watch/gateway.ts";

const recallFlags = flags({
  ...jsonFlag,
  query: { positional: true, type: "string", array: true, describe: "The words to look for (no quotes needed; after -- a word may start with -)" },
  raw: { type: "boolean", describe: "Ranked results, no model" },
  since: { type: "string", describe: "Only this recent: 12h, 3d, 1w, or a date 2026-11-01" },
  limit: { alias: ["k", "top-k"], type: "number", describe: `Results, 1 to ${MAX_RECALL_LIMIT} (default ${DEFAULT_RECALL_LIMIT})` },
  "all-projects": { type: "boolean", describe: "Search the conversations of every project, not only this one" },
  source: { type: "string", choices: RECALL_SOURCES, describe: "Search the notes, the transcripts, or all (default all)" },
  reindex: { type: "boolean", describe: "Rebuild the conversation index from the transcripts first" },
  agent: { type: "string", choices: NOTE_AGENTS, describe: "Only turns with this agent (you: your own notes, memsearch remember)" },
});

export const recallCommand = command({
  command: "recall [query..]",
  describe: "Search notes and past conversations together; a model answers from the results (--raw: the results)",
  flags: recallFlags,
  run: runRecall,
});

export function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_RECALL_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RECALL_LIMIT) throw new UsageError(`--limit must be a whole number between 1 and ${MAX_RECALL_LIMIT}`);
  return limit;
}

export async function runRecall(a: Args<typeof recallFlags>): Promise<void> {
  const query = queryText(a.query);
  if (!query) throw needsQuery("recall");
  const limit = checkLimit(a.limit);
  const source: RecallSource = a.source ?? "all";
  const sinceMs = a.since === undefined ? undefined : parseSince(String(a.since));
  const ctx = loadContext();
  const [{ recall }, { transcriptSources }] = await Promise.all([import("../recall/recall.ts"), import("../agents/registry.ts")]);
  let held: LoadedIndexes | undefined;
  if (source !== "transcripts") {
    const { indexCuratedFirst, firstIndexLine } = await import("./first-index.ts");
    const first = await indexCuratedFirst(ctx);
    if (first !== undefined) notice(firstIndexLine(first));
    held = first?.held;
  }
  const progress = buildProgress();
  const res = await recall(
    { query, limit, sinceMs, project: ctx.project.root, allProjects: a.allProjects === true, source, agent: a.agent },
    { ctx, ...(held ? { cache: held } : {}), reindex: a.reindex === true, onProgress: progress.show, archiveDays: ctx.config["conversations.archive_days"], sources: transcriptSources() },
  );
  progress.end();
  recallNotices(res, ctx.config["embedding.model"]);
  if (res.results.length === 0) {
    const what = source === "notes" ? "notes" : source === "transcripts" ? "transcripts" : "notes or transcripts";
    const line = `Nothing found in ${what} for "${query}".`;
    if (a.jsonOutput) {
      notice(line);
      printJson(toJson(query, res, null));
    } else print(line);
    return;
  }
  if (a.raw) {
    if (a.jsonOutput) printJson(toJson(query, res, null));
    else print(formatResults(query, res.results));
    return;
  }
  await printAnswer(ctx, query, res, a.jsonOutput);
}

/** A first build of the conversation index on a terminal: its progress on one line, ended when it is done. */
function buildProgress(): { show: (p: UpdateProgress) => void; end: () => void } {
  const tty = isTerminal(2);
  let shown = false;
  return {
    show(p) {
      // Only a large first build is worth a line; an update of a few files is done before it would show.
      if (!tty || p.bytesTotal < 20 * 1024 * 1024) return;
      shown = true;
      writeErr(`\rmemsearch: indexing conversations ${p.filesDone}/${p.filesTotal} files, ${Math.round(p.bytesDone / 1048576)}/${Math.round(p.bytesTotal / 1048576)} MB`);
    },
    end() {
      if (shown) writeErr("\n");
    },
  };
}

/** What the notes' and the conversations' side had to say: heals, an index not searched, a large update, a ranking without vectors. */
function recallNotices(res: RecallResponse, model: string): void {
  if (res.notes.heal) for (const line of healNotices(res.notes.heal, model)) notice(line);
  if (res.transcripts.healed) notice(transcriptHealLine(res.transcripts.healed));
  if (res.transcripts.unavailable) notice(`memsearch: conversations not searched: ${res.transcripts.unavailable}`);
  for (const line of updateNotices(res.transcripts.update, res.transcripts.healed !== undefined)) notice(line);
  if (res.notes.warning) notice(`Warning: ${res.notes.warning}; notes ranked by BM25 only`);
}

/** The model's answer from the results, with their sources; the results themselves when no model answers. */
async function printAnswer(ctx: ReturnType<typeof loadContext>, query: string, res: RecallResponse, json: boolean): Promise<void> {
  const [{ summarizerOptions }, { answerFrom }] = await Promise.all([import("../memory/summarizer.ts"), import("../recall/prompt.ts")]);
  const answer = await answerFrom("recall", query, res.results, summarizerOptions(ctx.config, { ledger: { dataDir: ctx.project.dataDir, purpose: "recall" } }));
  if (json) {
    if (!answer.ok) notice(`memsearch: no model answered (${answer.reason}); here are the results`);
    printJson(toJson(query, res, answer));
    return;
  }
  if (!answer.ok) {
    notice(`memsearch: no model answered (${answer.reason}); here are the results`);
    print(formatResults(query, res.results));
    return;
  }
  print(`${answer.text}\n\n${sourcesFooter(res.results)}`);
}

/** The one line a build or a large update of the conversation index is worth. */
export function updateNotices(u: UpdateReport | undefined, healed = false): string[] {
  if (!u) return [];
  const out: string[] = [];
  // After a heal its line is the one notice: the build it caused is part of it.
  const built = !healed && u.firstBuild && u.read > 0;
  if (built) out.push(`memsearch: indexed ${u.messages} messages from ${u.read} transcripts in ${(u.ms / 1000).toFixed(1)}s (first build of the conversation index)`);
  else if (!healed && u.ms > 2000) out.push(`memsearch: updated the conversation index (${u.messages} messages from ${u.read} transcripts) in ${(u.ms / 1000).toFixed(1)}s`);
  for (const e of u.errors.slice(0, 3)) out.push(`memsearch: skipped ${e.path}: ${e.message}`);
  if (u.errors.length > 3) out.push(`memsearch: ${u.errors.length - 3} more transcripts could not be read`);
  return out;
}

export const SESSION_LABELS: Record<SessionKind, string> = { plan: "Plan", summary: "Compaction summary", todos: "Final todo list", first_prompt: "First prompt" };

/** `; archived: transcript deleted YYYY-MM-DD` for a hit whose transcript Claude Code deleted. */
function archivedLabel(at: number | undefined): string {
  return at === undefined ? "" : `; archived: transcript deleted ${localMinute(at).slice(0, 10)}`;
}

export function formatResults(query: string, results: RecallResult[]): string {
  const parts = [`Recall: ${results.length} result${results.length === 1 ? "" : "s"} for "${query}"`];
  results.forEach((r, i) => {
    const d = drill(r);
    parts.push("", out.bold(out.cyan(`--- ${i + 1}. ${r.date ?? "date unknown"}  [${r.from.join(" + ")}]  ${r.agent}  score ${out.yellow(r.score.toFixed(4))}`)));
    if (r.note) {
      parts.push(`${r.note.curated ? "Curated" : "Note"}: ${r.note.source}:${r.note.startLine}${r.note.heading ? ` (${r.note.heading})` : ""}`, `  ${r.note.snippet}`);
    }
    if (r.transcript) {
      const t = r.transcript;
      parts.push(`Conversation [messages table${archivedLabel(t.archivedAt)}] (${t.role}, ${t.matches} matching message${t.matches === 1 ? "" : "s"}): ${t.snippet}`);
      if (t.paths.length) parts.push(`  files: ${t.paths.slice(0, 6).join(", ")}${t.paths.length > 6 ? ` (+${t.paths.length - 6})` : ""}`);
    }
    if (r.sessionContent) {
      const c = r.sessionContent;
      parts.push(`${SESSION_LABELS[c.kind]} [session table${archivedLabel(c.archivedAt)}] of session ${c.session}${c.kind === "plan" && c.title ? `: ${c.title}` : ""}`, `  ${c.snippet}`);
      if (c.planFile) parts.push(`  plan file: ${c.planFile}`);
    }
    if (d.expand) parts.push(out.dim(`  → ${d.expand}`));
    if (d.transcript) parts.push(out.dim(`  → ${d.transcript}`));
  });
  return parts.join("\n");
}

function sourcesFooter(results: RecallResult[]): string {
  const lines = ["Sources:"];
  results.forEach((r, i) => {
    const d = drill(r);
    lines.push(`  [result ${i + 1}] ${r.date ?? "?"}  ${[d.expand, d.transcript].filter(Boolean).join("  |  ")}`);
  });
  return lines.join("\n");
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

export function toJson(query: string, res: RecallResponse, answer: { ok: true; text: string; provider: string } | { ok: false; reason: string } | null) {
  return {
    query,
    answer: answer?.ok ? answer.text : null,
    model: answer?.ok ? answer.provider : null,
    ...(answer && !answer.ok ? { fallback_reason: answer.reason } : {}),
    notes: { searched: res.notes.searched, hits: res.notes.hits, ...(res.notes.mode ? { mode: res.notes.mode } : {}), ...(res.notes.nothingIndexed ? { nothing_indexed: true } : {}) },
    transcripts: { searched: res.transcripts.searched, hits: res.transcripts.hits, session_hits: res.transcripts.sessionHits ?? 0 },
    results: res.results.map((r) => {
      const d = drill(r);
      return {
        score: round(r.score),
        date: r.date ?? null,
        from: r.from,
        session: r.session ?? null,
        turn: r.turn ?? null,
        agent: r.agent,
        note: r.note
          ? { chunk_hash: r.note.chunkHash, source: r.note.source, heading: r.note.heading, start_line: r.note.startLine, end_line: r.note.endLine, score: round(r.note.score), snippet: r.note.snippet, kind: r.note.curated ? "curated" : "note" }
          : null,
        transcript: r.transcript
          ? {
              path: r.transcript.path,
              session: r.transcript.session,
              turn_uuid: r.transcript.turnUuid,
              prompt_id: r.transcript.promptId ?? null,
              role: r.transcript.role,
              matches: r.transcript.matches,
              score: round(r.transcript.score),
              snippet: r.transcript.snippet,
              tools: r.transcript.tools,
              paths: r.transcript.paths,
              table: "messages",
              archived_at: r.transcript.archivedAt !== undefined ? new Date(r.transcript.archivedAt).toISOString() : null,
            }
          : r.anchorTranscript
            ? { path: r.anchorTranscript.path, turn_uuid: r.anchorTranscript.turn }
            : null,
        session_content: r.sessionContent
          ? {
              table: "session",
              kind: r.sessionContent.kind,
              title: r.sessionContent.title,
              session: r.sessionContent.session,
              path: r.sessionContent.path,
              turn_uuid: r.sessionContent.turnUuid || null,
              plan_file: r.sessionContent.planFile || null,
              score: round(r.sessionContent.score),
              snippet: r.sessionContent.snippet,
              archived_at: r.sessionContent.archivedAt !== undefined ? new Date(r.sessionContent.archivedAt).toISOString() : null,
            }
          : null,
        expand: d.expand ?? null,
        open: d.transcript ?? null,
      };
    }),
  };
}
