/**
 * Text as FTS5 sees it, and user queries as FTS5 MATCH expressions.
 *
 * unicode61 treats a run of CJK characters as one token, so a Chinese sentence would be one
 * unsearchable word: each CJK character is made a token of its own (spaces around it) both when
 * indexing and in queries, and a CJK word in a query becomes a phrase of its characters, which
 * matches those characters in sequence.
 */

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/;
const CJK_G = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/g;

/** The form of a text that goes into the FTS index. */
export function ftsText(text: string): string {
  return CJK.test(text) ? text.replace(CJK_G, " $& ") : text;
}

/** Words that match half of any conversation and carry nothing for recall. */
const STOPWORDS = new Set(
  "a an and are as at be but by did do does for from had has have how i in is it its me my of on or our so that the their then there these this to was we were what when where which who why will with you your about after before can could should would did didn't we've i'm any all some into out up".split(
    " ",
  ),
);

/** Tokens of a word as unicode61 cuts them: runs of letters and digits, CJK characters one by one. */
function tokensOf(word: string): string[] {
  return ftsText(word)
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/**
 * FTS5 MATCH expression for a free-text query: each whitespace-separated word becomes a quoted
 * token, or a phrase when unicode61 cuts it into several (`index-heal.ts` → "index heal ts",
 * `snake_case` → "snake case"), joined by OR so bm25 ranks the rows holding most of them first
 * instead of dropping rows that miss one word. Stop words are left out unless nothing else is
 * left. Undefined when the query has no searchable token.
 */
export function matchExpression(query: string): string | undefined {
  const words = query.split(/\s+/).filter(Boolean);
  const groups = words.map(tokensOf).filter((t) => t.length > 0);
  const useful = groups.filter((t) => t.length > 1 || !STOPWORDS.has(t[0]!));
  const chosen = useful.length ? useful : groups;
  if (!chosen.length) return undefined;
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const t of chosen) {
    const p = `"${t.join(" ")}"`;
    if (seen.has(p)) continue;
    seen.add(p);
    parts.push(p);
  }
  return parts.join(" OR ");
}

/** Lower-cased tokens of a query (for snippets). */
export function queryTokens(query: string): string[] {
  const out = new Set<string>();
  for (const w of query.split(/\s+/)) for (const t of tokensOf(w)) if (!STOPWORDS.has(t)) out.add(t);
  return [...out];
}
