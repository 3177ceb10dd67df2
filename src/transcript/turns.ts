/**
 * The one turn segmenter: where a turn of a Claude Code transcript starts and ends, for every
 * reader (the transcript reader's listing and full read, the conversation index, import through
 * the reader). A turn opens at a real user prompt (entries.ts says which entries are) and runs
 * until the next one; a slash command opens one only once Claude acts on it (an assistant line
 * follows before the next prompt), else it was a local command (`/mcp`, `/model`) and is no turn.
 * Sidechain lines belong to a subagent: in a main session file they are left out, in a subagent's
 * own file (every line a sidechain line) they are its main thread; the first user or assistant
 * line decides which file this is.
 *
 * It is fed one entry at a time and keeps no more than the open turn, so the conversation index
 * can feed it incrementally, a read at a time, from the state it stored.
 */

/** The turn in progress: the caller's own record of it, and whether it counts yet. */
export interface OpenTurn<T> {
  turn: T;
  /** A slash command waiting for Claude to act on it. */
  command: boolean;
  answered: boolean;
}

export interface SegmenterState<T> {
  /** Whether the file is a subagent's (its sidechain lines are its main thread); undefined until decided. */
  subagent?: boolean;
  open?: OpenTurn<T>;
}

/** What a new prompt, or the end of the input, did to the turn that was open. */
export interface Closed<T> {
  /** The turn that ended (it counts). */
  closed?: T;
  /** A slash command nobody acted on: a local command, no turn. */
  dropped?: T;
}

export class TurnSegmenter<T> {
  subagent?: boolean;
  private cur?: OpenTurn<T>;

  constructor(state: SegmenterState<T> = {}) {
    this.subagent = state.subagent;
    this.cur = state.open;
  }

  /** The open turn (a command not yet acted on included). */
  get open(): OpenTurn<T> | undefined {
    return this.cur;
  }

  /**
   * A user or assistant entry's `isSidechain`: the first one decides whether this is a subagent's
   * file. True when the entry belongs to a subagent and is left out of this file's turns.
   */
  leftOut(sidechain: boolean): boolean {
    if (this.subagent === undefined) this.subagent = sidechain;
    return sidechain && !this.subagent;
  }

  /** A prompt or slash command: it opens a turn, and the open one ends. */
  start(turn: T, command: boolean): Closed<T> {
    const r = this.finish();
    this.cur = { turn, command, answered: false };
    return r;
  }

  /**
   * An assistant entry: the turn it belongs to, undefined before the first prompt. `confirmed` is
   * true when this is the entry that makes a slash command a turn.
   */
  answer(): { turn: T; confirmed: boolean } | undefined {
    const c = this.cur;
    if (!c) return undefined;
    const confirmed = c.command && !c.answered;
    c.answered = true;
    return { turn: c.turn, confirmed };
  }

  /** The end of the input: the open turn ends (a command nobody acted on is dropped). */
  finish(): Closed<T> {
    const c = this.cur;
    this.cur = undefined;
    if (!c) return {};
    return c.command && !c.answered ? { dropped: c.turn } : { closed: c.turn };
  }
}
