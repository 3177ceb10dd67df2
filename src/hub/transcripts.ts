/** The original turn of a note, or of a recall hit, read by its agent's reader and clipped for the page. */
import { NotFoundError } from "../core/errors.ts";
import { findTurn } from "../transcript/find-turn.ts";
import type { Turn, TurnItem } from "../transcript/types.ts";
import { clip } from "../core/text.ts";
import type { TurnView } from "./types.ts";
import { redact, type HubProjects, type NoteRef } from "./projects.ts";
import { sectionOf } from "./notes.ts";

const TURN_TEXT_CHARS = 8_000;
const TOOL_OUTPUT_CHARS = 1_500;

/**
 * The original turn of a note (`memsearch transcript PATH --turn ID`), redacted like the
 * command's output. The path comes from the note's own anchor, or from a recall hit this hub
 * returned: a request never names an arbitrary file to read.
 */
export async function turnOf(hub: HubProjects, ref: ({ project: string } & NoteRef) | { path: string; turn: string }): Promise<TurnView> {
  let path: string;
  let id: string;
  let root: string;
  let anyProject = false;
  if ("path" in ref) {
    if (!hub.knownTranscripts.has(ref.path)) throw new NotFoundError("unknown transcript: open it from a search result");
    // A hit may carry a note's anchor: the same check as for a note, against the project in view.
    root = hub.current().root;
    anyProject = hub.scope === "all";
    path = ref.path;
    id = ref.turn;
  } else {
    const p = hub.project(ref.project);
    const { anchor } = await sectionOf(hub, p, ref);
    if (!anchor || anchor.transcript === "-") throw new NotFoundError("this note has no transcript anchor");
    root = p.root;
    path = anchor.transcript;
    id = anchor.turn;
  }
  // Notes may come with a cloned repository: an anchor is followed only to this project's transcripts.
  const reader = hub.checkTranscript(path, root, anyProject);
  // Checked: the page may step from this turn to the ones beside it, by path.
  hub.knownTranscripts.add(path);
  if (reader.views) {
    // The reader redacts every text it returns (tool inputs and outputs before it clips them): what
    // is left here is the page's own clipping, and the tool's name, which the reader keeps as written.
    const r = await reader.views.around(path, id, 0, { maxOutput: TOOL_OUTPUT_CHARS });
    if (r.target === undefined) throw new NotFoundError(`turn ${id} is not in ${path} (${r.turnCount} turns)`);
    const t = r.turns[0];
    if (!t) throw new NotFoundError(`turn ${id} could not be read from ${path}`);
    return turnView(path, r.sessionId, r.ids, r.target, t);
  }
  // Read whole by its adapter (a Codex rollout, a Gemini CLI chat, an OpenCode session), redacted.
  const { sessionId, turns } = await reader.read(path, hub.env);
  const target = findTurn(turns, id);
  if (target === undefined) throw new NotFoundError(`turn ${id} is not in ${path} (${turns.length} turns)`);
  return turnView(path, sessionId ?? path, turns.map((x) => x.uuid), target, turns[target]!);
}

/** A turn as the page shows it, clipped (the readers redacted it already; a tool's name is kept as written, so redacted here). */
function turnView(path: string, session: string, uuids: string[], position: number, t: Turn): TurnView {
  return {
    path,
    session,
    turnCount: uuids.length,
    position,
    previous: uuids[position - 1] ?? null,
    next: uuids[position + 1] ?? null,
    uuid: t.uuid,
    timestamp: t.timestamp ?? null,
    user: clip(t.userText, TURN_TEXT_CHARS),
    items: t.items.map(turnItemView),
  };
}

/** One element of a turn as the page shows it, clipped (the readers redacted it already). */
function turnItemView(it: TurnItem): TurnView["items"][number] {
  if (it.kind === "assistant") return { kind: "assistant", text: clip(it.text, TURN_TEXT_CHARS) };
  if (it.kind === "user") return { kind: "user", text: clip(it.text, TURN_TEXT_CHARS) };
  if (it.kind === "compaction") return { kind: "compaction" };
  const c = it.call;
  return { kind: "tool", tool: { name: redact(c.name, 200), input: clip(c.input, 500), output: c.output === undefined ? null : clip(c.output, TOOL_OUTPUT_CHARS), isError: c.isError === true } };
}
