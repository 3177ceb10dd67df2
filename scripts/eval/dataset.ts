/**
 * A LoCoMo-shaped evaluation set (snap-research/LoCoMo `data/locomo10.json` or a subset of it):
 * read, checked, and turned into memory the way memsearch would hold it. The protocol: one daily
 * markdown file per session, one `### <dia_id>` section per turn holding `- <speaker>: <text>`
 * (plus `[shares a photo: <caption>]`); questions of categories 1–4 (answerable from the dialogue)
 * with their evidence turns. The data is only read here, never copied into the repository.
 */
import { readFileSync, statSync } from "node:fs";

export class DatasetError extends Error {
  override name = "DatasetError";
}

export interface Turn {
  id: string;
  speaker: string;
  text: string;
  caption?: string;
}

export interface Session {
  /** 1-based, as in `session_N`. */
  n: number;
  dateTime?: string;
  turns: Turn[];
}

export interface Question {
  question: string;
  /** Evidence turn ids present in the conversation (others are dropped). */
  evidence: string[];
  category: number;
}

export interface Conversation {
  id: string;
  sessions: Session[];
  questions: Question[];
  /** What the set held that could not be judged: said, not silently lost. */
  dropped: {
    /** Evidence ids naming no turn of the conversation. */
    unknownEvidence: number;
    /** Answerable questions left with no evidence turn. */
    questionsWithoutEvidence: number;
  };
}

export interface MemoryFile {
  name: string;
  text: string;
}

/** Categories whose answer lies in known turns (5 is adversarial and has no evidence). */
const ANSWERABLE = new Set([1, 2, 3, 4]);

export function loadDataset(path: string): Conversation[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new DatasetError(`dataset not found: ${path}`);
  }
  if (!st.isFile()) throw new DatasetError(`dataset is not a file: ${path}`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new DatasetError(`dataset is not valid JSON: ${path} (${(e as Error).message.split("\n")[0]})`);
  }
  const list = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? [raw] : undefined;
  if (!list || list.length === 0) throw new DatasetError(`dataset holds no conversations: ${path}`);
  const conversations = list.map((c, i) => conversationOf(c, i, path));
  if (conversations.every((c) => c.questions.length === 0)) throw new DatasetError(`dataset holds no answerable questions (categories 1–4 with evidence): ${path}`);
  return conversations;
}

function conversationOf(raw: unknown, i: number, path: string): Conversation {
  const bad = (what: string) => new DatasetError(`dataset entry ${i + 1} ${what}, expected the LoCoMo shape (conversation with session_N turns, qa with evidence): ${path}`);
  if (!raw || typeof raw !== "object") throw bad("is not an object");
  const c = raw as { sample_id?: unknown; conversation?: unknown; qa?: unknown };
  if (!c.conversation || typeof c.conversation !== "object") throw bad("has no conversation");
  if (!Array.isArray(c.qa)) throw bad("has no qa list");
  const conv = c.conversation as Record<string, unknown>;
  const sessions: Session[] = [];
  for (const [key, value] of Object.entries(conv)) {
    const m = /^session_(\d+)$/.exec(key);
    if (!m) continue;
    if (!Array.isArray(value)) throw bad(`has a ${key} that is not a list`);
    const turns = value.map((t) => turnOf(t, key, bad));
    const dt = conv[`${key}_date_time`];
    sessions.push({ n: Number(m[1]), dateTime: typeof dt === "string" ? dt : undefined, turns });
  }
  if (sessions.length === 0) throw bad("has no sessions");
  sessions.sort((a, b) => a.n - b.n);
  const ids = new Set(sessions.flatMap((s) => s.turns.map((t) => t.id)));
  const questions: Question[] = [];
  const dropped = { unknownEvidence: 0, questionsWithoutEvidence: 0 };
  for (const q of c.qa as unknown[]) {
    const qa = q as { question?: unknown; evidence?: unknown; category?: unknown };
    if (!qa || typeof qa.question !== "string" || typeof qa.category !== "number") throw bad("has a qa item without question or category");
    if (!ANSWERABLE.has(qa.category)) continue;
    // A few evidence entries list two ids in one string ("D8:6; D9:17").
    const named = (Array.isArray(qa.evidence) ? qa.evidence : []).flatMap((e) => String(e).split(/[;,]/)).map((e) => e.trim()).filter(Boolean);
    const evidence = named.filter((e) => ids.has(e));
    dropped.unknownEvidence += named.length - evidence.length;
    if (evidence.length) questions.push({ question: qa.question, evidence: [...new Set(evidence)], category: qa.category });
    else dropped.questionsWithoutEvidence++;
  }
  return { id: typeof c.sample_id === "string" ? c.sample_id : `conversation-${i + 1}`, sessions, questions, dropped };
}

function turnOf(raw: unknown, key: string, bad: (what: string) => DatasetError): Turn {
  const t = raw as { speaker?: unknown; dia_id?: unknown; text?: unknown; blip_caption?: unknown };
  if (!t || typeof t.dia_id !== "string" || typeof t.speaker !== "string" || typeof t.text !== "string") throw bad(`has a turn in ${key} without speaker, dia_id or text`);
  return { id: t.dia_id, speaker: t.speaker, text: t.text, caption: typeof t.blip_caption === "string" && t.blip_caption.trim() ? t.blip_caption : undefined };
}

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/** `1:56 pm on 8 May, 2023` → `2023-05-08`; undefined when the date cannot be read. */
export function dayOf(dateTime: string | undefined): string | undefined {
  const m = /(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/.exec(dateTime ?? "");
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[2]!.toLowerCase());
  if (month < 0) return undefined;
  return `${m[3]}-${String(month + 1).padStart(2, "0")}-${m[1]!.padStart(2, "0")}`;
}

/** The conversation as daily memory files: one per session, named by its day (a second session on a day gets `-2`). */
export function memoryFiles(conv: Conversation): MemoryFile[] {
  const used = new Set<string>();
  return conv.sessions.map((s) => {
    const day = dayOf(s.dateTime) ?? `session-${s.n}`;
    let name = `${day}.md`;
    for (let k = 2; used.has(name); k++) name = `${day}-${k}.md`;
    used.add(name);
    const sections = s.turns.map((t) => `### ${t.id}\n- ${t.speaker}: ${t.text}${t.caption ? ` [shares a photo: ${t.caption}]` : ""}\n`);
    return { name, text: `# ${s.dateTime ?? day}\n\n${sections.join("\n")}` };
  });
}
