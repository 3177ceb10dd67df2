import { InputError, NotFoundError, UsageError } from "../core/errors.ts";
import type { ArchivedFile } from "../conversations/archive.ts";
import { resolveProjectRoot } from "../core/project.ts";
import { ForeignTranscriptError } from "../transcript/files.ts";
import { clip, clipMarked, oneLine } from "../core/text.ts";
import { redactHead, sanitize } from "../core/redact.ts";
import { findTurn } from "../transcript/find-turn.ts";
import type { ToolCall, Turn } from "../transcript/types.ts";
import { jsonFlag } from "./common.ts";
import { command, flags, type Args } from "./declare.ts";
import { print, printJson } from "./output.ts";
import { transcriptReader } from "../agents/registry.ts";
import type { AgentAdapter, AgentTranscripts, TranscriptListing } from "../agents/types.ts";
import { lexists } from "../core/fsutil.ts";

/** The whole `--turn` output is capped at this many chars. */
export const OUTPUT_CAP = 12000;
/** Tool output shown per call in `--turn` text mode. */
export const TOOL_OUTPUT_CHARS = 200;
/** Tool input summary shown per call in `--turn` text mode. */
export const TOOL_INPUT_CHARS = 200;
/** Tool output kept per call in `--turn` JSON mode. */
export const JSON_TOOL_OUTPUT_CHARS = 500;
/** User and assistant texts in `--turn` text mode. */
export const TEXT_CHARS = 4000;
export const PREVIEW_CHARS = 80;
export const TRUNCATED_MARKER = `\n…[transcript truncated: output capped at ${OUTPUT_CAP} chars]\n`;

const transcriptFlags = flags({
  ...jsonFlag,
  path: { positional: true, type: "string", demandOption: true, describe: "Session transcript (.jsonl)" },
  turn: { alias: "t", type: "string", describe: "Show the turn whose uuid starts with this, with context" },
  context: { alias: "c", type: "number", default: 3, describe: "Turns shown before and after --turn" },
  "last-turn": { type: "boolean", conflicts: "turn", describe: "Print the last turn labelled for a summariser (Stop hook input)" },
  "last-assistant-message": { type: "string", describe: "With --last-turn: the hook's last_assistant_message, used when the file lags" },
  "all-projects": { type: "boolean", describe: "Accept a transcript of another project (under Claude Code's projects folder)" },
  "any-file": { type: "boolean", describe: "Read any JSONL file, not only this project's Claude Code transcripts" },
});

export const transcriptCommand = command({
  command: "transcript <path>",
  describe: "List the turns of a session transcript, or show turns around one",
  flags: transcriptFlags,
  run: async (a) => {
    const path = String(a.path);
    const agent = transcriptReader(path);
    const views = agent.transcripts.views;
    if (!views) return readWhole(agent, path, a);
    // Deleted by its agent (Claude Code's cleanupPeriodDays): the conversation index may keep its turns.
    if (a.turn !== undefined && !a.lastTurn && !lexists(path)) {
      const [{ readArchivedTranscript }, { transcriptDbPath }] = await Promise.all([import("../conversations/archive.ts"), import("../conversations/db.ts")]);
      const archived = readArchivedTranscript(transcriptDbPath(), path);
      if (archived) return showArchived(archived, String(a.turn).trim(), a);
    }
    // The path usually comes from a note's anchor, and notes may come with a cloned repository.
    if (!a.anyFile) refuseForeign(agent.transcripts, path, a.allProjects === true);
    if (a.lastTurn) return lastTurn(views, path, a);
    if (!Number.isInteger(a.context) || a.context < 0) throw new UsageError("--context must be a whole number ≥ 0");
    if (a.turn !== undefined) {
      const id = String(a.turn).trim();
      if (!id) throw new UsageError("--turn needs a turn uuid (or a prefix of one)");
      return showTurns(views, path, id, a.context, a.jsonOutput);
    }
    const listing = await views.listing(path);
    if (a.jsonOutput) return printJson(listingJson(listing));
    print(formatListing(listing));
  },
});

