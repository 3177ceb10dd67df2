/**
 * Ranking metrics over turn ids (R@k, MRR, nDCG@10), and S@k, R@k rolled up to sessions (a hit
 * when a top-k result is in a session holding a relevant turn: what the published session-level
 * LoCoMo figures count). A result list may name a turn more than once (a long turn split
 * into several chunks): only its first appearance counts, so a split turn is not a second hit, but
 * every result keeps its place, as in the list a user reads.
 */

export interface Judged {
  /** Turn ids of the results, best first. */
  ranked: string[];
  relevant: Set<string>;
}

export const NDCG_DEPTH = 10;
export const MRR_DEPTH = 10;

/** A hit at k: one of the top-k results is a relevant turn. */
export function hitAt(j: Judged, k: number): number {
  return j.ranked.slice(0, k).some((id) => j.relevant.has(id)) ? 1 : 0;
}

export function reciprocalRank(j: Judged, depth = MRR_DEPTH): number {
  const i = j.ranked.slice(0, depth).findIndex((id) => j.relevant.has(id));
  return i < 0 ? 0 : 1 / (i + 1);
}

/** Binary-gain nDCG: each relevant turn found counts once, at the rank it first appears. */
export function ndcg(j: Judged, depth = NDCG_DEPTH): number {
  const seen = new Set<string>();
  let dcg = 0;
  j.ranked.slice(0, depth).forEach((id, i) => {
    if (seen.has(id)) return;
    seen.add(id);
    if (j.relevant.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(j.relevant.size, depth); i++) ideal += 1 / Math.log2(i + 2);
  return ideal ? dcg / ideal : 0;
}

export interface Scores {
  questions: number;
  /** R@k for each k asked, then MRR and nDCG@10: metric name → mean over questions. */
  metrics: Record<string, number>;
}

export function metricNames(ks: number[]): string[] {
  return [...ks.map((k) => `R@${k}`), "MRR", `nDCG@${NDCG_DEPTH}`, ...ks.map((k) => `S@${k}`)];
}

/** The session a LoCoMo turn id belongs to (`D3:5` → `D3`); other ids are their own session. */
export function sessionOfTurn(id: string): string {
  return /^(D\d+):/.exec(id)?.[1] ?? id;
}

/** The session-level roll-up of a hit at k: one of the top k results is in a session holding a relevant turn. */
export function sessionHitAt(j: Judged, k: number): number {
  const sessions = new Set([...j.relevant].map(sessionOfTurn));
  return j.ranked.slice(0, k).some((id) => sessions.has(sessionOfTurn(id))) ? 1 : 0;
}

export function score(judged: Judged[], ks: number[]): Scores {
  const n = judged.length;
  const mean = (f: (j: Judged) => number) => (n ? judged.reduce((a, j) => a + f(j), 0) / n : 0);
  const metrics: Record<string, number> = {};
  for (const k of ks) metrics[`R@${k}`] = mean((j) => hitAt(j, k));
  metrics.MRR = mean((j) => reciprocalRank(j));
  metrics[`nDCG@${NDCG_DEPTH}`] = mean((j) => ndcg(j));
  for (const k of ks) metrics[`S@${k}`] = mean((j) => sessionHitAt(j, k));
  return { questions: n, metrics };
}
