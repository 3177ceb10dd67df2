/** What each prompt received (the injection log), per session, each prompt with its first words from its transcript. */
import { projectTranscriptsOffThread } from "../agents/registry.ts";
import { type InjectionRecord, readInjections } from "../memory/injections.ts";
import type { PromptReceived, SessionsPage } from "./types.ts";
import { redact, round, type HubProjects } from "./projects.ts";

const SESSIONS_SHOWN = 30;
const FIRST_WORDS_CHARS = 120;

/** What each prompt received, per session (the injection log). */
export function sessionsPage(hub: HubProjects, id: string): Promise<SessionsPage> {
  return sessionsOf(hub.project(id), hub.env);
}

/** The prompts of the newest sessions of a project's injection log, each with its first words from the transcript. */
export async function sessionsOf(p: { id: string; name: string; root: string; dataDir: string }, env: NodeJS.ProcessEnv): Promise<SessionsPage> {
  const bySession = new Map<string, InjectionRecord[]>();
  // SessionStart's records say what its context gave; the page lists prompts.
  for (const r of readInjections(p.dataDir).filter((x) => !x.event)) {
    const key = r.session ?? "";
    if (!bySession.has(key)) bySession.set(key, []);
    bySession.get(key)!.push(r);
  }
  const all = [...bySession.entries()].sort((a, b) => b[1].at(-1)!.at.localeCompare(a[1].at(-1)!.at));
  const shown = all.slice(0, SESSIONS_SHOWN);
  const words = await promptWords(p.root, new Set(shown.map(([s]) => s)), env);
  return {
    project: p.id,
    projectName: p.name,
    total: all.length,
    sessions: shown.map(([session, recs]) => ({
      session: redact(session || "(no session id)", 300),
      first: recs[0]!.at,
      last: recs.at(-1)!.at,
      injectedChars: recs.reduce((n, r) => n + (r.decision === "injected" ? r.chars : 0), 0),
      prompts: recs.map((r) => promptReceived(r, r.prompt ? words.get(`${session} ${r.prompt}`) : undefined)),
    })),
  };
}

function promptReceived(r: InjectionRecord, firstWords: string | undefined): PromptReceived {
  const injected = r.considered.filter((c) => c.outcome === "injected");
  const best = r.considered.length ? Math.max(...r.considered.map((c) => c.score)) : null;
  let verdict: string;
  if (r.decision === "injected") verdict = `injected ${injected.length || ""} ${injected.length === 1 ? "memory" : "memories"}`.replace("  ", " ");
  else if (r.decision === "skipped" && /not typed by a person/.test(r.reason)) verdict = "skipped: not typed by a person";
  else if (r.decision === "nothing" && r.reason === "nothing through the gate") verdict = r.considered.length ? "nothing: best candidate below the gate" : "nothing: no candidate found";
  else verdict = `${r.decision}: ${r.reason}`;
  return {
    at: r.at,
    promptId: r.prompt ?? null,
    source: r.source ?? null,
    firstWords: firstWords ?? null,
    decision: r.decision,
    verdict: redact(verdict, 300),
    reason: redact(r.reason, 500),
    mode: r.mode,
    chars: r.chars,
    injected: injected.map((c) => ({ kind: c.kind, id: c.id, score: round(c.score), date: c.date ?? null, fromRepository: c.fromRepository === true, instructionLike: c.instructionLike === true })),
    bestScore: best === null ? null : round(best),
    considered: r.considered.length,
  };
}

/**
 * `session promptId` → the prompt's first words, from the project's transcripts of those sessions
 * whose listing names their session (a transcript named after its session is read, no other).
 * Redacted, then clipped.
 */
async function promptWords(root: string, sessions: Set<string>, env: NodeJS.ProcessEnv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const source of await projectTranscriptsOffThread(root, env)) {
    for (const file of source.files) {
      if (!file.session || !sessions.has(file.session)) continue;
      try {
        for (const t of (await source.listTurns(file.path)).turns) if (t.promptId) out.set(`${file.session} ${t.promptId}`, redact(t.userText.replace(/\s+/g, " ").trim(), FIRST_WORDS_CHARS));
      } catch {
        // An unreadable transcript leaves its prompts without words; the log still says what they received.
      }
    }
  }
  return out;
}
