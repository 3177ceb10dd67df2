import type { Tokenizer } from "@orama/orama";
import { tokenizer as oramaTokenizer } from "@orama/orama/components";

/**
 * Our tokenizer for Orama, and the query side of the same rules. The stock one keeps only
 * [A-Za-z0-9] plus a few accented letters, so Chinese, Japanese, Korean, Cyrillic… memories were
 * unsearchable by keyword. Here: Unicode letters and digits, diacritics folded, CJK runs as
 * overlapping bigrams (a standard trick for unsegmented scripts), 1-letter tokens dropped.
 *
 * English words are indexed by their Porter stem, so "painted" finds "painting"; the ranking still
 * sees each word as written, so an exact identifier or error string ranks above its inflections
 * (rank.ts). Stop words are indexed like any word (BM25's idf makes them nearly weightless), so a
 * query made only of common words still finds the chunks that hold them; queries leave them out
 * whenever they have other words.
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

// Orama ships a Porter stemmer but exports it only on a tokenizer it builds.
const porter = oramaTokenizer.createTokenizer({ language: "english", stemming: true }).stemmer as (w: string) => string;
const ENGLISH_WORD = /^[a-z]{3,}$/;
const SION_TION = /([st])ions?$/;
const stems = new Map<string, string>();
const STEM_CACHE_MAX = 50_000;

/**
 * The Porter stem of an English word; anything else (identifiers with digits or underscores,
 * other scripts, short words) is its own stem. Orama's stemmer loses the s/t of -sion/-tion
 * (its step 4 reads `a ?? '' + b`), so "adoption" gave "adop" but "adopted" "adopt": the letter is
 * put back when exactly that happened, so the two meet.
 */
export function stem(word: string): string {
  let s = stems.get(word);
  if (s !== undefined) return s;
  s = word;
  if (ENGLISH_WORD.test(word)) {
    s = porter(word);
    const m = SION_TION.exec(word);
    if (m && s.length === word.length - (word.endsWith("s") ? 5 : 4)) s += m[1];
  }
  if (stems.size >= STEM_CACHE_MAX) stems.clear();
  stems.set(word, s);
  return s;
}

/** Runs of ASCII letters, digits and underscores: what SPLIT leaves of a text with nothing else in it. */
const ASCII_WORD = /[a-z0-9_]+/g;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Each word of a text in order, as the index sees it (lower-cased, folded, comments skipped): a
 * snake_case word is followed by its parts, a CJK run by its bigrams. What the ranking measures
 * proximity and exact forms on.
 */
export function eachWord(raw: string, emit: (word: string) => void): void {
  if (typeof raw !== "string" || raw === "") return;
  const lower = (raw.includes("<!--") ? raw.replace(COMMENT, " ") : raw).toLowerCase();
  // Ranking tokenizes every candidate on every search, and most notes are ASCII: skip the Unicode split.
  if (!NON_ASCII.test(lower)) {
    for (const word of lower.match(ASCII_WORD) ?? []) plainWord(word, emit);
    return;
  }
  const text = fold(lower);
  for (const word of text.split(SPLIT)) {
    if (!word) continue;
    if (CJK.test(word)) {
      for (const rest of word.split(CJK_RUN)) plainWord(rest, emit);
      for (const run of word.match(CJK_RUN) ?? []) {
        if (run.length === 1) emit(run);
        for (let i = 0; i + 1 < run.length; i++) emit(run.slice(i, i + 2));
      }
      continue;
    }
    plainWord(word, emit);
  }
}

function plainWord(word: string, emit: (word: string) => void): void {
  if (word.length < 2) return;
  emit(word);
  // snake_case stays one token (exact identifiers match) and its parts are indexed too.
  if (word.includes("_")) for (const part of word.split("_")) if (part.length >= 2) emit(part);
}

/**
 * The distinct tokens a chunk is indexed under: the stems of its words. The words as written stay
 * in the chunk's text, where the ranking compares them with the query's (rank.ts); indexing them
 * too made the index larger and slower to load and every inflected word a second prefix match.
 */
export function tokenize(raw: string): string[] {
  const out = new Set<string>();
  eachWord(raw, (w) => {
    out.add(stem(w));
  });
  return [...out];
}

/** A distinct term of a query: its stem, the forms the query wrote it in, and whether it is a stop word. */
export interface QueryTerm {
  stem: string;
  forms: string[];
  stop: boolean;
}

/** The query's distinct terms, in order, keyed by stem ("paints" and "painting" are one term). */
export function queryTerms(raw: string): QueryTerm[] {
  const byStem = new Map<string, QueryTerm>();
  eachWord(raw, (w) => {
    const s = stem(w);
    const t = byStem.get(s);
    if (!t) byStem.set(s, { stem: s, forms: [w], stop: STOP_WORDS.has(w) });
    else {
      if (!t.forms.includes(w)) t.forms.push(w);
      t.stop &&= STOP_WORDS.has(w);
    }
  });
  return [...byStem.values()];
}

/** The terms a query is ranked by: its content words, or all of them when it has nothing else. */
export function rankingTerms(raw: string): QueryTerm[] {
  const all = queryTerms(raw);
  const content = all.filter((t) => !t.stop);
  return content.length ? content : all;
}

/**
 * Orama tokenizes the search term with the same tokenizer it indexes with. Searches hand it
 * stems already chosen by search.ts (space-separated), so a term without a property (a search)
 * is only split: a stem tokenized again could stem further and miss.
 */
export function createTokenizer(): Tokenizer {
  return {
    language: "english",
    normalizationCache: new Map(),
    tokenize: (raw: string, _language?: string, prop?: string) => (prop === undefined ? raw.split(" ").filter(Boolean) : tokenize(raw)),
  };
}
