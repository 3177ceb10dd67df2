/**
 * A faster inner loop for Orama's brute-force vector index. Orama's findSimilarVectors does
 * one dot product at a time with a single accumulator; four independent accumulators let the
 * CPU overlap the multiply-adds. Measured at 20k × 768: 26 ms → 15 ms per query. Semantics
 * are Orama's own: cosine against every vector (or the ids a `where` filter left), kept when
 * at or above the threshold; Orama still does the filtering, sorting and document fetching.
 */
import type { VectorNode } from "./orama-internals.ts";

/** Replace `node`'s find() (the node as orama-internals.ts's vectorNode() checked it). */
export function fasterFind(node: VectorNode): void {
  node.find = function find(query, similarity, whereFiltersIDs) {
    const q = query instanceof Float32Array ? query : new Float32Array(query);
    const n = this.size;
    let qq = 0;
    for (let i = 0; i < n; i++) qq += q[i]! * q[i]!;
    const qMag = Math.sqrt(qq);
    const out: [number, number][] = [];
    const ids = whereFiltersIDs ?? this.vectors.keys();
    const tail = n - (n % 4);
    for (const id of ids) {
      const entry = this.vectors.get(id);
      if (!entry) continue;
      const [mag, v] = entry;
      let d0 = 0;
      let d1 = 0;
      let d2 = 0;
      let d3 = 0;
      let i = 0;
      for (; i < tail; i += 4) {
        d0 += q[i]! * v[i]!;
        d1 += q[i + 1]! * v[i + 1]!;
        d2 += q[i + 2]! * v[i + 2]!;
        d3 += q[i + 3]! * v[i + 3]!;
      }
      for (; i < n; i++) d0 += q[i]! * v[i]!;
      const cos = (d0 + d1 + d2 + d3) / (qMag * mag);
      if (cos >= similarity) out.push([id, cos]);
    }
    return out;
  };
}
