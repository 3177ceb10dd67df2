import { loadContext } from "../core/context.ts";
import { oneLine, UsageError } from "../core/errors.ts";
import { appendTurnNote, recentMemory } from "../memory/journal.ts";
import { checkNumber, jsonFlag } from "./common.ts";
import { NOTE_AGENTS } from "../agents/names.ts";
import { HAND_AGENT, MANUAL_SESSION } from "../core/anchor.ts";
import { noteProject } from "./projects.ts";
import { command } from "./declare.ts";
import { notice, print, printJson } from "./output.ts";

/** The user waits on `remember`: a crowd of writers passes the day's lock slowly, each of them healthy. */
const REMEMBER_LOCK_MS = 120_000;

export const rememberCommand = command({
  command: "remember [note..]",
  describe: "Write a note of your own into today's memory file (secrets redacted) and index it",
  flags: { ...jsonFlag, note: { positional: true, type: "string", array: true, describe: "The note's words (no quotes needed; after -- a word may start with -)" } },
  run: async (a) => {
    const text = (a.note ?? []).join(" ").trim();
    if (!text) throw new UsageError("remember needs the note to write, e.g. memsearch remember the staging database moved to port 5433");
    const ctx = loadContext();
    const now = new Date();
    const turn = `note-${now.getTime().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const res = await appendTurnNote({
      memoryDir: ctx.project.memoryDir,
      sessionId: MANUAL_SESSION,
      turnUuid: turn,
      transcriptPath: "-",
      bullets: text.split(/\n+/).map((l) => l.replace(/^\s*[-*]\s+/, "")),
      now,
      lockTimeoutMs: REMEMBER_LOCK_MS,
    });
    // The note is the commit point: an index that cannot follow now is brought up to date later.
    try {
      const { refreshIndex } = await import("../watch/gateway.ts");
      await refreshIndex(ctx);
    } catch (e) {
      notice(`Warning: the note is saved, but the index was not updated (${oneLine(e)}); the watch process or the next 'memsearch index' adds it`);
    }
    await noteProject(ctx.project);
    if (a.jsonOutput) return printJson({ file: res.file, turn, agent: HAND_AGENT });
    print(`Remembered in ${res.file} (turn ${turn}; memsearch forget ${turn} removes it)`);
  },
});

export const recentCommand = command({
  command: "recent",
  describe: "Show the latest notes (headings and bullets of the newest daily files)",
  flags: {
    ...jsonFlag,
    files: { type: "number", default: 2, describe: "How many daily files" },
    lines: { type: "number", default: 30, describe: "Lines per file" },
    agent: { type: "string", choices: NOTE_AGENTS, describe: "Only notes of turns with this agent (you: your own, memsearch remember)" },
  },
  run: (a) => {
    // Read as they are, 0 files or NaN find none, and "No memory yet" would be said of a folder holding notes.
    const files = checkNumber("--files", a.files, { whole: true, min: 1 });
    const lines = checkNumber("--lines", a.lines, { whole: true, min: 1 });
    const ctx = loadContext();
    const recent = recentMemory(ctx.project.memoryDir, { files, linesPerFile: lines, agent: a.agent });
    if (a.jsonOutput) return printJson(recent);
    if (!recent.length) return print(`No memory yet in ${ctx.project.memoryDir}.`);
    print(recent.map((r) => `## ${r.file}\n${r.lines.join("\n")}`).join("\n\n"));
  },
});
