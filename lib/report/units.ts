/**
 * Numbers for people: sizes in binary units (`128 MiB`), particle counts as gsd labels them
 * (`128^2`), significant digits as Python's `g` format, durations (`1m20s`). Used only by human
 * output; CSV and JSON keep full precision.
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

/** Formats like Python's `format(x, '.{p}g')`. */
export function formatG(x: number, precision: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const exp = Math.floor(Math.log10(Math.abs(x)));
  if (exp < -4 || exp >= precision) {
    const [m, e] = x.toExponential(precision - 1).split("e");
    const mant = m!.includes(".") ? m!.replace(/\.?0+$/, "") : m!;
    const n = Number(e);
    return `${mant}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  const s = x.toFixed(Math.max(0, precision - 1 - exp));
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** Formats seconds as a short duration: `42s`, `1m20s`, `2h05m`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
