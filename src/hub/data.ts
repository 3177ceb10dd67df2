/**
 * Everything the Memory Hub reads, one method per request of its API (api.ts), each answered by
 * the module of its family: the overview, the turns and the cost (overview.ts), the curated files
 * (curated.ts), a project's timeline and a day (timeline.ts), search (search.ts), a note and its
 * forget (notes.ts), a note's turn (transcripts.ts), what each prompt received (sessions.ts), over
 * the projects in view (projects.ts). Only existing core functions are called, the way the CLI
 * calls them, so the page shows what the commands print.
 */
import type { CostsPage, CuratedCard, CuratedView, DayPage, ForgetDone, NoteView, Overview, SearchPage, SessionsPage, TimelinePage, TurnsView, TurnView } from "./types.ts";
import { HubProjects, type HubOptions, type NoteRef } from "./projects.ts";
import { costsPage, overviewOf, turnsOf } from "./overview.ts";
import { curatedCard, curatedFileOf } from "./curated.ts";
import { dayPage, timelineOf } from "./timeline.ts";
import { searchPage } from "./search.ts";
import { forget, noteOf } from "./notes.ts";
import { turnOf } from "./transcripts.ts";
import { sessionsPage } from "./sessions.ts";

export { projectId, type HubOptions, type NoteRef } from "./projects.ts";

export class HubData {
  private constructor(private readonly hub: HubProjects) {}

  /** The projects in view: the current one, and with allProjects every one in the registry. */
  static open(opts: HubOptions): HubData {
    return new HubData(HubProjects.open(opts));
  }

  get scope(): "project" | "all" {
    return this.hub.scope;
  }

  /** Names what is served: a second `memsearch hub` for the same key reuses the running one. */
  get key(): string {
    return this.hub.key;
  }

  overview(now = new Date()): Promise<Overview> {
    return overviewOf(this.hub, now);
  }

  /** A project's notes, newest first; with `agent`, only those of turns with that agent. */
  timeline(id: string, offset: number, limit: number, agent?: string): Promise<TimelinePage> {
    return timelineOf(this.hub, id, offset, limit, agent);
  }

  day(date: string): DayPage {
    return dayPage(this.hub, date);
  }

  turns(): Promise<TurnsView> {
    return turnsOf(this.hub);
  }

  search(query: string, mode: "notes" | "recall", limit: number): Promise<SearchPage> {
    return searchPage(this.hub, query, mode, limit);
  }

  curatedCard(): CuratedCard | null {
    return curatedCard(this.hub);
  }

  curatedFile(id: string, index: number): CuratedView {
    return curatedFileOf(this.hub, id, index);
  }

  note(id: string, ref: NoteRef): Promise<NoteView> {
    return noteOf(this.hub, id, ref);
  }

  forget(id: string, ref: { file: string; id: string; line: number }): Promise<ForgetDone> {
    return forget(this.hub, id, ref);
  }

  sessions(id: string): Promise<SessionsPage> {
    return sessionsPage(this.hub, id);
  }

  costs(): CostsPage {
    return costsPage(this.hub);
  }

  turn(ref: ({ project: string } & NoteRef) | { path: string; turn: string }): Promise<TurnView> {
    return turnOf(this.hub, ref);
  }
}