/** A transcript its agent reads whole (a Codex rollout): listed, or turns around one, from its adapter's reading. */
async function readWhole(agent: AgentAdapter, path: string, a: Args<typeof transcriptFlags>): Promise<void> {
  const t = agent.transcripts;
  if (!a.anyFile) refuseForeign(t, path, a.allProjects === true);
  if (a.lastTurn) throw new UsageError(`--last-turn reads Claude Code transcripts only; this is a ${agent.label} transcript`);
  if (!Number.isInteger(a.context) || a.context < 0) throw new UsageError("--context must be a whole number ≥ 0");
  const { sessionId, turns } = await t.read(path);
  if (a.turn === undefined) {
    if (a.jsonOutput) return printJson({ path, agent: agent.name, sessionId: sessionId ?? null, turns: turns.map((x) => ({ uuid: x.uuid, timestamp: x.timestamp ?? null, line: x.line, userText: clip(x.userText, PREVIEW_CHARS), toolCount: x.toolCount })) });
    const lines = turns.map((x) => `[${clock(x.timestamp)}] ${x.uuid.slice(0, 8)}  ${clip(oneLine(x.userText), PREVIEW_CHARS)}${x.toolCount ? `  (${x.toolCount} tool call${x.toolCount === 1 ? "" : "s"})` : ""}`);
    return print([`${agent.label} session ${sessionId ?? "?"}: ${turns.length} turn${turns.length === 1 ? "" : "s"}`, ...lines].join("\n"));
  }
  const id = String(a.turn).trim().toLowerCase();
  if (!id) throw new UsageError("--turn needs a turn uuid (or a prefix of one)");
  const target = turns.findIndex((x) => x.uuid.toLowerCase().startsWith(id));
  if (target < 0) throw new NotFoundError(`turn not found: ${a.turn} (${turns.length} turns in ${path}; run 'memsearch transcript ${path}' to list them)`);
  const from = Math.max(0, target - a.context);
  const shown = turns.slice(from, Math.min(turns.length, target + a.context + 1));
  if (a.jsonOutput) return printJson({ path, agent: agent.name, sessionId: sessionId ?? null, target: turns[target]!.uuid, turnCount: turns.length, turns: shown.map((x, i) => turnJson(x, from + i === target)) });
  print(formatTurns(shown, target - from, String(a.turn)));
}

/** This project's transcripts only, unless the user says otherwise (the message says how). */
function refuseForeign(t: AgentTranscripts, path: string, anyProject: boolean): void {
  try {
    t.check(path, resolveProjectRoot(), { anyProject });
  } catch (e) {
    if (!(e instanceof ForeignTranscriptError)) throw e;
    const flag = e.anotherProject ? "--all-projects" : "--any-file";
    throw new InputError(`${e.message}; pass ${flag} to read it anyway`);
  }
}

async function lastTurn(views: NonNullable<AgentTranscripts["views"]>, path: string, a: Args<typeof transcriptFlags>): Promise<void> {
  const t = await views.lastTurn(path, a.lastAssistantMessage);
  if (a.jsonOutput) return printJson(t ?? null);
  print(t ? t.text : "(no user message found)");
}

async function showTurns(views: NonNullable<AgentTranscripts["views"]>, path: string, id: string, context: number, json: boolean): Promise<void> {
  const r = await views.around(path, id, context, { maxOutput: json ? JSON_TOOL_OUTPUT_CHARS : 4000 });
  if (r.target === undefined) {
    throw new NotFoundError(`turn not found: ${id} (${r.turnCount} turns in ${path}; run 'memsearch transcript ${path}' to list them)`);
  }
  if (json) {
    return printJson({
      path,
      sessionId: r.sessionId,
      target: r.ids[r.target]!,
      turnCount: r.turnCount,
      turns: r.turns.map((t, i) => turnJson(t, r.from + i === r.target)),
    });
  }
  print(formatTurns(r.turns, r.target - r.from, id));
}


/**
 * Turns of a transcript Claude Code deleted, from the conversation index's archive: only this
 * project's unless --all-projects (the same rule as for a file on disk), marked as from the archive.
 */
function showArchived(archived: { file: ArchivedFile; turns: Turn[] }, id: string, a: Args<typeof transcriptFlags>): void {
  const { file, turns } = archived;
  if (!id) throw new UsageError("--turn needs a turn uuid (or a prefix of one)");
  if (!Number.isInteger(a.context) || a.context < 0) throw new UsageError("--context must be a whole number ≥ 0");
  if (!a.allProjects && !a.anyFile) {
    const root = resolveProjectRoot();
    if (file.project !== root) throw new InputError(`refused: ${file.path} is another project's transcript (this project: ${root}); pass --all-projects to read it anyway`);
  }
  const target = findTurn(turns, id);
  if (target === undefined) throw new NotFoundError(`turn not found: ${id} (${turns.length} turns archived from ${file.path})`);
  const from = Math.max(0, target - a.context);
  const to = Math.min(turns.length - 1, target + a.context);
  // Stored redacted; redacted again as every text this command prints.
  const shown = turns.slice(from, to + 1).map((t) => ({
    ...t,
    userText: sanitize(t.userText),
    assistantTexts: t.assistantTexts.map(sanitize),
    items: t.items.map((i) => (i.kind === "assistant" ? { ...i, text: sanitize(i.text) } : i.kind === "tool" ? { ...i, call: { ...i.call, input: sanitize(i.call.input), output: i.call.output === undefined ? undefined : sanitize(i.call.output) } } : i)),
    tools: t.tools.map((c) => ({ ...c, input: sanitize(c.input), output: c.output === undefined ? undefined : sanitize(c.output) })),
  }));
  const gone = new Date(file.goneAt).toISOString();
  if (a.jsonOutput) {
    return printJson({
      path: file.path,
      sessionId: file.session,
      archived: true,
      archivedAt: gone,
      target: turns[target]!.uuid,
      turnCount: turns.length,
      turns: shown.map((t, i) => turnJson(t, from + i === target)),
    });
  }
  print(`[from the archive: Claude Code deleted this transcript; found gone ${gone.slice(0, 10)}. Thinking and full tool output were not kept.]

${formatTurns(shown, target - from, id)}`);
}

