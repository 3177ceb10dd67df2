/**
 * Benchmark corpus: daily memory files shaped like the ones the Stop hook writes, whose
 * bullets are real sentences from the fixture transcripts. A corpus of a few repeated words
 * makes BM25 and the index look better than they are, so the vocabulary, code spans and paths
 * come from real sessions and no two chunks share the same set of bullets.
 *
 * Everything is driven by a seeded PRNG: the same seed and size give byte-identical files.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, realTranscripts } from "../../test/helpers/fixtures.ts";

export { FIXTURES };
/** Turns per daily file: a busy working day. */
export const TURNS_PER_DAY = 30;
/** Keep every chunk well under the chunker's 1500-char limit, so one `###` = one chunk. */
const MAX_CHUNK_CHARS = 1300;
const MIN_SENTENCE = 25;
const MAX_SENTENCE = 200;

// ---------------------------------------------------------------------------------------------
// Seeded randomness

export type Rng = () => number;

/** mulberry32: tiny, fast, and good enough to shuffle a corpus. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (r: Rng, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function uuid(r: Rng): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(r() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

// ---------------------------------------------------------------------------------------------
// Sentences from the transcripts

/** What the corpus is made of: user requests, assistant prose, and tool actions. */
export interface SentencePool {
  user: string[];
  assistant: string[];
  actions: string[];
}

/** Harness markup (system reminders, slash-command echoes) is not something a user wrote. */
function stripMarkup(text: string): string {
  return text
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/<(system-reminder|command-[a-z]+|local-command-[a-z]+|task-notification)>[\s\S]*?<\/\1>/g, " ")
    .replace(/<\/?[a-z][a-z-]*>/g, " ");
}

/**
 * Prose sentences of a message: lines that are not tables or headings, split at sentence ends,
 * markdown emphasis removed, kept when long enough to say something and short enough for a bullet.
 */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  for (let line of stripMarkup(text).split("\n")) {
    line = line.trim();
    if (!line || line.startsWith("|") || line.startsWith("#") || line.startsWith(">")) continue;
    line = line.replace(/^([-*+]|\d+[.)])\s+/, "").replace(/\*\*|__/g, "");
    for (const raw of line.split(/(?<=[.!?])\s+(?=[A-Z`"'(])/)) {
      const s = raw.replace(/\s+/g, " ").trim();
      if (s.length < MIN_SENTENCE || s.length > MAX_SENTENCE || s.split(" ").length < 4) continue;
      if (/^\[Request interrupted/.test(s) || (s.match(/`/g)?.length ?? 0) % 2 === 1) continue;
      out.push(/[.!?:]$/.test(s) ? s : `${s}.`);
    }
  }
  return out;
}

/** A tool call told as a note, e.g. "Ran `mix test` to check the suite.": real commands and paths. */
function actionOf(name: string, input: Record<string, unknown>): string | undefined {
  const str = (k: string) => (typeof input[k] === "string" ? (input[k] as string).split("\n")[0]!.trim() : "");
  const code = (s: string) => `\`${s.replace(/`/g, "'").slice(0, 110)}\``;
  const path = str("file_path") || str("notebook_path");
  switch (name) {
    case "Bash": {
      const cmd = str("command");
      if (!cmd) return undefined;
      const why = str("description");
      return why ? `Ran ${code(cmd)} (${why.slice(0, 80)}).` : `Ran ${code(cmd)}.`;
    }
    case "Read":
      return path ? `Read ${code(path)}.` : undefined;
    case "Edit":
    case "MultiEdit":
      return path ? `Edited ${code(path)}.` : undefined;
    case "Write":
      return path ? `Wrote ${code(path)}.` : undefined;
    case "Grep":
    case "Glob":
      return str("pattern") ? `Searched for ${code(str("pattern"))}${str("path") ? ` in ${code(str("path"))}` : ""}.` : undefined;
    default:
      return undefined;
  }
}

type Block = { type?: string; text?: string; thinking?: string; name?: string; input?: Record<string, unknown> };

function addMessage(pool: { user: Set<string>; assistant: Set<string>; actions: Set<string> }, role: string, content: unknown): void {
  const blocks: Block[] = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
  for (const b of blocks) {
    if (!b || typeof b !== "object") continue;
    const prose = b.type === "text" ? b.text : b.type === "thinking" ? b.thinking : undefined;
    if (prose) for (const s of sentencesOf(prose)) (role === "user" ? pool.user : pool.assistant).add(s);
    if (b.type === "tool_use" && b.name && b.input) {
      const a = actionOf(b.name, b.input);
      if (a) pool.actions.add(a);
    }
  }
}

/** Every usable sentence of every real transcript under `dir`, deduplicated, in a stable order. */
export function loadPool(dir = FIXTURES): SentencePool {
  const pool = { user: new Set<string>(), assistant: new Set<string>(), actions: new Set<string>() };
  for (const file of realTranscripts(dir)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      let o: { type?: string; message?: { role?: string; content?: unknown } };
      try {
        o = JSON.parse(line);
      } catch {
        continue;
      }
      if (!o || typeof o !== "object" || !o.message || (o.type !== "user" && o.type !== "assistant")) continue;
      addMessage(pool, o.type, o.message.content);
    }
  }
  // Short user requests are rare; assistant sentences phrased as questions read like requests too.
  const user = [...pool.user, ...[...pool.assistant].filter((s) => s.endsWith("?"))];
  return { user, assistant: [...pool.assistant], actions: [...pool.actions] };
}

