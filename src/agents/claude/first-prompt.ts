/**
 * The first request of a session, read from the head of its transcript only: SessionStart names
 * the previous session by it and must not pay for reading a long transcript whole. Entries are
 * read as every reader reads them (entries.ts), sidechain lines left out as the segmenter does.
 */
import { entryType, readUserEntry } from "../../transcript/entries.ts";
import { parseLine, peekEntry, scanLines } from "../../transcript/lines.ts";
import { TurnSegmenter } from "../../transcript/turns.ts";

/** How far into a transcript the first prompt is looked for. */
const FIRST_PROMPT_BYTES = 512 * 1024;

/**
 * The first typed user prompt in the first `maxBytes` of a transcript, else the first slash
 * command (`/name args`: sessions often open with a `/model` or `/mcp` that says little);
 * undefined when there is neither or the file cannot be read. Not redacted: the caller redacts
 * what it shows.
 */
export async function firstPrompt(path: string, maxBytes = FIRST_PROMPT_BYTES): Promise<string | undefined> {
  let found: string | undefined;
  let command: string | undefined;
  const seg = new TurnSegmenter<never>();
  try {
    await scanLines(
      path,
      (buf, s, e) => {
        const peek = peekEntry(buf, s, e);
        if (peek.type !== undefined && peek.type !== "user" && peek.type !== "assistant") return;
        // Lines that can hold no prompt count only for their thread, known without parsing them.
        if (peek.sidechain !== undefined && (peek.type === "assistant" || peek.firstBlock === "tool_result")) {
          seg.leftOut(peek.sidechain);
          return;
        }
        const entry = parseLine(buf, s, e);
        if (!entry) return;
        const type = entryType(entry);
        if (type !== "user" && type !== "assistant") return;
        if (seg.leftOut(entry.isSidechain === true) || type !== "user") return;
        const u = readUserEntry(entry);
        if (u.kind === "prompt") {
          found = u.text;
          return false;
        }
        if (u.kind === "command") command ??= u.text;
      },
      { end: maxBytes, maxLineBytes: maxBytes, chunkSize: 64 * 1024 },
    );
  } catch {
    return undefined;
  }
  return found ?? command;
}
