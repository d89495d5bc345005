/**
 * Did-you-mean for names given on the command line (commands, framings, options): the nearest
 * known name by edit distance.
 * @module
 */

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two strings. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1, cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1);
      v = Math.min(v, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[(i - 2) * cols + j - 2]! + 1);
      }
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1]!;
}

/**
 * The known name nearest to `word` (case-insensitive), or undefined when none is close: at most
 * a third of the longer name's characters (and at least one) may differ, or `word` is a prefix.
 */
export function suggest(word: string, known: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const n = name.toLowerCase();
    const distance = n.startsWith(w) && w.length >= 2 ? 0.5 : editDistance(w, n);
    const limit = Math.max(1, Math.floor(Math.max(w.length, n.length) / 3));
    if (distance <= limit && distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** `; did you mean 'x'?` for the nearest known name, or "" when none is close. */
export function didYouMean(word: string, known: readonly string[]): string {
  const s = suggest(word, known);
  return s === undefined ? "" : `; did you mean '${s}'?`;
}
