import type { Tokenizer } from "@orama/orama";

/**
 * Our tokenizer for Orama. The stock one keeps only [A-Za-z0-9] plus a few accented
 * letters, so Chinese, Japanese, Korean, Cyrillic… memories were unsearchable by keyword.
 * Here: Unicode letters and digits, diacritics folded, CJK runs as overlapping bigrams
 * (a standard trick for unsegmented scripts), English stop words and 1-letter tokens dropped
 * so common words do not make every chunk a match.
 */
const STOP_WORDS = new Set(
  (
    "a an and are as at be been but by can could did do does doing done for from had has have having he her " +
    "here hers him his how i if in into is it its itself just me more most my no nor not now of off on once " +
    "only or other our ours out over own same she should so some such than that the their theirs them then " +
    "there these they this those through to too under until up very was we were what when where which while " +
    "who whom why will with would you your yours also about after again against all am any because before " +
    "below between both during each few further let lets ok okay yes s t don didn doesn isn wasn won"
  ).split(" "),
);

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+/g;
const SPLIT = /[^\p{L}\p{N}_]+/u;
const COMBINING = /[\u0300-\u036f]/g;

function fold(s: string): string {
  // NFKD then drop combining marks: "café" → "cafe"; full-width forms → ASCII.
  return /[^\x00-\x7f]/.test(s) ? s.normalize("NFKD").replace(COMBINING, "") : s;
}

/**
 * HTML comments are not indexed: a memory's anchor comment holds two UUIDs and a transcript
 * path, unique per chunk, which bloated the index by a third and matched nothing anyone types.
 */
const COMMENT = /<!--[\s\S]*?-->/g;

export function tokenize(raw: string): string[] {
  if (typeof raw !== "string" || raw === "") return [];
  const out = new Set<string>();
  const text = fold((raw.includes("<!--") ? raw.replace(COMMENT, " ") : raw).toLowerCase());
  for (const word of text.split(SPLIT)) {
    if (!word) continue;
    if (CJK.test(word)) {
      for (const run of word.match(CJK_RUN) ?? []) {
        if (run.length === 1) out.add(run);
        for (let i = 0; i + 1 < run.length; i++) out.add(run.slice(i, i + 2));
      }
      for (const rest of word.split(CJK_RUN)) addWord(out, rest);
      continue;
    }
    addWord(out, word);
  }
  return [...out];
}

function addWord(out: Set<string>, word: string): void {
  if (word.length < 2 || STOP_WORDS.has(word)) return;
  out.add(word);
  // snake_case stays one token (exact identifiers match) and its parts are indexed too.
  if (word.includes("_")) for (const part of word.split("_")) if (part.length >= 2 && !STOP_WORDS.has(part)) out.add(part);
}

export function createTokenizer(): Tokenizer {
  return {
    language: "english",
    normalizationCache: new Map(),
    tokenize: (raw: string) => tokenize(raw),
  };
}