/** `HH:MM:SS` in local time (the journal headings are local too); `--:--:--` when unknown. */
export function clock(ts: string | undefined): string {
  if (!ts) return "--:--:--";
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return "--:--:--";
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * What the listing shows of a prompt, redacted like every text this command prints: its output
 * goes to the model that asked for it (the memory-recall skill) and into logs, and a key pasted in
 * an old session must not come back that way.
 */
function userPreview(text: string): string {
  return clip(redactHead(text, PREVIEW_CHARS, sanitize, oneLine).text, PREVIEW_CHARS, "...");
}

export function formatListing(index: { turns: Turn[]; subagents?: TranscriptListing["subagents"] }): string {
  const subagents = index.subagents ?? [];
  const lines = [`All turns (${index.turns.length}):`, ""];
  const previews = index.turns.map((t) => userPreview(t.userText));
  const width = Math.max(0, ...previews.map((p, i) => (index.turns[i]!.toolCount ? p.length : 0)));
  index.turns.forEach((t, i) => {
    const p = previews[i]!;
    const tools = t.toolCount ? `  [${t.toolCount} tools]` : "";
    lines.push(`  ${t.uuid.slice(0, 12).padEnd(12)}  ${clock(t.timestamp)}  ${tools ? p.padEnd(width) : p}${tools}`);
  });
  if (subagents.length) {
    lines.push("", `Subagents (${subagents.length}):`, "");
    for (const s of subagents) lines.push(`  ${("agent-" + s.agentId).padEnd(24)}  ${s.path}`);
  }
  return lines.join("\n");
}

function listingJson(index: TranscriptListing) {
  const subagents = index.subagents;
  return {
    path: index.path,
    sessionId: index.sessionId,
    subagent: index.subagent,
    turnCount: index.turns.length,
    turns: index.turns.map((t) => ({
      uuid: t.uuid,
      timestamp: t.timestamp ?? null,
      kind: t.kind,
      preview: userPreview(t.userText),
      toolCount: t.toolCount,
    })),
    compactions: index.compactions,
    subagents,
  };
}

function toolJson(c: ToolCall) {
  return {
    name: c.name,
    input: c.input,
    output: c.output ?? null,
    ...(c.isError ? { isError: true } : {}),
    ...(c.unpaired ? { unpaired: true } : {}),
    ...(c.outputChars !== undefined && c.outputChars > JSON_TOOL_OUTPUT_CHARS ? { outputChars: c.outputChars } : {}),
  };
}

function turnJson(t: Turn, target: boolean) {
  const notes = t.items.flatMap((i) => (i.kind === "user" ? [i.text] : []));
  const compactions = t.items.filter((i) => i.kind === "compaction").length;
  return {
    uuid: t.uuid,
    timestamp: t.timestamp ?? null,
    target,
    kind: t.kind,
    user: t.userText,
    assistant: t.assistantTexts,
    tools: t.tools.map(toolJson),
    ...(notes.length ? { notes } : {}),
    ...(compactions ? { compactions } : {}),
  };
}

function indent(text: string, pad: string): string {
  return text.replace(/\n/g, "\n" + pad);
}

function toolLines(c: ToolCall): string[] {
  const input = clip(c.input, TOOL_INPUT_CHARS);
  const out = [`  [${c.name}]${input ? " " + input : ""}`];
  if (c.output === undefined) out.push("      → (no result in the transcript)");
  else if (c.output.trim()) {
    // No blank tail before the marker; the length it gives is the output's before the reader cut it.
    const o = clipMarked(c.output.slice(0, TOOL_OUTPUT_CHARS).trimEnd(), TOOL_OUTPUT_CHARS, c.outputChars ?? c.output.length);
    out.push(`      ${c.isError ? "✗" : "→"} ${indent(o, "        ")}`);
  }
  return out;
}

/** One turn as text: header (`>>>` on the target), user text, assistant text, one line per tool call. */
export function formatTurn(t: Turn, target: boolean): string {
  const lines = [`${target ? ">>> " : ""}[${clock(t.timestamp)}] ${t.uuid.slice(0, 8)}`, clipMarked(t.userText, TEXT_CHARS), ""];
  let prevTool = false;
  for (const it of t.items) {
    if (it.kind === "assistant") {
      if (prevTool) lines.push("");
      lines.push(`**Assistant**: ${clipMarked(it.text, TEXT_CHARS)}`);
      prevTool = false;
    } else if (it.kind === "tool") {
      lines.push(...toolLines(it.call));
      prevTool = true;
    } else if (it.kind === "user") {
      lines.push(`  [User] ${clipMarked(it.text, TEXT_CHARS)}`);
      prevTool = true;
    } else {
      lines.push(`  [context compacted${it.trigger ? ` (${it.trigger}${it.preTokens ? `, ${it.preTokens} tokens` : ""})` : ""}]`);
      prevTool = true;
    }
  }
  return lines.join("\n").trimEnd() + "\n";
}

const OMIT = "…[turn omitted: output cap]\n";
const CUT = "…[turn truncated: output cap]\n";
/** The target turn always gets at least this much room. */
const MIN_TARGET = 400;

/** At most `n` chars of a turn block, ending with the CUT marker. */
function cutBlock(b: string, n: number): string {
  return b.slice(0, Math.max(0, n - CUT.length - 1)).trimEnd() + "\n" + CUT;
}

/**
 * `Showing N turns around ID:` then the turns (`target` = index in `turns` of the one asked for). The total is capped at `cap` chars: the target turn
 * gets its share first, then the turns nearest to it; the others keep their header line with a
 * visible marker (or, with very many turns, the farthest are left out), and the output ends with
 * TRUNCATED_MARKER. The target is always shown.
 */
export function formatTurns(turns: Turn[], target: number, id: string, cap = OUTPUT_CAP): string {
  const header = `Showing ${turns.length} turn${turns.length === 1 ? "" : "s"} around ${id.slice(0, 12)}:\n\n`;
  const blocks = turns.map((t, i) => formatTurn(t, i === target));
  const whole = header + blocks.join("\n");
  if (whole.length <= cap || blocks.length === 0) return whole;
  const ti = Math.min(Math.max(0, target), blocks.length - 1);
  const elided = blocks.map((b) => b.slice(0, b.indexOf("\n") + 1) + OMIT);
  // Other turns, nearest first (after, then before).
  const order: number[] = [];
  for (let d = 1; d < blocks.length; d++) {
    if (ti + d < blocks.length) order.push(ti + d);
    if (ti - d >= 0) order.push(ti - d);
  }
  // Every other turn costs at least its elided form and a joining newline.
  let fixed = order.reduce((n, i) => n + elided[i]!.length + 1, 0);
  // (room for " of M" in the header too, should turns be left out)
  let room = cap - header.length - 16 - TRUNCATED_MARKER.length;
  const dropped = new Set<number>();
  // The target may need up to half the cap: with very many turns, the farthest are left out.
  const targetMin = Math.max(MIN_TARGET, Math.min(blocks[ti]!.length, Math.floor(cap / 2)));
  for (let k = order.length - 1; k >= 0 && room - fixed < targetMin; k--) {
    dropped.add(order[k]!);
    fixed -= elided[order[k]!]!.length + 1;
  }
  room -= fixed;
  const rep = [...elided];
  const others = order.filter((i) => !dropped.has(i)).reduce((n, i) => n + blocks[i]!.length - elided[i]!.length, 0);
  const tb = blocks[ti]!;
  const tAlloc = Math.min(tb.length, room, Math.max(Math.floor(room * 0.6), room - others, targetMin));
  rep[ti] = tAlloc >= tb.length ? tb : cutBlock(tb, tAlloc);
  room -= rep[ti]!.length;
  for (const i of order) {
    if (dropped.has(i)) continue;
    const extra = blocks[i]!.length - elided[i]!.length;
    if (extra <= room) {
      rep[i] = blocks[i]!;
      room -= extra;
    } else if (room >= 200) {
      rep[i] = cutBlock(blocks[i]!, elided[i]!.length + room);
      room -= rep[i]!.length - elided[i]!.length;
    }
  }
  if (rep[ti] !== tb && room > 0) {
    const more = cutBlock(tb, rep[ti]!.length + room);
    if (more.length > rep[ti]!.length) rep[ti] = more;
  }
  const shown = blocks.length - dropped.size;
  const head = dropped.size ? `Showing ${shown} of ${turns.length} turns around ${id.slice(0, 12)}:\n\n` : header;
  return head + rep.filter((_, i) => !dropped.has(i)).join("\n") + TRUNCATED_MARKER;
}
