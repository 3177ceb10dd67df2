import { homedir } from "node:os";
import { loadContext } from "../core/context.ts";
import { InputError, oneLine, UsageError } from "../core/errors.ts";
import { estimateCost, planImport, runImport, type ImportCost, type ImportPlan, type ImportProgress, type ImportResult } from "../memory/import.ts";
import { summarizeTurn, summarizerOptions, type SummarizerProvider } from "../memory/summarizer.ts";
import { describeSkips } from "../transcript/turn-kind.ts";
import { jsonFlag } from "./common.ts";
import { namedTranscripts, projectTranscripts } from "../agents/registry.ts";
import { command } from "./declare.ts";
import { noteProject } from "./projects.ts";
import { notice, print, printJson } from "./output.ts";
import { isTerminal, writeErr } from "../core/stdio.ts";

/** Model calls run at once by default: claude calls are remote and slow; a local Ollama serves one at a time. */
const DEFAULT_JOBS: Record<SummarizerProvider, number> = { extract: 1, claude: 4, ollama: 1 };

export const importCommand = command({
  command: "import [paths..]",
  describe: "Write notes for the project's past sessions (Claude Code, Codex CLI, Gemini CLI, OpenCode, Copilot CLI), as the Stop hook would have",
  flags: {
    ...jsonFlag,
    paths: { positional: true, type: "string", array: true, default: [], describe: "Transcript files (or folders of them) to import instead of the project's" },
    "dry-run": { alias: "n", type: "boolean", default: false, describe: "Say what would be written and what it would cost; write nothing" },
    summarizer: { alias: "s", type: "string", choices: ["extract", "claude", "ollama"] satisfies SummarizerProvider[], default: "extract", describe: "Who writes the notes: a deterministic extract (free), claude -p, or a local Ollama chat model" },
    jobs: { type: "number", describe: "Turns summarised at once by a model (default 4 for claude, 1 for ollama)" },
  },
  run: async (a) => {
    const started = performance.now();
    const jobs = a.jobs ?? DEFAULT_JOBS[a.summarizer];
    if (!Number.isInteger(jobs) || jobs < 1 || jobs > 32) throw new UsageError("--jobs must be a whole number from 1 to 32");
    const ctx = loadContext();
    const { project, config } = ctx;
    const warn = (m: string) => notice(`Warning: ${m}`);
    // Every agent's sessions of the project, unless files are named.
    const sources = a.paths.length ? await namedTranscripts(a.paths) : projectTranscripts(project.root, process.env, { warn });
    const plan = await planImport({ root: project.root, memoryDir: project.memoryDir, dataDir: project.dataDir, sources, warn });

    if (a.paths.length && plan.transcripts.length === 0) {
      if (plan.skipped.length > 0) throw new InputError("nothing to import: every transcript given was skipped");
      // An empty file or a folder without transcripts: the project's own folder was never looked in, so it is not the one to name.
      throw new InputError(`nothing to import: no transcript with turns in ${a.paths.join(", ")}`);
    }
    if (plan.transcripts.length === 0) {
      // A new user, or a project never opened in Claude Code: nothing to do is not a failure.
      const line = `No transcripts of this project (${project.root}) in ${plan.projectsDir}${plan.otherProjects ? ` (${fmt(plan.otherProjects)} of other projects left alone)` : ""}.`;
      return a.jsonOutput ? printJson({ ...planJson(plan), written: 0 }) : print(line);
    }

    if (a.dryRun) {
      const cost = await estimateCost(plan, a.summarizer);
      if (a.jsonOutput) return printJson({ ...planJson(plan), cost });
      return print([dryRunLine(plan), costLine(cost, a.summarizer === "claude" ? config["summarizer.model"] : config["summarizer.ollama_model"]), ...planNotes(plan)].join("\n"));
    }

    const bar = progressBar();
    let result: ImportResult;
    try {
      result = await runImport(plan, {
        memoryDir: project.memoryDir,
        concurrency: jobs,
        summarize: (turn) => summarizeTurn(turn, summarizerOptions(config, { provider: a.summarizer, ledger: { dataDir: project.dataDir, purpose: "import" }, paths: { root: project.root, home: homedir() } })),
        onProgress: bar.update,
        warn: (m) => bar.interrupt(() => notice(`Warning: ${m}`)),
      });
    } finally {
      bar.done();
    }

    let indexed = "";
    if (result.written > 0) {
      try {
        const { refreshIndex } = await import("../watch/gateway.ts");
        const { indexNotices } = await import("./index-cmd.ts");
        const report = await refreshIndex(ctx);
        if (report) for (const line of indexNotices(report, config["embedding.model"])) notice(line);
      } catch (e) {
        indexed = `; indexing failed (${oneLine(e)}), run memsearch index`;
      }
    }
    if (result.written > 0) await noteProject(project);
    if (a.jsonOutput) return printJson({ ...planJson(plan), ...result, summarizer: a.summarizer });
    print(`${summaryLine(plan, result, performance.now() - started)}; ${writerPart(a.summarizer, config)}${indexed}`);
    for (const line of planNotes(plan)) notice(line);
    if (result.fallbacks) notice(`Notice: ${fmt(result.fallbacks)} turns got the plain extract because the summariser failed on them`);
  },
});

