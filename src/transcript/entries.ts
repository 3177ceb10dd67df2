/**
 * The one reading of a Claude Code transcript's entries, shared by every reader of them (the
 * transcript reader, the conversation index, the first request of a session): what kind of entry
 * a line is, what a user entry says and whether it opens a turn, and which id names that turn.
 * The turn boundaries themselves are drawn by `TurnSegmenter` (turns.ts) from what these say.
 */
import { classifyUserText, cleanText, commandText, mediaPlaceholder, type UserTextKind } from "./sanitize.ts";

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The entry's kind: its `type`, else `assistant` for a type-less line whose message says so (older
 * and hand-written lines). The conversation index and the turn listing always read such lines as
 * assistant lines; the full read used to drop them, so a slash command they answered was a turn
 * in the listing and none in the full read.
 */
export function entryType(o: Obj): string | undefined {
  if (typeof o.type === "string") return o.type;
  return isObj(o.message) && o.message.role === "assistant" ? "assistant" : undefined;
}

/**
 * The id of the turn a user entry opens: its uuid, else (formats without one) `line-N`, unique
 * within its file only. Every reader numbers lines from the start of the file.
 */
export function turnId(o: Obj, lineNo: number): string {
  return typeof o.uuid === "string" && o.uuid ? o.uuid : `line-${lineNo}`;
}

/** A user entry as every reader sees it. Only `prompt` and `command` may open a turn. */
export type UserEntry =
  /** Text Claude Code added (command expansions, skill bodies, caveats), not the user's words. */
  | { kind: "meta" }
  /** No message object, or content neither a string nor an array. */
  | { kind: "malformed" }
  /** The summary that continues a compacted conversation. */
  | { kind: "compact-summary"; text: string }
  /** Tool results; text beside them is an interruption notice or a reminder, never a prompt. */
  | { kind: "results"; text: string; results: Obj[] }
  /** Typed text, or a slash command (`/name args`) that opens a turn once Claude acts on it. */
  | { kind: "prompt" | "command"; text: string }
  | { kind: "interrupt"; text: string }
  /** Local command output, notifications, nothing left once cleaned. */
  | { kind: "other"; what: UserTextKind; text: string };

/**
 * Read a `user` entry. Text blocks are joined, images and documents become placeholders, and the
 * result is cleaned of injected context (cleanText) before it is classified. `unknownBlock` is
 * called for each content block of a kind this reading does not know.
 */
export function readUserEntry(o: Obj, unknownBlock: () => void = () => {}): UserEntry {
  if (o.isMeta === true) return { kind: "meta" };
  const msg = o.message;
  if (!isObj(msg)) return { kind: "malformed" };
  const content = msg.content;
  const parts: string[] = [];
  const results: Obj[] = [];
  if (typeof content === "string") parts.push(content);
  else if (Array.isArray(content)) {
    for (const b of content) {
      if (!isObj(b)) {
        unknownBlock();
        continue;
      }
      switch (b.type) {
        case "text":
          if (typeof b.text === "string") parts.push(b.text);
          break;
        case "image":
        case "document":
          parts.push(mediaPlaceholder(b));
          break;
        case "tool_result":
          results.push(b);
          break;
        default:
          unknownBlock();
      }
    }
  } else return { kind: "malformed" };
  const text = cleanText(parts.join("\n\n"));
  if (o.isCompactSummary === true) return { kind: "compact-summary", text };
  if (results.length) return { kind: "results", text, results };
  const what = classifyUserText(text);
  switch (what) {
    case "prompt":
      return { kind: "prompt", text };
    case "command":
      return { kind: "command", text: commandText(text) };
    case "interrupt":
      return { kind: "interrupt", text };
    case "compact-summary":
      return { kind: "compact-summary", text };
    default:
      return { kind: "other", what, text };
  }
}
