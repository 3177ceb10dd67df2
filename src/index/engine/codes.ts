/**
 * A vector row's int8 codes and the figures that bound a cosine from them (vector-cold.ts says
 * how): made by the watch process's cold block as it loads, and by a writer into the index file
 * (format.ts), where a command's search reads them instead of every float. One function for both,
 * so the codes in a file are the ones a load would make. No WebAssembly here: format.ts, which
 * every hook reads, imports this module.
 */

/** Bytes per row of codes: the dimension rounded up to the integer kernel's 16 lanes. */
export function codeStride(dim: number): number {
  return Math.ceil(dim / 16) * 16;
}

/** Relative difference allowed between a stored magnitude and the row's own for a row to be bounded. */
const MAG_AGREES = 1e-6;

/** What bounds a row's cosine besides its codes, a column per figure, by row (the index file's rows table, a cold block's arrays). */
export interface FigureColumns {
  /** s_r: code × scale approximates the float. */
  scale: Float64Array;
  /** ‖v − s_r·c‖. */
  err: Float64Array;
  /** s_r·‖c‖. */
  norm: Float64Array;
  /** 1 when the bound holds for the row, 0 when it must always be scored exactly. */
  bounded: Uint8Array;
}

/**
 * Row `v[at…at + dim)`'s codes into `codes[o…o + dim)` and its figures into row `r` of `out`; `mag` is the
 * magnitude the cosine divides by. A row that is not finite, or whose `mag` is not its own
 * magnitude (only a file we did not write holds one), gets no bound.
 */
export function quantizeRow(v: Float32Array, at: number, dim: number, mag: number, codes: Int8Array, o: number, out: FigureColumns, r: number): void {
  let max = 0;
  let squares = 0;
  for (let i = 0; i < dim; i++) {
    const x = v[at + i]!;
    const ax = Math.abs(x);
    if (ax > max) max = ax;
    squares += x * x;
  }
  // NaN or Infinity in the row makes the sum of squares so (a float32's square is far from overflowing a double).
  const finite = Number.isFinite(squares);
  const s = finite ? max / 127 : 0;
  let e = 0;
  let cc = 0;
  for (let i = 0; i < dim; i++) {
    const x = v[at + i]!;
    // Rounded half up by floor(y + 0.5): Math.round cost four times as much in this loop, a load's
    // largest part. Any rounding would do: the error and norm below are of the codes kept.
    let c = s > 0 ? Math.floor(x / s + 0.5) : 0;
    if (c > 127) c = 127;
    else if (c < -127) c = -127;
    codes[o + i] = c;
    const d = x - s * c;
    e += d * d;
    cc += c * c;
  }
  out.scale[r] = s;
  out.err[r] = Math.sqrt(e);
  out.norm[r] = s * Math.sqrt(cc);
  const own = Math.sqrt(squares);
  out.bounded[r] = finite && Number.isFinite(s) && Number.isFinite(mag) && mag > 0 && Math.abs(mag - own) <= MAG_AGREES * mag ? 1 : 0;
}