// ---------------------------------------------------------------------------------------------
// Daily files

export interface DayFile {
  name: string;
  text: string;
  /** The chunks' contents, in file order. */
  sections: string[];
  chunks: number;
}

export interface CorpusOptions {
  chunks: number;
  seed?: number;
  pool?: SentencePool;
}

/** Picks the bullets of one turn; re-draws until the combination is new, so no two chunks are alike. */
function turnBullets(r: Rng, pool: SentencePool, seen: Set<string>): string[] {
  for (;;) {
    const ui = Math.floor(r() * pool.user.length);
    const picks: string[] = [`u${ui}`];
    const bullets = [`- User asked: ${pool.user[ui]}`];
    const more = int(r, 1, 4);
    for (let i = 0; i < more; i++) {
      const fromActions = r() < 0.35;
      const list = fromActions ? pool.actions : pool.assistant;
      const j = Math.floor(r() * list.length);
      picks.push(`${fromActions ? "x" : "a"}${j}`);
      bullets.push(`- ${list[j]}`);
    }
    while (bullets.join("\n").length > MAX_CHUNK_CHARS - 200) bullets.pop();
    const key = picks.slice(0, bullets.length).join(",");
    if (seen.has(key)) continue;
    seen.add(key);
    return bullets;
  }
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;

/** Distinct minutes between 07:00 and 23:30, ascending: one per turn. */
function turnTimes(r: Rng, n: number): number[] {
  const set = new Set<number>();
  while (set.size < n) set.add(int(r, 7 * 60, 23 * 60 + 30));
  return [...set].sort((a, b) => a - b);
}

/**
 * One day: sessions of 3–10 turns, each turn a `### HH:MM` section with its anchor and bullets.
 * Also returns each section's text, which is exactly what the chunker makes of it (the
 * baselines index the same chunks without re-chunking 100k sections).
 */
function dayFile(r: Rng, date: string, turns: number, pool: SentencePool, seen: Set<string>): { text: string; sections: string[] } {
  const project = pick(r, ["shop", "spotter", "billing-api", "infra", "mobile-app"]);
  const lines = [`# ${date}`, ""];
  const sections: string[] = [];
  let session = "";
  let left = 0;
  for (const t of turnTimes(r, turns)) {
    if (left === 0) {
      session = uuid(r);
      left = int(r, 3, 10);
      lines.push(`## Session ${hhmm(t)}`, "");
    }
    left--;
    const section = [
      `### ${hhmm(t)}`,
      `<!-- session:${session} turn:${uuid(r)} transcript:/home/dev/.claude/projects/-home-dev-${project}/${session}.jsonl -->`,
      ...turnBullets(r, pool, seen),
    ];
    sections.push(section.join("\n"));
    lines.push(...section, "");
  }
  return { text: lines.join("\n"), sections };
}

function isoDay(base: Date, back: number): string {
  return new Date(base.getTime() - back * 86_400_000).toISOString().slice(0, 10);
}

/** `chunks` turns in files of TURNS_PER_DAY, one file per day going back from 2026-11-20. */
export function generateCorpus(opts: CorpusOptions): DayFile[] {
  const pool = opts.pool ?? loadPool();
  const r = rng(opts.seed ?? 20261120);
  const seen = new Set<string>();
  const base = new Date("2026-11-20T00:00:00Z");
  const files: DayFile[] = [];
  for (let left = opts.chunks, day = 0; left > 0; day++) {
    const turns = Math.min(TURNS_PER_DAY, left);
    const name = `${isoDay(base, day)}.md`;
    files.push({ name, ...dayFile(r, name.slice(0, 10), turns, pool, seen), chunks: turns });
    left -= turns;
  }
  return files;
}

export function writeCorpus(memoryDir: string, files: DayFile[]): void {
  mkdirSync(memoryDir, { recursive: true });
  for (const f of files) writeFileSync(join(memoryDir, f.name), f.text);
}

// ---------------------------------------------------------------------------------------------
// Queries and prompts

const QUERY_STOP = new Set("the and for with that this from into then than when what were have has was are not but you your our can will its let use using also just now".split(" "));

/** Words a person would type in a search box: letters, 3+ chars, not filler. */
function contentWords(sentence: string): string[] {
  return (sentence.toLowerCase().match(/[a-z][a-z0-9_-]{2,}/g) ?? []).filter((w) => !QUERY_STOP.has(w));
}

/** `n` search phrases of 3–5 consecutive content words taken from corpus sentences. */
export function makeQueries(pool: SentencePool, n: number, seed = 7): string[] {
  const r = rng(seed);
  const source = [...pool.assistant, ...pool.user];
  const out = new Set<string>();
  while (out.size < n) {
    const words = contentWords(pick(r, source));
    const len = int(r, 3, 5);
    if (words.length < len) continue;
    const at = int(r, 0, words.length - len);
    out.add(words.slice(at, at + len).join(" "));
  }
  return [...out];
}

/** `n` prompts for the UserPromptSubmit hook: real user requests (long enough not to be skipped as trivial). */
export function makePrompts(pool: SentencePool, n: number, seed = 11): string[] {
  const r = rng(seed);
  const usable = pool.user.filter((s) => s.length >= 30);
  const out = new Set<string>();
  while (out.size < Math.min(n, usable.length)) out.add(pick(r, usable));
  return [...out];
}
