/**
 * The first request of a session, read from the head of its transcript only: SessionStart names
 * the previous session by it and must not pay for reading a long transcript whole.
 */
import { parseLine, peekEntry, scanLines } from "./lines.ts";
import { classifyUserText, cleanText, commandText } from "./sanitize.ts";

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
  try {
    await scanLines(
      path,
      (buf, s, e) => {
        const peek = peekEntry(buf, s, e);
        if (peek.type !== "user" || peek.firstBlock === "tool_result") return;
        const entry = parseLine(buf, s, e);
        if (!entry || entry.isMeta === true || entry.isSidechain === true || entry.isCompactSummary === true) return;
        const text = userText(entry.message);
        if (text === undefined) return;
        const kind = classifyUserText(text);
        if (kind === "prompt") {
          found = text;
          return false;
        }
        if (kind === "command") command ??= commandText(text);
      },
      { end: maxBytes, maxLineBytes: maxBytes, chunkSize: 64 * 1024 },
    );
  } catch {
    return undefined;
  }
  return found ?? command;
}

function userText(message: unknown): string | undefined {
  if (!message || typeof message !== "object") return undefined;
  const content = (message as Record<string, unknown>).content;
  let raw: string | undefined;
  if (typeof content === "string") raw = content;
  else if (Array.isArray(content)) {
    const texts = content.flatMap((b) => (b && typeof b === "object" && (b as Record<string, unknown>).type === "text" && typeof (b as Record<string, unknown>).text === "string" ? [(b as Record<string, string>).text] : []));
    if (texts.length) raw = texts.join("\n\n");
  }
  if (raw === undefined) return undefined;
  const clean = cleanText(raw);
  return clean || undefined;
}
