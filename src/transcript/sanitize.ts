/**
 * Text hygiene for captured transcript content: our own injected memory never comes back,
 * images and base64 never leak, tool inputs become one line, long text is clipped visibly
 * (redacted before it is clipped when a redactor is given: see redactHead).
 */
import { redactHead, type Redactor } from "../memory/redact.ts";

/**
 * Markers of context memsearch itself injects (the hooks' `[memsearch]` hints and recalled notes,
 * the SessionStart "Recent memory (memsearch)" block, journal session anchors). Any paragraph
 * holding one is dropped from captured text, so a memory is never re-captured into a new one.
 * Hooks that inject new kinds of text should start it with one of these.
 */
export const INJECTED_MARKERS = ["[memsearch", "<memsearch", "<!-- session:", "Recent memory (memsearch)"] as const;

const REMINDER_RE = /<system-reminder>[\s\S]*?(?:<\/system-reminder>|$)/g;
const HOOK_TAG_RE = /<(user-prompt-submit-hook|memsearch[\w-]*)>[\s\S]*?(?:<\/\1>|$)/g;
const PARAGRAPH_SPLIT = /\n[ \t]*\n/;

export function hasInjectedMarker(text: string): boolean {
  for (const m of INJECTED_MARKERS) if (text.includes(m)) return true;
  return false;
}

/**
 * Remove `<system-reminder>` blocks, hook-output tags and every paragraph that holds one of
 * our injected markers. Cheap when there is nothing to remove.
 */
export function stripInjected(text: string): string {
  if (text.includes("<system-reminder>")) text = text.replace(REMINDER_RE, "");
  if (text.includes("<user-prompt-submit-hook>") || text.includes("<memsearch")) text = text.replace(HOOK_TAG_RE, "");
  if (hasInjectedMarker(text)) {
    text = text
      .split(PARAGRAPH_SPLIT)
      .filter((p) => !hasInjectedMarker(p))
      .join("\n\n");
  }
  return text;
}

const BASE64_RUN = /[A-Za-z0-9+/]{200,}={0,2}/g;

/** Replace long base64-looking runs (inline data that is no use to a reader) by a placeholder. */
export function scrubBase64(text: string): string {
  if (text.length < 200) return text;
  return text.replace(BASE64_RUN, (m) => `[base64 data, ${m.length} chars]`);
}

/** Full hygiene for any captured text. */
export function cleanText(text: string): string {
  return scrubBase64(stripInjected(text)).trim();
}

/**
 * Clip to `max` chars with a visible marker saying how much was cut. With `redact`, the text is
 * redacted first (over a bounded window, see redactHead), so the cut never leaves a piece of a
 * secret its rule no longer recognises.
 */
export function clip(text: string, max: number, redact?: Redactor): string {
  if (redact) {
    const head = redactHead(text, max, redact);
    if (head.whole && head.text.length <= max) return head.text;
    return `${head.text.slice(0, max)} …[truncated, ${text.length} chars total]`;
  }
  if (text.length <= max) return text;
  return `${text.slice(0, max)} …[truncated, ${text.length} chars total]`;
}

/** Collapse all whitespace to single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** One-line preview of at most `max` chars (`...` when cut). */
export function preview(text: string, max = 80): string {
  const s = oneLine(text);
  return s.length <= max ? s : s.slice(0, max - 3) + "...";
}

interface ImageLike {
  type?: unknown;
  source?: { type?: unknown; media_type?: unknown; url?: unknown };
}

/** `[image: image/png]` for an image block, `[document: application/pdf]` for a document block. */
export function mediaPlaceholder(block: ImageLike): string {
  const kind = block.type === "document" ? "document" : "image";
  const src = block.source;
  const media = typeof src?.media_type === "string" ? src.media_type : src?.type === "url" ? "url" : "unknown";
  return `[${kind}: ${media}]`;
}

const INPUT_KEYS = ["command", "cmd", "pattern", "query", "file_path", "notebook_path", "path", "url", "skill", "description", "prompt", "subject", "content"];

/**
 * One-line summary of a tool input: the command, path, pattern… else compact JSON, at most `max`
 * chars. With `redact`, the input is redacted before it is made one line and clipped (a PEM key
 * needs its line breaks and its END line to be recognised).
 */
export function summarizeToolInput(name: string, input: unknown, max = 500, redact?: Redactor): string {
  let s: string;
  if (input === null || input === undefined) s = "";
  else if (typeof input !== "object") s = String(input);
  else {
    const o = input as Record<string, unknown>;
    s = "";
    if (name === "TodoWrite" && Array.isArray(o.todos)) {
      const items = o.todos
        .map((t) => (t && typeof t === "object" ? `[${String((t as Record<string, unknown>).status ?? "?")}] ${String((t as Record<string, unknown>).content ?? "")}` : String(t)))
        .join("; ");
      s = `${o.todos.length} todos: ${items}`;
    } else {
      for (const k of INPUT_KEYS) {
        const v = o[k];
        if (typeof v === "string" && v.trim()) {
          s = v;
          if ((k === "pattern" || k === "query") && typeof o.path === "string") s += ` in ${o.path}`;
          if (k === "description" && typeof o.subagent_type === "string") s = `${o.subagent_type}: ${v}`;
          break;
        }
      }
      if (!s) {
        try {
          s = JSON.stringify(o) ?? "";
        } catch {
          s = "";
        }
      }
    }
  }
  const flat = (t: string) => scrubBase64(t.replace(/\s*\n\s*/g, " ↵ ").replace(/[ \t]+/g, " ").trim());
  s = redact ? redactHead(s, max, redact, flat).text : flat(s);
  return s.length <= max ? s : s.slice(0, max - 1) + "…";
}

export type UserTextKind = "prompt" | "command" | "local" | "interrupt" | "notification" | "compact-summary" | "empty";

const LOCAL_PREFIXES = [
  "<local-command-stdout>",
  "<local-command-stderr>",
  "<local-command-caveat>",
  "<bash-input>",
  "<bash-stdout>",
  "<bash-stderr>",
  "Caveat: The messages below were generated by the user while running local commands",
];

/**
 * What a user text is. Only `prompt` (and `command`, when Claude then acts on it) opens a turn.
 * `text` must already be cleaned (system reminders and injected context removed).
 */
export function classifyUserText(text: string): UserTextKind {
  const t = text.trimStart();
  if (!t) return "empty";
  if (t.startsWith("<command-name>") || t.startsWith("<command-message>")) return "command";
  for (const p of LOCAL_PREFIXES) if (t.startsWith(p)) return "local";
  if (t.startsWith("[Request interrupted by user")) return "interrupt";
  if (t.startsWith("<task-notification>")) return "notification";
  if (t.startsWith("This session is being continued from a previous conversation")) return "compact-summary";
  return "prompt";
}

/** `/name args` from a slash-command wrapper. */
export function commandText(text: string): string {
  const name = /<command-name>([\s\S]*?)<\/command-name>/.exec(text)?.[1]?.trim();
  const msg = /<command-message>([\s\S]*?)<\/command-message>/.exec(text)?.[1]?.trim();
  const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1]?.trim();
  let cmd = name || (msg ? `/${msg}` : "");
  if (cmd && !cmd.startsWith("/")) cmd = "/" + cmd;
  return [cmd, args].filter(Boolean).join(" ") || text.trim();
}
