// The one quantile every benchmark prints (p50, p90, p95, p99, medians): bench/ and test/ define
// no other (test/unit/bench-stats.test.ts fails on a second median, quantile or percentile).
// Method: linear interpolation between closest ranks (R-7, numpy's and R's default), so that the
// median is the usual one for even counts and any figure can be checked with numpy.quantile.

/**
 * The q-quantile of `values` (0 ≤ q ≤ 1) by linear interpolation between closest ranks:
 * with the values sorted as x[0..n-1], h = (n - 1)·q and the result x[⌊h⌋] + (h - ⌊h⌋)·(x[⌈h⌉] - x[⌊h⌋]).
 * q = 0 is the least value, q = 1 the greatest. `values` is not changed. An empty input, a value
 * that is not a finite number, or q outside [0, 1] is refused with a RangeError: no figure is
 * printed from nothing.
 */
export function quantile(values: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be between 0 and 1, not ${q}`);
  if (values.length === 0) throw new RangeError(`quantile: no values to take the ${q}-quantile of`);
  const bad = values.find((v) => !Number.isFinite(v));
  if (bad !== undefined) throw new RangeError(`quantile: every value must be a finite number, and one is ${bad}`);
  const sorted = [...values].sort((a, b) => a - b);
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const f = h - lo;
  // (1 - f)·a + f·b: at f = 0.5 this is exactly (a + b) / 2, and at f = 0 exactly a.
  return f === 0 ? sorted[lo]! : (1 - f) * sorted[lo]! + f * sorted[lo + 1]!;
}

/** The median: the middle value, or the mean of the two middle values for an even count. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}
