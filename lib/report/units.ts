/**
 * Sizes and particle counts as the benchmark prints them (`128 MiB`, `32^2`), for the CLI and the
 * table renderers.
 * @module
 */

/** Formats bytes as the benchmark prints sizes: `128 MiB`, `1 GiB`, `1.5 GiB`, `4096 B`. */
export function formatSize(bytes: number): string {
  for (
    const [unit, n] of [["TiB", 1024 ** 4], ["GiB", 1024 ** 3], ["MiB", 1024 ** 2], [
      "KiB",
      1024,
    ]] as const
  ) {
    if (bytes >= n) {
      const v = bytes / n;
      return `${Number.isInteger(v) ? v : Number(v.toPrecision(4))} ${unit}`;
    }
  }
  return `${bytes} B`;
}

/** Formats a count the way the GSD table labels N: `32^2` for perfect squares of a power of two, else digits. */
export function formatCount(n: number): string {
  const r = Math.round(Math.sqrt(n));
  return r * r === n && r >= 2 && (r & (r - 1)) === 0 ? `${r}^2` : String(n);
}
