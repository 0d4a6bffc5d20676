/** The value below which a fraction `q` (0.5, 0.99) of `values` lies: the sorted list's ⌊n·q⌋-th, the last at most. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}
