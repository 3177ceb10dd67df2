/**
 * The best `k` of (id, score) pairs offered one at a time, in Orama's order (sortTokenScorePredicate:
 * score down, then id up), without keeping or sorting every pair: what Orama keeps of a text
 * search (compact-index.ts) and of a vector search (vector-block.ts), each with thousands of
 * candidates for a few dozen places.
 */
export class Best {
  /** A heap whose root is the kept pair that comes last. */
  private heap: [number, number][] = [];

  constructor(private readonly k: number) {}

  offer(id: number, score: number): void {
    const { heap, k } = this;
    const e: [number, number] = [id, score];
    if (heap.length < k) {
      let i = heap.length;
      heap.push(e);
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!after(e, heap[p]!)) break;
        heap[i] = heap[p]!;
        i = p;
      }
      heap[i] = e;
      return;
    }
    if (k === 0 || !after(heap[0]!, e)) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) break;
      const c = l + 1 < heap.length && after(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!after(heap[c]!, e)) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = e;
  }

  /** The pairs kept, best first. */
  sorted(): [number, number][] {
    return this.heap.sort((a, b) => (b[1] === a[1] ? a[0] - b[0] : b[1] - a[1]));
  }
}

/** `a` comes after `b` in Orama's order. */
function after(a: [number, number], b: [number, number]): boolean {
  return a[1] < b[1] || (a[1] === b[1] && a[0] > b[0]);
}