const fmt = (n: number) => n.toLocaleString("en-US");
const plural = (n: number, one: string, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

function dryRunLine(p: ImportPlan): string {
  return `Would import ${plural(p.todo.length, "turn")} from ${plural(p.sessions, "session")} (${plural(p.transcripts.length, "transcript")}) into ${plural(p.days.length, "daily file")}; ${plural(p.already, "turn")} already ${p.already === 1 ? "has a note" : "have notes"}${skippedPart(p)}.`;
}

/** `; skipped 3 that are not work (2 local commands, 1 turn without a reply)`, or "". */
function skippedPart(p: ImportPlan): string {
  const n = Object.values(p.notTurns).reduce((a, b) => a + b, 0);
  return n ? `; ${n === 1 ? "1 turn skipped, not work" : `${fmt(n)} turns skipped, not work`} (${describeSkips(p.notTurns)})` : "";
}

function costLine(c: ImportCost, model: string): string {
  if (c.provider === "extract") return "Cost: none (deterministic extract, no model calls).";
  const where = c.provider === "claude" ? `claude -p calls (model ${model})` : `calls to the local Ollama model ${model}`;
  return `Cost: ${fmt(c.calls)} ${where}, about ${fmt(c.inputTokens)} input tokens (an estimate: characters / 4 of the prompts).`;
}

/** Things about the plan worth a line: turns left out and why, and notes landing after later ones. */
function planNotes(p: ImportPlan): string[] {
  const out: string[] = [];
  if (p.queued) out.push(`Notice: ${plural(p.queued, "turn")} waiting in the write-ahead queue left to the drainer (memsearch hook drain writes ${p.queued === 1 ? "it" : "them"} now)`);
  if (p.forgotten) out.push(`Notice: ${plural(p.forgotten, "forgotten turn")} left out (memsearch forget --list; --undo <id> lets one be imported again)`);
  if (p.active) out.push(`Notice: ${plural(p.active, "turn")} of sessions active in the last 10 minutes left to the Stop hook (run import again later if the plugin is not installed)`);
  if (p.laterNotesDays.length) out.push(`Notice: ${plural(p.laterNotesDays.length, "daily file")} already had later notes (${p.laterNotesDays.slice(0, 3).join(", ")}${p.laterNotesDays.length > 3 ? ", …" : ""}); the older turns go after them, since memory files are only ever appended to`);
  return out;
}

/** The whole run's time (finding and reading transcripts and indexing included), not only the writing. */
function summaryLine(p: ImportPlan, r: ImportResult, ms: number): string {
  const already = p.already + r.raced;
  const secs = ms < 10_000 ? (ms / 1000).toFixed(1) : fmt(Math.round(ms / 1000));
  return `Imported ${plural(r.written, "turn")} from ${plural(r.sessions, "session")} into ${plural(r.files, "daily file")} (${fmt(already)} already had notes${skippedPart(p)}) in ${secs} s`;
}

/** Who wrote the notes, so that a user who wants a model's notes knows they did not get them. */
function writerPart(provider: SummarizerProvider, config: ReturnType<typeof loadContext>["config"]): string {
  if (provider === "extract") return "notes by the plain extract (no model: the request, files and outcome as written; --summarizer claude or ollama for a model's notes)";
  return `notes by ${provider === "claude" ? `claude -p (model ${config["summarizer.model"]})` : `the Ollama model ${config["summarizer.ollama_model"]}`}`;
}

function planJson(p: ImportPlan) {
  return {
    projectsDir: p.projectsDir,
    transcripts: p.transcripts.length,
    sessions: p.sessions,
    turns: p.todo.length,
    alreadyNoted: p.already,
    repeated: p.repeated,
    active: p.active,
    queued: p.queued,
    notTurns: p.notTurns,
    days: p.days,
    laterNotesDays: p.laterNotesDays,
    skipped: p.skipped,
    otherProjects: p.otherProjects,
    forgotten: p.forgotten,
  };
}

/** `importing 1,234/5,000 turns (3 sessions left)` on a terminal's stderr, redrawn at most 10 times a second. */
function progressBar() {
  const tty = isTerminal(2);
  let shown = false;
  let last = 0;
  let latest: ImportProgress | undefined;
  const draw = (p: ImportProgress) => {
    writeErr(`\r\x1b[Kimporting ${fmt(p.done)}/${fmt(p.total)} turns (${plural(p.sessionsLeft, "session")} left)`);
    shown = true;
  };
  const clear = () => {
    if (shown) writeErr("\r\x1b[K");
    shown = false;
  };
  return {
    update(p: ImportProgress) {
      latest = p;
      if (!tty) return;
      const now = performance.now();
      if (now - last < 100 && p.done !== p.total) return;
      last = now;
      draw(p);
    },
    /** Print a line without tearing the bar. */
    interrupt(fn: () => void) {
      clear();
      fn();
      if (tty && latest) draw(latest);
    },
    done: clear,
  };
}
