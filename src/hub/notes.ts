/** A note's whole section (`memsearch expand`), as the page shows it, and its forget. */
import { anchorPromptId } from "../agents/registry.ts";
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { MemsearchError, NotFoundError } from "../core/errors.ts";
import { type Expansion, type SectionRef, expandChunk } from "../index/expand.ts";
import { readChunk, refreshIndex } from "../watch/gateway.ts";
import { readTextQuiet } from "../core/fsutil.ts";
import type { StoredChunk } from "../index/types.ts";
import type { Context } from "../core/context.ts";
import { isDailyFile, notesIn, sectionId, sectionText } from "../memory/journal.ts";
import { forgetTurn } from "../memory/forget.ts";
import { stripControls } from "../core/text.ts";
import type { ForgetDone, NoteView } from "./types.ts";
import { NOTE_CHARS, redact, type HubProjects, type NoteRef, type Project } from "./projects.ts";

/** A project's context to read or change its memory with; throws when its config is broken or its data folder is gone. */
function memoryContext(hub: HubProjects, p: Project): Context {
  const ctx = hub.context(p);
  if (!ctx) throw new MemsearchError(redact(`project ${p.name}: ${p.problem}`, 500));
  // Reading would build an index, and so recreate the data folder of a project deleted meanwhile.
  if (!existsSync(ctx.project.dataDir)) throw new NotFoundError(`no memory left for ${p.name}: its folder is gone`);
  return ctx;
}

/** A chunk of a project, as `memsearch expand` finds it. */
async function chunkOf(hub: HubProjects, p: Project, hash: string): Promise<StoredChunk> {
  return (await readChunk(memoryContext(hub, p), hash, { cache: hub.indexes })).chunk;
}

/**
 * A note's whole section (`memsearch expand`): by chunk hash (a search hit), or by daily file and
 * heading line (a timeline entry; the section is found the way expand finds a chunk's own).
 */
export async function sectionOf(hub: HubProjects, p: Project, ref: NoteRef): Promise<Expansion<SectionRef>> {
  if ("chunk" in ref) return expandChunk(await chunkOf(hub, p, ref.chunk));
  const found = hub.notes(p).find((n) => n.file === ref.file && n.line === ref.line);
  if (!found) throw new NotFoundError(`no note at ${ref.file}:${ref.line} in ${p.name}`);
  return expandChunk({ source: join(hub.memoryDir(p), ref.file), startLine: found.line, endLine: found.endLine, heading: found.heading, headingLevel: 3 });
}

/** A note's section as the page shows it: redacted, with whether its transcript can be opened, and what names it for a forget. */
export async function noteOf(hub: HubProjects, id: string, ref: NoteRef): Promise<NoteView> {
  const p = hub.project(id);
  const x = await sectionOf(hub, p, ref);
  const anchor = x.anchor ?? null;
  const name = basename(x.chunk.source);
  const daily = isDailyFile(name) && resolve(dirname(x.chunk.source)) === resolve(hub.memoryDir(p)) && /^###\s/.test(x.content);
  return {
    forget: daily ? { file: name, id: shownId(hub, p, name, x.startLine, x.content), line: x.startLine } : null,
    project: p.id,
    source: x.chunk.source,
    startLine: x.startLine,
    endLine: x.endLine,
    heading: redact(x.chunk.heading, 200),
    content: redact(x.content, NOTE_CHARS),
    anchor,
    transcriptAvailable: !!anchor && hub.projectTranscript(anchor.transcript, p.root),
  };
}

/**
 * The id a forget names the note shown by (before redaction): the note's section of the daily
 * file as the journal reads it, when what was shown is that section (or its start: the markdown
 * lexer may end a section at a setext heading the journal does not see); else the text shown,
 * which then names no section, and a forget of it is refused (409) rather than taking another.
 */
function shownId(hub: HubProjects, p: Project, name: string, line: number, shown: string): string {
  const text = readTextQuiet(join(hub.memoryDir(p), name)) ?? "";
  const n = notesIn(text, name).find((x) => x.line === line);
  const section = n && sectionText(text, n);
  return section !== undefined && stripControls(section).startsWith(shown) ? sectionId(section) : sectionId(shown);
}

/**
 * `memsearch forget` for a note of the timeline (its daily file and heading line): the section
 * leaves the markdown, its turn goes on the forgotten list, and the index is brought up to date.
 */
export async function forget(hub: HubProjects, id: string, ref: { file: string; id: string; line: number }): Promise<ForgetDone> {
  const p = hub.project(id);
  const ctx = memoryContext(hub, p);
  const res = await forgetTurn(p.dataDir, ref, { promptIdOf: anchorPromptId(p.root, hub.env) });
  if (res.notes.length) await refreshIndex(ctx);
  return { project: p.id, turn: res.turn === undefined ? null : redact(res.turn, 300), removed: res.notes.length, alreadyForgotten: res.already, undo: res.undo };
}
